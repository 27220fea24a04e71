/* tests/omp/target.c — target constructs on a machine without an offload
 * device, where libgomp runs them on the host (GCC 12 lowers them to
 * GOMP_target_ext, GOMP_teams4, GOMP_target_data_ext,
 * GOMP_target_update_ext, GOMP_target_enter_exit_data): mapped arrays,
 * firstprivate copies (written inside, the original unchanged, an aligned
 * struct), reductions, a league with distribute, thread_limit, if(0),
 * device(), nowait with depend among tasks, a target region inside a
 * parallel region, and the device memory routines on the host device.
 * Deterministic: the suite compares the output with libgomp's. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 1000 };

struct Aligned {
    _Alignas(64) double v[3];
};

int main(void) {
    double* a = malloc(N * sizeof *a);
    for (int i = 0; i < N; ++i) a[i] = i;

    /* A combined construct with a reduction and a firstprivate scalar. */
    double sum = 0;
    int bias = 7;
#pragma omp target teams distribute parallel for map(tofrom : a[0 : N]) reduction(+ : sum) firstprivate(bias)
    for (int i = 0; i < N; ++i) {
        a[i] = 2 * a[i];
        sum += a[i] + bias;
    }
    printf("combined: sum %.1f, a[999] %.1f\n", sum, a[N - 1]);

    /* Firstprivate: the region writes its copy. */
    int fp = 5;
    struct Aligned s = {{1.5, 2.5, 3.5}};
    int seen_fp = 0, aligned = 0;
    double seen_s = 0;
#pragma omp target firstprivate(fp, s) map(from : seen_fp, seen_s, aligned)
    {
        fp += 10;
        s.v[1] *= 4;
        seen_fp = fp;
        seen_s = s.v[0] + s.v[1] + s.v[2];
        aligned = ((unsigned long)&s % 64) == 0;
    }
    printf("firstprivate: inside %d and %.1f (aligned %d), outside still %d and %.1f\n", seen_fp, seen_s, aligned, fp,
           s.v[1]);

    /* The initial thread of the region: level, device, league. */
    int level = -1, initial = -1, teams = 0, team_sum = 0, limit = 0, in_final = -1;
#pragma omp target map(from : level, initial, in_final)
    {
        level = omp_get_level();
        initial = omp_is_initial_device();
        in_final = omp_in_final();
    }
    int per_team[4] = {0, 0, 0, 0};
#pragma omp target teams num_teams(3) thread_limit(2) map(tofrom : per_team, teams, limit)
    {
        per_team[omp_get_team_num()] = 10 * (omp_get_team_num() + 1);
        if (omp_get_team_num() == 0) teams = omp_get_num_teams();
#pragma omp parallel
        {
            if (omp_get_thread_num() == 0 && omp_get_team_num() == 2) limit = omp_get_thread_limit();
        }
    }
    for (int t = 0; t < 4; ++t) team_sum += per_team[t];
    printf("region: level %d, initial device %d, in final %d; league of %d, team sum %d, thread limit %d\n", level,
           initial, in_final, teams, team_sum, limit);

    /* distribute over a league, collapse(2). */
    long grid = 0;
#pragma omp target teams distribute parallel for collapse(2) num_teams(2) reduction(+ : grid)
    for (int i = 0; i < 40; ++i)
        for (int j = 0; j < 25; ++j) grid += (long)i * j;
    printf("collapse: %ld\n", grid);

    /* Data constructs, update, if(0) and device(). */
    double* b = malloc(N * sizeof *b);
    for (int i = 0; i < N; ++i) b[i] = 1;
#pragma omp target data map(tofrom : b[0 : N])
    {
#pragma omp target
        for (int i = 0; i < N; ++i) b[i] += i;
#pragma omp target update from(b[0 : N])
    }
#pragma omp target enter data map(to : b[0 : N])
#pragma omp target if (0) map(tofrom : b[0 : N])
    b[0] = -1;
#pragma omp target device(0) map(tofrom : b[0 : N])
    b[1] = -2;
#pragma omp target exit data map(from : b[0 : N])
    printf("data: b[0] %.1f b[1] %.1f b[999] %.1f\n", b[0], b[1], b[N - 1]);

    /* nowait with depend among tasks: produce, transform on the "device",
     * consume, in the order the dependences give. */
    double x = 0, y = 0;
#pragma omp parallel
#pragma omp single
    {
#pragma omp task depend(out : x) shared(x)
        x = 21;
#pragma omp target nowait depend(in : x) depend(out : y) map(to : x) map(from : y)
        y = 2 * x;
#pragma omp task depend(in : y) shared(y)
        y += 0.5;
#pragma omp taskwait
    }
    printf("nowait: y %.1f\n", y);

    /* nowait regions as deferred tasks: each keeps the firstprivate values
     * of its creation and its own address list, whatever the creator does
     * after it. */
    double blocks[8] = {0};
    double* bp = blocks;
    int captured = 0;
#pragma omp parallel
#pragma omp single
    {
        int v = 1;
#pragma omp target nowait firstprivate(v) map(from : captured) depend(out : captured)
        captured = v;
        v = 2;
        for (int k = 0; k < 8; ++k) {
            const double weight = 1.5 * k;
#pragma omp target nowait firstprivate(k, weight) map(tofrom : bp[k : 1]) depend(inout : bp[k])
            bp[k] += weight + k;
        }
#pragma omp target nowait map(tofrom : bp[0 : 8]) depend(inout : bp[0], bp[7])
        {
            bp[0] += 100;
            bp[7] += 100;
        }
#pragma omp taskwait
        (void)v;
    }
    printf("nowait tasks: captured %d, blocks", captured);
    for (int k = 0; k < 8; ++k) printf(" %.1f", blocks[k]);
    printf("\n");

    /* A target region inside a parallel region, from every thread. */
    long from_threads = 0;
#pragma omp parallel reduction(+ : from_threads)
    {
        long mine = 0;
#pragma omp target map(tofrom : mine)
        {
#pragma omp parallel for reduction(+ : mine)
            for (int i = 0; i < 100; ++i) mine += i;
        }
        from_threads += mine == 4950;
    }
    printf("inside parallel: %d\n", from_threads == omp_get_max_threads());

    /* The device memory routines on the host device. */
    const int host = omp_get_initial_device();
    double* d = omp_target_alloc(8 * sizeof(double), host);
    double src[8];
    for (int i = 0; i < 8; ++i) src[i] = i + 0.5;
    const int copied = omp_target_memcpy(d, src, 4 * sizeof(double), sizeof(double), 2 * sizeof(double), host, host);
    printf("memory: alloc %d, present %d, copy %d, d[1] %.1f, d[4] %.1f\n", d != NULL, omp_target_is_present(d, host),
           copied, d[1], d[4]);
    printf("another device: alloc %d, copy %d, present %d, associate %d, disassociate %d\n",
           omp_target_alloc(8, 5) != NULL, omp_target_memcpy(d, src, 8, 0, 0, 5, host), omp_target_is_present(d, 5),
           omp_target_associate_ptr(src, d, 8, 0, host), omp_target_disassociate_ptr(src, host));
    int m[4][5], r[3][6];
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 5; ++j) m[i][j] = 10 * i + j;
    memset(r, 0, sizeof r);
    size_t volume[2] = {2, 3}, dst_off[2] = {1, 2}, src_off[2] = {1, 1}, dst_dim[2] = {3, 6}, src_dim[2] = {4, 5};
    const int rect = omp_target_memcpy_rect(r, m, sizeof(int), 2, volume, dst_off, src_off, dst_dim, src_dim, host, host);
    /* (num_dims 0 is left out: libgomp 12 recurses without end on it.) */
    printf("rect: %d, dims supported %d:", rect,
           omp_target_memcpy_rect(NULL, NULL, sizeof(int), 2, volume, dst_off, src_off, dst_dim, src_dim, host, host) > 2);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 6; ++j) printf(" %d", r[i][j]);
    printf("\n");
    omp_target_free(d, host);
    omp_target_free(NULL, host);
    printf("devices %d, default %d\n", omp_get_num_devices(), omp_get_default_device());
    free(a);
    free(b);
    return 0;
}
