/* tests/omp/nested.c — nested parallel regions with more than one thread
 * at each level: the levels and ancestors each thread sees, worksharing,
 * barriers and reductions inside the inner teams, explicit tasks with
 * depend inside them, a parallel region opened by an explicit task of the
 * outer team, the active-level limit (a level beyond it gets one thread),
 * and the ICVs that govern nesting. Every figure is printed from arrays
 * after the regions, so the output is the same whatever the order in which
 * threads ran. With NESTED_PLACES set (run_suite.sh sets it with
 * OMP_PLACES and OMP_PROC_BIND lists) it prints instead the place and
 * bind-var of every thread of the inner teams; with NESTED_THREAD_LIMIT (and
 * OMP_THREAD_LIMIT) the team sizes that the limit leaves. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXT 8

/* What one thread at level 3 sees, at index (a1 * 2 + a2) * 2 + a3. */
static int seen[MAXT][8];

static void three_levels(void) {
#pragma omp parallel num_threads(2)
#pragma omp parallel num_threads(2)
#pragma omp parallel num_threads(2)
    {
        const int a1 = omp_get_ancestor_thread_num(1), a2 = omp_get_ancestor_thread_num(2),
                  a3 = omp_get_ancestor_thread_num(3);
        int* s = seen[(a1 * 2 + a2) * 2 + a3];
        s[0] = omp_get_level();
        s[1] = omp_get_active_level();
        s[2] = omp_get_team_size(1) * 100 + omp_get_team_size(2) * 10 + omp_get_team_size(3);
        s[3] = omp_get_num_threads();
        s[4] = omp_get_thread_num() == a3;
        s[5] = omp_in_parallel();
        s[6] = omp_get_ancestor_thread_num(0) == 0 && omp_get_ancestor_thread_num(4) == -1;
    }
    for (int i = 0; i < 8; ++i)
        printf("level 3 thread %d%d%d: level %d active %d sizes %d team %d num %d in_parallel %d ancestors %d\n",
               i >> 2, (i >> 1) & 1, i & 1, seen[i][0], seen[i][1], seen[i][2], seen[i][3], seen[i][4], seen[i][5],
               seen[i][6]);
}

/* Worksharing, barriers and a reduction in each inner team. */
static void inner_worksharing(void) {
    long sums[MAXT] = {0}, singles[MAXT] = {0}, after_barrier[MAXT] = {0};
#pragma omp parallel num_threads(3)
    {
        const int o = omp_get_thread_num();
        long s = 0;
        long stage[4] = {0};
#pragma omp parallel num_threads(2) reduction(+ : s)
        {
#pragma omp for schedule(dynamic, 5)
            for (int i = 0; i < 1000; ++i) s += (long)i * (o + 1);
#pragma omp single
            stage[0] = 1;
            /* the single's implied barrier: every inner thread sees it */
            stage[1 + omp_get_thread_num()] = stage[0];
#pragma omp barrier
#pragma omp master
            stage[3] = stage[1] + stage[2];
        }
        sums[o] = s;
        singles[o] = stage[0];
        after_barrier[o] = stage[3];
    }
    for (int o = 0; o < 3; ++o)
        printf("outer thread %d: inner sum %ld single %ld both past the barrier %ld\n", o, sums[o], singles[o],
               after_barrier[o]);
}

/* A chain of dependent tasks in each inner team: the order is the chain's. */
static void inner_tasks(void) {
    long chains[MAXT] = {0};
#pragma omp parallel num_threads(2)
    {
        const int o = omp_get_thread_num();
        long v = o + 1;
#pragma omp parallel num_threads(2) shared(v)
#pragma omp single
        {
            for (int k = 0; k < 40; ++k) {
#pragma omp task depend(inout : v) firstprivate(k)
                v = v * 3 + k;   /* not commutative: only the chain's order gives the result */
            }
#pragma omp taskwait
        }
        chains[o] = v;
    }
    for (int o = 0; o < 2; ++o) printf("outer thread %d: task chain %ld\n", o, chains[o]);
}

/* Explicit tasks of the outer team that open parallel regions of their own. */
static void regions_in_tasks(void) {
    long got[8] = {0};
    int sizes[8] = {0};
#pragma omp parallel num_threads(2)
#pragma omp single
    {
        for (int t = 0; t < 8; ++t) {
#pragma omp task firstprivate(t)
            {
                long s = 0;
                int n = 0;
#pragma omp parallel num_threads(2) reduction(+ : s)
                {
#pragma omp single
                    n = omp_get_num_threads();
#pragma omp for
                    for (int i = 0; i <= 100 * t; ++i) s += i;
                    long inner = 0;
#pragma omp taskgroup
                    {
#pragma omp task shared(inner)
                        inner = 1;
                    }
                    s += inner;
                }
                got[t] = s;
                sizes[t] = n;
            }
        }
    }
    for (int t = 0; t < 8; ++t) printf("task %d: its region of %d threads summed %ld\n", t, sizes[t], got[t]);
}

/* Beyond max-active-levels-var a region gets one thread. */
static void limit(void) {
    int inner[MAXT] = {0}, innermost[MAXT] = {0}, active[MAXT] = {0};
    omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)
    {
        const int o = omp_get_thread_num();
#pragma omp parallel num_threads(2)
        {
            if (omp_get_thread_num() == 0) inner[o] = omp_get_num_threads();
#pragma omp parallel num_threads(2)
            if (omp_get_ancestor_thread_num(2) == 0) {
                innermost[o] = omp_get_num_threads();
                active[o] = omp_get_active_level() * 10 + omp_get_level();
            }
        }
    }
    for (int o = 0; o < 2; ++o)
        printf("max-active-levels 2, outer thread %d: inner team %d, third level %d (active level and level %d)\n", o,
               inner[o], innermost[o], active[o]);
}

/* Where the inner teams' threads run: place and bind-var of each. */
static void places(void) {
    int pl[MAXT][MAXT];
    for (int i = 0; i < MAXT; ++i)
        for (int j = 0; j < MAXT; ++j) pl[i][j] = -99;   /* a thread that did not run */
#pragma omp parallel num_threads(2)
    {
        const int o = omp_get_thread_num();
#pragma omp parallel num_threads(3)
        pl[o][omp_get_thread_num()] = omp_get_place_num() * 10 + (int)omp_get_proc_bind();
    }
    for (int o = 0; o < 2; ++o)
        printf("places: outer thread %d's team at %d %d %d (place * 10 + bind-var)\n", o, pl[o][0], pl[o][1], pl[o][2]);
    /* proc_bind clauses: the region's policy, and its threads' bind-var. */
    int p[MAXT] = {-99, -99, -99, -99, -99, -99, -99, -99};
#pragma omp parallel num_threads(2) proc_bind(primary)
    p[omp_get_thread_num()] = omp_get_place_num() * 10 + (int)omp_get_proc_bind();
    printf("proc_bind(primary): %d %d\n", p[0], p[1]);
#pragma omp parallel for num_threads(2) proc_bind(close) schedule(static, 1)
    for (int i = 0; i < 2; ++i) p[omp_get_thread_num()] = omp_get_place_num() * 10 + (int)omp_get_proc_bind();
    printf("parallel for proc_bind(close): %d %d\n", p[0], p[1]);
    for (int i = 0; i < MAXT; ++i)
        for (int j = 0; j < MAXT; ++j) pl[i][j] = -99;
#pragma omp parallel num_threads(2) proc_bind(close)
    {
        const int o = omp_get_thread_num();
#pragma omp parallel num_threads(2) proc_bind(primary)
        pl[o][omp_get_thread_num()] = omp_get_place_num() * 10 + (int)omp_get_proc_bind();
    }
    printf("nested proc_bind(primary): %d %d / %d %d\n", pl[0][0], pl[0][1], pl[1][0], pl[1][1]);
}

/* thread-limit-var bounds the threads of the whole contention group: the
 * inner teams share what the outer one leaves (which of them gets more
 * depends on timing, so the sizes are printed smaller first). */
static void thread_limit(void) {
    int sizes[2] = {0, 0}, outer = 0, big = 0, started = 0;
    omp_set_max_active_levels(3);
#pragma omp parallel num_threads(2)
    {
        const int o = omp_get_thread_num();
        if (o == 0) outer = omp_get_num_threads();
#pragma omp parallel num_threads(3)
#pragma omp master
        {
            sizes[o] = omp_get_num_threads();
            /* Both inner teams stay until both exist, so that the limit
             * sees them together. */
#pragma omp atomic
            started += 1;
            for (;;) {
                int now;
#pragma omp atomic read
                now = started;
                if (now == 2) break;
            }
        }
    }
#pragma omp parallel num_threads(8)
#pragma omp master
    big = omp_get_num_threads();
    const int lo = sizes[0] < sizes[1] ? sizes[0] : sizes[1], hi = sizes[0] < sizes[1] ? sizes[1] : sizes[0];
    printf("thread limit %d: outer team %d, inner teams %d and %d, then a region of 8 gets %d\n",
           omp_get_thread_limit(), outer, lo, hi, big);
}

int main(void) {
    if (getenv("NESTED_PLACES")) {
        places();
        return 0;
    }
    if (getenv("NESTED_THREAD_LIMIT")) {
        thread_limit();
        return 0;
    }
    /* By default (no OMP_NESTED, no list in OMP_NUM_THREADS): one level. */
    int by_default = 0;
#pragma omp parallel num_threads(2)
#pragma omp parallel num_threads(2)
#pragma omp master
    by_default = omp_get_num_threads();
    printf("default max-active-levels %d: a nested region gets %d thread(s)\n", omp_get_max_active_levels(),
           by_default);

    omp_set_max_active_levels(1000);
    printf("set to 1000: max-active-levels %d (supported %d)\n", omp_get_max_active_levels(),
           omp_get_supported_active_levels());
    omp_set_nested(0);
    printf("omp_set_nested(0): %d, nested %d\n", omp_get_max_active_levels(), omp_get_nested());
    omp_set_nested(1);
    printf("omp_set_nested(1): %d, nested %d\n", omp_get_max_active_levels(), omp_get_nested());

    three_levels();
    inner_worksharing();
    inner_tasks();
    regions_in_tasks();

    /* nthreads-var of the outer team's threads sets the inner teams' size. */
    int inner_default[MAXT] = {0};
#pragma omp parallel num_threads(2)
    {
        const int o = omp_get_thread_num();
        omp_set_num_threads(3 + o);
#pragma omp parallel
#pragma omp master
        inner_default[o] = omp_get_num_threads();
    }
    printf("omp_set_num_threads in the outer team: inner teams of %d and %d\n", inner_default[0], inner_default[1]);

    limit();
    return 0;
}
