/* tests/omp/real/fftw_transforms.c — drives FFTW's OpenMP build (Debian
 * libfftw3-double3's libfftw3_omp: its `omp parallel for` loops over the
 * plan's threads are compiled by Debian, not by us) through a few
 * transforms, and prints every result bit for bit (%a), so that a run under
 * libgomp and a run under libnumaware_omp.so can be compared byte for byte
 * (tests/omp/real_programs.sh).
 *
 * Plans are made with FFTW_ESTIMATE: a measured plan depends on the host's
 * timing, and two plans of one transform may round differently. The first
 * line gives the threads the plans were made for (omp_get_max_threads, as
 * FFTW's documentation suggests passing).
 *
 * usage: fftw_transforms [N]   (N: the 3-D side, 8..128; the others follow) */
#include <stdio.h>
#include <stdlib.h>

#include <fftw3.h>
#include <omp.h>

static double sum_complex(fftw_complex* x, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += x[i][0] * (double)(i % 13 + 1) - x[i][1] * (double)(i % 7 + 1);
    return s;
}

static double sum_real(const double* x, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += x[i] * (double)(i % 11 + 1);
    return s;
}

int main(int argc, char** argv) {
    const int n = argc > 1 ? atoi(argv[1]) : 32;
    if (n < 8 || n > 128) {
        fprintf(stderr, "fftw_transforms: N must be 8..128, got %d\n", n);
        return 2;
    }
    if (!fftw_init_threads()) {
        fprintf(stderr, "fftw_transforms: fftw_init_threads failed\n");
        return 3;
    }
    const int threads = omp_get_max_threads();
    fftw_plan_with_nthreads(threads);
    printf("plan threads %d\n", threads);

    /* A 3-D complex transform, forward then backward (unnormalised). */
    const size_t n3 = (size_t)n * (size_t)n * (size_t)n;
    fftw_complex* a = fftw_alloc_complex(n3);
    fftw_complex* b = fftw_alloc_complex(n3);
    if (!a || !b) return 3;
    unsigned s = 2024u;
    for (size_t i = 0; i < n3; ++i) {
        s = s * 1103515245u + 12345u;
        a[i][0] = (double)(s >> 8) / 16777216.0 - 0.5;
        s = s * 1103515245u + 12345u;
        a[i][1] = (double)(s >> 8) / 16777216.0 - 0.5;
    }
    fftw_plan forward = fftw_plan_dft_3d(n, n, n, a, b, FFTW_FORWARD, FFTW_ESTIMATE);
    fftw_plan backward = fftw_plan_dft_3d(n, n, n, b, a, FFTW_BACKWARD, FFTW_ESTIMATE);
    fftw_execute(forward);
    printf("dft_3d forward %a\n", sum_complex(b, n3));
    fftw_execute(backward);
    printf("dft_3d backward %a\n", sum_complex(a, n3));

    /* A 2-D real-to-complex transform and its inverse. */
    const int m = 8 * n;
    const size_t real_count = (size_t)m * (size_t)m, half_count = (size_t)m * (size_t)(m / 2 + 1);
    double* r = fftw_alloc_real(real_count);
    fftw_complex* c = fftw_alloc_complex(half_count);
    if (!r || !c) return 3;
    for (size_t i = 0; i < real_count; ++i) {
        s = s * 1103515245u + 12345u;
        r[i] = (double)(s >> 8) / 16777216.0;
    }
    fftw_plan r2c = fftw_plan_dft_r2c_2d(m, m, r, c, FFTW_ESTIMATE);
    fftw_plan c2r = fftw_plan_dft_c2r_2d(m, m, c, r, FFTW_ESTIMATE);
    fftw_execute(r2c);
    printf("r2c_2d %a\n", sum_complex(c, half_count));
    fftw_execute(c2r);
    printf("c2r_2d %a\n", sum_real(r, real_count));

    /* Many 1-D transforms in one plan (howmany), strided: FFTW shares the
     * batch out over its threads. */
    const int len = 16 * n, howmany = 4 * n;
    fftw_complex* in = fftw_alloc_complex((size_t)len * (size_t)howmany);
    fftw_complex* out = fftw_alloc_complex((size_t)len * (size_t)howmany);
    if (!in || !out) return 3;
    for (size_t i = 0; i < (size_t)len * (size_t)howmany; ++i) {
        in[i][0] = (double)(i % 97) / 97.0;
        in[i][1] = (double)(i % 89) / 89.0 - 0.5;
    }
    fftw_plan many = fftw_plan_many_dft(1, &len, howmany, in, NULL, howmany, 1, out, NULL, 1, len, FFTW_FORWARD,
                                        FFTW_ESTIMATE);
    fftw_execute(many);
    printf("many_dft %a\n", sum_complex(out, (size_t)len * (size_t)howmany));

    /* A real-to-real transform (DCT-II) in 2-D. */
    fftw_plan dct = fftw_plan_r2r_2d(m, m, r, r, FFTW_REDFT10, FFTW_REDFT10, FFTW_ESTIMATE);
    fftw_execute(dct);
    printf("r2r_2d %a\n", sum_real(r, real_count));

    fftw_destroy_plan(forward);
    fftw_destroy_plan(backward);
    fftw_destroy_plan(r2c);
    fftw_destroy_plan(c2r);
    fftw_destroy_plan(many);
    fftw_destroy_plan(dct);
    fftw_free(a);
    fftw_free(b);
    fftw_free(r);
    fftw_free(c);
    fftw_free(in);
    fftw_free(out);
    fftw_cleanup_threads();
    return 0;
}
