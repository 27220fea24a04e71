/* tests/omp/tasks_unsupported.c — a clause the shim does not implement
 * yet (`detach` on a task, fulfilled by omp_fulfill_event): under
 * libnumaware_omp.so it must stop at once with one line naming the entry
 * point and the clause, never run on a mix of runtimes. Under libgomp the
 * detached task completes when its event is fulfilled. */
#include <omp.h>
#include <stdio.h>

int main(void) {
    int x = 0;
#pragma omp parallel
#pragma omp single
    {
        omp_event_handle_t ev;
#pragma omp task detach(ev) shared(x)
        x = 1;
        omp_fulfill_event(ev);
#pragma omp taskwait
    }
    printf("detached task: %d\n", x);
    return 0;
}
