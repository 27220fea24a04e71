/* tests/omp/threads.c — parallel regions started from several user threads
 * at once (each its own initial thread, as the standard has it), and a
 * team of 8 threads, more than the CPUs of the test machine, forked and
 * joined a thousand times. */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>

static long total[4];
static int levels_ok[4];

static void* user(void* arg) {
    const long id = (long)arg;
    long s = 0;
    int ok = 1;
    for (int r = 0; r < 50; ++r) {
        long local = 0;
#pragma omp parallel for reduction(+ : local) schedule(dynamic, 7) num_threads(3)
        for (int i = 0; i < 1000; ++i) local += i;
        s += local;
#pragma omp parallel num_threads(2)
        if (omp_get_level() != 1) ok = 0;
    }
    total[id] = s;
    levels_ok[id] = ok && omp_get_level() == 0;
    return 0;
}

int main(void) {
    pthread_t t[4];
    for (long i = 0; i < 4; ++i) pthread_create(&t[i], 0, user, (void*)i);
    for (int i = 0; i < 4; ++i) pthread_join(t[i], 0);
    for (int i = 0; i < 4; ++i) printf("user thread %d: sum %ld, levels %s\n", i, total[i], levels_ok[i] ? "right" : "WRONG");
    long x = 0;
    int sizes_ok = 1;
    for (int r = 0; r < 1000; ++r) {
#pragma omp parallel num_threads(8) reduction(+ : x)
        {
            x += omp_get_thread_num();
            if (omp_get_num_threads() != 8) sizes_ok = 0;
        }
    }
    printf("8 threads, 1000 regions: sum of thread numbers %ld, team sizes %s\n", x, sizes_ok ? "8" : "WRONG");
    return 0;
}
