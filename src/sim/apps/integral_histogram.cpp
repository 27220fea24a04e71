// src/sim/apps/integral_histogram.cpp — the task graph of the integral
// histogram application (cross-weave scan over square tiles).
//
// Regions: the image tiles (block x block bytes each, row-major tile
// order), then the histogram tiles (block x block x bins 32-bit counts).
// Tasks, in the application's order, every task of tile (ty, tx) hinted to
// tile_owner(ty, tx, tiles, tiles):
//   init(ty, tx)        out img(ty, tx)                                   all tiles
//   horizontal(ty, tx)  in img(ty, tx), in hist(ty, tx-1), out hist(ty, tx)   all tiles
//   vertical(ty, tx)    in hist(ty-1, tx), inout hist(ty, tx)             all tiles
// (the tile to the left / above only where it exists).
//
// Operations: the kernels count with 32-bit integers, not floating point;
// each integer operation is counted like one floating-point operation:
//   init:        1 per pixel written (block x block).
//   horizontal:  bins + 1 per pixel (the carried counts copied in, then
//                one increment).
//   vertical:    1 add per count of every row that has a row above it
//                (block - 1 rows in the top tile row, block rows below).
#include <vector>

#include <fmt/format.h>

#include "numaware/error.hpp"
#include "sim/apps/builders.hpp"

namespace numaware::sim::app_builders {

const AppShape integral_histogram_test{128, 32, 8};
// 256 x 256 tiles of 32 x 32 pixels, 16 bins (64 KiB per histogram tile):
// the row and column scans are chains of 256 tiles, so the tile count must
// be large for the weave to keep hundreds of cores busy.
const AppShape integral_histogram_sim{8192, 32, 16};

namespace {

constexpr std::size_t max_side = 8192;
constexpr unsigned max_bins = 256;
constexpr std::size_t max_hist_bytes = std::size_t{4} << 30;


}  // namespace

AppShape check_integral_histogram(const AppShape& given) {
    const AppShape size = resolve(given, integral_histogram_test);
    if (size.n < 1 || size.n > max_side) {
        throw Error("n", fmt::format("image side must be in [1, {}], got {}", max_side, size.n));
    }
    if (size.block < 1 || size.block > size.n || size.n % size.block != 0) {
        throw Error("block", fmt::format("tile side must divide the image side {}, got {}", size.n, size.block));
    }
    if (size.iterations < 1 || size.iterations > max_bins) {
        throw Error("iterations", fmt::format("number of bins must be in [1, {}], got {}", max_bins, size.iterations));
    }
    if (size.n * size.n * size.iterations * sizeof(std::uint32_t) > max_hist_bytes) {
        throw Error("n", fmt::format("histogram of {0}x{0} pixels x {1} bins exceeds {2} GiB", size.n,
                                     size.iterations, max_hist_bytes >> 30));
    }
    return size;
}

void build_integral_histogram(Context& ctx, const AppShape& shape) {
    const AppShape s = check_integral_histogram(shape);
    const std::size_t tile = s.block, tiles = s.n / tile, bins = s.iterations;
    const std::uint64_t img_bytes = tile * tile;
    const std::uint64_t hist_bytes = tile * tile * bins * sizeof(std::uint32_t);
    const std::uint64_t ntiles = std::uint64_t{tiles} * tiles;
    // init 1, horizontal 3 (2 in the first column), vertical 2 (1 in the first row).
    reserve(ctx, 3 * ntiles, 6 * ntiles - 2 * tiles, 2 * ntiles);
    Graph& g = ctx.graph;
    g.name = graph_name("integral-histogram", s);

    std::vector<std::uint32_t> image(ntiles), hist(ntiles);
    for (std::size_t t = 0; t < ntiles; ++t) image[t] = g.add_region(img_bytes);
    for (std::size_t t = 0; t < ntiles; ++t) hist[t] = g.add_region(hist_bytes);
    auto img_tile = [&](std::size_t ty, std::size_t tx) { return image[ty * tiles + tx]; };
    auto hist_tile = [&](std::size_t ty, std::size_t tx) { return hist[ty * tiles + tx]; };
    auto owner = [&](std::size_t ty, std::size_t tx) { return ctx.tile_owner(ty, tx, tiles, tiles); };

    const double pixels = static_cast<double>(tile) * static_cast<double>(tile);
    const double init_s = ctx.seconds(pixels);
    const double horizontal_s = ctx.seconds(pixels * (static_cast<double>(bins) + 1.0));
    const double row_counts = static_cast<double>(tile) * static_cast<double>(bins);
    const double vertical_top_s = ctx.seconds(static_cast<double>(tile - 1) * row_counts);
    const double vertical_s = ctx.seconds(static_cast<double>(tile) * row_counts);

    for (std::size_t ty = 0; ty < tiles; ++ty)
        for (std::size_t tx = 0; tx < tiles; ++tx) g.add_task(init_s, {out(img_tile(ty, tx))}, owner(ty, tx));
    for (std::size_t ty = 0; ty < tiles; ++ty)
        for (std::size_t tx = 0; tx < tiles; ++tx) {
            if (tx > 0) {
                g.add_task(horizontal_s, {in(img_tile(ty, tx)), in(hist_tile(ty, tx - 1)), out(hist_tile(ty, tx))},
                           owner(ty, tx));
            } else {
                g.add_task(horizontal_s, {in(img_tile(ty, tx)), out(hist_tile(ty, tx))}, owner(ty, tx));
            }
        }
    for (std::size_t ty = 0; ty < tiles; ++ty)
        for (std::size_t tx = 0; tx < tiles; ++tx) {
            if (ty > 0) {
                g.add_task(vertical_s, {in(hist_tile(ty - 1, tx)), inout(hist_tile(ty, tx))}, owner(ty, tx));
            } else {
                g.add_task(vertical_top_s, {inout(hist_tile(ty, tx))}, owner(ty, tx));
            }
        }
}

}  // namespace numaware::sim::app_builders
