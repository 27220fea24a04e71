/* tests/omp/tasks_unsupported.c — a construct the shim does not implement
 * yet (explicit tasks): under libnumaware_omp.so it must stop at once with
 * one line naming GOMP_task, never run on a mix of runtimes. */
#include <stdio.h>

int main(void) {
    int x = 0;
#pragma omp parallel
#pragma omp single
    {
#pragma omp task shared(x)
        x = 1;
#pragma omp taskwait
    }
    printf("x = %d\n", x);
    return 0;
}
