/* tests/omp/apps/inversion.c — tiled inversion of a symmetric positive
 * definite matrix through its Cholesky factor (POTRF, then TRTRI, then
 * LAUUM, each a tiled algorithm of tile tasks), as OpenMP tasks; its task
 * graph is apps/inversion's (program.cpp). Build with -lm (sqrt).
 *
 * A is n x n, cut into nt x nt tiles of b x b (column-major inside, each
 * tile contiguous and page-aligned); only the lower tiles A(m,n), m >= n,
 * are used. A = L L^T, then L^-1, then A^-1 = L^-T L^-1, in place. Tasks,
 * spawned in this order from one single (then one taskwait, the native
 * barrier):
 *   init(m,n)                out A(m,n)                      m >= n, row-major
 *   Cholesky, k = 0..nt-1:
 *     POTRF(k)               inout A(k,k)
 *     TRSM(m,k)              in A(k,k); inout A(m,k)         m > k
 *     for m > k: SYRK(m,k)   in A(m,k); inout A(m,m)
 *                GEMM(m,n,k) in A(m,k), A(n,k); inout A(m,n) k < n < m
 *   Triangular inverse, k = 0..nt-1:
 *     TRSM(m,k)              in A(k,k); inout A(m,k)         m > k
 *     GEMM(m,n,k)            in A(m,k), A(k,n); inout A(m,n) m > k, n < k
 *     TRSM(k,n)              in A(k,k); inout A(k,n)         n < k
 *     TRTRI(k)               inout A(k,k)
 *   Product, k = 0..nt-1:
 *     for n < k: SYRK(k,n)   in A(k,n); inout A(n,n)
 *                GEMM(k,m,n) in A(k,m), A(k,n); inout A(m,n) n < m < k
 *     TRMM(k,n)              in A(k,k); inout A(k,n)         n < k
 *     LAUUM(k)               inout A(k,k)
 * Every tile is named by its first element. The tile kernels are loops
 * written here (the native program calls LAPACKE/CBLAS).
 * Matrix: A(i,j) = A(j,i) uniform in [-0.5, 0.5), A(i,i) = n (SPD).
 * Check, with the native tolerances: the unblocked POTRF, TRTRI and LAUUM
 * of the whole matrix (the native one calls LAPACKE dpotrf + dpotri),
 * max|inv - inv_ref| / max|inv_ref| <= 1e-10 over the lower triangle, and
 * ||A inv - I||_max <= 1e-8. The dependences order every update of every
 * tile, so the result is bit-identical from run to run and the checksum
 * (of the lower triangle, column-major) is exact.
 * Sizes: --n matrix order (1..8192), --block tile side (divides n);
 * test 128/32, bench 2048/128 (apps/inversion/inversion.hpp). */
#include "app_common.h"

static size_t n, b, nt, slot;
static double *a;
#define A(m, k) (a + ((m) * nt + (k)) * slot)
#define AT(M, i, j) (M)[(i) + (j) * b] /* element (i, j) of a b x b tile */

static double entry(size_t i, size_t j) { return i == j ? (double)n : hashed_unit(i < j ? i : j, i < j ? j : i); }

/* A = L L^T, lower, in place (m x m, leading dimension ld). */
static void potrf(size_t m, double *M, size_t ld) {
    for (size_t j = 0; j < m; ++j) {
        double *cj = M + j * ld;
        if (!(cj[j] > 0)) app_fail("POTRF: the matrix is not positive definite (column %zu)", j);
        cj[j] = sqrt(cj[j]);
        for (size_t i = j + 1; i < m; ++i) cj[i] /= cj[j];
        for (size_t c = j + 1; c < m; ++c) {
            const double f = cj[c];
            for (size_t i = c; i < m; ++i) M[i + c * ld] -= cj[i] * f;
        }
    }
}
/* L = L^-1, lower, non-unit, in place (LAPACK dtrti2's order). */
static void trtri(size_t m, double *M, size_t ld) {
    for (size_t j = m; j-- > 0;) {
        double *x = M + j * ld;
        x[j] = 1.0 / x[j];
        const double ajj = -x[j];
        for (size_t p = m; p-- > j + 1;) { /* x = L^-1(j+1.., j+1..) x */
            const double tmp = x[p];
            for (size_t i = m; i-- > p + 1;) x[i] += tmp * M[i + p * ld];
            x[p] = tmp * M[p + p * ld];
        }
        for (size_t i = j + 1; i < m; ++i) x[i] *= ajj;
    }
}
/* L = L^T L, lower, in place. */
static void lauum(size_t m, double *M, size_t ld) {
    for (size_t i = 0; i < m; ++i)
        for (size_t j = 0; j <= i; ++j) {
            double d = 0;
            for (size_t p = i; p < m; ++p) d += M[p + i * ld] * M[p + j * ld];
            M[i + j * ld] = d;
        }
}
/* C += s op(X) op(Y) on b x b tiles; mode 'N': X Y, 'T': X Y^T, 't': X^T Y. */
static void gemm(char mode, double s, const double *X, const double *Y, double *C) {
    for (size_t j = 0; j < b; ++j)
        if (mode == 't') {
            for (size_t i = 0; i < b; ++i) {
                double d = 0;
                for (size_t p = 0; p < b; ++p) d += AT(X, p, i) * AT(Y, p, j);
                AT(C, i, j) += s * d;
            }
        } else {
            for (size_t p = 0; p < b; ++p) {
                const double f = s * (mode == 'T' ? AT(Y, j, p) : AT(Y, p, j));
                for (size_t i = 0; i < b; ++i) AT(C, i, j) += AT(X, i, p) * f;
            }
        }
}
/* Cholesky SYRK: C -= X X^T (lower part of C). */
static void chol_syrk(const double *X, double *C) {
    for (size_t j = 0; j < b; ++j)
        for (size_t p = 0; p < b; ++p) {
            const double f = AT(X, j, p);
            for (size_t i = j; i < b; ++i) AT(C, i, j) -= AT(X, i, p) * f;
        }
}
/* Cholesky TRSM: B = B L^-T. */
static void chol_trsm(const double *L, double *B) {
    for (size_t j = 0; j < b; ++j) {
        for (size_t p = 0; p < j; ++p) {
            const double f = AT(L, j, p);
            for (size_t i = 0; i < b; ++i) AT(B, i, j) -= f * AT(B, i, p);
        }
        for (size_t i = 0; i < b; ++i) AT(B, i, j) /= AT(L, j, j);
    }
}
/* Inverse TRSM from the right: B = -B L^-1. */
static void inv_trsm_right(const double *L, double *B) {
    for (size_t j = b; j-- > 0;) {
        for (size_t i = 0; i < b; ++i) AT(B, i, j) = -AT(B, i, j);
        for (size_t p = j + 1; p < b; ++p) {
            const double f = AT(L, p, j);
            for (size_t i = 0; i < b; ++i) AT(B, i, j) -= f * AT(B, i, p);
        }
        for (size_t i = 0; i < b; ++i) AT(B, i, j) /= AT(L, j, j);
    }
}
/* Inverse TRSM from the left: B = L^-1 B. */
static void inv_trsm_left(const double *L, double *B) {
    for (size_t c = 0; c < b; ++c)
        for (size_t p = 0; p < b; ++p) {
            const double x = AT(B, p, c) /= AT(L, p, p);
            for (size_t i = p + 1; i < b; ++i) AT(B, i, c) -= AT(L, i, p) * x;
        }
}
/* Product SYRK: C += X^T X (lower part of C). */
static void prod_syrk(const double *X, double *C) {
    for (size_t j = 0; j < b; ++j)
        for (size_t i = j; i < b; ++i) {
            double d = 0;
            for (size_t p = 0; p < b; ++p) d += AT(X, p, i) * AT(X, p, j);
            AT(C, i, j) += d;
        }
}
/* Product TRMM: B = L^T B. */
static void prod_trmm(const double *L, double *B) {
    for (size_t c = 0; c < b; ++c)
        for (size_t i = 0; i < b; ++i) {
            double d = 0;
            for (size_t p = i; p < b; ++p) d += AT(L, p, i) * AT(B, p, c);
            AT(B, i, c) = d;
        }
}

int main(int argc, char **argv) {
    const struct app_size s =
        app_parse(argc, argv, "inversion", (struct app_size){128, 32, 1}, (struct app_size){2048, 128, 1});
    if (s.n > 8192) app_bad("n: matrix order must be in [1, 8192], got %zu", s.n);
    if (s.block > s.n || s.n % s.block != 0)
        app_bad("block: tile side must divide the matrix order %zu, got %zu", s.n, s.block);
    n = s.n, b = s.block, nt = n / b, slot = app_slot(b * b, sizeof(double));
    a = app_map(nt * nt * slot * sizeof(double));
    size_t tasks = 0;

    double seconds = 0;
#pragma omp parallel
#pragma omp single
    {
        const double t0 = omp_get_wtime();
        for (size_t m = 0; m < nt; ++m)
            for (size_t k = 0; k <= m; ++k) {
#pragma omp task depend(out : A(m, k)[0])
                for (size_t j = 0; j < b; ++j)
                    for (size_t i = 0; i < b; ++i) AT(A(m, k), i, j) = entry(m * b + i, k * b + j);
                ++tasks;
            }
        for (size_t k = 0; k < nt; ++k) { /* Cholesky */
#pragma omp task depend(inout : A(k, k)[0])
            potrf(b, A(k, k), b);
            ++tasks;
            for (size_t m = k + 1; m < nt; ++m, ++tasks)
#pragma omp task depend(in : A(k, k)[0]) depend(inout : A(m, k)[0])
                chol_trsm(A(k, k), A(m, k));
            for (size_t m = k + 1; m < nt; ++m) {
#pragma omp task depend(in : A(m, k)[0]) depend(inout : A(m, m)[0])
                chol_syrk(A(m, k), A(m, m));
                ++tasks;
                for (size_t j = k + 1; j < m; ++j, ++tasks)
#pragma omp task depend(in : A(m, k)[0], A(j, k)[0]) depend(inout : A(m, j)[0])
                    gemm('T', -1.0, A(m, k), A(j, k), A(m, j));
            }
        }
        for (size_t k = 0; k < nt; ++k) { /* triangular inverse */
            for (size_t m = k + 1; m < nt; ++m, ++tasks)
#pragma omp task depend(in : A(k, k)[0]) depend(inout : A(m, k)[0])
                inv_trsm_right(A(k, k), A(m, k));
            for (size_t m = k + 1; m < nt; ++m)
                for (size_t j = 0; j < k; ++j, ++tasks)
#pragma omp task depend(in : A(m, k)[0], A(k, j)[0]) depend(inout : A(m, j)[0])
                    gemm('N', 1.0, A(m, k), A(k, j), A(m, j));
            for (size_t j = 0; j < k; ++j, ++tasks)
#pragma omp task depend(in : A(k, k)[0]) depend(inout : A(k, j)[0])
                inv_trsm_left(A(k, k), A(k, j));
#pragma omp task depend(inout : A(k, k)[0])
            trtri(b, A(k, k), b);
            ++tasks;
        }
        for (size_t k = 0; k < nt; ++k) { /* product L^-T L^-1 */
            for (size_t j = 0; j < k; ++j) {
#pragma omp task depend(in : A(k, j)[0]) depend(inout : A(j, j)[0])
                prod_syrk(A(k, j), A(j, j));
                ++tasks;
                for (size_t m = j + 1; m < k; ++m, ++tasks)
#pragma omp task depend(in : A(k, m)[0], A(k, j)[0]) depend(inout : A(m, j)[0])
                    gemm('t', 1.0, A(k, m), A(k, j), A(m, j));
            }
            for (size_t j = 0; j < k; ++j, ++tasks)
#pragma omp task depend(in : A(k, k)[0]) depend(inout : A(k, j)[0])
                prod_trmm(A(k, k), A(k, j));
#pragma omp task depend(inout : A(k, k)[0])
            lauum(b, A(k, k), b);
            ++tasks;
        }
#pragma omp taskwait
        seconds = omp_get_wtime() - t0;
    }

    double *ref = app_calloc(n * n, sizeof(double)), *inv = app_calloc(n * n, sizeof(double));
    double *col = app_calloc(n, sizeof(double)), scale = 0, diff = 0, residual = 0;
    for (size_t j = 0; j < n; ++j)
        for (size_t i = 0; i < n; ++i) ref[j * n + i] = entry(i, j);
    potrf(n, ref, n), trtri(n, ref, n), lauum(n, ref, n);
    uint64_t sum = APP_HASH_INIT;
    for (size_t j = 0; j < n; ++j)
        for (size_t i = j; i < n; ++i) {
            const double got = AT(A(i / b, j / b), i % b, j % b), want = ref[j * n + i], d = fabs(got - want);
            inv[j * n + i] = inv[i * n + j] = got;
            scale = fabs(want) > scale ? fabs(want) : scale;
            diff = isnan(d) ? INFINITY : (d > diff ? d : diff);
            sum = app_hash(sum, &got, sizeof got);
        }
    const double err = scale > 0 ? diff / scale : diff;
    if (!(err <= 1e-10)) app_fail("max|inv - inv_ref| / max|inv_ref| = %.3e exceeds the tolerance 1e-10", err);
    for (size_t j = 0; j < n; ++j) /* A again, in ref */
        for (size_t i = 0; i < n; ++i) ref[j * n + i] = entry(i, j);
    for (size_t j = 0; j < n; ++j) { /* column j of A inv */
        memset(col, 0, n * sizeof(double));
        for (size_t p = 0; p < n; ++p)
            for (size_t i = 0; i < n; ++i) col[i] += ref[p * n + i] * inv[j * n + p];
        for (size_t i = 0; i < n; ++i) col[i] = fabs(col[i] - (i == j ? 1.0 : 0.0));
        for (size_t i = 0; i < n; ++i) residual = isnan(col[i]) ? INFINITY : (col[i] > residual ? col[i] : residual);
    }
    if (!(residual <= 1e-8)) app_fail("||A inv - I||_max = %.3e exceeds the tolerance 1e-8", residual);
    app_result(tasks, seconds, sum);
    free(ref), free(inv), free(col);
    return 0;
}
