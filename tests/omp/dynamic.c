/* tests/omp/dynamic.c — the teams a program gets under dyn-var
 * (OMP_DYNAMIC, omp_set_dynamic): without a clause and with
 * num_threads(64), as the environment leaves it and after
 * omp_set_dynamic(0). The counts depend on the machine's load
 * (run_suite.sh bounds them). */
#include <omp.h>
#include <stdio.h>

static int team(int clause) {
    int n = 0;
    if (clause) {
#pragma omp parallel num_threads(64)
#pragma omp single
        n = omp_get_num_threads();
    } else {
#pragma omp parallel
#pragma omp single
        n = omp_get_num_threads();
    }
    return n;
}

int main(void) {
    printf("dynamic %d: team %d, with num_threads(64) %d\n", omp_get_dynamic(), team(0), team(1));
    omp_set_dynamic(0);
    printf("dynamic %d: team %d, with num_threads(64) %d\n", omp_get_dynamic(), team(0), team(1));
    return 0;
}
