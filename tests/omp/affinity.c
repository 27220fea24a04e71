/* tests/omp/affinity.c — the place and affinity routines (OpenMP 5.0), the
 * affinity format, and omp_pause_resource. Place lists depend on the
 * runtime's defaults, so the program prints what must hold under any
 * runtime (a thread's place holds its CPU mask, the format's fields match
 * the other routines) and the suite compares that with libgomp's output. */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every place has CPUs, numbered as the system numbers them. */
static int places_consistent(void) {
    const int n = omp_get_num_places();
    if (n < 0) return 0;
    for (int p = 0; p < n; ++p) {
        const int k = omp_get_place_num_procs(p);
        if (k <= 0 || k > CPU_SETSIZE) return 0;
        int* ids = malloc(sizeof(int) * (size_t)k);
        omp_get_place_proc_ids(p, ids);
        for (int i = 0; i < k; ++i)
            if (ids[i] < 0 || ids[i] >= CPU_SETSIZE) return 0;
        free(ids);
    }
    return omp_get_place_num_procs(-1) == 0 && omp_get_place_num_procs(n) == 0;
}

/* The calling thread's place, if it has one, holds its whole CPU mask. */
static int my_place_holds_my_mask(void) {
    const int p = omp_get_place_num();
    if (p < -1 || p >= omp_get_num_places()) return 0;
    if (p == -1) return 1;
    cpu_set_t mask;
    if (sched_getaffinity(0, sizeof mask, &mask) != 0) return 0;
    const int k = omp_get_place_num_procs(p);
    int* ids = malloc(sizeof(int) * (size_t)k);
    omp_get_place_proc_ids(p, ids);
    cpu_set_t place;
    CPU_ZERO(&place);
    for (int i = 0; i < k; ++i) CPU_SET(ids[i], &place);
    free(ids);
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &mask) && !CPU_ISSET(c, &place)) return 0;
    const int parts = omp_get_partition_num_places();
    if (parts < 0 || parts > omp_get_num_places()) return 0;
    int nums[CPU_SETSIZE];
    omp_get_partition_place_nums(nums);
    for (int i = 0; i < parts; ++i)
        if (nums[i] < 0 || nums[i] >= omp_get_num_places()) return 0;
    return 1;
}

/* The format's fields against the routines that report the same values. */
static int capture_matches(void) {
    char want[128], got[128];
    snprintf(want, sizeof want, "%d/%d L%d", omp_get_thread_num(), omp_get_num_threads(), omp_get_level());
    const size_t n = omp_capture_affinity(got, sizeof got, "%n/%{num_threads} L%L");
    if (n != strlen(want) || strcmp(got, want) != 0) return 0;
    /* Zero-padded and right-justified widths. */
    snprintf(want, sizeof want, "[%04d]", omp_get_thread_num());
    omp_capture_affinity(got, sizeof got, "[%0.4n]");
    if (strcmp(got, want) != 0) return 0;
    /* Too small a buffer: cut and terminated, the full length returned. */
    char tiny[3];
    const size_t full = (size_t)snprintf(NULL, 0, "%d threads", omp_get_num_threads());
    if (omp_capture_affinity(tiny, sizeof tiny, "%N threads") != full) return 0;
    return tiny[2] == '\0' && strlen(tiny) == 2;
}

/* `affinity masks`: each thread of a region, in order, with its place and
 * the CPUs of its mask; the suite runs it under binding variables that
 * name CPUs (GOMP_CPU_AFFINITY), where both runtimes must bind alike. */
static int print_masks(void) {
    char line[64][160];
    int threads = 1;
#pragma omp parallel
    {
        const int t = omp_get_thread_num();
        if (t < 64) {
            cpu_set_t mask;
            CPU_ZERO(&mask);
            sched_getaffinity(0, sizeof mask, &mask);
            int n = snprintf(line[t], sizeof line[t], "thread %d: place %d of %d, CPUs", t, omp_get_place_num(),
                             omp_get_num_places());
            for (int c = 0; c < CPU_SETSIZE && n < (int)sizeof line[t] - 8; ++c)
                if (CPU_ISSET(c, &mask)) n += snprintf(line[t] + n, sizeof line[t] - (size_t)n, " %d", c);
        }
#pragma omp single
        threads = omp_get_num_threads();
    }
    for (int t = 0; t < threads && t < 64; ++t) puts(line[t]);
    printf("proc bind: %d\n", (int)omp_get_proc_bind());
    return 0;
}

int main(int argc, char** argv) {
    if (argc > 1 && strcmp(argv[1], "masks") == 0) return print_masks();
    printf("places consistent: %d\n", places_consistent());
    printf("initial thread's place holds its mask: %d\n", my_place_holds_my_mask());
    int mask_ok = 1, capture_ok = 1;
#pragma omp parallel num_threads(3) reduction(&& : mask_ok, capture_ok)
    {
        mask_ok = my_place_holds_my_mask();
        capture_ok = capture_matches();
    }
    printf("every thread's place holds its mask: %d\n", mask_ok);
    printf("captured fields match the routines: %d\n", capture_ok);

    /* affinity-format-var: set, read back, cut when the buffer is short. */
    omp_set_affinity_format("thread %n of %N");
    char buf[64];
    const size_t len = omp_get_affinity_format(buf, sizeof buf);
    printf("format: '%s' (%zu)\n", buf, len);
    char four[5];
    printf("format in 5 bytes: '%s' (%zu)\n", four, omp_get_affinity_format(four, sizeof four));
    char line[64];
    omp_capture_affinity(line, sizeof line, NULL);   /* NULL: affinity-format-var */
    printf("captured with the format: '%s'\n", line);

    /* Pausing: refused inside a region, done outside; regions run after. */
    int inside = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
    inside = omp_pause_resource_all(omp_pause_soft);
    const int soft = omp_pause_resource(omp_pause_soft, omp_get_initial_device());
    int threads = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
    threads = omp_get_num_threads();
    const int hard = omp_pause_resource_all(omp_pause_hard);
    long sum = 0;
#pragma omp parallel for num_threads(2) reduction(+ : sum)
    for (int i = 0; i < 1000; ++i) sum += i;
    printf("pause inside a region: %d, soft outside: %d, then %d threads, hard: %d, then sum %ld\n", inside == 0 ? 0 : -1,
           soft, threads, hard, sum);
    return 0;
}
