/* tests/omp/inherit.c — what the initial thread passes on after its
 * parallel regions: the CPUs that it, a thread it starts (pthread_create:
 * std::thread, Python's threads, thread pools) and a process it starts
 * (fork, as multiprocessing does; posix_spawn, as system(), popen and
 * Python's subprocess do) may run on, and the binding it reports
 * (omp_get_proc_bind, omp_get_num_places, which mmseqs2 and Foldseek read
 * and refuse to run with anything but false). Without OMP_PROC_BIND and
 * OMP_PLACES libgomp binds nothing, and all of them keep the mask the
 * process started with (as at the start of main): the output must be
 * libgomp's (run_suite.sh). With INHERIT_POOL=1 it also
 * prints how many CPUs each pool thread of a team of OMP_NUM_THREADS may
 * use, which numaware's placement of its own threads narrows to one, and
 * the same for a region of 2 that another thread starts, whose pool
 * numaware leaves unbound (run_suite.sh checks these apart). */
#define _GNU_SOURCE
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

/* The calling thread's CPUs as a list "0-3,6": written to out. */
static void cpus_of_caller(char* out, size_t size) {
    cpu_set_t s;
    out[0] = '\0';
    if (sched_getaffinity(0, sizeof s, &s) != 0) {
        snprintf(out, size, "(sched_getaffinity failed)");
        return;
    }
    size_t at = 0;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (!CPU_ISSET(c, &s)) continue;
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &s)) ++e;
        at += (size_t)snprintf(out + at, size - at, at == 0 ? "" : ",");
        at += (size_t)(e == c ? snprintf(out + at, size - at, "%d", c) : snprintf(out + at, size - at, "%d-%d", c, e));
        c = e;
        if (at >= size) break;
    }
}

static void* thread_cpus(void* out) {
    cpus_of_caller(out, 256);
    return NULL;
}

/* Another initial thread's region of 2: how many CPUs its thread 1 may use. */
static void* other_region(void* out) {
    int* count = out;
#pragma omp parallel num_threads(2)
    {
        cpu_set_t s;
        if (omp_get_thread_num() == 1 && sched_getaffinity(0, sizeof s, &s) == 0) *count = CPU_COUNT(&s);
    }
    return NULL;
}

int main(void) {
    char before[256], line[256];
    cpus_of_caller(before, sizeof before);
    int cpus[64] = {0};
    long sum = 0;
    for (int round = 0; round < 3; ++round) {
#pragma omp parallel reduction(+ : sum)
        {
            cpu_set_t s;
            const int t = omp_get_thread_num();
            if (t < 64 && sched_getaffinity(0, sizeof s, &s) == 0) cpus[t] = CPU_COUNT(&s);
            sum += t + 1;
        }
    }
    const int threads = omp_get_max_threads();
    const int ok = sum == 3L * threads * (threads + 1) / 2;
    printf("regions: %s\n", ok ? "ok" : "wrong sum");
    printf("bind-var: %d, places: %d\n", (int)omp_get_proc_bind(), omp_get_num_places());

    cpus_of_caller(line, sizeof line);
    printf("initial thread: %s\n", strcmp(line, before) == 0 ? "as at the start of main" : line);

    pthread_t tid;
    char from_thread[256] = "";
    if (pthread_create(&tid, NULL, thread_cpus, from_thread) != 0 || pthread_join(tid, NULL) != 0)
        printf("pthread_create failed\n");
    else
        printf("a thread it starts: %s\n", strcmp(from_thread, before) == 0 ? "as at the start of main" : from_thread);

    fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
        cpus_of_caller(line, sizeof line);
        printf("a child it forks: %s\n", strcmp(line, before) == 0 ? "as at the start of main" : line);
        fflush(stdout);
        _exit(0);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || status != 0) printf("fork failed\n");

    /* A program it spawns reads its own mask: the kernel's list, compared
     * here with the launch mask in the kernel's notation. */
    char* argv[] = {"grep", "-q", "", "/proc/self/status", NULL};
    char want[300];
    snprintf(want, sizeof want, "Cpus_allowed_list:\t%s", before);
    argv[2] = want;
    pid_t child;
    if (posix_spawnp(&child, "grep", NULL, NULL, argv, environ) != 0 || waitpid(child, &status, 0) != child)
        printf("posix_spawnp failed\n");
    else
        printf("a program it spawns: %s\n",
               WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "as at the start of main" : "other CPUs");

    const char* pool = getenv("INHERIT_POOL");
    if (pool != NULL && strcmp(pool, "1") == 0) {
        for (int t = 1; t < threads && t < 64; ++t) printf("pool thread %d: %d CPUs\n", t, cpus[t]);
        int other = 0;
        if (pthread_create(&tid, NULL, other_region, &other) != 0 || pthread_join(tid, NULL) != 0)
            printf("pthread_create failed\n");
        else
            printf("another initial thread's pool thread 1: %d CPUs\n", other);
    }
    return ok ? 0 : 1;
}
