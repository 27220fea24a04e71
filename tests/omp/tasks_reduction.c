/* tests/omp/tasks_reduction.c — task reductions as GCC 12 lowers them:
 * taskgroup task_reduction with in_reduction tasks (nested, and a nested
 * taskgroup with reductions of its own over the outer ones), an
 * in_reduction taskloop, taskloop reduction, an orphaned taskgroup outside
 * any parallel region, a user-defined reduction, and the task modifier on
 * parallel, for, sections and scope. Deterministic: the suite compares the
 * output with libgomp's. */
#include <omp.h>
#include <stdio.h>

enum { N = 1000 };

struct pair {
    long lo, hi;
};
#pragma omp declare reduction(span : struct pair : omp_out.lo = omp_in.lo < omp_out.lo ? omp_in.lo : omp_out.lo, \
                              omp_out.hi = omp_in.hi > omp_out.hi ? omp_in.hi : omp_out.hi)                    \
    initializer(omp_priv = {1000000, -1000000})

/* An orphaned taskgroup: called outside any parallel region too. */
static long orphan(int k) {
    long sum = 0;
#pragma omp taskgroup task_reduction(+ : sum)
    {
        for (int i = 0; i < k; ++i) {
#pragma omp task in_reduction(+ : sum)
            sum += i * i;
        }
    }
    return sum;
}

int main(void) {
    long red = 0, prod = 1, loopred = 0, partask = 0, fortask = 0, sect = 0, scoped = 0;
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
                /* A nested taskgroup with its own item; its tasks also
                 * reduce into the outer one's. */
                long inner = 0;
#pragma omp taskgroup task_reduction(+ : inner)
                {
                    for (int k = 0; k < 8; ++k) {
#pragma omp task in_reduction(+ : inner, red)
                        {
                            inner += k;
                            red += 1000;
                        }
                    }
                }
                printf("nested taskgroup: %ld\n", inner);
            }
            printf("taskgroup task_reduction: + %ld, * %ld, max %d\n", red, prod, mx);
#pragma omp taskloop reduction(+ : loopred) grainsize(16)
            for (int i = 0; i < N; ++i) loopred += i;
            printf("taskloop reduction: %ld\n", loopred);
            struct pair sp = {1000000, -1000000};
#pragma omp taskloop reduction(span : sp) num_tasks(7)
            for (int i = 0; i < N; ++i) {
                long v = (i * 7919L) % 1009;
                if (v < sp.lo) sp.lo = v;
                if (v > sp.hi) sp.hi = v;
            }
            printf("taskloop user-defined reduction: %ld..%ld\n", sp.lo, sp.hi);
            printf("orphaned taskgroup in a task region: %ld\n", orphan(20));
        }
#pragma omp sections reduction(task, + : sect)
        {
#pragma omp section
            for (int k = 0; k < 5; ++k) {
#pragma omp task in_reduction(+ : sect)
                sect += k;
            }
#pragma omp section
            {
#pragma omp task in_reduction(+ : sect)
                sect += 100;
            }
        }
#pragma omp scope reduction(task, + : scoped)
        {
#pragma omp task in_reduction(+ : scoped)
            scoped += 1;
        }
#pragma omp single
        printf("sections reduction(task): %ld, scope reduction(task): %ld of %d\n", sect, scoped,
               omp_get_num_threads());
        
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
    printf("orphaned taskgroup outside parallel: %ld\n", orphan(30));
    return 0;
}
