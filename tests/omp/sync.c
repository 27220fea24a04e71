/* tests/omp/sync.c — single (with copyprivate), master, critical (named
 * and unnamed), atomic, reductions, barriers, locks, the thread queries
 * and serialised nested regions. Output does not depend on the thread
 * count but through lines that print it deliberately. */
#include <omp.h>
#include <stdio.h>

int main(void) {
    long crit = 0, named = 0, atom = 0, red = 0, singles = 0, locked = 0, nested_ok = 1;
    long nowait_singles = 0, loop_iterations = 0;
    double fred = 0;
    long maxv = -1, minv = 1L << 40;
    int copied_ok = 1, threads = 0, barrier_ok = 1, nest = 0;
    int arrived[64] = {0};
    omp_lock_t lock;
    omp_nest_lock_t nlock;
    omp_init_lock(&lock);
    omp_init_nest_lock(&nlock);
    /* Both follow the CPUs the process may use (taskset, a cpuset). */
    printf("procs %d, max threads %d\n", omp_get_num_procs(), omp_get_max_threads());
#pragma omp parallel reduction(+ : red, fred) reduction(max : maxv) reduction(min : minv)
    {
        const int me = omp_get_thread_num();
#pragma omp master
        threads = omp_get_num_threads();
        for (int k = 0; k < 1000; ++k) {
#pragma omp critical
            crit++;
#pragma omp critical(other)
            named++;
#pragma omp atomic
            atom++;
            omp_set_lock(&lock);
            locked++;
            omp_unset_lock(&lock);
            omp_set_nest_lock(&nlock);
            omp_set_nest_lock(&nlock);
            nest++;
            omp_unset_nest_lock(&nlock);
            omp_unset_nest_lock(&nlock);
        }
        red += me + 1;
        fred += 0.5;
        if (me > maxv) maxv = me;
        if (me < minv) minv = me;
#pragma omp single
        singles++;
        int value = 0;
#pragma omp single copyprivate(value)
        value = 42;
        if (value != 42) copied_ok = 0;
        /* Singles without a barrier, so that a thread runs ahead of the
           others by many, between loops and copyprivate singles (which take
           construct slots): each one runs once. */
        for (int k = 0; k < 20000; ++k) {
#pragma omp single nowait
            {
#pragma omp atomic
                nowait_singles++;
            }
            if (k % 1000 == 999) {
#pragma omp for schedule(dynamic) nowait
                for (int i = 0; i < 10; ++i) {
#pragma omp atomic
                    loop_iterations++;
                }
                int v = 0;
#pragma omp single copyprivate(v)
                v = k;
                if (v != k) copied_ok = 0;
            }
        }
        arrived[me % 64] = 1;
#pragma omp barrier
        for (int t = 0; t < omp_get_num_threads() && t < 64; ++t)
            if (!arrived[t]) barrier_ok = 0;
        /* A nested region runs on one thread here and under libgomp's
           defaults alike. */
#pragma omp parallel num_threads(3)
        {
            if (omp_get_level() != 2 || omp_get_ancestor_thread_num(1) != me) nested_ok = 0;
        }
    }
    const long t = threads;
    printf("critical %s\n", crit == 1000 * t ? "exact" : "WRONG");
    printf("named critical %s\n", named == 1000 * t ? "exact" : "WRONG");
    printf("atomic %s\n", atom == 1000 * t ? "exact" : "WRONG");
    printf("lock %s\n", locked == 1000 * t ? "exact" : "WRONG");
    printf("nest lock %s\n", nest == 1000 * t ? "exact" : "WRONG");
    printf("reduction + %s\n", red == t * (t + 1) / 2 ? "exact" : "WRONG");
    printf("reduction + double %s\n", fred == 0.5 * (double)t ? "exact" : "WRONG");
    printf("reduction max/min %s\n", maxv == t - 1 && minv == 0 ? "exact" : "WRONG");
    printf("single ran %ld time(s)\n", singles);
    printf("single nowait ran %ld time(s), loops between them %ld iterations\n", nowait_singles, loop_iterations);
    printf("copyprivate %s\n", copied_ok ? "reached every thread" : "WRONG");
    printf("barrier %s\n", barrier_ok ? "held" : "WRONG");
    printf("nested %s\n", nested_ok ? "serialised, levels right" : "WRONG");
    printf("outside: thread %d of %d, level %d, in parallel %d\n", omp_get_thread_num(), omp_get_num_threads(),
           omp_get_level(), omp_in_parallel());
    omp_set_num_threads(3);
    int got = 0;
#pragma omp parallel
#pragma omp single
    got = omp_get_num_threads();
    printf("omp_set_num_threads(3) gives %d\n", got);
#pragma omp parallel num_threads(2)
#pragma omp single
    got = omp_get_num_threads();
    printf("num_threads(2) gives %d\n", got);
    omp_destroy_lock(&lock);
    omp_destroy_nest_lock(&nlock);
    return 0;
}
