/* tests/omp/apps/red_black.c — 2-D 5-point red-black Gauss-Seidel, colours
 * stored apart, in row blocks, as OpenMP tasks; its task graph is
 * apps/red_black's (program.cpp).
 *
 * Point (r, c) is red when r + c is even. The colours live in two row-major
 * arrays of n rows x n/2 points (point idx of colour k in row r is column
 * (r + k) % 2 + 2 idx), each cut into n / block blocks of whole rows.
 * Tasks, spawned in this order from one single (then one taskwait, the
 * native barrier):
 *   init(b)       out R[b], out K[b]                            (first touch)
 *   red(b, t)     inout R[b]; in K[b-1], K[b], K[b+1] (those that exist)
 *   black(b, t)   inout K[b]; in R[b-1], R[b], R[b+1] (those that exist)
 * per iteration all red blocks, then all black blocks (R red, K black).
 * Every block is named by its first element. The native default
 * (halos=rows) names only the neighbours' edge rows; which task waits for
 * which is the same (its --halos whole-blocks declaration).
 * Check: a row-major grid updated red points first, then black ones, the
 * same arithmetic, bit-exact. Sizes: --n grid side (even, 4..32768),
 * --block rows per block (divides n; a block of one colour is whole pages),
 * --iterations (a red and a black half-sweep each); test 256/32/4, bench
 * 4096/128/20 (apps/red_black/red_black.hpp). */
#include "app_common.h"

static size_t col_of(size_t r, unsigned colour, size_t idx) { return (r + colour) % 2 + 2 * idx; }

static void init_rows(double *red, double *black, size_t n, size_t r0, size_t r1) {
    const size_t h = n / 2;
    for (size_t r = r0; r < r1; ++r)
        for (size_t k = 0; k < h; ++k) {
            red[r * h + k] = initial_value(r, col_of(r, 0, k), n);
            black[r * h + k] = initial_value(r, col_of(r, 1, k), n);
        }
}

/* Points of `colour` in rows [r0, r1) of `mine` from `other` (rows r0 - 1
 * .. r1 read); global boundary points stay. */
static void half_sweep(double *mine, const double *other, unsigned colour, size_t n, size_t r0, size_t r1) {
    const size_t h = n / 2;
    for (size_t r = r0 > 1 ? r0 : 1; r < (r1 < n - 1 ? r1 : n - 1); ++r) {
        const size_t p = (r + colour) % 2;
        const double *up = other + (r - 1) * h, *mid = other + r * h, *down = other + (r + 1) * h;
        double *row = mine + r * h;
        for (size_t k = 0; k < h; ++k) {
            const size_t c = p + 2 * k;
            if (c == 0 || c + 1 == n) continue;
            const double w = p == 0 ? mid[k - 1] : mid[k];
            const double e = p == 0 ? mid[k] : mid[k + 1];
            row[k] = 0.25 * (((up[k] + down[k]) + w) + e);
        }
    }
}

/* The serial reference (apps/red_black/reference.cpp). */
static double *reference(size_t n, unsigned iterations) {
    double *u = app_calloc(n * n, sizeof(double));
    initial_rows(u, n, 0, n);
    for (unsigned t = 0; t < iterations; ++t)
        for (size_t colour = 0; colour < 2; ++colour)
            for (size_t r = 1; r + 1 < n; ++r)
                for (size_t c = 1; c + 1 < n; ++c)
                    if ((r + c) % 2 == colour)
                        u[r * n + c] = 0.25 * (((u[(r - 1) * n + c] + u[(r + 1) * n + c]) + u[r * n + c - 1]) +
                                               u[r * n + c + 1]);
    return u;
}

int main(int argc, char **argv) {
    const struct app_size s =
        app_parse(argc, argv, "red_black", (struct app_size){256, 32, 4}, (struct app_size){4096, 128, 20});
    if (s.n < 4 || s.n > 32768 || s.n % 2 != 0) app_bad("n: grid side must be even and in 4..32768, got %zu", s.n);
    if (s.block > s.n || s.n % s.block != 0)
        app_bad("block: rows per block must divide the grid side %zu, got %zu", s.n, s.block);
    if (s.block * (s.n / 2) * sizeof(double) % app_page() != 0)
        app_bad("block: a block of %zu rows of one colour is %zu bytes, must be a multiple of the page size %zu",
                s.block, s.block * (s.n / 2) * sizeof(double), app_page());
    const size_t n = s.n, h = n / 2, rows = s.block, bs = rows * h;
    const long blocks = (long)(n / rows);
    double *red = app_map(n * h * sizeof(double)), *black = app_map(n * h * sizeof(double));
    double *colours[2] = {red, black};
    size_t tasks = 0;

    double seconds = 0;
#pragma omp parallel
#pragma omp single
    {
        const double t0 = omp_get_wtime();
        for (long k = 0; k < blocks; ++k) {
#pragma omp task depend(out : red[k * bs], black[k * bs])
            init_rows(red, black, n, k * rows, (k + 1) * rows);
            ++tasks;
        }
        for (unsigned t = 0; t < s.iterations; ++t)
            for (unsigned colour = 0; colour < 2; ++colour) {
                double *mine = colours[colour], *other = colours[1 - colour];
                for (long k = 0; k < blocks; ++k) {
#pragma omp task depend(inout : mine[k * bs]) \
    depend(iterator(long j = app_lo(k) : app_hi(k, blocks)), in : other[j * bs])
                    half_sweep(mine, other, colour, n, k * rows, (k + 1) * rows);
                    ++tasks;
                }
            }
#pragma omp taskwait
        seconds = omp_get_wtime() - t0;
    }

    double *got = app_calloc(n * n, sizeof(double)), *ref = reference(n, s.iterations);
    for (size_t r = 0; r < n; ++r)
        for (size_t k = 0; k < h; ++k)
            for (unsigned colour = 0; colour < 2; ++colour)
                got[r * n + col_of(r, colour, k)] = colours[colour][r * h + k];
    const size_t i = app_diff(got, ref, n * n);
    if (i < n * n)
        app_fail("mismatch with the serial reference at row %zu col %zu: %.17g, expected %.17g", i / n, i % n,
                 got[i], ref[i]);
    app_result(tasks, seconds, app_hash(APP_HASH_INIT, got, n * n * sizeof(double)));
    free(got);
    free(ref);
    return 0;
}
