/* tests/omp/threads.c — parallel regions started from several user threads
 * at once (each its own initial thread, as the standard has it), a team of
 * 8 threads, more than the CPUs of the test machine, forked and joined a
 * thousand times, and the thread count set through libgomp's own handle,
 * as threadpoolctl (scikit-learn, NumPy's users) sets it. */
#include <dlfcn.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static long total[4];
static int levels_ok[4];

static void* user(void* arg) {
    const long id = (long)arg;
    long s = 0;
    int ok = 1;
    for (int r = 0; r < 50; ++r) {
        long local = 0;
#pragma omp parallel for reduction(+ : local) schedule(dynamic, 7) num_threads(3)
        for (int i = 0; i < 1000; ++i) local += i;
        s += local;
#pragma omp parallel num_threads(2)
        if (omp_get_level() != 1) ok = 0;
    }
    total[id] = s;
    levels_ok[id] = ok && omp_get_level() == 0;
    return 0;
}

int main(void) {
    pthread_t t[4];
    for (long i = 0; i < 4; ++i) pthread_create(&t[i], 0, user, (void*)i);
    for (int i = 0; i < 4; ++i) pthread_join(t[i], 0);
    for (int i = 0; i < 4; ++i) printf("user thread %d: sum %ld, levels %s\n", i, total[i], levels_ok[i] ? "right" : "WRONG");
    long x = 0;
    int sizes_ok = 1;
    for (int r = 0; r < 1000; ++r) {
#pragma omp parallel num_threads(8) reduction(+ : x)
        {
            x += omp_get_thread_num();
            if (omp_get_num_threads() != 8) sizes_ok = 0;
        }
    }
    printf("8 threads, 1000 regions: sum of thread numbers %ld, team sizes %s\n", x, sizes_ok ? "8" : "WRONG");

    /* libgomp found by its file name and its own routines called through
     * the handle: the program's next regions follow, as under libgomp. */
    void* gomp = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);
    void* p_set = gomp ? dlsym(gomp, "omp_set_num_threads") : 0;
    void* p_get = gomp ? dlsym(gomp, "omp_get_max_threads") : 0;
    if (!p_set || !p_get) {
        printf("libgomp.so.1 not found by name\n");
        return 1;
    }
    void (*gomp_set)(int);
    int (*gomp_get)(void);
    memcpy(&gomp_set, &p_set, sizeof p_set);
    memcpy(&gomp_get, &p_get, sizeof p_get);
    const int before = omp_get_max_threads();
    gomp_set(1);
    int team = 0;
#pragma omp parallel
#pragma omp single
    team = omp_get_num_threads();
    printf("libgomp's omp_set_num_threads(1): omp_get_max_threads %d, team of %d\n", omp_get_max_threads(), team);
    gomp_set(before);
#pragma omp parallel
#pragma omp single
    team = omp_get_num_threads();
    printf("libgomp's omp_set_num_threads back to the start: team of %d\n", team);
    gomp_set(2);
    int inner = 0;
#pragma omp parallel num_threads(3)
#pragma omp master
    inner = omp_get_max_threads();
    printf("libgomp's omp_set_num_threads(2), then num_threads(3): omp_get_max_threads inside %d\n", inner);
    omp_set_num_threads(3);
    printf("omp_set_num_threads(3): libgomp's omp_get_max_threads %d\n", gomp_get());
    return 0;
}
