/* tests/omp/unsupported.c — a construct the shim does not implement yet
 * (`target`, which GCC lowers to GOMP_target_ext even without an offload
 * device): under libnumaware_omp.so it must stop at once with one line
 * naming the entry point and what it is for, never run on a mix of
 * runtimes. Under libgomp the region falls back to the host. */
#include <stdio.h>

int main(void) {
    int x = 0;
#pragma omp target map(tofrom : x)
    x = 42;
    printf("target region on the host: %d\n", x);
    return 0;
}
