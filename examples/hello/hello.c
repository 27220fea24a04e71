/* The same from C: load a synthetic 2-node machine and print its distance. */
#include <stdio.h>
#include <numaware/numaware.h>

int main(void) {
    nw_machine_t* m = NULL;
    if (nw_machine_load("nodes=2 cpus-per-node=1 mem-per-node=256M distances=10,21/21,10", &m) != 0) {
        fprintf(stderr, "nw_machine_load: %s\n", nw_error_message());
        return 1;
    }
    printf("distance 0->1 = %u\n", nw_machine_distance(m, 0, 1));
    nw_machine_destroy(m);
    return 0;
}
