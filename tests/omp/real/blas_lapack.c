/* tests/omp/real/blas_lapack.c — drives the OpenMP build of OpenBLAS (Debian
 * libopenblas0-openmp: its BLAS and LAPACK run their own `omp parallel`
 * regions, compiled by Debian, not by us) through a few routines, and
 * prints every result bit for bit (%a), so that a run under libgomp and a
 * run under libnumaware_omp.so can be compared byte for byte
 * (tests/omp/real_programs.sh). The first line says which threading the
 * loaded OpenBLAS was built with (openblas_get_parallel: 2 is OpenMP). */
#include <stdio.h>
#include <stdlib.h>

#include <cblas.h>
#include <lapacke.h>

static double checksum(const double* a, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += a[i] * (double)(i % 7 + 1);
    return s;
}

int main(int argc, char** argv) {
    const int n = argc > 1 ? atoi(argv[1]) : 300;
    if (n < 8 || n > 4000) {
        fprintf(stderr, "blas_lapack: N must be 8..4000, got %d\n", n);
        return 2;
    }
    const size_t nn = (size_t)n * (size_t)n;
    double* a = malloc(nn * sizeof *a);
    double* b = malloc(nn * sizeof *b);
    double* c = malloc(nn * sizeof *c);
    double* spd = calloc(nn, sizeof *spd);
    double* tau = malloc((size_t)n * sizeof *tau);
    double* rhs = malloc((size_t)n * sizeof *rhs);
    lapack_int* ipiv = malloc((size_t)n * sizeof *ipiv);
    if (!a || !b || !c || !spd || !tau || !rhs || !ipiv) return 3;
    unsigned s = 12345u;
    for (size_t i = 0; i < nn; ++i) {
        s = s * 1103515245u + 12345u;
        a[i] = (double)(s >> 8) / 16777216.0 - 0.5;
        s = s * 1103515245u + 12345u;
        b[i] = (double)(s >> 8) / 16777216.0 - 0.5;
    }
    for (int i = 0; i < n; ++i) rhs[i] = 1.0 + (double)(i % 5);
    printf("openblas_get_parallel %d\n", openblas_get_parallel());

    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
    printf("dgemm %a\n", checksum(c, nn));

    /* A symmetric positive definite matrix: a a^T + n I. */
    cblas_dsyrk(CblasRowMajor, CblasLower, CblasNoTrans, n, n, 1.0, a, n, 0.0, spd, n);
    for (int i = 0; i < n; ++i) spd[(size_t)i * (size_t)n + (size_t)i] += n;
    printf("dsyrk %a\n", checksum(spd, nn));
    /* Each call before the printf that shows it: arguments are evaluated
     * in no fixed order. */
    int info = (int)LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', n, spd, n);
    printf("dpotrf %d %a\n", info, checksum(spd, nn));

    for (int i = 0; i < n; ++i) c[(size_t)i * (size_t)n + (size_t)i] += n;
    info = (int)LAPACKE_dgetrf(LAPACK_ROW_MAJOR, n, n, c, n, ipiv);
    printf("dgetrf %d %a\n", info, checksum(c, nn));
    info = (int)LAPACKE_dgetrs(LAPACK_ROW_MAJOR, 'N', n, 1, c, n, ipiv, rhs, 1);
    printf("dgetrs %d %a\n", info, checksum(rhs, (size_t)n));

    info = (int)LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, n, n, b, n, tau);
    printf("dgeqrf %d %a %a\n", info, checksum(b, nn), checksum(tau, (size_t)n));
    free(a); free(b); free(c); free(spd); free(tau); free(rhs); free(ipiv);
    return 0;
}
