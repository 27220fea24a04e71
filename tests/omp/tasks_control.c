/* tests/omp/tasks_control.c — what waits for tasks and what shapes them:
 * taskwait (also after 200 children, around an included task that waits
 * for its own), taskgroup (grandchildren too), taskloop (grainsize, strict,
 * num_tasks, nogroup, collapse, both loop ABIs, lastprivate, firstprivate,
 * nested, from every thread), final and omp_in_final, if(0), untied,
 * mergeable, priority, taskyield, fib with a final cut-off and nqueens
 * (task reductions are in tasks_reduction.c). Prints counts and sums that a correct runtime makes
 * deterministic; priorities and the schedule change none of them. */
#include <omp.h>
#include <stdio.h>
#include <string.h>

enum { N = 1000 };
static int hits[N], first_of[N], done[64];
static int counted, grandchildren, finals[2], ran, included_ok = 1, thread_ok = 1, team;
static long solutions, final_calls;

static void spin(int n) {
    volatile int z = 0;
    for (int i = 0; i < n; ++i) z = z + 1;
}

static void note_thread(void) {
    const int me = omp_get_thread_num();
    if (me < 0 || me >= omp_get_num_threads() || omp_get_num_threads() != team) {
#pragma omp atomic write
        thread_ok = 0;
    }
}

static void check(const char* what, int n) {
    int ok = 1, count = 0;
    for (int i = 0; i < N; ++i) {
        if (hits[i] != (i < n)) ok = 0;
        count += hits[i];
    }
    printf("%s: %s, %d iterations\n", what, ok ? "each once" : "WRONG", count);
    memset(hits, 0, sizeof hits);
}

/* The tasks of a taskloop, from first_of[] (each iteration names the first
   iteration of its task): their number and smallest and largest sizes. */
static int chunks(int n, int* lo, int* hi) {
    int count = 0;
    *lo = n, *hi = 0;
    for (int i = 0; i < n; ++i) {
        if (first_of[i] != i) continue;
        int size = 1;
        while (i + size < n && first_of[i + size] == i) ++size;
        count++;
        if (size < *lo) *lo = size;
        if (size > *hi) *hi = size;
    }
    return count;
}

static void print_chunks(const char* what, int n) {
    int lo, hi;
    const int count = chunks(n, &lo, &hi);
    printf("%s: %d tasks of %d to %d iterations\n", what, count, lo, hi);
}

/* Below a final task every task is final and included (runs at once). */
static void tree(int depth) {
    note_thread();
#pragma omp atomic
    finals[omp_in_final() ? 1 : 0]++;
    for (int k = 0; k < 3 && depth < 2; ++k) {
        int ran_here = 0;
#pragma omp task shared(ran_here)
        {
            tree(depth + 1);
            ran_here = 1;
        }
        if (omp_in_final() && !ran_here) included_ok = 0;
    }
#pragma omp taskwait
}

static long fib(int n) {
#pragma omp atomic
    final_calls += omp_in_final() ? 1 : 0;
    if (n < 2) return n;
    long a, b;
#pragma omp task shared(a) final(n < 10)
    a = fib(n - 1);
#pragma omp task shared(b) final(n < 10)
    b = fib(n - 2);
#pragma omp taskwait
    return a + b;
}

static void queens(int row, const char* prev) {
    if (row == 8) {
#pragma omp atomic
        solutions++;
        return;
    }
    for (int c = 0; c < 8; ++c) {
        int safe = 1;
        for (int r = 0; r < row; ++r)
            if (prev[r] == c || prev[r] - c == r - row || prev[r] - c == row - r) safe = 0;
        if (!safe) continue;
        char pos[8] = {0};
        memcpy(pos, prev, (size_t)row);
        pos[row] = (char)c;
#pragma omp task firstprivate(pos) if (row < 4)
        {
            note_thread();
            queens(row + 1, pos);
        }
    }
#pragma omp taskwait
}

int main(void) {
    long f = 0, u = 0;
    int last = -1, base = 100;
    printf("max task priority %d, in final outside tasks %d\n", omp_get_max_task_priority(), omp_in_final());
#pragma omp parallel
    {
#pragma omp single
        {
            team = omp_get_num_threads();
            for (int k = 0; k < 8; ++k) {
#pragma omp task
                {
                    spin(2000 * (8 - k));
                    note_thread();
                    done[k] = 1;
                }
            }
#pragma omp taskwait
            for (int k = 0; k < 8; ++k) counted += done[k];
            printf("taskwait: %d of 8 children done\n", counted);
            /* More children than a runtime may count at a time, with an
               included task among them that has children of its own and
               waits for them: each taskwait waits for its own children, all
               of them. */
            int many_done = 0, inner_done = 0, inner_seen = -1;
            for (int k = 0; k < 200; ++k) {
                if (k == 100) {
#pragma omp task if (0) shared(inner_done, inner_seen)
                    {
                        for (int j = 0; j < 70; ++j) {
#pragma omp task shared(inner_done)
                            {
                                spin(500);
#pragma omp atomic
                                inner_done++;
                            }
                        }
#pragma omp taskwait
#pragma omp atomic read
                        inner_seen = inner_done;
                    }
                }
#pragma omp task shared(many_done)
                {
                    spin(200);
#pragma omp atomic
                    many_done++;
                }
            }
#pragma omp taskwait
            printf("taskwait: %d of 200 children done; the included task saw %d of its 70 done\n", many_done,
                   inner_seen);
#pragma omp taskgroup
            for (int k = 0; k < 4; ++k) {
#pragma omp task
                for (int j = 0; j < 4; ++j) {
#pragma omp task
                    {
                        spin(3000);
#pragma omp atomic
                        grandchildren++;
                    }
                }
            }
            printf("taskgroup: %d of 16 grandchildren done\n", grandchildren);
#pragma omp taskloop
            for (int i = 0; i < N; ++i) hits[i]++;
            check("taskloop", N);
            int first = -1;
#pragma omp taskloop grainsize(7) firstprivate(first)
            for (int i = 0; i < N; ++i) {
                if (first < 0) first = i;
                first_of[i] = first;
                hits[i]++;
            }
            check("taskloop grainsize(7)", N);
            int lo, hi;
            chunks(N, &lo, &hi);
            printf("taskloop grainsize(7): tasks of 7 to 13 iterations: %s\n", lo >= 7 && hi < 14 ? "yes" : "NO");
#pragma omp taskloop grainsize(strict : 7) firstprivate(first)
            for (int i = 0; i < N; ++i) {
                if (first < 0) first = i;
                first_of[i] = first;
            }
            print_chunks("taskloop grainsize(strict: 7)", N);
#pragma omp taskloop num_tasks(5) firstprivate(first)
            for (int i = 0; i < N; ++i) {
                if (first < 0) first = i;
                first_of[i] = first;
            }
            print_chunks("taskloop num_tasks(5)", N);
#pragma omp taskloop num_tasks(strict : 3) firstprivate(first)
            for (int i = 0; i < 10; ++i) {
                if (first < 0) first = i;
                first_of[i] = first;
            }
            print_chunks("taskloop num_tasks(strict: 3) over 10", 10);
#pragma omp taskloop nogroup grainsize(10)
            for (int i = 0; i < N; ++i) {
                spin(50);
                hits[i]++;
            }
#pragma omp taskwait
            check("taskloop nogroup, then taskwait", N);
#pragma omp taskloop collapse(2) grainsize(3)
            for (int i = 0; i < 20; ++i)
                for (int j = 0; j < 50; ++j) hits[i * 50 + j]++;
            check("taskloop collapse(2)", N);
            /* Beyond LONG_MAX: GCC must use the unsigned long long ABI. */
#pragma omp taskloop num_tasks(6)
            for (unsigned long long i = 1ULL << 63; i < (1ULL << 63) + 900; ++i) hits[i - (1ULL << 63)]++;
            check("taskloop unsigned long long, from 2^63", 900);
#pragma omp taskloop grainsize(4)
            for (long i = N - 1; i >= 0; i -= 3) hits[i]++;
            int thirds = 1;
            for (int i = 0; i < N; ++i) thirds &= hits[i] == (i % 3 == 0);
            memset(hits, 0, sizeof hits);
            printf("taskloop down by 3: %s\n", thirds ? "each multiple of 3 once" : "WRONG");
#pragma omp taskloop lastprivate(last) firstprivate(base) grainsize(9)
            for (int i = 0; i < N; ++i) {
                hits[i] += base == 100;
                last = i * 2;
            }
            check("taskloop firstprivate", N);
            printf("taskloop lastprivate: %d\n", last);
#pragma omp taskloop grainsize(1)
            for (int o = 0; o < 10; ++o) {
#pragma omp taskloop grainsize(8)
                for (int j = 0; j < 100; ++j) hits[o * 100 + j]++;
            }
            check("taskloop in a taskloop's task", N);
#pragma omp task final(1)
            tree(0);
#pragma omp taskwait
            printf("final task tree: %d final, %d not, included at once: %d\n", finals[1], finals[0], included_ok);
            finals[0] = finals[1] = 0;
#pragma omp task final(0)
            tree(1);
#pragma omp taskwait
            printf("final(0) task tree: %d final, %d not\n", finals[1], finals[0]);
            int v = 0;
#pragma omp task if (0) shared(v)
            {
                spin(20000);
#pragma omp task shared(v)
                v += 1;
#pragma omp taskwait
                v *= 10;
            }
            printf("if(0): %d right after\n", v);
#pragma omp task untied shared(u)
            {
                for (int k = 0; k < 10; ++k) {
#pragma omp task shared(u)
                    {
#pragma omp atomic
                        u += k;
                    }
#pragma omp taskyield
                }
#pragma omp taskwait
                u += 1000;
            }
            for (int k = 0; k < 20; ++k) {
#pragma omp task mergeable firstprivate(k)
                {
#pragma omp atomic
                    ran += k;
                }
#pragma omp task priority(k % 6)
                {
                    for (int y = 0; y < 5; ++y) {
#pragma omp taskyield
                    }
                    done[20 + k] = 1;
                }
            }
#pragma omp taskwait
            int prio = 0;
            for (int k = 0; k < 20; ++k) prio += done[20 + k];
            printf("untied: %ld; mergeable: %d; priority, taskyield: %d of 20\n", u, ran, prio);

            f = fib(20);
            printf("fib(20) = %ld, %ld calls in final tasks\n", f, final_calls);
            queens(0, "");
            printf("queens(8) = %ld\n", solutions);
        }
        /* Every thread runs a taskloop on its own slice. */
        const int me = omp_get_thread_num(), nt = omp_get_num_threads();
#pragma omp taskloop grainsize(5)
        for (int i = me * N / nt; i < (me + 1) * N / nt; ++i) hits[i]++;
    }
    check("taskloop from every thread", N);
    printf("thread numbers in tasks in range: %s\n", thread_ok ? "yes" : "NO");
    return 0;
}
