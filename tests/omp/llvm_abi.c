/* tests/omp/llvm_abi.c — an OpenMP program of LLVM's ABI: built by
 * run_suite.sh with clang -fopenmp and run by LLVM's libomp (it calls
 * __kmpc_fork_call, not GOMP_parallel). Under libomp it prints its team
 * size and how many distinct thread numbers the team saw; the shim, whose
 * omp_* functions would answer inside libomp's region, must stop it
 * instead of letting it print "team 1". No omp.h: GCC's does not compile
 * under clang and Debian's clang has none without libomp-dev. */
#include <stdio.h>

extern int omp_get_thread_num(void);
extern int omp_get_num_threads(void);

int main(void) {
    int seen[256] = {0};
    int n = 0;
#pragma omp parallel
    {
        const int t = omp_get_thread_num();
        if (t >= 0 && t < 256) {
#pragma omp atomic
            seen[t]++;
        }
#pragma omp single
        n = omp_get_num_threads();
    }
    int distinct = 0;
    for (int i = 0; i < 256; ++i) distinct += seen[i] > 0;
    printf("team %d, distinct thread numbers %d\n", n, distinct);
    return 0;
}
