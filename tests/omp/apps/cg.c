/* tests/omp/apps/cg.c — conjugate gradient on the 3-D 7-point Poisson
 * problem (matrix-free, b = 1, x0 = 0, a fixed number of iterations), as
 * OpenMP tasks; its task graph is apps/cg's (program.cpp).
 *
 * The n^3 grid is cut along z into blocks of `block` planes; each vector
 * (x, r, p, q) keeps block k in its own page-aligned slot. Scalars are one
 * double each, 8 doubles apart in one array: rr, alpha, beta, pq[0..nb),
 * rp[0..nb). Tasks, spawned in this order from one single, then one
 * taskwait (the native barrier; none inside: the reductions are tasks):
 *   init(k)        out x[k], r[k], p[k], q[k], rp[k]     rp[k] = r[k].r[k]
 *   rr             in rp[0..nb); out rr
 *   per iteration:
 *     spmv(k)      in p[k-1], p[k], p[k+1] (those that exist); out q[k], pq[k]
 *     alpha        in pq[0..nb), rr; out alpha
 *     update(k)    in alpha, p[k], q[k]; inout x[k], r[k]; out rp[k]
 *     beta         in rp[0..nb); inout rr; out beta
 *     direction(k) in beta, r[k]; inout p[k]
 * Blocks and scalars are named by their first element; the reductions'
 * nb dependences are one depend(iterator(...)) clause.
 * Check: a serial CG running the same block kernels in program order with
 * the partial sums added in block order; native tolerance
 * max|x - x_serial| <= 1e-12 max|x_serial| (the sequence of operations is
 * the same, so x is bit-identical in practice and the checksum is exact).
 * Sizes: --n grid side (2..512), --block planes per block (divides n),
 * --iterations CG iterations; test 16/4/10, bench 128/8/100 (apps/cg/cg.hpp). */
#include "app_common.h"

enum { stride = 8, RR = 0, ALPHA = 1, BETA = 2, PQ = 3 }; /* scalar slots, in units of stride */

static size_t n, planes, nb, plane, count, slot; /* side, planes per block, blocks, n^2, unknowns, slot */

static const double *plane_ptr(const double *v, size_t z) { return v + (z / planes) * slot + (z % planes) * plane; }

static double init_block(size_t k, double *x, double *r, double *p, double *q) {
    double *xb = x + k * slot, *rb = r + k * slot, *pb = p + k * slot, *qb = q + k * slot, sum = 0;
    for (size_t i = 0; i < count; ++i) {
        xb[i] = 0;
        rb[i] = 1.0;
        pb[i] = 1.0;
        qb[i] = 0;
        sum += rb[i] * rb[i];
    }
    return sum;
}

/* q[k] = A p on block k (planes of p[k-1], p[k+1] read); returns p[k].q[k]. */
static double spmv_block(size_t k, const double *p, double *q) {
    double sum = 0;
    for (size_t lz = 0; lz < planes; ++lz) {
        const size_t z = k * planes + lz;
        const double *c = plane_ptr(p, z);
        const double *below = z > 0 ? plane_ptr(p, z - 1) : NULL, *above = z + 1 < n ? plane_ptr(p, z + 1) : NULL;
        double *qp = q + k * slot + lz * plane;
        for (size_t y = 0; y < n; ++y)
            for (size_t x = 0; x < n; ++x) {
                const size_t i = y * n + x;
                double nbr = 0;
                if (x > 0) nbr += c[i - 1];
                if (x + 1 < n) nbr += c[i + 1];
                if (y > 0) nbr += c[i - n];
                if (y + 1 < n) nbr += c[i + n];
                if (below) nbr += below[i];
                if (above) nbr += above[i];
                const double v = 6.0 * c[i] - nbr;
                qp[i] = v;
                sum += c[i] * v;
            }
    }
    return sum;
}

static double reduce(const double *parts) {
    double sum = 0;
    for (size_t k = 0; k < nb; ++k) sum += parts[k * stride];
    return sum;
}

/* x += alpha p, r -= alpha q on block k; returns r[k].r[k]. */
static double update_block(size_t k, double alpha, const double *p, const double *q, double *x, double *r) {
    const double *pb = p + k * slot, *qb = q + k * slot;
    double *xb = x + k * slot, *rb = r + k * slot, sum = 0;
    for (size_t i = 0; i < count; ++i) {
        xb[i] += alpha * pb[i];
        rb[i] -= alpha * qb[i];
        sum += rb[i] * rb[i];
    }
    return sum;
}

static void direction_block(size_t k, double beta, const double *r, double *p) {
    const double *rb = r + k * slot;
    double *pb = p + k * slot;
    for (size_t i = 0; i < count; ++i) pb[i] = rb[i] + beta * pb[i];
}

static double step_length(double num, double den) { return den != 0 ? num / den : 0.0; }

/* The serial reference (apps/cg/reference.cpp): x after `iterations`. */
static double *reference(unsigned iterations) {
    double *x = app_calloc(nb * slot, sizeof(double)), *r = app_calloc(nb * slot, sizeof(double));
    double *p = app_calloc(nb * slot, sizeof(double)), *q = app_calloc(nb * slot, sizeof(double));
    double *pq = app_calloc(nb * stride, sizeof(double)), *rp = app_calloc(nb * stride, sizeof(double));
    for (size_t k = 0; k < nb; ++k) rp[k * stride] = init_block(k, x, r, p, q);
    double rr = reduce(rp);
    for (unsigned it = 0; it < iterations; ++it) {
        for (size_t k = 0; k < nb; ++k) pq[k * stride] = spmv_block(k, p, q);
        const double alpha = step_length(rr, reduce(pq));
        for (size_t k = 0; k < nb; ++k) rp[k * stride] = update_block(k, alpha, p, q, x, r);
        const double next = reduce(rp), beta = step_length(next, rr);
        rr = next;
        for (size_t k = 0; k < nb; ++k) direction_block(k, beta, r, p);
    }
    free(r), free(p), free(q), free(pq), free(rp);
    return x;
}

int main(int argc, char **argv) {
    const struct app_size s =
        app_parse(argc, argv, "cg", (struct app_size){16, 4, 10}, (struct app_size){128, 8, 100});
    if (s.n < 2 || s.n > 512) app_bad("n: grid side must be in [2, 512], got %zu", s.n);
    if (s.block > s.n || s.n % s.block != 0)
        app_bad("block: planes per block must divide the grid side %zu, got %zu", s.n, s.block);
    n = s.n, planes = s.block, nb = n / planes, plane = n * n, count = planes * plane;
    slot = app_slot(count, sizeof(double));
    double *x = app_map(nb * slot * sizeof(double)), *r = app_map(nb * slot * sizeof(double));
    double *p = app_map(nb * slot * sizeof(double)), *q = app_map(nb * slot * sizeof(double));
    double *sc = app_map((PQ + 2 * nb) * stride * sizeof(double));
    double *rr = sc + RR * stride, *alpha = sc + ALPHA * stride, *beta = sc + BETA * stride;
    double *pq = sc + PQ * stride, *rp = pq + nb * stride;
    const long nbl = (long)nb;
    size_t tasks = 0;

    double seconds = 0;
#pragma omp parallel
#pragma omp single
    {
        const double t0 = omp_get_wtime();
        for (size_t k = 0; k < nb; ++k) {
#pragma omp task depend(out : x[k * slot], r[k * slot], p[k * slot], q[k * slot], rp[k * stride])
            rp[k * stride] = init_block(k, x, r, p, q);
            ++tasks;
        }
#pragma omp task depend(iterator(long j = 0 : nbl), in : rp[j * stride]) depend(out : rr[0])
        *rr = reduce(rp);
        ++tasks;
        for (unsigned it = 0; it < s.iterations; ++it) {
            for (long k = 0; k < nbl; ++k) {
#pragma omp task depend(iterator(long j = app_lo(k) : app_hi(k, nbl)), in : p[j * slot]) \
    depend(out : q[k * slot], pq[k * stride])
                pq[k * stride] = spmv_block(k, p, q);
                ++tasks;
            }
#pragma omp task depend(iterator(long j = 0 : nbl), in : pq[j * stride]) depend(in : rr[0]) depend(out : alpha[0])
            *alpha = step_length(*rr, reduce(pq));
            ++tasks;
            for (size_t k = 0; k < nb; ++k) {
#pragma omp task depend(in : alpha[0], p[k * slot], q[k * slot]) depend(inout : x[k * slot], r[k * slot]) \
    depend(out : rp[k * stride])
                rp[k * stride] = update_block(k, *alpha, p, q, x, r);
                ++tasks;
            }
#pragma omp task depend(iterator(long j = 0 : nbl), in : rp[j * stride]) depend(inout : rr[0]) depend(out : beta[0])
            {
                const double next = reduce(rp);
                *beta = step_length(next, *rr);
                *rr = next;
            }
            ++tasks;
            for (size_t k = 0; k < nb; ++k) {
#pragma omp task depend(in : beta[0], r[k * slot]) depend(inout : p[k * slot])
                direction_block(k, *beta, r, p);
                ++tasks;
            }
        }
#pragma omp taskwait
        seconds = omp_get_wtime() - t0;
    }

    double *ref = reference(s.iterations), scale = 0, diff = 0;
    uint64_t sum = APP_HASH_INIT;
    for (size_t k = 0; k < nb; ++k)
        for (size_t i = 0; i < count; ++i) {
            const double want = ref[k * slot + i], d = fabs(x[k * slot + i] - want);
            scale = fabs(want) > scale ? fabs(want) : scale;
            diff = isnan(d) ? INFINITY : (d > diff ? d : diff);
        }
    for (size_t k = 0; k < nb; ++k) sum = app_hash(sum, x + k * slot, count * sizeof(double));
    const double err = scale > 0 ? diff / scale : diff;
    if (!(err <= 1e-12))
        app_fail("max|x - x_serial| / max|x_serial| = %.3e exceeds the tolerance 1e-12", err);
    app_result(tasks, seconds, sum);
    free(ref);
    return 0;
}
