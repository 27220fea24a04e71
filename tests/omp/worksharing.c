/* tests/omp/worksharing.c — parallel regions and loops: every schedule,
 * both loop ABIs (long and unsigned long long), negative steps, combined
 * `parallel for`, nowait chains, sections, collapse. Prints what a correct
 * runtime makes deterministic: which iterations ran, how often, and sums
 * that do not depend on the thread count. */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#define N 1000
static int hits[N];

static void check(const char* what, long lo, long hi, long step) {
    long ok = 1, count = 0;
    for (long i = 0; i < N; ++i) {
        const int want = (i >= lo && i < hi && (i - lo) % step == 0) ? 1 : 0;
        if (hits[i] != want) ok = 0;
        count += hits[i];
    }
    printf("%s: %s, %ld iterations\n", what, ok ? "each once" : "WRONG", count);
    memset(hits, 0, sizeof hits);
}

int main(void) {
    int sizes_match = 1;
#pragma omp parallel
    {
        if (omp_get_num_threads() != omp_get_team_size(1)) sizes_match = 0;
#pragma omp for schedule(static)
        for (long i = 0; i < N; ++i) hits[i]++;
#pragma omp single
        check("static", 0, N, 1);
#pragma omp for schedule(static, 7)
        for (long i = 3; i < N; i += 2) hits[i]++;
#pragma omp single
        check("static,7 step 2", 3, N, 2);
#pragma omp for schedule(dynamic)
        for (long i = N - 1; i >= 10; --i) hits[i]++;
#pragma omp single
        check("dynamic, down", 10, N, 1);
#pragma omp for schedule(dynamic, 13)
        for (long i = 0; i < N; i += 3) hits[i]++;
#pragma omp single
        check("dynamic,13 step 3", 0, N, 3);
#pragma omp for schedule(guided)
        for (long i = 0; i < N; ++i) hits[i]++;
#pragma omp single
        check("guided", 0, N, 1);
#pragma omp for schedule(guided, 5)
        for (long i = 5; i < 905; ++i) hits[i]++;
#pragma omp single
        check("guided,5", 5, 905, 1);
#pragma omp for schedule(runtime)
        for (long i = 0; i < N; ++i) hits[i]++;
#pragma omp single
        check("runtime", 0, N, 1);
#pragma omp for schedule(nonmonotonic: dynamic, 4)
        for (long i = 0; i < N; ++i) hits[i]++;
#pragma omp single
        check("nonmonotonic dynamic,4", 0, N, 1);
#pragma omp for schedule(dynamic) nowait
        for (unsigned long long i = 0; i < 500; ++i) hits[i]++;
#pragma omp for schedule(dynamic, 2)
        for (unsigned long long i = 500; i < N; ++i) hits[i]++;
#pragma omp single
        check("ull, two loops, the first nowait", 0, N, 1);
#pragma omp for schedule(guided) collapse(2)
        for (int i = 0; i < 20; ++i)
            for (int j = 0; j < 50; ++j) hits[i * 50 + j]++;
#pragma omp single
        check("collapse(2)", 0, N, 1);
        /* Ten nowait loops in a row: more than the runtime's ring of
           worksharing slots, so fast threads wait for slow ones. */
        for (int k = 0; k < 10; ++k) {
#pragma omp for schedule(dynamic, 1) nowait
            for (long i = k * 100; i < (k + 1) * 100; ++i) hits[i]++;
        }
#pragma omp barrier
#pragma omp single
        check("ten nowait loops", 0, N, 1);
        int sec[3] = {0, 0, 0};
#pragma omp sections
        {
#pragma omp section
            hits[1]++;
#pragma omp section
            hits[2]++;
#pragma omp section
            hits[3]++;
        }
        (void)sec;
#pragma omp single
        check("sections", 1, 4, 1);
        /* Ordered loops: the ordered regions run in iteration order, also
           when some iterations skip theirs. */
        static long seq[N];
        static int pos;
#define ORDERED_LOOP(label, sched)                                     \
    _Pragma("omp single") pos = 0;                                     \
    _Pragma(sched)                                                     \
    for (long i = 0; i < 300; ++i) {                                   \
        hits[i]++;                                                     \
        if (i % 7 != 3) {                                              \
            _Pragma("omp ordered") seq[pos++] = i;                     \
        }                                                              \
    }                                                                  \
    _Pragma("omp single") {                                            \
        int in_order = 1;                                              \
        for (int k = 1; k < pos; ++k)                                  \
            if (seq[k] <= seq[k - 1]) in_order = 0;                    \
        printf("%s: %d ordered regions, %s\n", label, pos,            \
               in_order ? "in order" : "OUT OF ORDER");                \
        check(label, 0, 300, 1);                                       \
    }
        ORDERED_LOOP("ordered static", "omp for ordered schedule(static)")
        ORDERED_LOOP("ordered static,4", "omp for ordered schedule(static, 4)")
        ORDERED_LOOP("ordered dynamic,3", "omp for ordered schedule(dynamic, 3)")
        ORDERED_LOOP("ordered guided", "omp for ordered schedule(guided)")
        ORDERED_LOOP("ordered runtime", "omp for ordered schedule(runtime)")
    }
#pragma omp parallel for schedule(static, 3)
    for (long i = 0; i < N; ++i) hits[i]++;
    check("parallel for static,3", 0, N, 1);
#pragma omp parallel for schedule(dynamic, 8)
    for (long i = 0; i < N; ++i) hits[i]++;
    check("parallel for dynamic,8", 0, N, 1);
#pragma omp parallel for schedule(guided)
    for (long i = 100; i > 0; i -= 1) hits[i]++;
    check("parallel for guided, down", 1, 101, 1);
#pragma omp parallel for schedule(runtime)
    for (long i = 0; i < N; ++i) hits[i]++;
    check("parallel for runtime", 0, N, 1);
#pragma omp parallel sections
    {
#pragma omp section
        hits[7]++;
#pragma omp section
        hits[8]++;
    }
    check("parallel sections", 7, 9, 1);
    volatile long none = 0;
#pragma omp parallel for
    for (long i = 0; i < none; ++i) hits[i]++;
    check("empty loop", 0, 0, 1);
    printf("team sizes agree: %s\n", sizes_match ? "yes" : "NO");
    return 0;
}
