/* tests/omp/apps/app_common.h — what the OpenMP C versions of numaware's
 * applications (tests/omp/apps/NAME.c, one per apps/NAME) share: their
 * options, page-aligned untouched arrays (first touch decides each page's
 * node, as the native programs' PageArray), the deterministic inputs
 * (hashed_unit, the stencils' initial_value), the neighbour ranges used in
 * depend(iterator(...)) clauses, a checksum and the result line.
 * Header-only; every function is static.
 *
 * Options (every app): --size test|bench   the native test_size / bench_size
 *                      --n N --block B --iterations I   override one field
 * A bad option or size: one line on stderr, exit 2. A wrong result: one
 * line on stderr, exit 1. Success: one line on stdout,
 *   app=NAME tasks=N seconds=S checksum=K ok=1
 * N: tasks created; S: wall time (omp_get_wtime) from the first spawn, in
 * the single of the already started team, to the end of the final taskwait
 * (the native run_graph's barrier), as the native programs time theirs;
 * K: a 64-bit FNV-1a hash of the result read in a fixed order. */
#ifndef APP_COMMON_H
#define APP_COMMON_H

#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, madvise */

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct app_size {
    size_t n;            /* problem size (grid side, matrix order, array length) */
    size_t block;        /* block / tile size */
    unsigned iterations; /* sweeps, solver iterations, repetitions, bins */
};

static const char *app_name = "app";

/* One line "NAME: message" on stderr, then exit(status). */
_Noreturn static inline void app_exit(int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", app_name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(status);
}
#define app_bad(...) app_exit(2, __VA_ARGS__)  /* bad option or size */
#define app_fail(...) app_exit(1, __VA_ARGS__) /* wrong result, no memory */

/* A positive decimal integer no larger than max, or app_bad. */
static inline unsigned long long app_number(const char *opt, const char *text, unsigned long long max) {
    char *end = NULL;
    errno = 0;
    const unsigned long long v = strtoull(text, &end, 10);
    if (text[0] < '0' || text[0] > '9' || *end != '\0' || errno != 0 || v == 0 || v > max)
        app_bad("%s: expected an integer in 1..%llu, got '%s'", opt, max, text);
    return v;
}

/* The size from the command line: --size picks test (default) or bench,
 * then --n/--block/--iterations override single fields, in any order. */
static inline struct app_size app_parse(int argc, char **argv, const char *name, struct app_size test,
                                 struct app_size bench) {
    app_name = name;
    struct app_size s = test, over = {0, 0, 0};
    for (int i = 1; i < argc; i += 2) {
        const char *opt = argv[i];
        if (strcmp(opt, "--size") != 0 && strcmp(opt, "--n") != 0 && strcmp(opt, "--block") != 0 &&
            strcmp(opt, "--iterations") != 0)
            app_bad("unknown option '%s' (usage: %s [--size test|bench] [--n N] [--block B] [--iterations I])",
                    opt, name);
        if (i + 1 >= argc) app_bad("option %s needs a value", opt);
        const char *val = argv[i + 1];
        if (strcmp(opt, "--size") == 0) {
            if (strcmp(val, "test") == 0) s = test;
            else if (strcmp(val, "bench") == 0) s = bench;
            else app_bad("--size: expected 'test' or 'bench', got '%s'", val);
        } else if (strcmp(opt, "--n") == 0) {
            over.n = (size_t)app_number(opt, val, 1ULL << 40);
        } else if (strcmp(opt, "--block") == 0) {
            over.block = (size_t)app_number(opt, val, 1ULL << 40);
        } else {
            over.iterations = (unsigned)app_number(opt, val, 100000);
        }
    }
    if (over.n) s.n = over.n;
    if (over.block) s.block = over.block;
    if (over.iterations) s.iterations = over.iterations;
    return s;
}

static inline size_t app_page(void) {
    const long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

/* Elements of `elem` bytes filling `count` elements rounded up to whole
 * pages: the slot of one block, so the next block starts on a page. */
static inline size_t app_slot(size_t count, size_t elem) {
    const size_t page = app_page();
    return (count * elem + page - 1) / page * page / elem;
}

/* `bytes` of zero pages in their own anonymous mapping, untouched: the task
 * that first writes a page decides its node. Base pages, as the native
 * programs ask (a huge page would put several blocks on one node). */
static inline void *app_map(size_t bytes) {
    const size_t page = app_page(), len = (bytes + page - 1) / page * page;
    void *p = mmap(NULL, len ? len : page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) app_fail("cannot map %zu bytes: %s", len, strerror(errno));
    (void)madvise(p, len ? len : page, MADV_NOHUGEPAGE);
    return p;
}

/* calloc or app_fail (the serial references' arrays). */
static inline void *app_calloc(size_t count, size_t elem) {
    void *p = calloc(count, elem);
    if (!p) app_fail("out of memory (%zu x %zu bytes)", count, elem);
    return p;
}

/* A value in [-0.5, 0.5) from two indices (apps/common/hashed_input.hpp). */
static inline double hashed_unit(uint64_t i, uint64_t j) {
    uint64_t z = i * 0x9E3779B97F4A7C15ULL + j * 0xC2B2AE3D27D4EB4FULL + 0x165667B19E3779F9ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53 - 0.5;
}

/* The stencil apps' grid point (row, col) of a side x side grid
 * (apps/common/stencil_kernels.hpp, initial_value). */
static inline double initial_value(size_t row, size_t col, size_t side) {
    if (row == 0 || col == 0 || row + 1 == side || col + 1 == side)
        return 1.0 + (double)((row * 3 + col * 5) % 11) / 11.0;
    uint64_t h = ((uint64_t)row << 32) ^ (uint64_t)col;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return (double)(h >> 11) * 0x1.0p-53;
}

/* Rows [r0, r1) of a side x side row-major grid set to initial_value. */
static inline void initial_rows(double *g, size_t side, size_t r0, size_t r1) {
    for (size_t r = r0; r < r1; ++r)
        for (size_t c = 0; c < side; ++c) g[r * side + c] = initial_value(r, c, side);
}

/* Neighbour ranges for depend(iterator(...)) (GCC flags range variables
 * used only in a depend clause as unused, so the bounds are calls):
 *   [app_lo(k), app_hi(k, n))              k and its neighbours k-1, k+1
 *   [app_nb_first(k), app_nb_end(k, n)):2  the neighbours k-1, k+1 only
 * each clipped to 0..n-1. */
static inline long app_lo(long k) { return k > 0 ? k - 1 : k; }
static inline long app_hi(long k, long n) { return k + 2 < n ? k + 2 : n; }
static inline long app_nb_first(long k) { return k > 0 ? k - 1 : k + 1; }
static inline long app_nb_end(long k, long n) { return k + 1 < n ? k + 2 : k; }

/* FNV-1a over bytes: a checksum of a result read in a fixed order. */
#define APP_HASH_INIT 0xcbf29ce484222325ULL
static inline uint64_t app_hash(uint64_t h, const void *data, size_t bytes) {
    const unsigned char *p = data;
    for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

/* Index of the first element whose bits differ, or count (the exact apps
 * compare bitwise: 0.0 and -0.0 differ, a NaN equals its own bits). */
static inline size_t app_diff(const double *a, const double *b, size_t count) {
    size_t i = 0;
    while (i < count && memcmp(a + i, b + i, sizeof(double)) == 0) ++i;
    return i;
}

/* The one line of a successful run. */
static inline void app_result(size_t tasks, double seconds, uint64_t checksum) {
    printf("app=%s tasks=%zu seconds=%.6f checksum=%016llx ok=1\n", app_name, tasks, seconds,
           (unsigned long long)checksum);
}

#endif /* APP_COMMON_H */
