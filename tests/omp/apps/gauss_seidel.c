/* tests/omp/apps/gauss_seidel.c — 2-D 5-point Gauss-Seidel in place, tiled
 * wavefront, as OpenMP tasks; its task graph is apps/gauss_seidel's
 * (program.cpp).
 *
 * An n x n grid stored tile-major: tile (i, j) of block x block points is
 * contiguous (row-major inside), tiles in row-major tile order. Tasks,
 * spawned in this order from one single (then one taskwait, the native
 * barrier):
 *   init(i, j)       out T[i][j]                               (first touch)
 *   sweep(i, j, t)   inout T[i][j]; in T[i-1][j], T[i][j-1], T[i+1][j],
 *                    T[i][j+1] (those that exist)
 * sweep by sweep, tiles in row-major order: each tile then sees its north
 * and west neighbours of this sweep and its south and east neighbours of
 * the previous one, a wavefront overlapping consecutive sweeps. Every tile
 * is named by its first element. The native default (halos=rows) names
 * only the edge row of the north and south tiles; which task waits for
 * which is the same (its --halos whole-blocks declaration).
 * Check: a natural row-major Gauss-Seidel over a row-major grid, the same
 * sequence of updates, bit-exact. Sizes: --n grid side (3..32768), --block
 * tile side (>= 2, divides n, a tile is whole pages), --iterations sweeps;
 * test 256/32/3, bench 4096/128/10 (apps/gauss_seidel/gauss_seidel.hpp). */
#include "app_common.h"

static size_t tps, tile; /* tiles per side, tile side */

static size_t tile_at(size_t i, size_t j) { return (i * tps + j) * tile * tile; }

static void init_tile(double *g, size_t i, size_t j) {
    double *t = g + tile_at(i, j);
    for (size_t r = 0; r < tile; ++r)
        for (size_t c = 0; c < tile; ++c) t[r * tile + c] = initial_value(i * tile + r, j * tile + c, tps * tile);
}

/* One in-place sweep over tile (i, j) in row-major order, reading the edge
 * rows / columns of its neighbour tiles; global boundary points stay. */
static void sweep_tile(double *g, size_t i, size_t j) {
    const size_t tt = tile * tile;
    double *t = g + tile_at(i, j);
    const double *north = i > 0 ? t - tps * tt : NULL, *south = i + 1 < tps ? t + tps * tt : NULL;
    const double *west = j > 0 ? t - tt : NULL, *east = j + 1 < tps ? t + tt : NULL;
    const size_t r0 = i == 0 ? 1 : 0, r1 = i + 1 == tps ? tile - 1 : tile;
    const size_t c0 = j == 0 ? 1 : 0, c1 = j + 1 == tps ? tile - 1 : tile;
    for (size_t r = r0; r < r1; ++r) {
        double *row = t + r * tile;
        const double *up = r > 0 ? row - tile : north + (tile - 1) * tile;
        const double *down = r + 1 < tile ? row + tile : south;
        for (size_t c = c0; c < c1; ++c) {
            const double w = c > 0 ? row[c - 1] : west[r * tile + tile - 1];
            const double e = c + 1 < tile ? row[c + 1] : east[r * tile];
            row[c] = 0.25 * (((up[c] + down[c]) + w) + e);
        }
    }
}

/* The serial reference (apps/gauss_seidel/reference.cpp). */
static double *reference(size_t n, unsigned iterations) {
    double *u = app_calloc(n * n, sizeof(double));
    initial_rows(u, n, 0, n);
    for (unsigned t = 0; t < iterations; ++t)
        for (size_t r = 1; r + 1 < n; ++r)
            for (size_t c = 1; c + 1 < n; ++c)
                u[r * n + c] = 0.25 * (((u[(r - 1) * n + c] + u[(r + 1) * n + c]) + u[r * n + c - 1]) +
                                       u[r * n + c + 1]);
    return u;
}

int main(int argc, char **argv) {
    const struct app_size s =
        app_parse(argc, argv, "gauss_seidel", (struct app_size){256, 32, 3}, (struct app_size){4096, 128, 10});
    if (s.n < 3 || s.n > 32768) app_bad("n: grid side must be in 3..32768, got %zu", s.n);
    if (s.block < 2 || s.block > s.n || s.n % s.block != 0)
        app_bad("block: tile side must be at least 2 and divide the grid side %zu, got %zu", s.n, s.block);
    if (s.block * s.block * sizeof(double) % app_page() != 0)
        app_bad("block: a %zux%zu tile is %zu bytes, must be a multiple of the page size %zu", s.block, s.block,
                s.block * s.block * sizeof(double), app_page());
    const size_t n = s.n;
    tile = s.block;
    tps = n / tile;
    const long nt = (long)tps;
    double *g = app_map(n * n * sizeof(double));
    size_t tasks = 0;

    double seconds = 0;
#pragma omp parallel
#pragma omp single
    {
        const double t0 = omp_get_wtime();
        for (long i = 0; i < nt; ++i)
            for (long j = 0; j < nt; ++j) {
#pragma omp task depend(out : g[tile_at(i, j)])
                init_tile(g, i, j);
                ++tasks;
            }
        for (unsigned t = 0; t < s.iterations; ++t)
            for (long i = 0; i < nt; ++i)
                for (long j = 0; j < nt; ++j) {
#pragma omp task depend(inout : g[tile_at(i, j)])                                          \
    depend(iterator(long r = app_nb_first(i) : app_nb_end(i, nt) : 2), in : g[tile_at(r, j)]) \
    depend(iterator(long c = app_nb_first(j) : app_nb_end(j, nt) : 2), in : g[tile_at(i, c)])
                    sweep_tile(g, i, j);
                    ++tasks;
                }
#pragma omp taskwait
        seconds = omp_get_wtime() - t0;
    }

    double *got = app_calloc(n * n, sizeof(double)), *ref = reference(n, s.iterations);
    for (size_t r = 0; r < n; ++r)
        for (size_t c = 0; c < n; ++c) got[r * n + c] = g[tile_at(r / tile, c / tile) + (r % tile) * tile + c % tile];
    const size_t i = app_diff(got, ref, n * n);
    if (i < n * n)
        app_fail("mismatch with the serial reference at row %zu col %zu: %.17g, expected %.17g", i / n, i % n,
                 got[i], ref[i]);
    app_result(tasks, seconds, app_hash(APP_HASH_INIT, got, n * n * sizeof(double)));
    free(got);
    free(ref);
    return 0;
}
