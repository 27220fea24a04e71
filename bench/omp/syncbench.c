/* bench/omp/syncbench.c — the overhead of OpenMP constructs, measured the
 * way EPCC's syncbench does (Bull, "Measuring synchronisation and scheduling
 * overheads in OpenMP", EWOMP 1999): time R repetitions of a construct
 * around a fixed delay, subtract the time of the delay alone, divide by R.
 * A plain gcc -fopenmp program: scripts/bench-omp runs it under libgomp,
 * LLVM's libomp and libnumaware_omp.so (LD_PRELOAD) in one run.
 *
 * The last construct, nested-parallel, forks a region of two threads in
 * each thread of a region of two (max-active-levels 2).
 *
 * usage: syncbench [REPS] [DELAY_ITERATIONS]
 * prints one line per construct: NAME MICROSECONDS_PER_CONSTRUCT */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static volatile double sink;

static void delay(int n) {
    double a = 0;
    for (int i = 0; i < n; ++i) a += i * 0.5;
    if (a < 0) sink = a;
}

static double reference(int reps, int d) {
    const double t = omp_get_wtime();
    for (int r = 0; r < reps; ++r) delay(d);
    return omp_get_wtime() - t;
}

int main(int argc, char** argv) {
    const int reps = argc > 1 ? atoi(argv[1]) : 20000;
    const int d = argc > 2 ? atoi(argv[2]) : 50;
    if (reps <= 0 || d < 0) {
        fprintf(stderr, "syncbench: REPS must be positive and DELAY non-negative\n");
        return 2;
    }
    /* Warm up: the runtime's threads exist before anything is timed. */
#pragma omp parallel
    delay(d);
    const double ref = reference(reps, d);
    double t;

    t = omp_get_wtime();
    for (int r = 0; r < reps; ++r) {
#pragma omp parallel
        delay(d);
    }
    printf("parallel %.3f\n", (omp_get_wtime() - t - ref) / reps * 1e6);

    t = omp_get_wtime();
#pragma omp parallel
    for (int r = 0; r < reps; ++r) {
        delay(d);
#pragma omp barrier
    }
    printf("barrier %.3f\n", (omp_get_wtime() - t - ref) / reps * 1e6);

    t = omp_get_wtime();
#pragma omp parallel
    for (int r = 0; r < reps; ++r) {
#pragma omp for schedule(static)
        for (int i = 0; i < omp_get_num_threads(); ++i) delay(d);
    }
    printf("for-static %.3f\n", (omp_get_wtime() - t - ref) / reps * 1e6);

    t = omp_get_wtime();
#pragma omp parallel
    for (int r = 0; r < reps; ++r) {
#pragma omp for schedule(dynamic)
        for (int i = 0; i < omp_get_num_threads(); ++i) delay(d);
    }
    printf("for-dynamic %.3f\n", (omp_get_wtime() - t - ref) / reps * 1e6);

    t = omp_get_wtime();
    for (int r = 0; r < reps; ++r) {
#pragma omp parallel for schedule(dynamic)
        for (int i = 0; i < omp_get_max_threads(); ++i) delay(d);
    }
    printf("parallel-for-dynamic %.3f\n", (omp_get_wtime() - t - ref) / reps * 1e6);

    t = omp_get_wtime();
#pragma omp parallel
    for (int r = 0; r < reps; ++r) {
#pragma omp single
        delay(d);
    }
    printf("single %.3f\n", (omp_get_wtime() - t - ref) / reps * 1e6);

    t = omp_get_wtime();
#pragma omp parallel
    for (int r = 0; r < reps / omp_get_num_threads(); ++r) {
#pragma omp critical
        delay(d);
    }
    printf("critical %.3f\n", (omp_get_wtime() - t - ref) / reps * 1e6);

    t = omp_get_wtime();
    for (int r = 0; r < reps; ++r) {
        int x = 0;
#pragma omp parallel reduction(+ : x)
        {
            delay(d);
            x += 1;
        }
        if (x <= 0) sink = x;
    }
    printf("reduction %.3f\n", (omp_get_wtime() - t - ref) / reps * 1e6);

    /* A nested region of two threads in each thread of a region of two:
     * four threads (more than the CPUs of a 2-CPU machine: every runtime
     * then shares them the same way). */
    const int levels = omp_get_max_active_levels();
    omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)
#pragma omp parallel num_threads(2)
    delay(d);
    t = omp_get_wtime();
    for (int r = 0; r < reps; ++r) {
#pragma omp parallel num_threads(2)
#pragma omp parallel num_threads(2)
        delay(d);
    }
    printf("nested-parallel %.3f\n", (omp_get_wtime() - t - ref) / reps * 1e6);
    omp_set_max_active_levels(levels);
    return 0;
}
