/* tests/omp/apps/nstream.c — NStream: 7 independent streams of
 * a += b + 3 c triads over blocks, as OpenMP tasks; its task graph is
 * apps/nstream's (program.cpp).
 *
 * Each of the 7 streams has arrays a, b, c of n doubles (the a arrays of
 * all streams share one mapping, stream s being its s-th run of n, and so
 * do b and c), cut into n / block blocks. Tasks, spawned in this order
 * from one single (then one taskwait, the native barrier):
 *   init(s, k)       out a[s][k], b[s][k], c[s][k]       s outer (first touch)
 *   triad(s, k, t)   inout a[s][k]; in b[s][k], c[s][k]   t, then s, then k
 * Every block is named by its first element. Blocks never interact: each
 * (s, k) is a chain of `iterations` triads.
 * Check: one stream computed serially with the same per-element arithmetic,
 * every stream bit-exact. Sizes: --n doubles per array (up to 2^30),
 * --block doubles per block (divides n; whole pages), --iterations
 * repetitions; test 16384/2048/4, bench 1048576/65536/20
 * (apps/nstream/nstream.hpp). */
#include "app_common.h"

enum { streams = 7 };
static const double scalar = 3.0;

static double a_value(size_t j) { return (double)(j % 3); }
static double b_value(size_t j) { return 1.0 + (double)(j % 7) * 0.25; }
static double c_value(size_t j) { return 2.0 - (double)(j % 5) * 0.125; }

static void init_block(double *a, double *b, double *c, size_t begin, size_t end) {
    for (size_t j = begin; j < end; ++j) {
        a[j] = a_value(j);
        b[j] = b_value(j);
        c[j] = c_value(j);
    }
}

static void triad(double *a, const double *b, const double *c, size_t begin, size_t end) {
    for (size_t j = begin; j < end; ++j) a[j] += b[j] + scalar * c[j];
}

int main(int argc, char **argv) {
    const struct app_size s = app_parse(argc, argv, "nstream", (struct app_size){16384, 2048, 4},
                                        (struct app_size){(size_t)1 << 20, 65536, 20});
    if (s.n > ((size_t)1 << 30)) app_bad("n: elements per array must be at most %zu, got %zu", (size_t)1 << 30, s.n);
    if (s.block > s.n || s.n % s.block != 0)
        app_bad("block: elements per block must divide the array length %zu, got %zu", s.n, s.block);
    if (s.block * sizeof(double) % app_page() != 0)
        app_bad("block: a block of %zu doubles is %zu bytes, must be a multiple of the page size %zu", s.block,
                s.block * sizeof(double), app_page());
    const size_t n = s.n, block = s.block, blocks = n / block, total = streams * n;
    double *a_all = app_map(total * sizeof(double)), *b_all = app_map(total * sizeof(double));
    double *c_all = app_map(total * sizeof(double));
    size_t tasks = 0;

    double seconds = 0;
#pragma omp parallel
#pragma omp single
    {
        const double t0 = omp_get_wtime();
        for (size_t st = 0; st < streams; ++st) {
            double *a = a_all + st * n, *b = b_all + st * n, *c = c_all + st * n;
            for (size_t k = 0; k < blocks; ++k) {
                const size_t j0 = k * block;
#pragma omp task depend(out : a[j0], b[j0], c[j0])
                init_block(a, b, c, j0, j0 + block);
                ++tasks;
            }
        }
        for (unsigned t = 0; t < s.iterations; ++t)
            for (size_t st = 0; st < streams; ++st) {
                double *a = a_all + st * n, *b = b_all + st * n, *c = c_all + st * n;
                for (size_t k = 0; k < blocks; ++k) {
                    const size_t j0 = k * block;
#pragma omp task depend(inout : a[j0]) depend(in : b[j0], c[j0])
                    triad(a, b, c, j0, j0 + block);
                    ++tasks;
                }
            }
#pragma omp taskwait
        seconds = omp_get_wtime() - t0;
    }

    double *ra = app_calloc(n, sizeof(double)), *rb = app_calloc(n, sizeof(double));
    double *rc = app_calloc(n, sizeof(double));
    init_block(ra, rb, rc, 0, n);
    for (unsigned t = 0; t < s.iterations; ++t) triad(ra, rb, rc, 0, n);
    const double *want[3] = {ra, rb, rc}, *arrays[3] = {a_all, b_all, c_all};
    uint64_t sum = APP_HASH_INIT;
    for (int x = 0; x < 3; ++x)
        for (size_t st = 0; st < streams; ++st) {
            const double *got = arrays[x] + st * n;
            const size_t i = app_diff(got, want[x], n);
            if (i < n)
                app_fail("mismatch with the serial reference: stream %zu array %c element %zu: %.17g, expected %.17g",
                         st, "abc"[x], i, got[i], want[x][i]);
            sum = app_hash(sum, got, n * sizeof(double));
        }
    app_result(tasks, seconds, sum);
    free(ra);
    free(rb);
    free(rc);
    return 0;
}
