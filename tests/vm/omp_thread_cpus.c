/* tests/vm/omp_thread_cpus.c — one line per thread of a parallel region:
 * "thread T place P cpus LIST", its OpenMP place and the CPUs its kernel
 * mask allows (LIST as the kernel writes cpu lists: "0-1,4"). Built with
 * gcc -fopenmp; run under libgomp or libnumaware_omp.so (smt_check.sh). */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>

enum { max_threads = 256, line = 512 };

static void cpu_list(const cpu_set_t* s, char* out, size_t size) {
    size_t k = 0;
    out[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE && k < size; ++c) {
        if (!CPU_ISSET(c, s) || (c > 0 && CPU_ISSET(c - 1, s))) continue;
        int last = c;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, s)) ++last;
        const int n = last == c ? snprintf(out + k, size - k, "%s%d", k ? "," : "", c)
                                : snprintf(out + k, size - k, "%s%d-%d", k ? "," : "", c, last);
        if (n < 0) return;
        k += (size_t)n;
    }
}

int main(void) {
    static char lines[max_threads][line];
    int threads = 0;
#pragma omp parallel
    {
        const int t = omp_get_thread_num();
        cpu_set_t s;
        CPU_ZERO(&s);
        char cpus[line / 2];
        if (sched_getaffinity(0, sizeof s, &s) == 0) cpu_list(&s, cpus, sizeof cpus);
        else snprintf(cpus, sizeof cpus, "unknown");
        if (t < max_threads) snprintf(lines[t], line, "thread %d place %d cpus %s", t, omp_get_place_num(), cpus);
#pragma omp single
        threads = omp_get_num_threads();
    }
    for (int t = 0; t < threads && t < max_threads; ++t) puts(lines[t]);
    return 0;
}
