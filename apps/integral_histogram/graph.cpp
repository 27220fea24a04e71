// apps/integral_histogram/graph.cpp — the task graph of the integral
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

#include "apps/common/graph_builder.hpp"
#include "apps/integral_histogram/integral_histogram.hpp"
#include "numaware/error.hpp"

namespace numaware::apps::integral_histogram {

void build_graph(GraphBuilder& ctx, const AppSize& size) {
    const AppSize s = checked_size(size, ctx.page_bytes);
    const std::size_t tile = s.block, tiles = s.n / tile, bins = s.iterations;
    const std::uint64_t img_bytes = tile * tile;
    const std::uint64_t hist_bytes = tile * tile * bins * sizeof(std::uint32_t);
    const std::uint64_t ntiles = std::uint64_t{tiles} * tiles;
    // init 1, horizontal 3 (2 in the first column), vertical 2 (1 in the first row).
    ctx.reserve(3 * ntiles, 6 * ntiles - 2 * tiles, 2 * ntiles);
    sim::Graph& g = ctx.graph;
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

}  // namespace numaware::apps::integral_histogram
