/* bench/omp/taskbench.c — the cost of explicit OpenMP tasks: creation,
 * dependences and scheduling, the way bench/tasks measures the project's
 * own runtime, as a plain gcc -fopenmp program that a script runs under
 * libgomp, LLVM's libomp and libnumaware_omp.so (LD_PRELOAD) alike.
 *
 * usage: taskbench BENCH [options]
 *   BENCH  wavefront     N x N cells, one task each, depend(in: north, west)
 *                        and depend(out: the cell), created from one single
 *          spawn         empty independent tasks from one single, then taskwait
 *          spawn-all     the same tasks, every thread creating its share
 *          jacobi        5-point Jacobi sweeps, two buffers, one task per block
 *                        of rows per sweep: in on the block and its two
 *                        neighbours of the source, out on the destination block
 *          gauss-seidel  in-place 5-point sweeps, one task per square tile per
 *                        sweep: inout on the tile, in on its four neighbours
 *          fib           fib(30), two tasks per call, final(n < CUTOFF)
 *   --reps R          timed runs, after one untimed warm-up (default 5)
 *   --n N             wavefront: grid side (default 1000)
 *   --tasks T         spawn, spawn-all: tasks (default 1000000)
 *   --stencil-n N     jacobi, gauss-seidel: grid side (default 2048)
 *   --block B         jacobi: rows per block (default 32);
 *                     gauss-seidel: tile side (default 128); must divide N
 *   --iterations I    jacobi, gauss-seidel: sweeps (default 60 / 15)
 *   --cutoff C        fib: the task for fib(m) is final if m < C (default 7)
 * A dependence is named by the first element of its block. Every run is
 * checked against a serial reference (the same arithmetic in the same
 * order, so the results are bit-identical); a mismatch exits with status 1.
 * Bad options: one line on stderr, status 2.
 *
 * Output, one line:
 *   result bench=B tasks=N reps=R median_s=S min_s=S max_s=S mtasks_per_s=X checksum=K */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
    long reps, n, tasks, stencil_n, block, iterations, cutoff;
} opt = {5, 1000, 1000000, 2048, 0, 0, 7};

static void die(int status, const char* what, const char* value) {
    fprintf(stderr, "taskbench: %s%s\n", what, value ? value : "");
    exit(status);
}

/* ------------------------------------------------------------ wavefront -- */
/* (n+1) x (n+1) cells; row 0 and column 0 are fixed, the others tasks. */
static uint32_t* wave;

static void wave_reset(long n) {
    for (long k = 0; k < (n + 1) * (n + 1); ++k) wave[k] = 0;
    for (long k = 0; k <= n; ++k) wave[k] = wave[k * (n + 1)] = (uint32_t)(k % 7 + 1);
}

static inline uint32_t wave_cell(uint32_t north, uint32_t west) { return (north + west + 1) % 1000003u; }

static void wave_tasks(long n) {
    const long w = n + 1;
    uint32_t* g = wave;
    for (long i = 1; i <= n; ++i)
        for (long j = 1; j <= n; ++j) {
#pragma omp task firstprivate(i, j) depend(in : g[(i - 1) * w + j], g[i * w + j - 1]) depend(out : g[i * w + j])
            g[i * w + j] = wave_cell(g[(i - 1) * w + j], g[i * w + j - 1]);
        }
#pragma omp taskwait
}

static uint64_t wave_sum(long n) {
    uint64_t s = 0;
    for (long k = 0; k < (n + 1) * (n + 1); ++k) s = s * 1000003u + wave[k];
    return s;
}

/* ---------------------------------------------------------------- spawn -- */
static struct { long count; char pad[56]; } ran[256];

static void spawn_tasks(long count) {
    for (long k = 0; k < count; ++k) {
#pragma omp task
        ran[omp_get_thread_num() & 255].count++;
    }
#pragma omp taskwait
}

/* ------------------------------------------------------------- stencils -- */
static double *sa, *sb;

static double initial(long i, long j, long n) {
    if (i == 0 || j == 0 || i == n - 1 || j == n - 1) return 1.0 + (double)((i + 2 * j) % 5) * 0.25;
    uint64_t h = (uint64_t)i * 0x9e3779b97f4a7c15u ^ (uint64_t)j * 0xc2b2ae3d27d4eb4fu;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9u;
    h ^= h >> 32;
    return (double)(h >> 11) / 9007199254740992.0;
}

static void stencil_reset(int jacobi) {
    const long n = opt.stencil_n;
    for (long i = 0; i < n; ++i)
        for (long j = 0; j < n; ++j) {
            sa[i * n + j] = initial(i, j, n);
            if (jacobi) sb[i * n + j] = sa[i * n + j];
        }
}

static inline double five(double north, double south, double west, double east) {
    return 0.25 * (((north + south) + west) + east);
}

/* Rows [b*B, (b+1)*B) of dst from src; boundary rows and columns copied. */
static void jacobi_block(const double* src, double* dst, long b) {
    const long n = opt.stencil_n, rows = opt.block;
    for (long i = b * rows; i < (b + 1) * rows; ++i) {
        const double* s = src + i * n;
        double* d = dst + i * n;
        if (i == 0 || i == n - 1) {
            memcpy(d, s, (size_t)n * sizeof *d);
            continue;
        }
        d[0] = s[0], d[n - 1] = s[n - 1];
        for (long j = 1; j < n - 1; ++j) d[j] = five(s[j - n], s[j + n], s[j - 1], s[j + 1]);
    }
}

/* Tile (ti, tj) of side B in place, rows then columns; the grid's boundary
   stays. Tile by tile in row-major tile order is one row-major sweep. */
static void gs_tile(double* g, long ti, long tj) {
    const long n = opt.stencil_n, t = opt.block;
    const long i0 = ti * t > 1 ? ti * t : 1, i1 = (ti + 1) * t < n - 1 ? (ti + 1) * t : n - 1;
    const long j0 = tj * t > 1 ? tj * t : 1, j1 = (tj + 1) * t < n - 1 ? (tj + 1) * t : n - 1;
    for (long i = i0; i < i1; ++i)
        for (long j = j0; j < j1; ++j) {
            double* p = g + i * n + j;
            *p = five(p[-n], p[n], p[-1], p[1]);
        }
}

static void jacobi_tasks(void) {
    const long n = opt.stencil_n, bs = opt.block * n, nb = n / opt.block;
    for (long it = 0; it < opt.iterations; ++it) {
        const double* src = it % 2 ? sb : sa;
        double* dst = it % 2 ? sa : sb;
        for (long b = 0; b < nb; ++b) {
            const int which = (b > 0) + 2 * (b + 1 < nb);
            if (which == 3) {
#pragma omp task depend(in : src[(b - 1) * bs], src[b * bs], src[(b + 1) * bs]) depend(out : dst[b * bs])
                jacobi_block(src, dst, b);
            } else if (which == 2) {
#pragma omp task depend(in : src[b * bs], src[(b + 1) * bs]) depend(out : dst[b * bs])
                jacobi_block(src, dst, b);
            } else if (which == 1) {
#pragma omp task depend(in : src[(b - 1) * bs], src[b * bs]) depend(out : dst[b * bs])
                jacobi_block(src, dst, b);
            } else {
#pragma omp task depend(in : src[b * bs]) depend(out : dst[b * bs])
                jacobi_block(src, dst, b);
            }
        }
    }
#pragma omp taskwait
}

static void gs_tasks(void) {
    const long n = opt.stencil_n, t = opt.block, nt = n / t;
    double* g = sa;
    for (long it = 0; it < opt.iterations; ++it)
        for (long ti = 0; ti < nt; ++ti)
            for (long tj = 0; tj < nt; ++tj) {
                const long self = ti * t * n + tj * t;
                const double* in[4] = {NULL, NULL, NULL, NULL};
                int k = 0;
                if (ti > 0) in[k++] = g + self - t * n;
                if (ti + 1 < nt) in[k++] = g + self + t * n;
                if (tj > 0) in[k++] = g + self - t;
                if (tj + 1 < nt) in[k++] = g + self + t;
                if (k == 4) {
#pragma omp task depend(in : in[0][0], in[1][0], in[2][0], in[3][0]) depend(inout : g[self])
                    gs_tile(g, ti, tj);
                } else if (k == 3) {
#pragma omp task depend(in : in[0][0], in[1][0], in[2][0]) depend(inout : g[self])
                    gs_tile(g, ti, tj);
                } else if (k == 2) {
#pragma omp task depend(in : in[0][0], in[1][0]) depend(inout : g[self])
                    gs_tile(g, ti, tj);
                } else {
#pragma omp task depend(inout : g[self])
                    gs_tile(g, ti, tj);
                }
            }
#pragma omp taskwait
}

static double stencil_sum(int jacobi) {
    const double* g = jacobi && opt.iterations % 2 ? sb : sa;
    double s = 0;
    for (long k = 0; k < opt.stencil_n * opt.stencil_n; ++k) s += g[k];
    return s;
}

/* ------------------------------------------------------------------ fib -- */
static long fib(int n) {
    if (n < 2) return n;
    long x, y;
#pragma omp task shared(x) final(n - 1 < opt.cutoff)
    x = fib(n - 1);
#pragma omp task shared(y) final(n - 2 < opt.cutoff)
    y = fib(n - 2);
#pragma omp taskwait
    return x + y;
}

/* ----------------------------------------------------------------- main -- */
enum bench { WAVEFRONT, SPAWN, SPAWN_ALL, JACOBI, GAUSS_SEIDEL, FIB };
static const char* const names[] = {"wavefront", "spawn", "spawn-all", "jacobi", "gauss-seidel", "fib"};

static long number(const char* flag, const char* text, long lo, long hi) {
    char* end;
    const long v = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "taskbench: %s wants an integer in [%ld, %ld], got '%s'\n", flag, lo, hi, text);
        exit(2);
    }
    return v;
}

static int by_time(const void* a, const void* b) {
    const double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

int main(int argc, char** argv) {
    if (argc < 2) die(2, "usage: taskbench wavefront|spawn|spawn-all|jacobi|gauss-seidel|fib [options]", NULL);
    int bench = -1;
    for (int k = 0; k < 6; ++k)
        if (strcmp(argv[1], names[k]) == 0) bench = k;
    if (bench < 0) die(2, "unknown benchmark: ", argv[1]);
    static const char* const flags[] = {"--reps", "--n", "--tasks", "--stencil-n", "--block", "--iterations", "--cutoff"};
    long* const fields[] = {&opt.reps, &opt.n, &opt.tasks, &opt.stencil_n, &opt.block, &opt.iterations, &opt.cutoff};
    static const long highs[] = {1000, 20000, 100000000, 16384, 16384, 100000, 40};
    for (int a = 2; a < argc; a += 2) {
        int f = -1;
        for (int k = 0; k < 7; ++k)
            if (strcmp(argv[a], flags[k]) == 0) f = k;
        if (f < 0) die(2, "unknown option: ", argv[a]);
        if (a + 1 >= argc) die(2, "missing value after ", argv[a]);
        *fields[f] = number(argv[a], argv[a + 1], f == 6 ? 0 : 1, highs[f]);
    }
    const int jacobi = bench == JACOBI;
    if (!opt.block) opt.block = jacobi ? 32 : 128;
    if (!opt.iterations) opt.iterations = jacobi ? 60 : 15;
    if ((jacobi || bench == GAUSS_SEIDEL) && (opt.stencil_n < 3 || opt.stencil_n % opt.block != 0))
        die(2, "--block must divide --stencil-n, and --stencil-n be at least 3", NULL);

    long tasks = 0;
    char want[64] = "", got[64] = "";
    if (bench == WAVEFRONT) {
        wave = malloc(sizeof *wave * (size_t)((opt.n + 1) * (opt.n + 1)));
        if (!wave) die(1, "out of memory", NULL);
        wave_reset(opt.n);
        const long w = opt.n + 1;
        for (long i = 1; i <= opt.n; ++i)
            for (long j = 1; j <= opt.n; ++j) wave[i * w + j] = wave_cell(wave[(i - 1) * w + j], wave[i * w + j - 1]);
        snprintf(want, sizeof want, "%llu", (unsigned long long)wave_sum(opt.n));
        tasks = opt.n * opt.n;
    } else if (bench == SPAWN || bench == SPAWN_ALL) {
        snprintf(want, sizeof want, "%ld", opt.tasks);
        tasks = opt.tasks;
    } else if (bench == FIB) {
        snprintf(want, sizeof want, "%ld", 832040L);
        tasks = 2 * 1346268L; /* two per call of n >= 2, of which there are fib(31) - 1 */
    } else {
        const size_t bytes = sizeof(double) * (size_t)(opt.stencil_n * opt.stencil_n);
        sa = malloc(bytes), sb = jacobi ? malloc(bytes) : NULL;
        if (!sa || (jacobi && !sb)) die(1, "out of memory", NULL);
        stencil_reset(jacobi);
        const long nb = opt.stencil_n / opt.block;
        for (long it = 0; it < opt.iterations; ++it)
            for (long b = 0; b < nb * (jacobi ? 1 : nb); ++b)
                if (jacobi) jacobi_block(it % 2 ? sb : sa, it % 2 ? sa : sb, b);
                else gs_tile(sa, b / nb, b % nb);
        snprintf(want, sizeof want, "%.17g", stencil_sum(jacobi));
        tasks = opt.iterations * nb * (jacobi ? 1 : nb);
    }

    double* times = malloc(sizeof *times * (size_t)opt.reps);
    if (!times) die(1, "out of memory", NULL);
    for (long r = -1; r < opt.reps; ++r) {
        /* From the first task's creation to the last task's end, on the
           threads that create them: a thread may still be running tasks in
           the opening barrier when the work starts. */
        double t0 = 1e300, t1 = -1e300;
        long fib_value = 0;
        if (bench == WAVEFRONT) wave_reset(opt.n);
        if (bench == JACOBI || bench == GAUSS_SEIDEL) stencil_reset(jacobi);
        memset(ran, 0, sizeof ran);
#pragma omp parallel reduction(min : t0) reduction(max : t1)
        {
#pragma omp barrier
            if (bench == SPAWN_ALL) {
                const long me = omp_get_thread_num(), nt = omp_get_num_threads();
                t0 = omp_get_wtime();
                spawn_tasks(opt.tasks * (me + 1) / nt - opt.tasks * me / nt);
                t1 = omp_get_wtime();
            } else {
#pragma omp single
                {
                    t0 = omp_get_wtime();
                    switch (bench) {
                    case WAVEFRONT: wave_tasks(opt.n); break;
                    case SPAWN: spawn_tasks(opt.tasks); break;
                    case JACOBI: jacobi_tasks(); break;
                    case GAUSS_SEIDEL: gs_tasks(); break;
                    default: fib_value = fib(30); break;
                    }
                    t1 = omp_get_wtime();
                }
            }
        }
        if (bench == WAVEFRONT) snprintf(got, sizeof got, "%llu", (unsigned long long)wave_sum(opt.n));
        else if (bench == FIB) snprintf(got, sizeof got, "%ld", fib_value);
        else if (bench == JACOBI || bench == GAUSS_SEIDEL) snprintf(got, sizeof got, "%.17g", stencil_sum(jacobi));
        else {
            long count = 0;
            for (int k = 0; k < 256; ++k) count += ran[k].count;
            snprintf(got, sizeof got, "%ld", count);
        }
        if (strcmp(got, want) != 0) {
            fprintf(stderr, "taskbench: %s: checksum %s, the serial reference's is %s\n", names[bench], got, want);
            free(times), free(wave), free(sa), free(sb);
            return 1;
        }
        if (r >= 0) times[r] = t1 - t0;
    }
    qsort(times, (size_t)opt.reps, sizeof *times, by_time);
    const double median = opt.reps % 2 ? times[opt.reps / 2] : (times[opt.reps / 2 - 1] + times[opt.reps / 2]) / 2;
    printf("result bench=%s tasks=%ld reps=%ld median_s=%.6f min_s=%.6f max_s=%.6f mtasks_per_s=%.3f checksum=%s\n",
           names[bench], tasks, opt.reps, median, times[0], times[opt.reps - 1], (double)tasks / median / 1e6, want);
    free(times), free(wave), free(sa), free(sb);
    return 0;
}
