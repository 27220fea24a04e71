// apps/integral_histogram/program.cpp — integral histogram by a
// cross-weave scan.
//
// An n x n image of 8-bit pixels, each falling into one of B bins
// (bin = pixel * B / 256). The integral histogram holds, for every pixel
// (y, x) and bin b, the number of pixels (y' <= y, x' <= x) in bin b.
//
// Decomposition: square tiles of `block` x `block` pixels. The image and
// the histogram are tile-major, each tile contiguous in its own
// page-aligned slot (a histogram tile is block * block * B 32-bit counts,
// bins innermost). Tasks, per tile (ty, tx):
//   init(ty, tx)        out image tile                     (first touch)
//   horizontal(ty, tx)  in image tile, in hist(ty, tx-1); out hist(ty, tx)
//                       prefix sums along each row, carried in from the
//                       last column of the tile to the left
//   vertical(ty, tx)    in hist(ty-1, tx); inout hist(ty, tx)
//                       prefix sums down each column, carried in from the
//                       last row of the tile above
// Horizontal tasks chain along each tile row and vertical tasks down each
// tile column, so the two scans weave across each other: a vertical task
// can run as soon as its tile's row scan and the tile above are done,
// while row scans further down are still running.
//
// Hints (SA): the three tasks of tile (ty, tx) go to tile_owner_node(rt,
// ty, tx, tiles, tiles) (row-major tile index dealt out evenly: each node
// owns a band of tile rows when the node count divides the tile rows), so
// a tile's image and histogram live on one node, row scans stay on their
// node, and only the vertical carries across band edges cross nodes.
//
// Check: a serial integral histogram computed directly over the whole
// image with I(y,x) = I(y-1,x) + I(y,x-1) - I(y-1,x-1) + [bin(y,x) == b];
// counts are integers, so the tolerance is 0 (max_error is the largest
// absolute difference of any count).
//
// Size: n = image side (1..8192), block = tile side (must divide n),
// iterations = number of bins B (1..256; the app has no iterations).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/common/task_program.hpp"
#include "apps/integral_histogram/integral_histogram.hpp"
#include "apps/integral_histogram/reference.hpp"
#include "numaware/error.hpp"

namespace numaware::apps::integral_histogram {
namespace {

using tasks::in;
using tasks::inout;
using tasks::out;

struct Layout {
    std::size_t n = 0, tile = 0, tiles = 0, bins = 0;
    std::size_t image_slot = 0;   // bytes per image tile slot
    std::size_t hist_count = 0;   // counts per histogram tile
    std::size_t hist_slot = 0;    // counts per histogram tile slot

    std::size_t tile_index(std::size_t ty, std::size_t tx) const { return ty * tiles + tx; }
};

void init_tile(const Layout& l, std::uint8_t* image, std::size_t ty, std::size_t tx) {
    std::uint8_t* t = image + l.tile_index(ty, tx) * l.image_slot;
    for (std::size_t y = 0; y < l.tile; ++y) {
        for (std::size_t x = 0; x < l.tile; ++x) t[y * l.tile + x] = pixel(ty * l.tile + y, tx * l.tile + x);
    }
}

// Row prefix sums of tile (ty, tx), starting from the last column of the
// tile to its left (already row-scanned) or from zero.
void horizontal(const Layout& l, const std::uint8_t* image, std::uint32_t* hist, std::size_t ty, std::size_t tx) {
    const std::size_t T = l.tile, B = l.bins;
    const std::uint8_t* img = image + l.tile_index(ty, tx) * l.image_slot;
    std::uint32_t* h = hist + l.tile_index(ty, tx) * l.hist_slot;
    const std::uint32_t* left = tx > 0 ? hist + l.tile_index(ty, tx - 1) * l.hist_slot : nullptr;
    for (std::size_t y = 0; y < T; ++y) {
        std::uint32_t* row = h + y * T * B;
        const std::uint32_t* carry = left ? left + (y * T + T - 1) * B : nullptr;
        for (std::size_t x = 0; x < T; ++x) {
            std::uint32_t* cell = row + x * B;
            for (std::size_t b = 0; b < B; ++b) cell[b] = carry ? carry[b] : 0;
            ++cell[bin_of(img[y * T + x], B)];
            carry = cell;
        }
    }
}

// Column prefix sums of tile (ty, tx), starting from the last row of the
// tile above (already fully scanned) or from zero.
void vertical(const Layout& l, std::uint32_t* hist, std::size_t ty, std::size_t tx) {
    const std::size_t T = l.tile, B = l.bins, row_len = T * B;
    std::uint32_t* h = hist + l.tile_index(ty, tx) * l.hist_slot;
    const std::uint32_t* above = ty > 0 ? hist + l.tile_index(ty - 1, tx) * l.hist_slot + (T - 1) * row_len : nullptr;
    for (std::size_t y = 0; y < T; ++y) {
        std::uint32_t* row = h + y * row_len;
        if (above) {
            for (std::size_t i = 0; i < row_len; ++i) row[i] += above[i];
        }
        above = row;
    }
}

// Spawns the whole graph (no wait); returns the number of tasks.
std::size_t spawn_graph(tasks::Runtime& rt, const Layout& l, std::uint8_t* image, std::uint32_t* hist) {
    const std::size_t img_bytes = l.tile * l.tile;
    const std::size_t hist_bytes = l.hist_count * sizeof(std::uint32_t);
    auto img_tile = [&](std::size_t ty, std::size_t tx) { return image + l.tile_index(ty, tx) * l.image_slot; };
    auto hist_tile = [&](std::size_t ty, std::size_t tx) { return hist + l.tile_index(ty, tx) * l.hist_slot; };
    auto owner = [&rt, &l](std::size_t ty, std::size_t tx) { return tile_owner_node(rt, ty, tx, l.tiles, l.tiles); };
    std::size_t spawned = 0;
    for (std::size_t ty = 0; ty < l.tiles; ++ty) {
        for (std::size_t tx = 0; tx < l.tiles; ++tx) {
            rt.spawn_on(owner(ty, tx), [&l, image, ty, tx] { init_tile(l, image, ty, tx); },
                        {out(img_tile(ty, tx), img_bytes)});
            ++spawned;
        }
    }
    for (std::size_t ty = 0; ty < l.tiles; ++ty) {
        for (std::size_t tx = 0; tx < l.tiles; ++tx) {
            auto body = [&l, image, hist, ty, tx] { horizontal(l, image, hist, ty, tx); };
            if (tx > 0) {
                rt.spawn_on(owner(ty, tx), body,
                            {in(img_tile(ty, tx), img_bytes), in(hist_tile(ty, tx - 1), hist_bytes),
                             out(hist_tile(ty, tx), hist_bytes)});
            } else {
                rt.spawn_on(owner(ty, tx), body, {in(img_tile(ty, tx), img_bytes), out(hist_tile(ty, tx), hist_bytes)});
            }
            ++spawned;
        }
    }
    for (std::size_t ty = 0; ty < l.tiles; ++ty) {
        for (std::size_t tx = 0; tx < l.tiles; ++tx) {
            auto body = [&l, hist, ty, tx] { vertical(l, hist, ty, tx); };
            if (ty > 0) {
                rt.spawn_on(owner(ty, tx), body,
                            {in(hist_tile(ty - 1, tx), hist_bytes), inout(hist_tile(ty, tx), hist_bytes)});
            } else {
                rt.spawn_on(owner(ty, tx), body, {inout(hist_tile(ty, tx), hist_bytes)});
            }
            ++spawned;
        }
    }
    return spawned;
}

}  // namespace

AppRun run(tasks::Runtime& rt, const AppSize& given) {
    const AppSize size = checked_size(given, page_size());
    Layout l;
    l.n = size.n;
    l.tile = size.block;
    l.tiles = size.n / size.block;
    l.bins = size.iterations;
    l.image_slot = page_slot<std::uint8_t>(l.tile * l.tile);
    l.hist_count = l.tile * l.tile * l.bins;
    l.hist_slot = page_slot<std::uint32_t>(l.hist_count);
    const std::size_t ntiles = l.tiles * l.tiles;
    PageArray<std::uint8_t> image(ntiles * l.image_slot);
    PageArray<std::uint32_t> hist(ntiles * l.hist_slot);

    AppRun run;
    Stopwatch clock;
    run.tasks = run_graph(rt, [&] { return spawn_graph(rt, l, image.data(), hist.data()); });
    run.seconds = clock.seconds();

    const std::size_t n = l.n, B = l.bins;
    const std::vector<std::uint32_t> ref = reference(n, B);
    std::uint64_t worst = 0;
    for (std::size_t y = 0; y < n; ++y) {
        for (std::size_t x = 0; x < n; ++x) {
            const std::uint32_t* got = hist.data() + l.tile_index(y / l.tile, x / l.tile) * l.hist_slot +
                                       ((y % l.tile) * l.tile + x % l.tile) * B;
            const std::uint32_t* want = &ref[(y * n + x) * B];
            for (std::size_t b = 0; b < B; ++b) {
                const std::uint64_t d = got[b] > want[b] ? got[b] - want[b] : want[b] - got[b];
                worst = std::max(worst, d);
            }
        }
    }
    run.max_error = static_cast<double>(worst);
    run.matches = worst == 0;
    run.detail = fmt::format("image {0}x{0}, {1} bins, {2}x{2} tiles of {3}x{3} pixels; exact (tolerance 0 counts)",
                             n, B, l.tiles, l.tile);
    return run;
}

}  // namespace numaware::apps::integral_histogram
