/* tests/omp/apps/qr.c — tiled QR factorisation (PLASMA-style GEQRT / UNMQR /
 * TSQRT / TSMQR), as OpenMP tasks; its task graph is apps/qr's
 * (program.cpp). Build with -lm (sqrt).
 *
 * A is n x n, cut into nt x nt tiles of b x b (column-major inside, each
 * tile contiguous and page-aligned); tile (m, k) has a factor tile T(m, k)
 * in its own page-aligned slot. Tasks, spawned in this order from one
 * single (then one taskwait, the native barrier):
 *   init(m, k)      out A(m,k)                              all tiles, row-major
 *   for k = 0..nt-1:
 *     GEQRT(k)      inout A(k,k); out T(k,k)
 *     UNMQR(k,n)    in A(k,k), T(k,k); inout A(k,n)          n > k
 *     for m > k:
 *       TSQRT(m,k)    inout A(k,k), A(m,k); out T(m,k)
 *       TSMQR(m,n,k)  in A(m,k), T(m,k); inout A(k,n), A(m,n)   n > k
 * Every tile is named by its first element. The tile kernels are written
 * here, unblocked Householder (LAPACK dlarfg's convention): T(m,k) holds
 * the b reflector scalars tau, where the native program calls LAPACKE
 * dgeqrt/dgemqrt/dtpqrt/dtpmqrt with an ib x b compact-WY factor (ib =
 * min(b, 32)); the tiles and dependences are the same.
 * Check: an unblocked Householder QR of the whole matrix (the same
 * reflectors; the native program calls LAPACKE dgeqrf), on R's absolute
 * values (R is unique up to the sign of each row) with the native
 * tolerance max||R| - |R_ref|| / max|R_ref| <= 1e-9. The dependences order
 * every update of every tile, so R is bit-identical from run to run and
 * the checksum (of R, column-major) is exact.
 * Sizes: --n matrix order (1..8192), --block tile side (divides n);
 * test 128/32, bench 2048/128 (apps/qr/qr.hpp); --iterations is unused. */
#include "app_common.h"

static size_t b, nt, a_slot, t_slot; /* tile side, tiles per side, slot sizes (doubles) */

/* H = I - tau (1, v)(1, v)^T maps (alpha, x) to (beta, 0); v overwrites x,
 * beta alpha; returns tau (0: H = I). */
static double house(double *alpha, double *x, size_t len) {
    double xn = 0;
    for (size_t i = 0; i < len; ++i) xn += x[i] * x[i];
    if (xn == 0) return 0;
    const double beta = -copysign(sqrt(*alpha * *alpha + xn), *alpha);
    const double tau = (beta - *alpha) / beta, scale = 1.0 / (*alpha - beta);
    for (size_t i = 0; i < len; ++i) x[i] *= scale;
    *alpha = beta;
    return tau;
}

/* Applies H = I - tau (1, v)(1, v)^T to the column (c0, c), from the left. */
static void reflect(double tau, const double *v, size_t len, double *c0, double *c) {
    if (tau == 0) return;
    double w = *c0;
    for (size_t i = 0; i < len; ++i) w += v[i] * c[i];
    w *= tau;
    *c0 -= w;
    for (size_t i = 0; i < len; ++i) c[i] -= w * v[i];
}

/* QR of an m x m matrix (leading dimension ld) in place: R on and above
 * the diagonal, the reflectors below it, their tau in tau[0..m). */
static void geqr2(size_t m, double *A, size_t ld, double *tau) {
    for (size_t j = 0; j < m; ++j) {
        double *cj = A + j * ld;
        tau[j] = house(cj + j, cj + j + 1, m - j - 1);
        for (size_t c = j + 1; c < m; ++c) reflect(tau[j], cj + j + 1, m - j - 1, A + c * ld + j, A + c * ld + j + 1);
    }
}

/* C = Q^T C, Q from geqr2's reflectors in V (b x b tiles). */
static void unmqr(const double *V, const double *tau, double *C) {
    for (size_t j = 0; j < b; ++j)
        for (size_t c = 0; c < b; ++c) reflect(tau[j], V + j * b + j + 1, b - j - 1, C + c * b + j, C + c * b + j + 1);
}

/* QR of [R; A2] (R upper triangular, its lower part untouched): R updated,
 * the reflectors' lower parts in A2, their tau in tau. */
static void tsqrt(double *R, double *A2, double *tau) {
    for (size_t j = 0; j < b; ++j) {
        tau[j] = house(R + j * b + j, A2 + j * b, b);
        for (size_t c = j + 1; c < b; ++c) reflect(tau[j], A2 + j * b, b, R + c * b + j, A2 + c * b);
    }
}

/* [C1; C2] = Q^T [C1; C2], Q from tsqrt's reflectors in V2. */
static void tsmqr(const double *V2, const double *tau, double *C1, double *C2) {
    for (size_t j = 0; j < b; ++j)
        for (size_t c = 0; c < b; ++c) reflect(tau[j], V2 + j * b, b, C1 + c * b + j, C2 + c * b);
}

int main(int argc, char **argv) {
    const struct app_size s =
        app_parse(argc, argv, "qr", (struct app_size){128, 32, 1}, (struct app_size){2048, 128, 1});
    if (s.n > 8192) app_bad("n: matrix order must be in [1, 8192], got %zu", s.n);
    if (s.block > s.n || s.n % s.block != 0)
        app_bad("block: tile side must divide the matrix order %zu, got %zu", s.n, s.block);
    const size_t n = s.n;
    b = s.block, nt = n / b, a_slot = app_slot(b * b, sizeof(double)), t_slot = app_slot(b, sizeof(double));
    double *a = app_map(nt * nt * a_slot * sizeof(double)), *t = app_map(nt * nt * t_slot * sizeof(double));
#define A(m, k) (a + ((m) * nt + (k)) * a_slot)
#define T(m, k) (t + ((m) * nt + (k)) * t_slot)
    size_t tasks = 0;

    double seconds = 0;
#pragma omp parallel
#pragma omp single
    {
        const double t0 = omp_get_wtime();
        for (size_t m = 0; m < nt; ++m)
            for (size_t k = 0; k < nt; ++k) {
#pragma omp task depend(out : A(m, k)[0])
                for (size_t j = 0; j < b; ++j)
                    for (size_t i = 0; i < b; ++i) A(m, k)[j * b + i] = hashed_unit(m * b + i, k * b + j);
                ++tasks;
            }
        for (size_t k = 0; k < nt; ++k) {
#pragma omp task depend(inout : A(k, k)[0]) depend(out : T(k, k)[0])
            geqr2(b, A(k, k), b, T(k, k));
            ++tasks;
            for (size_t n2 = k + 1; n2 < nt; ++n2) {
#pragma omp task depend(in : A(k, k)[0], T(k, k)[0]) depend(inout : A(k, n2)[0])
                unmqr(A(k, k), T(k, k), A(k, n2));
                ++tasks;
            }
            for (size_t m = k + 1; m < nt; ++m) {
#pragma omp task depend(inout : A(k, k)[0], A(m, k)[0]) depend(out : T(m, k)[0])
                tsqrt(A(k, k), A(m, k), T(m, k));
                ++tasks;
                for (size_t n2 = k + 1; n2 < nt; ++n2) {
#pragma omp task depend(in : A(m, k)[0], T(m, k)[0]) depend(inout : A(k, n2)[0], A(m, n2)[0])
                    tsmqr(A(m, k), T(m, k), A(k, n2), A(m, n2));
                    ++tasks;
                }
            }
        }
#pragma omp taskwait
        seconds = omp_get_wtime() - t0;
    }

    double *ref = app_calloc(n * n, sizeof(double)), *tau = app_calloc(n, sizeof(double));
    for (size_t j = 0; j < n; ++j)
        for (size_t i = 0; i < n; ++i) ref[j * n + i] = hashed_unit(i, j);
    geqr2(n, ref, n, tau);
    double scale = 0, diff = 0;
    uint64_t sum = APP_HASH_INIT;
    for (size_t j = 0; j < n; ++j)
        for (size_t i = 0; i <= j; ++i) {
            const double got = A(i / b, j / b)[(j % b) * b + i % b], want = fabs(ref[j * n + i]);
            const double d = fabs(fabs(got) - want);
            scale = want > scale ? want : scale;
            diff = isnan(d) ? INFINITY : (d > diff ? d : diff);
            sum = app_hash(sum, &got, sizeof got);
        }
    const double err = scale > 0 ? diff / scale : diff;
    if (!(err <= 1e-9)) app_fail("max||R| - |R_ref|| / max|R_ref| = %.3e exceeds the tolerance 1e-9", err);
    app_result(tasks, seconds, sum);
    free(ref);
    free(tau);
    return 0;
}
