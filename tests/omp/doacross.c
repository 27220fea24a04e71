/* tests/omp/doacross.c — doacross loops: `ordered(n)` with
 * `depend(sink: ...)` and `depend(source)`, which GCC lowers to the
 * GOMP_loop_doacross_* starts and GOMP_doacross_post/_wait (and their
 * `unsigned long long` twins). Each result depends on the order the sinks
 * impose, so it is exact only when every wait waited: the suite compares
 * the output with libgomp's at 1 to 4 threads. */
#include <stdio.h>

enum { N = 96, M = 40, K = 12 };

static double a[N][M];
static double b[K][K][K];
static long pre[N * 4];

/* The 2-D wavefront under a schedule (the clause must be spelled out). */
#define PRAGMA(x) _Pragma(#x)
#define WAVEFRONT(...)                                                                  \
    {                                                                                   \
        PRAGMA(omp parallel for ordered(2) schedule(__VA_ARGS__))                       \
        for (int i = 1; i < N; ++i)                                                     \
            for (int j = 1; j < M; ++j) {                                               \
                PRAGMA(omp ordered depend(sink : i - 1, j) depend(sink : i, j - 1))     \
                a[i][j] = 0.5 * a[i - 1][j] + 0.25 * a[i][j - 1] + 1.0;                 \
                PRAGMA(omp ordered depend(source))                                      \
            }                                                                           \
    }

static double checksum2(void) {
    double s = 0;
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < M; ++j) s += a[i][j] * (double)((i + 3 * j) % 7 + 1);
    return s;
}

int main(void) {
    /* A 1-D chain (prefix sums), static schedule with chunks of one. */
    pre[0] = 0;
#pragma omp parallel for ordered(1) schedule(static, 1)
    for (int i = 1; i < N * 4; ++i) {
#pragma omp ordered depend(sink : i - 1)
        pre[i] = pre[i - 1] + i;
#pragma omp ordered depend(source)
    }
    printf("1-D prefix sum: %ld\n", pre[N * 4 - 1]);

    /* A 2-D wavefront, two sinks, each of the static, dynamic and guided
     * schedules (non-commutative update: the order matters). */
    for (int pass = 0; pass < 3; ++pass) {
        for (int i = 0; i < N; ++i)
            for (int j = 0; j < M; ++j) a[i][j] = (double)((i * 7 + j * 3) % 11);
        if (pass == 0) WAVEFRONT(static, 3)
        else if (pass == 1) WAVEFRONT(dynamic, 2)
        else WAVEFRONT(guided)
        printf("2-D wavefront, schedule %d: %.6f\n", pass, checksum2());
    }

    /* A sink on a diagonal neighbour (i-1, j+1): a later inner iteration
     * of the previous outer one. */
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < M; ++j) a[i][j] = (double)((i + j) % 5);
#pragma omp parallel for ordered(2) schedule(static)
    for (int i = 1; i < N; ++i)
        for (int j = 0; j < M - 1; ++j) {
#pragma omp ordered depend(sink : i - 1, j + 1)
            a[i][j] = 0.75 * a[i - 1][j + 1] + 1.0;
#pragma omp ordered depend(source)
        }
    printf("diagonal sink: %.6f\n", checksum2());

    /* collapse(2) with ordered(3): the first two loops are one dimension. */
    for (int i = 0; i < K; ++i)
        for (int j = 0; j < K; ++j)
            for (int k = 0; k < K; ++k) b[i][j][k] = (double)((i + 2 * j + 3 * k) % 4);
#pragma omp parallel
#pragma omp for ordered(3) collapse(2)
    for (int i = 1; i < K; ++i)
        for (int j = 1; j < K; ++j)
            for (int k = 1; k < K; ++k) {
#pragma omp ordered depend(sink : i - 1, j, k) depend(sink : i, j - 1, k) depend(sink : i, j, k - 1)
                b[i][j][k] = 0.5 * b[i - 1][j][k] + 0.25 * b[i][j - 1][k] + 0.125 * b[i][j][k - 1] + 1.0;
#pragma omp ordered depend(source)
            }
    double s3 = 0;
    for (int i = 0; i < K; ++i)
        for (int j = 0; j < K; ++j)
            for (int k = 0; k < K; ++k) s3 += b[i][j][k] * (double)(i + j + k + 1);
    printf("3-D collapse(2) ordered(3): %.6f\n", s3);

    /* An unsigned long long loop (the _ull entry points). */
    static unsigned long long u[200];
    volatile unsigned long long base_in = 1ULL << 63;   /* beyond long: GCC must use the _ull ABI */
    const unsigned long long base = base_in;
    u[0] = 1;
#pragma omp parallel for ordered(1) schedule(dynamic, 3)
    for (unsigned long long i = base + 1; i < base + 200ULL; ++i) {
#pragma omp ordered depend(sink : i - 1)
        u[i - base] = u[i - base - 1] * 3ULL + (i - base);
#pragma omp ordered depend(source)
    }
    printf("unsigned long long chain: %llu\n", u[199]);
    return 0;
}
