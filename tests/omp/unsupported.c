/* tests/omp/unsupported.c — an entry point the shim does not implement:
 * registering a device image, which a program built with an offloading
 * compiler (-foffload=...) does from a constructor before main. The shim
 * runs target regions on the host only, so under libnumaware_omp.so this
 * must stop at once with one line naming the entry point and what it is
 * for, never run on a mix of runtimes. Called here as that constructor
 * would, with an empty image: no offloading compiler is needed to build
 * it. (Under libgomp without a device plugin the image is kept unused.) */
#include <stdio.h>

void GOMP_offload_register_ver(unsigned version, const void* host_table, int target_type, const void* target_data);

static void* empty_table[4];   /* functions [0, 1), variables [2, 3): none */

int main(void) {
    empty_table[0] = empty_table[1] = &empty_table[0];
    empty_table[2] = empty_table[3] = &empty_table[2];
    /* GOMP_VERSION 1 and device version 1; target type 5, NVIDIA PTX. */
    GOMP_offload_register_ver((1u << 16) | 1u, empty_table, 5, NULL);
    printf("device image registered\n");
    return 0;
}
