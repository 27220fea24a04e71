/* tests/omp/deadlock.c — a program that deadlocks by its own fault: one
 * thread of two meets a barrier the other never reaches (non-conforming).
 * Under libgomp it hangs; under the shim it must hang the same way, never
 * crash (run_suite.sh gives each 3 seconds). */
#include <omp.h>
#include <stdio.h>

int main(void) {
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 0) {
#pragma omp barrier
        }
    }
    printf("finished\n");
    return 0;
}
