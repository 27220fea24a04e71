/* tests/trace/omp_triad.c — a STREAM triad in C and OpenMP, recorded by
 * tests/trace/record_check.sh with `numaware trace record` and compared
 * with the simulator's built-in workload stream:MIB.
 *
 *     omp_triad [MIB]      (default 8; threads: OMP_NUM_THREADS)
 *
 * The same computation as the built-in (src/sim/memory/workloads.cpp,
 * Stream): three arrays a, b, c of MIB MiB of doubles each; an init loop
 * in which each thread writes a[i], b[i], c[i] of its static chunk (so it
 * touches those pages first), then the triad a[i] = b[i] + s * c[i] under
 * the same static schedule. The arrays lie in one page-aligned block, b
 * and c starting 12 KiB past the end of the array before them, as the
 * built-in lays its arrays out (whose bases are 1 GiB apart plus k × 12
 * KiB), so equal indices fall in the same cache sets relative to each
 * other in both. Phases are marked for the trace (numaware_trace.h):
 * "init" (not measured), "triad" (measured), "check" (not measured); run
 * natively the marks do nothing. Compile without vectorisation so that
 * each element is one 8-byte access, as in the built-in.
 */
#include <stdio.h>
#include <stdlib.h>

#include <omp.h>

#include "numaware_trace.h"

int main(int argc, char** argv) {
    const long mib = argc > 1 ? atol(argv[1]) : 8;
    if (mib < 1 || mib > 4096) {
        fprintf(stderr, "omp_triad: MIB must be 1 to 4096, got '%s'\n", argv[1]);
        return 2;
    }
    const size_t bytes = (size_t)mib << 20, gap = 12288, n = bytes / sizeof(double);
    char* block = aligned_alloc(4096, 3 * (bytes + gap));
    if (block == NULL) {
        fprintf(stderr, "omp_triad: cannot allocate %zu bytes\n", 3 * (bytes + gap));
        return 1;
    }
    double* a = (double*)block;
    double* b = (double*)(block + bytes + gap);
    double* c = (double*)(block + 2 * (bytes + gap));
    const double s = 3.0;

    NUMAWARE_TRACE_PHASE("init", 0);
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; ++i) {
        a[i] = 1.0;
        b[i] = 2.0;
        c[i] = 0.5;
    }

    NUMAWARE_TRACE_PHASE("triad", 1);
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];

    NUMAWARE_TRACE_PHASE("check", 0);
    int bad = 0;
    for (size_t i = 0; i < n; ++i) bad |= a[i] != 3.5;
    printf("omp_triad: %d threads, %ld MiB per array, %zu elements, %s\n", omp_get_max_threads(), mib, n,
           bad ? "WRONG" : "checked");
    free(block);
    return bad;
}
