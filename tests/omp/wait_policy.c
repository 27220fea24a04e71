/* tests/omp/wait_policy.c — how much CPU a team's idle threads burn while
 * the program does something else: after a region of 2 threads (which fit
 * the test machine's CPUs), the initial thread sleeps for a second, and
 * the CPU time the process's other threads used meanwhile is printed in
 * milliseconds. OMP_WAIT_POLICY and GOMP_SPINCOUNT decide it: passive or
 * a count of 0 sleep at once, INFINITE spins the whole second
 * (run_suite.sh bounds both, under libgomp and under the shim). */
#define _GNU_SOURCE
#include <omp.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

static double cpu_ms(int who) {
    struct rusage r;
    getrusage(who, &r);
    return (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e3 + (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e3;
}

int main(void) {
    int joined = 0;
#pragma omp parallel num_threads(2)
    {
#pragma omp atomic
        joined++;
    }
    const double all0 = cpu_ms(RUSAGE_SELF), me0 = cpu_ms(RUSAGE_THREAD);
    const struct timespec second = {1, 0};
    nanosleep(&second, 0);
    const double others = (cpu_ms(RUSAGE_SELF) - all0) - (cpu_ms(RUSAGE_THREAD) - me0);
    printf("%d threads; the others used %.0f ms of CPU in a second\n", joined, others > 0 ? others : 0.0);
    return 0;
}
