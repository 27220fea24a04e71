/* tests/omp/fork.c — OpenMP in a process that fork() made after its parent
 * ran parallel regions and tasks (Python's multiprocessing, servers that
 * fork their workers). Under libgomp such a child waits for ever for pool
 * threads that stayed in the parent; LLVM's libomp and the shim start
 * afresh. The child runs a parallel loop, tasks with dependences, a
 * taskloop, tasks outside every region and a nested region, forks a
 * grandchild that does the same, and ends through exit() (atexit handlers,
 * thread-local destructors); the parent then goes on. Every figure is checked against a serial loop here,
 * and the whole output is compared with libomp's (run_suite.sh). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 4000
static long a[N];

/* The constructs, once; prints what it found and returns 0 when every
 * figure is right. */
static int constructs(const char* who) {
    int bad = 0;
    long sum = 0, want = 0;
#pragma omp parallel for reduction(+ : sum) schedule(dynamic, 13)
    for (long i = 0; i < N; ++i) sum += i * i % 97;
    for (long i = 0; i < N; ++i) want += i * i % 97;
    bad |= sum != want;

    /* A chain of dependent tasks over blocks of a: block b's task reads
     * block b-1's result. */
    enum { blocks = 40, len = N / blocks };
#pragma omp parallel
#pragma omp single
    for (int b = 0; b < blocks; ++b) {
        long* prev = b > 0 ? &a[(b - 1) * len] : a;
        long* mine = &a[b * len];
#pragma omp task depend(in : prev[0]) depend(out : mine[0]) firstprivate(b, prev, mine)
        {
            const long base = b > 0 ? prev[len - 1] : 0;
            for (int i = 0; i < len; ++i) mine[i] = base + b * len + i;
        }
    }
    /* The chain's values, serially. */
    long base = 0;
    for (int b = 0; b < blocks; ++b) {
        for (int i = 0; i < len; ++i) bad |= a[b * len + i] != base + b * len + i;
        base = base + b * len + len - 1;
    }

    long tl = 0;
#pragma omp parallel
#pragma omp single
#pragma omp taskloop reduction(+ : tl) grainsize(100)
    for (long i = 0; i < N; ++i) tl += i;
    bad |= tl != (long)N * (N - 1) / 2;

    /* Tasks outside every region (the initial thread's implicit one). */
    long solo = 0;
#pragma omp task shared(solo) depend(out : solo)
    solo = 41;
#pragma omp task shared(solo) depend(inout : solo)
    solo += 1;
#pragma omp taskwait
    bad |= solo != 42;

    int inner = 0;
    omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2) reduction(+ : inner)
    {
#pragma omp parallel num_threads(2) reduction(+ : inner)
        inner += omp_get_level() == 2;
    }
    bad |= inner != 4;
    printf("%s: loop %ld, chain %ld, taskloop %ld, outside %ld, nested %d: %s\n", who, sum, a[N - 1], tl, solo,
           inner, bad ? "WRONG" : "right");
    fflush(stdout);
    return bad;
}

int main(void) {
    int bad = constructs("parent");
    const pid_t child = fork();
    if (child < 0) {
        perror("fork");
        return 1;
    }
    if (child == 0) {
        int cbad = constructs("child");
        const pid_t grandchild = fork();
        if (grandchild == 0) exit(constructs("grandchild"));
        int st = 0;
        waitpid(grandchild, &st, 0);
        printf("grandchild ended: %s\n", WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "status 0" : "WRONG");
        cbad |= !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        cbad |= constructs("child again");
        exit(cbad);
    }
    int st = 0;
    waitpid(child, &st, 0);
    printf("child ended: %s\n", WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "status 0" : "WRONG");
    bad |= !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    bad |= constructs("parent again");
    return bad;
}
