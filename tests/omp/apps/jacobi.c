/* tests/omp/apps/jacobi.c — 2-D 5-point Jacobi, double-buffered, in row
 * blocks, as OpenMP tasks; its task graph is apps/jacobi's (program.cpp).
 *
 * An n x n grid (row-major) cut into n / block blocks of whole rows; two
 * buffers A and B. Tasks, spawned in this order from one single (then one
 * taskwait, the native barrier):
 *   init(k)       out A[k]                                 (first touch of A)
 *   sweep(k, t)   in S[k-1], S[k], S[k+1] (those that exist); out D[k]
 * t = 0..iterations-1, k inner; S/D = A/B for even t, B/A for odd t (sweep
 * 0 first-touches B). Every block is named by its first element. The native
 * program's default declaration (halos=rows) names only the neighbours'
 * edge rows; which task waits for which is the same either way, and this is
 * its --halos whole-blocks declaration.
 * Interior points get 0.25 * (((N + S) + W) + E), boundary points are
 * copied. Check: a serial whole-grid Jacobi with the same arithmetic,
 * bit-exact. Sizes: --n grid side (3..32768), --block rows per block
 * (divides n; a block is whole pages), --iterations sweeps; test 256/32/4,
 * bench 4096/128/20 (apps/jacobi/jacobi.hpp). */
#include "app_common.h"

/* dst rows [r0, r1) from src rows [r0 - 1, r1 + 1) clipped to the grid. */
static void sweep_rows(const double *src, double *dst, size_t n, size_t r0, size_t r1) {
    for (size_t r = r0; r < r1; ++r) {
        const double *s = src + r * n;
        double *d = dst + r * n;
        if (r == 0 || r + 1 == n) {
            memcpy(d, s, n * sizeof(double));
            continue;
        }
        const double *no = s - n, *so = s + n;
        d[0] = s[0];
        for (size_t c = 1; c + 1 < n; ++c) d[c] = 0.25 * (((no[c] + so[c]) + s[c - 1]) + s[c + 1]);
        d[n - 1] = s[n - 1];
    }
}

/* The serial reference (apps/jacobi/reference.cpp): whole-grid sweeps. */
static double *reference(size_t n, unsigned iterations) {
    double *a = app_calloc(n * n, sizeof(double)), *b = app_calloc(n * n, sizeof(double));
    initial_rows(a, n, 0, n);
    memcpy(b, a, n * n * sizeof(double));
    for (unsigned t = 0; t < iterations; ++t) {
        for (size_t r = 1; r + 1 < n; ++r)
            for (size_t c = 1; c + 1 < n; ++c)
                b[r * n + c] = 0.25 * (((a[(r - 1) * n + c] + a[(r + 1) * n + c]) + a[r * n + c - 1]) +
                                       a[r * n + c + 1]);
        double *x = a;
        a = b;
        b = x;
    }
    free(b);
    return a;
}

int main(int argc, char **argv) {
    const struct app_size s =
        app_parse(argc, argv, "jacobi", (struct app_size){256, 32, 4}, (struct app_size){4096, 128, 20});
    if (s.n < 3 || s.n > 32768) app_bad("n: grid side must be in 3..32768, got %zu", s.n);
    if (s.block > s.n || s.n % s.block != 0)
        app_bad("block: rows per block must divide the grid side %zu, got %zu", s.n, s.block);
    if (s.block * s.n * sizeof(double) % app_page() != 0)
        app_bad("block: a block of %zu rows is %zu bytes, must be a multiple of the page size %zu", s.block,
                s.block * s.n * sizeof(double), app_page());
    const size_t n = s.n, rows = s.block, bs = rows * n;
    const long blocks = (long)(n / rows);
    double *a = app_map(n * n * sizeof(double)), *b = app_map(n * n * sizeof(double));
    double *bufs[2] = {a, b};
    size_t tasks = 0;

    double seconds = 0;
#pragma omp parallel
#pragma omp single
    {
        const double t0 = omp_get_wtime();
        for (long k = 0; k < blocks; ++k) {
#pragma omp task depend(out : a[k * bs])
            initial_rows(a, n, k * rows, (k + 1) * rows);
            ++tasks;
        }
        for (unsigned t = 0; t < s.iterations; ++t) {
            double *src = bufs[t % 2], *dst = bufs[(t + 1) % 2];
            for (long k = 0; k < blocks; ++k) {
#pragma omp task depend(iterator(long j = app_lo(k) : app_hi(k, blocks)), in : src[j * bs]) \
    depend(out : dst[k * bs])
                sweep_rows(src, dst, n, k * rows, (k + 1) * rows);
                ++tasks;
            }
        }
#pragma omp taskwait
        seconds = omp_get_wtime() - t0;
    }

    const double *got = bufs[s.iterations % 2];
    double *ref = reference(n, s.iterations);
    const size_t i = app_diff(got, ref, n * n);
    if (i < n * n)
        app_fail("mismatch with the serial reference at row %zu col %zu: %.17g, expected %.17g", i / n, i % n,
                 got[i], ref[i]);
    app_result(tasks, seconds, app_hash(APP_HASH_INIT, got, n * n * sizeof(double)));
    free(ref);
    return 0;
}
