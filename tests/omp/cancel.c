/* tests/omp/cancel.c — cancellation: `cancel for`, `cancel sections`,
 * `cancel parallel` (at a barrier, at a cancellation point in a spinning
 * loop, with tasks queued), `cancel taskgroup`, and the constructs after
 * each one working as usual. cancel-var is read at start, so the program
 * runs itself again with OMP_CANCELLATION=true when the variable is unset;
 * run with OMP_CANCELLATION=false it checks that the constructs do nothing.
 * Every printed line is the same whatever the thread count and timing. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { N = 1000000, FOUND = 4242, TASKS = 1000 };

/* A search that cancels its loop once it finds FOUND; true when it stopped
 * before running every iteration. */
static int search(long *found) {
    long executed = 0;
    *found = -1;
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 16) reduction(+ : executed)
        for (long i = 0; i < N; ++i) {
            executed++;
            if (i == FOUND) {
#pragma omp atomic write
                *found = i;
#pragma omp cancel for
            }
#pragma omp cancellation point for
        }
    }
    return executed < N;
}

int main(int argc, char **argv) {
    (void)argc;
    if (getenv("OMP_CANCELLATION") == NULL) {
        setenv("OMP_CANCELLATION", "true", 1);
        execv("/proc/self/exe", argv);
        perror("execv");
        return 1;
    }
    const int on = omp_get_cancellation();
    printf("cancellation %d\n", on);

    /* cancel for: the loop stops early (with cancel-var false it runs to its end). */
    long found;
    const int early = search(&found);
    printf("for: found %ld, stopped early %d\n", found, early);

    /* The team's next constructs start clean: more loops than the shim's
     * ring of construct slots (8), each summing its whole range. */
    long sum = 0;
#pragma omp parallel reduction(+ : sum)
    for (int round = 0; round < 20; ++round) {
#pragma omp for schedule(dynamic, 7)
        for (int i = 0; i < 1000; ++i) sum += i;
    }
    printf("after for: sum %ld\n", sum);
    printf("search again: stopped early %d\n", search(&found));

    /* cancel sections: the construct ends; the next one runs every section. */
    int sections_run = 0;
#pragma omp parallel
    {
#pragma omp sections
        {
#pragma omp section
            {
#pragma omp cancel sections
            }
#pragma omp section
            {
            }
        }
#pragma omp sections reduction(+ : sections_run)
        {
#pragma omp section
            sections_run++;
#pragma omp section
            sections_run++;
#pragma omp section
            sections_run++;
        }
    }
    printf("sections: %d run after a cancelled construct\n", sections_run);

    /* cancel parallel: thread 0 cancels; the others leave the barrier it
     * never reaches, so nobody counts past it (with cancel-var false every
     * thread does). */
    int threads = 0, past = 0;
#pragma omp parallel
    {
#pragma omp single
        threads = omp_get_num_threads();
        if (omp_get_thread_num() == 0) {
#pragma omp cancel parallel
        }
#pragma omp barrier
#pragma omp atomic
        past++;
    }
    printf("parallel: past the barrier %s\n", past == 0 ? "none" : (past == threads ? "all" : "some"));

    /* cancel parallel ends threads that spin on a cancellation point (with
     * cancel-var false that loop would never end: not run then). */
    if (on) {
#pragma omp parallel
        {
            if (omp_get_thread_num() == 0) {
#pragma omp cancel parallel
            }
            for (;;) {
#pragma omp cancellation point parallel
            }
        }
        printf("parallel: spinning threads stopped\n");
    }

    /* cancel parallel with tasks queued: the region ends, its tasks that had
     * not started are discarded, and the next region runs its tasks. */
    int ran = 0;
#pragma omp parallel
    {
#pragma omp single nowait
        for (int i = 0; i < TASKS; ++i) {
#pragma omp task
            {
#pragma omp atomic
                ran++;
            }
        }
        if (omp_get_thread_num() == 0) {
#pragma omp cancel parallel
        }
#pragma omp barrier
    }
    printf("parallel with tasks: ran %s\n", ran <= TASKS ? "at most all" : "too many");
    ran = 0;
#pragma omp parallel
#pragma omp single
    for (int i = 0; i < TASKS; ++i) {
#pragma omp task
        {
#pragma omp atomic
            ran++;
        }
    }
    printf("next region: %d tasks ran\n", ran);

    /* cancel taskgroup: once the first task has cancelled it, the tasks
     * created in it are discarded; a taskgroup after it runs them all. */
    int in_cancelled = 0, in_next = 0;
#pragma omp parallel
#pragma omp single
    {
#pragma omp taskgroup
        {
#pragma omp task
            {
#pragma omp cancel taskgroup
            }
#pragma omp taskwait
            for (int i = 0; i < TASKS; ++i) {
#pragma omp task
                {
#pragma omp atomic
                    in_cancelled++;
                }
            }
        }
#pragma omp taskgroup
        for (int i = 0; i < TASKS; ++i) {
#pragma omp task
            {
#pragma omp atomic
                in_next++;
            }
        }
    }
    printf("taskgroup: %d tasks ran in the cancelled one, %d in the next\n", in_cancelled, in_next);

    /* A running task leaves at its cancellation point once a sibling has
     * cancelled their taskgroup (with cancel-var false it would spin for
     * ever: not run then). Only in a team of two or more: the spinner
     * holds a thread, and the canceller needs another (libgomp's team of
     * one may start the spinner first). */
    if (on && omp_get_max_threads() > 1) {
#pragma omp parallel
#pragma omp single
#pragma omp taskgroup
        {
#pragma omp task
            {
#pragma omp cancel taskgroup
            }
#pragma omp task
            for (;;) {
#pragma omp cancellation point taskgroup
            }
        }
        printf("taskgroup: spinning task stopped\n");
    }
    return 0;
}
