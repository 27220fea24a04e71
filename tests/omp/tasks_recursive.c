/* tests/omp/tasks_recursive.c — recursive task programs in the style of
 * the Barcelona OpenMP Tasks Suite, where every task waits for its own
 * children at every level of the recursion:
 *   fib      two untied tasks per call and a taskwait, no cut-off;
 *   nqueens  a task per column, each with a board of its own on its stack
 *            (alloca), a taskwait per row;
 *   lu       a sparse blocked LU factorisation, once with a taskwait per
 *            phase and once with depend clauses on the blocks (a single
 *            producer; fill-in blocks are allocated as the factorisation
 *            meets them);
 *   fib-dep  fib again, each result named by a depend(out) clause and the
 *            sum by a task that reads both (depend(in)), then a taskwait;
 *   locked   tied tasks that hold a lock across a taskwait, beside other
 *            branches' tasks that take it. A thread in that taskwait may
 *            run only the waiting task's descendants (OpenMP's scheduling
 *            constraint for tied tasks); one that ran any deeper task took
 *            the lock its own suspended task held and spun for ever (every
 *            run under DFIFO at 2-4 threads, 2026-12-07).
 * Under RIP-MW a window cut by a wait used to wait for a partition job at
 * every level (fib(27): 51 s against 0.2 s under RIP-DEP, 2026-12-07): the
 * suite runs this under every policy and compares the output with
 * libgomp's. argv[1]: scale (default 1). */
#include <alloca.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long fib(int n) {
    long x, y;
    if (n < 2) return n;
#pragma omp task untied shared(x) firstprivate(n)
    x = fib(n - 1);
#pragma omp task untied shared(y) firstprivate(n)
    y = fib(n - 2);
#pragma omp taskwait
    return x + y;
}

static long fib_dep(int n) {
    long x = 0, y = 0, sum = 0;
    if (n < 2) return n;
#pragma omp task shared(x) firstprivate(n) depend(out : x)
    x = fib_dep(n - 1);
#pragma omp task shared(y) firstprivate(n) depend(out : y)
    y = fib_dep(n - 2);
#pragma omp task shared(x, y, sum) depend(in : x, y)
    sum = x + y;
#pragma omp taskwait
    return sum;
}

/* Whether queen j (at row a[j]) is safe from queens 0..j-1. */
static int safe(const char* a, int j) {
    for (int i = 0; i < j; ++i) {
        const int d = j - i;
        if (a[i] == a[j] || a[i] == a[j] - d || a[i] == a[j] + d) return 0;
    }
    return 1;
}

static void nqueens(int n, int j, const char* a, long* solutions) {
    if (j == n) {
        *solutions = 1;
        return;
    }
    long* counts = alloca((size_t)n * sizeof(long));
    memset(counts, 0, (size_t)n * sizeof(long));
    for (int i = 0; i < n; ++i) {
#pragma omp task untied firstprivate(i, j, n, a) shared(counts)
        {
            char* b = alloca((size_t)n);
            memcpy(b, a, (size_t)j);
            b[j] = (char)i;
            if (safe(b, j)) nqueens(n, j + 1, b, &counts[i]);
        }
    }
#pragma omp taskwait
    long s = 0;
    for (int i = 0; i < n; ++i) s += counts[i];
    *solutions = s;
}

enum { BS = 8 };
typedef float Block[BS * BS];

static void lu0(float* d) {
    for (int k = 0; k < BS; ++k)
        for (int i = k + 1; i < BS; ++i) {
            d[i * BS + k] /= d[k * BS + k];
            for (int j = k + 1; j < BS; ++j) d[i * BS + j] -= d[i * BS + k] * d[k * BS + j];
        }
}
static void fwd(const float* d, float* c) {
    for (int k = 0; k < BS; ++k)
        for (int i = k + 1; i < BS; ++i)
            for (int j = 0; j < BS; ++j) c[i * BS + j] -= d[i * BS + k] * c[k * BS + j];
}
static void bdiv(const float* d, float* r) {
    for (int i = 0; i < BS; ++i)
        for (int k = 0; k < BS; ++k) {
            r[i * BS + k] /= d[k * BS + k];
            for (int j = k + 1; j < BS; ++j) r[i * BS + j] -= r[i * BS + k] * d[k * BS + j];
        }
}
static void bmod(const float* r, const float* c, float* in) {
    for (int i = 0; i < BS; ++i)
        for (int j = 0; j < BS; ++j)
            for (int k = 0; k < BS; ++k) in[i * BS + j] -= r[i * BS + k] * c[k * BS + j];
}

/* The sum of the factors, in a fixed order. Every block update is one
 * task, and the updates of one block run in the same order under any
 * schedule (its bmods come one per kk, in order), so the result is the
 * same bit for bit. */
static double lu(int nb, int with_depend) {
    Block** a = calloc((size_t)nb * (size_t)nb, sizeof(Block*));
    if (a == NULL) exit(2);
    for (int i = 0; i < nb; ++i)
        for (int j = 0; j < nb; ++j) {
            if (!(i == j || (i + j) % 3 == 0 || (i * 7 + j) % 5 == 0)) continue;
            a[i * nb + j] = malloc(sizeof(Block));
            if (a[i * nb + j] == NULL) exit(2);
            for (int k = 0; k < BS * BS; ++k)
                (*a[i * nb + j])[k] = (float)((k * 13 + i * 7 + j * 3) % 17) / 17.0f +
                                      (i == j && k % (BS + 1) == 0 ? 40.0f : 0.0f);
        }
#pragma omp parallel
#pragma omp single
    for (int kk = 0; kk < nb; ++kk) {
        float* diag = *a[kk * nb + kk];
        if (with_depend) {
#pragma omp task firstprivate(diag) depend(inout : diag[0])
            lu0(diag);
        } else {
            lu0(diag);
        }
        for (int jj = kk + 1; jj < nb; ++jj) {
            float* c = a[kk * nb + jj] != NULL ? *a[kk * nb + jj] : NULL;
            if (c == NULL) continue;
            if (with_depend) {
#pragma omp task firstprivate(diag, c) depend(in : diag[0]) depend(inout : c[0])
                fwd(diag, c);
            } else {
#pragma omp task untied firstprivate(diag, c)
                fwd(diag, c);
            }
        }
        for (int ii = kk + 1; ii < nb; ++ii) {
            float* r = a[ii * nb + kk] != NULL ? *a[ii * nb + kk] : NULL;
            if (r == NULL) continue;
            if (with_depend) {
#pragma omp task firstprivate(diag, r) depend(in : diag[0]) depend(inout : r[0])
                bdiv(diag, r);
            } else {
#pragma omp task untied firstprivate(diag, r)
                bdiv(diag, r);
            }
        }
        if (!with_depend) {
#pragma omp taskwait
        }
        for (int ii = kk + 1; ii < nb; ++ii) {
            if (a[ii * nb + kk] == NULL) continue;
            for (int jj = kk + 1; jj < nb; ++jj) {
                if (a[kk * nb + jj] == NULL) continue;
                if (a[ii * nb + jj] == NULL) {
                    a[ii * nb + jj] = calloc(1, sizeof(Block));
                    if (a[ii * nb + jj] == NULL) exit(2);
                }
                float* r = *a[ii * nb + kk];
                float* c = *a[kk * nb + jj];
                float* in = *a[ii * nb + jj];
                if (with_depend) {
#pragma omp task firstprivate(r, c, in) depend(in : r[0], c[0]) depend(inout : in[0])
                    bmod(r, c, in);
                } else {
#pragma omp task untied firstprivate(r, c, in)
                    bmod(r, c, in);
                }
            }
        }
        if (!with_depend) {
#pragma omp taskwait
        }
    }
    double s = 0;
    for (int i = 0; i < nb * nb; ++i)
        if (a[i] != NULL) {
            for (int k = 0; k < BS * BS; ++k) s += (*a[i])[k];
            free(a[i]);
        }
    free(a);
    return s;
}

static omp_lock_t lock;
static long locked(int n) {
    long sum = 0;
#pragma omp parallel
#pragma omp single
    for (int i = 0; i < n; ++i) {
        if (i % 2 == 0) {
#pragma omp task shared(sum)
            {
                omp_set_lock(&lock);
#pragma omp task
                {
                    volatile int x = 0;
                    for (int k = 0; k < 2000; ++k) x += k;
                }
#pragma omp taskwait
                sum += 1;
                omp_unset_lock(&lock);
            }
        } else {
#pragma omp task shared(sum)
            {
#pragma omp task shared(sum)
                {
                    omp_set_lock(&lock);
                    sum += 2;
                    omp_unset_lock(&lock);
                }
#pragma omp taskwait
            }
        }
    }
    return sum;
}

int main(int argc, char** argv) {
    const int scale = argc > 1 ? atoi(argv[1]) : 1;
    if (scale < 1 || scale > 4) return 2;
    long f = 0, fd = 0, q = 0;
#pragma omp parallel
#pragma omp single
    f = fib(16 + 2 * scale);
    printf("fib(%d) = %ld\n", 16 + 2 * scale, f);
    char board[16];
#pragma omp parallel
#pragma omp single
    nqueens(6 + scale, 0, board, &q);
    printf("nqueens(%d) = %ld\n", 6 + scale, q);
    printf("lu with taskwaits = %.6f\n", lu(12 * scale, 0));
    printf("lu with depend = %.6f\n", lu(12 * scale, 1));
#pragma omp parallel
#pragma omp single
    fd = fib_dep(14 + 2 * scale);
    printf("fib with depend(%d) = %ld\n", 14 + 2 * scale, fd);
    omp_init_lock(&lock);
    printf("locked = %ld\n", locked(400 * scale));
    omp_destroy_lock(&lock);
    return 0;
}
