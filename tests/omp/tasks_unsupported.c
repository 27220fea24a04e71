/* tests/omp/tasks_unsupported.c — a construct the shim does not implement
 * yet (doacross loops: ordered(1) with depend(sink)/depend(source), which
 * GCC lowers to the GOMP_loop_doacross_* and GOMP_doacross_* entry points):
 * under libnumaware_omp.so it must stop at once with one line naming the
 * first of them, never run on a mix of runtimes. Under libgomp each
 * iteration waits for the one before it, so the prefix sums are exact. */
#include <stdio.h>

int main(void) {
    long a[64];
    a[0] = 0;
#pragma omp parallel
#pragma omp for ordered(1) schedule(static, 1)
    for (int i = 1; i < 64; ++i) {
#pragma omp ordered depend(sink : i - 1)
        a[i] = a[i - 1] + i;
#pragma omp ordered depend(source)
    }
    printf("doacross prefix sum: %ld\n", a[63]);
    return 0;
}
