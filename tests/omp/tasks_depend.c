/* tests/omp/tasks_depend.c — explicit tasks ordered by depend clauses: in,
 * out and inout chains, fan-out and fan-in, a wavefront on the north and
 * west neighbours, mutexinoutset, depobj (created, updated, destroyed),
 * iterators, taskwait depend, an undeferred task with depend, children
 * whose depend names their parent's own address, and firstprivate copies of
 * many sizes and alignments. Every case runs from one `single` and again
 * from every thread of the team on its own data (tasks of different
 * implicit tasks are not siblings). Each printed value is only right if
 * the ordering held; nothing depends on which thread ran what.
 * (GCC 12 refuses depend(inoutset: ...) and omp_all_memory.) */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { CASES = 9, W = 10, LINE = 120 };

static void spin(int n) {
    volatile int z = 0;
    for (int i = 0; i < n; ++i) z = z + 1;
}

/* x = 5, ten inout steps x = 3x + k (any reordering changes x), twelve
   readers (fan-out) overwritten by a later out, one fan-in over them that
   names thirteen dependences, y[3] twice (more than the eight a runtime
   may keep inline). */
static void chain(char* out) {
    long x = 0, y[12] = {0}, total = 0;
#pragma omp task depend(out : x) shared(x)
    {
        spin(20000);
        x = 5;
    }
    for (int k = 0; k < 10; ++k) {
#pragma omp task depend(inout : x) shared(x)
        x = x * 3 + k;
    }
    for (int k = 0; k < 12; ++k) {
#pragma omp task depend(in : x) depend(out : y[k]) shared(x, y)
        {
            spin(1000 * (12 - k));
            y[k] = x % 1000 + k;
        }
    }
#pragma omp task depend(out : x) shared(x)
    x = -1000000;
#pragma omp task depend(in : y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[8], y[9], y[10], y[11], y[3]) \
    shared(y, total)
    for (int k = 0; k < 12; ++k) total = total * 7 + y[k];
#pragma omp taskwait
    snprintf(out, LINE, "chain, fan-out, fan-in: total %ld, x %ld", total, x);
}

/* A (W+1) x (W+1) grid, row and column 0 fixed, one task per other cell
   reading its north and west neighbours. */
static unsigned cell(unsigned north, unsigned west, int i, int j) {
    return (north * 31u + west * 17u + (unsigned)(i * W + j)) % 1000003u;
}

static void wavefront(char* out) {
    unsigned g[W + 1][W + 1];
    for (int k = 0; k <= W; ++k) g[0][k] = g[k][0] = (unsigned)k + 1;
    for (int i = 1; i <= W; ++i)
        for (int j = 1; j <= W; ++j) {
#pragma omp task depend(in : g[i - 1][j], g[i][j - 1]) depend(out : g[i][j]) shared(g)
            g[i][j] = cell(g[i - 1][j], g[i][j - 1], i, j);
        }
#pragma omp taskwait
    unsigned sum = 0;
    for (int i = 1; i <= W; ++i)
        for (int j = 1; j <= W; ++j) sum = sum * 131u + g[i][j];
    snprintf(out, LINE, "wavefront %dx%d: checksum %u", W, W, sum);
}

/* Read-modify-writes of a plain counter, mutually exclusive but in any
   order, between an out and an in; a second set waits for that in. */
static void mutexes(char* out) {
    long c = 0, first = 0, second = 0;
    int inside = 0, overlapped = 0;
#pragma omp task depend(out : c) shared(c)
    {
        spin(20000);
        c = 1000;
    }
    for (int round = 0; round < 2; ++round) {
        for (int k = 1; k <= 30; ++k) {
#pragma omp task depend(mutexinoutset : c) shared(c, inside, overlapped)
            {
                int was;
#pragma omp atomic capture
                was = inside++;
                if (was) {
#pragma omp atomic write
                    overlapped = 1;
                }
                const long v = c;
                spin(300);
                c = v + k;
#pragma omp atomic
                inside--;
            }
        }
#pragma omp task depend(in : c) shared(c, first, second)
        {
            spin(5000);
            if (round == 0) first = c;
            else second = c;
        }
    }
#pragma omp taskwait
    snprintf(out, LINE, "mutexinoutset: 1000, then %ld, then %ld, overlapping %d", first, second, overlapped);
}

/* A depobj made inout, used twice, updated to in, used by two readers; a
   later out must wait for them. The tasks keep the kind they were created
   with. */
static void depobjs(char* out) {
    long x = 1, r1 = 0, r2 = 0;
    omp_depend_t o;
#pragma omp depobj(o) depend(inout : x)
#pragma omp task depend(depobj : o) shared(x)
    {
        spin(20000);
        x = x * 2 + 1;
    }
#pragma omp task depend(depobj : o) shared(x)
    x = x * 10 + 3;
#pragma omp depobj(o) update(in)
#pragma omp task depend(depobj : o) shared(x, r1)
    {
        spin(10000);
        r1 = x;
    }
#pragma omp task depend(depobj : o) shared(x, r2)
    r2 = x;
#pragma omp task depend(out : x) shared(x)
    x = 7;
#pragma omp depobj(o) destroy
#pragma omp taskwait
    snprintf(out, LINE, "depobj inout, inout, update(in), in, in, out: readers %ld %ld, x %ld", r1, r2, x);
}

/* depend(iterator(...)): a fan-in over eight producers, an out on every
   other element (step 2) that waits for it, a second fan-in after that. */
static void iterators(char* out) {
    long a[8], s1 = 0, s2 = 0;
    for (int i = 0; i < 8; ++i) {
#pragma omp task depend(out : a[i]) shared(a)
        {
            spin(800 * (8 - i));
            a[i] = i * i + 1;
        }
    }
#pragma omp task depend(iterator(it = 0 : 8), in : a[it]) shared(a, s1)
    {
        spin(5000);
        for (int i = 0; i < 8; ++i) s1 = s1 * 3 + a[i];
    }
#pragma omp task depend(iterator(it = 0 : 8 : 2), out : a[it]) shared(a)
    for (int i = 0; i < 8; i += 2) a[i] = 0;
#pragma omp task depend(iterator(it = 0 : 8), in : a[it]) shared(a, s2)
    for (int i = 0; i < 8; ++i) s2 = s2 * 3 + a[i];
#pragma omp taskwait
    snprintf(out, LINE, "depend iterators: fan-in %ld, after out on even %ld", s1, s2);
}

/* taskwait depend waits for x's predecessors (a chain of two); an if(0)
   task with depend waits for its predecessor and runs before the next
   statement; children with depend on their parent's address. */
static void waits(char* out) {
    long x = 0, y = 0, z = 0, seen, after, n = 1;
#pragma omp task depend(out : x) shared(x)
    {
        spin(20000);
        x = 40;
    }
#pragma omp task depend(inout : x) shared(x)
    x += 2;
#pragma omp task depend(out : y) shared(y)
    y = 3;
#pragma omp taskwait depend(in : x)
    seen = x;
#pragma omp task depend(out : z) shared(z)
    {
        spin(20000);
        z = 5;
    }
#pragma omp task if (0) depend(inout : z) shared(z)
    z += 1;
    after = z;
    for (int p = 0; p < 3; ++p) {
#pragma omp task depend(inout : n) shared(n)
        {
#pragma omp task depend(inout : n) shared(n)
            {
                spin(5000);
                n *= 2;
            }
#pragma omp task depend(inout : n) shared(n)
            n += 3 + p;
#pragma omp taskwait
        }
    }
#pragma omp taskwait
    snprintf(out, LINE, "taskwait depend: x %ld (y %ld); if(0) depend: %ld; nested same address: %ld", seen, y, after, n);
}

/* firstprivate of 1, 2, 16 (long double), 200 (struct) bytes, a 64-byte
   aligned double and a VLA: the task sees the values of its creation
   (the originals change right after) and the alignment of its copy. */
struct big { unsigned char b[200]; };

static void by_value(char* out, int n) {
    struct big b;
    double al __attribute__((aligned(64))) = 2.5;
    long double ld = 1.25L;
    char c = 'q';
    short sh = 12;
    int vla[n];
    unsigned sum = 0;
    int same = 0, aligned = 0;
    for (int k = 0; k < 200; ++k) b.b[k] = (unsigned char)(k * 7);
    for (int k = 0; k < n; ++k) vla[k] = k * k;
#pragma omp task firstprivate(b, al, ld, c, sh, vla) shared(sum, same, aligned)
    {
        for (int k = 0; k < 200; ++k) sum = sum * 3u + b.b[k];
        for (int k = 0; k < n; ++k) sum = sum * 5u + (unsigned)vla[k];
        aligned = (uintptr_t)&al % 64 == 0 && (uintptr_t)&ld % _Alignof(long double) == 0;
        same = al == 2.5 && ld == 1.25L && c == 'q' && sh == 12;
    }
    b.b[0] = 1, b.b[199] = 2, al = 0, ld = 0, c = 0, sh = 0, vla[0] = vla[n - 1] = -1;
#pragma omp taskwait
    snprintf(out, LINE, "firstprivate struct 200 B, VLA[%d]: checksum %u, scalars %d, aligned %d", n, sum, same, aligned);
}

static void run_all(char (*r)[LINE]) {
    chain(r[0]), wavefront(r[1]), mutexes(r[2]), depobjs(r[3]), iterators(r[4]), waits(r[5]);
    by_value(r[6], 17), by_value(r[7], 1), by_value(r[8], 300);
}

int main(void) {
    static char want[CASES][LINE], mine[64][CASES][LINE];
    int threads = 0;
    /* The wavefront in the serial order. */
    unsigned g[W + 1][W + 1], sum = 0;
    for (int k = 0; k <= W; ++k) g[0][k] = g[k][0] = (unsigned)k + 1;
    for (int i = 1; i <= W; ++i)
        for (int j = 1; j <= W; ++j) sum = sum * 131u + (g[i][j] = cell(g[i - 1][j], g[i][j - 1], i, j));
#pragma omp parallel
    {
#pragma omp single
        {
            threads = omp_get_num_threads();
            run_all(want);
        }
        if (omp_get_thread_num() < 64) run_all(mine[omp_get_thread_num()]);
    }
    for (int c = 0; c < CASES; ++c) printf("%s\n", want[c]);
    printf("serial wavefront: checksum %u\n", sum);
    int same = 1;
    for (int t = 0; t < threads && t < 64; ++t)
        for (int c = 0; c < CASES; ++c)
            if (strcmp(mine[t][c], want[c]) != 0) same = 0;
    printf("from every thread of %d, each on its own data: %s\n", threads, same ? "the same" : "DIFFERENT");
    return 0;
}
