/* tests/omp/tasks_reduction.c — task reductions: taskgroup task_reduction
 * with in_reduction tasks (nested) and an in_reduction taskloop, taskloop
 * reduction, and the task modifier on parallel and for. libnumaware_omp.so
 * does not implement them yet: the suite checks that it stops in one line
 * naming the first entry point, and libgomp's sums here are the reference
 * for when it does. */
#include <omp.h>
#include <stdio.h>

enum { N = 1000 };

int main(void) {
    long red = 0, prod = 1, loopred = 0, partask = 0, fortask = 0;
    int mx = 0, threads = 0;
#pragma omp parallel
    {
#pragma omp single
        {
            threads = omp_get_num_threads();
#pragma omp taskgroup task_reduction(+ : red) task_reduction(* : prod) task_reduction(max : mx)
            {
                for (int k = 1; k <= 10; ++k) {
#pragma omp task in_reduction(+ : red) in_reduction(* : prod)
                    {
                        red += k;
                        prod *= k;
#pragma omp task in_reduction(max : mx) in_reduction(+ : red)
                        {
                            red += 100;
                            if (k * 37 % 11 > mx) mx = k * 37 % 11;
                        }
                    }
                }
#pragma omp taskloop in_reduction(+ : red) grainsize(25)
                for (int i = 0; i < 100; ++i) red += i;
            }
            printf("taskgroup task_reduction: + %ld, * %ld, max %d\n", red, prod, mx);
#pragma omp taskloop reduction(+ : loopred) grainsize(16)
            for (int i = 0; i < N; ++i) loopred += i;
            printf("taskloop reduction: %ld\n", loopred);
        }
#pragma omp for reduction(task, + : fortask)
        for (int i = 0; i < 100; ++i) {
#pragma omp task in_reduction(+ : fortask)
            fortask += i;
        }
    }
#pragma omp parallel reduction(task, + : partask)
    {
        partask += 1;
        for (int k = 0; k < 10; ++k) {
#pragma omp task in_reduction(+ : partask)
            partask += k;
        }
    }
    printf("parallel reduction(task): %ld for %d threads\n", partask, threads);
    printf("for reduction(task): %ld\n", fortask);
    return 0;
}
