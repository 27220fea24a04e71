/* tests/omp/tasks_producer.c — tasks made faster than the team runs them:
 * one thread creates N tasks without depend in a loop (the producer of a
 * `single`), then every thread does (a worksharing loop that creates a task
 * per iteration), then the producer again inside a taskgroup, and last
 * every thread again with two dependent tasks per iteration (out, then
 * inout on the iteration's own slot). Each task marks its own slot, so the
 * output says whether every task ran exactly once (and the dependent pair
 * in order), whichever thread ran it and whenever (at once or queued).
 * libnumaware_omp.so runs tasks without depend at once beyond
 * NUMAWARE_TASK_THROTTLE unfinished tasks per thread, and there a thread
 * that creates a task with depend first runs ready ones (run_suite.sh
 * checks the counts and the memory it keeps). argv[1]: N (default 4000). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned char* seen;
static unsigned char* first;   /* the dependent pair: set by the first task, read by the second */

static void check(const char* what, long n) {
    long once = 0, wrong = 0;
    for (long i = 0; i < n; ++i) {
        if (seen[i] == 1) ++once;
        else ++wrong;
        seen[i] = 0;
    }
    printf("%s: %ld tasks ran once, %ld did not\n", what, once, wrong);
}

int main(int argc, char** argv) {
    const long n = argc > 1 ? atol(argv[1]) : 4000;
    if (n <= 0) return 2;
    seen = calloc((size_t)n, 1);
    first = calloc((size_t)n, 1);
    if (seen == NULL || first == NULL) return 2;
#pragma omp parallel
#pragma omp single
    for (long i = 0; i < n; ++i) {
#pragma omp task firstprivate(i)
        seen[i]++;
    }
    check("one producer", n);
#pragma omp parallel
    {
#pragma omp for schedule(static)
        for (long i = 0; i < n; ++i) {
#pragma omp task firstprivate(i)
            seen[i]++;
        }
    }
    check("every thread a producer", n);
#pragma omp parallel
#pragma omp single
#pragma omp taskgroup
    {
        for (long i = 0; i < n; ++i) {
#pragma omp task firstprivate(i)
            seen[i]++;
        }
    }
    check("one producer in a taskgroup", n);
#pragma omp parallel
    {
#pragma omp for schedule(static)
        for (long i = 0; i < n; ++i) {
#pragma omp task firstprivate(i) depend(out : first[i])
            first[i] = 1;
#pragma omp task firstprivate(i) depend(inout : first[i])
            {
                seen[i] += first[i];
                first[i] = 0;
            }
        }
    }
    check("every thread a producer of dependent pairs", n);
    free(first);
    free(seen);
    return 0;
}
