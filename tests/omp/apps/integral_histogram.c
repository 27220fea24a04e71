/* tests/omp/apps/integral_histogram.c — integral histogram by a
 * cross-weave scan over square tiles, as OpenMP tasks; its task graph is
 * apps/integral_histogram's (program.cpp).
 *
 * An n x n image of 8-bit pixels, each in one of B bins (bin = pixel * B /
 * 256); entry (y, x, b) of the integral histogram counts the pixels of bin
 * b in the rectangle (0, 0)..(y, x). Image and histogram are tile-major,
 * every tile in its own page-aligned slot (a histogram tile is block^2 * B
 * 32-bit counts, bins innermost). Tasks, spawned in this order from one
 * single (then one taskwait, the native barrier):
 *   init(ty, tx)        out img(ty, tx)                       all tiles (first touch)
 *   horizontal(ty, tx)  in img(ty, tx), in hist(ty, tx-1) (if tx > 0);
 *                       out hist(ty, tx)                      all tiles: row scans
 *   vertical(ty, tx)    in hist(ty-1, tx) (if ty > 0); inout hist(ty, tx)
 *                                                             all tiles: column scans
 * Every tile is named by its first element.
 * Check: a serial integral histogram over the whole image by
 * I(y,x) = I(y-1,x) + I(y,x-1) - I(y-1,x-1) + [bin(y,x) == b]; counts are
 * integers, exact. Sizes: --n image side (1..8192), --block tile side
 * (divides n), --iterations the number of bins B (1..256); test 128/32/8,
 * bench 2048/64/16 (apps/integral_histogram/integral_histogram.hpp). */
#include "app_common.h"

static size_t n, tile, tiles, bins, img_slot, hist_count, hist_slot;

static unsigned char pixel(size_t y, size_t x) {
    const double u = hashed_unit(y, x) + 0.5;
    return (unsigned char)(u * 256.0 < 255.0 ? u * 256.0 : 255.0);
}
static size_t bin_of(unsigned char v) { return (size_t)v * bins / 256; }
static size_t tix(size_t ty, size_t tx) { return ty * tiles + tx; }

static void init_tile(unsigned char *image, size_t ty, size_t tx) {
    unsigned char *t = image + tix(ty, tx) * img_slot;
    for (size_t y = 0; y < tile; ++y)
        for (size_t x = 0; x < tile; ++x) t[y * tile + x] = pixel(ty * tile + y, tx * tile + x);
}

/* Row prefix sums of tile (ty, tx), carried in from the last column of the
 * tile to its left (already row-scanned) or from zero. */
static void horizontal(const unsigned char *image, uint32_t *hist, size_t ty, size_t tx) {
    const size_t T = tile, B = bins;
    const unsigned char *img = image + tix(ty, tx) * img_slot;
    uint32_t *h = hist + tix(ty, tx) * hist_slot;
    const uint32_t *left = tx > 0 ? hist + tix(ty, tx - 1) * hist_slot : NULL;
    for (size_t y = 0; y < T; ++y) {
        const uint32_t *carry = left ? left + (y * T + T - 1) * B : NULL;
        for (size_t x = 0; x < T; ++x) {
            uint32_t *cell = h + (y * T + x) * B;
            for (size_t b = 0; b < B; ++b) cell[b] = carry ? carry[b] : 0;
            ++cell[bin_of(img[y * T + x])];
            carry = cell;
        }
    }
}

/* Column prefix sums of tile (ty, tx), carried in from the last row of the
 * tile above (already fully scanned) or from zero. */
static void vertical(uint32_t *hist, size_t ty, size_t tx) {
    const size_t row_len = tile * bins;
    uint32_t *h = hist + tix(ty, tx) * hist_slot;
    const uint32_t *above = ty > 0 ? hist + tix(ty - 1, tx) * hist_slot + (tile - 1) * row_len : NULL;
    for (size_t y = 0; y < tile; ++y) {
        uint32_t *row = h + y * row_len;
        if (above)
            for (size_t i = 0; i < row_len; ++i) row[i] += above[i];
        above = row;
    }
}

/* The serial reference (apps/integral_histogram/reference.cpp). */
static uint32_t *reference(void) {
    const size_t B = bins;
    uint32_t *ref = app_calloc(n * n * B, sizeof(uint32_t));
    for (size_t y = 0; y < n; ++y)
        for (size_t x = 0; x < n; ++x) {
            uint32_t *cell = ref + (y * n + x) * B;
            const uint32_t *up = y > 0 ? ref + ((y - 1) * n + x) * B : NULL;
            const uint32_t *left = x > 0 ? ref + (y * n + x - 1) * B : NULL;
            const uint32_t *diag = y > 0 && x > 0 ? ref + ((y - 1) * n + x - 1) * B : NULL;
            for (size_t b = 0; b < B; ++b) cell[b] = (up ? up[b] : 0) + (left ? left[b] : 0) - (diag ? diag[b] : 0);
            ++cell[bin_of(pixel(y, x))];
        }
    return ref;
}

int main(int argc, char **argv) {
    const struct app_size s = app_parse(argc, argv, "integral_histogram", (struct app_size){128, 32, 8},
                                        (struct app_size){2048, 64, 16});
    if (s.n > 8192) app_bad("n: image side must be in [1, 8192], got %zu", s.n);
    if (s.block > s.n || s.n % s.block != 0)
        app_bad("block: tile side must divide the image side %zu, got %zu", s.n, s.block);
    if (s.iterations > 256) app_bad("iterations: number of bins must be in [1, 256], got %u", s.iterations);
    if (s.n * s.n * s.iterations * sizeof(uint32_t) > ((size_t)4 << 30))
        app_bad("n: histogram of %zux%zu pixels x %u bins exceeds 4 GiB", s.n, s.n, s.iterations);
    n = s.n, tile = s.block, tiles = n / tile, bins = s.iterations;
    img_slot = app_slot(tile * tile, 1), hist_count = tile * tile * bins;
    hist_slot = app_slot(hist_count, sizeof(uint32_t));
    unsigned char *image = app_map(tiles * tiles * img_slot);
    uint32_t *hist = app_map(tiles * tiles * hist_slot * sizeof(uint32_t));
    size_t tasks = 0;

    double seconds = 0;
#pragma omp parallel
#pragma omp single
    {
        const double t0 = omp_get_wtime();
        for (size_t ty = 0; ty < tiles; ++ty)
            for (size_t tx = 0; tx < tiles; ++tx) {
#pragma omp task depend(out : image[tix(ty, tx) * img_slot])
                init_tile(image, ty, tx);
                ++tasks;
            }
        for (size_t ty = 0; ty < tiles; ++ty)
            for (size_t tx = 0; tx < tiles; ++tx) {
                if (tx > 0) {
#pragma omp task depend(in : image[tix(ty, tx) * img_slot], hist[tix(ty, tx - 1) * hist_slot]) \
    depend(out : hist[tix(ty, tx) * hist_slot])
                    horizontal(image, hist, ty, tx);
                } else {
#pragma omp task depend(in : image[tix(ty, tx) * img_slot]) depend(out : hist[tix(ty, tx) * hist_slot])
                    horizontal(image, hist, ty, tx);
                }
                ++tasks;
            }
        for (size_t ty = 0; ty < tiles; ++ty)
            for (size_t tx = 0; tx < tiles; ++tx) {
                if (ty > 0) {
#pragma omp task depend(in : hist[tix(ty - 1, tx) * hist_slot]) depend(inout : hist[tix(ty, tx) * hist_slot])
                    vertical(hist, ty, tx);
                } else {
#pragma omp task depend(inout : hist[tix(ty, tx) * hist_slot])
                    vertical(hist, ty, tx);
                }
                ++tasks;
            }
#pragma omp taskwait
        seconds = omp_get_wtime() - t0;
    }

    uint32_t *ref = reference();
    uint64_t sum = APP_HASH_INIT;
    for (size_t y = 0; y < n; ++y)
        for (size_t x = 0; x < n; ++x) {
            const uint32_t *got = hist + tix(y / tile, x / tile) * hist_slot + ((y % tile) * tile + x % tile) * bins;
            const uint32_t *want = ref + (y * n + x) * bins;
            if (memcmp(got, want, bins * sizeof(uint32_t)) != 0)
                app_fail("mismatch with the serial reference at pixel (%zu, %zu)", y, x);
            sum = app_hash(sum, got, bins * sizeof(uint32_t));
        }
    app_result(tasks, seconds, sum);
    free(ref);
    return 0;
}
