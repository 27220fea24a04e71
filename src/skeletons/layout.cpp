// skeletons/layout.cpp — the padded layout of a grid and the cuts between
// ranks: rows padded to a cache line, slabs padded so every block boundary
// is page-aligned, and the equal and weighted partitions of the interior
// slabs. Pure.
#include <algorithm>
#include <bit>
#include <cmath>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "numaware/error.hpp"
#include "numaware/stencil.hpp"
#include "skeletons/geometry.hpp"

namespace numaware::stencil {

using detail::interior_slabs;
using detail::kDouble;

namespace {

// a * b, or Error("grid", ...) when it does not fit.
std::size_t checked_mul(std::size_t a, std::size_t b, const Shape& shape) {
    std::size_t r = 0;
    if (__builtin_mul_overflow(a, b, &r) || r > (std::size_t{1} << 60))
        throw Error("grid", fmt::format("{} is too large to lay out", shape.to_string()));
    return r;
}

std::size_t round_up(std::size_t v, std::size_t unit) { return (v + unit - 1) / unit * unit; }

}  // namespace

// =====================================================================
// Shape, Layout, check_grid
// =====================================================================

std::string Shape::to_string() const {
    return dims == 3 ? fmt::format("{}x{}x{}", nx, ny, nz) : fmt::format("{}x{}", nx, ny);
}

Layout Layout::make(const Shape& shape, std::size_t page_size) {
    if (shape.dims != 2 && shape.dims != 3)
        throw Error("grid", fmt::format("dims must be 2 or 3, got {}", shape.dims));
    if (shape.nx == 0 || shape.ny == 0 || shape.nz == 0)
        throw Error("grid", fmt::format("extents must be positive, got nx={} ny={} nz={}", shape.nx, shape.ny,
                                        shape.nz));
    if (shape.dims == 2 && shape.nz != 1)
        throw Error("grid", fmt::format("nz={} but a 2-D grid has nz=1", shape.nz));
    if (page_size < 64 || !std::has_single_bit(page_size))
        throw Error("grid", fmt::format("page size {} is not a power of two >= 64", page_size));

    Layout L;
    L.shape = shape;
    L.page_size = page_size;
    L.row_stride = round_up(shape.nx, 8);
    const std::size_t slab_elems = shape.dims == 3 ? checked_mul(L.row_stride, shape.ny, shape) : L.row_stride;
    std::size_t slab_bytes = checked_mul(slab_elems, kDouble, shape);
    if (slab_bytes >= page_size) {
        slab_bytes = round_up(slab_bytes, page_size);
        L.granule = 1;
    } else {
        slab_bytes = std::bit_ceil(slab_bytes);   // >= 64, < page: divides the page
        L.granule = page_size / slab_bytes;
    }
    L.slab_stride = slab_bytes / kDouble;
    if (shape.dims == 2) L.row_stride = L.slab_stride;
    L.slabs = shape.dims == 3 ? shape.nz : shape.ny;
    L.bytes = round_up(checked_mul(L.slabs, slab_bytes, shape), page_size);
    return L;
}

void check_grid(const Shape& shape, const Neighbourhood& nb) {
    if (shape.dims != nb.dims())
        throw Error("grid", fmt::format("the {} neighbourhood is {}-D but the grid is {}-D", nb.name(), nb.dims(),
                                        shape.dims));
    const auto need = [&](const char* axis, std::size_t n, unsigned r) {
        const std::size_t least = 2 * static_cast<std::size_t>(r) + 1;
        if (n < least)
            throw Error("grid", fmt::format("{}={} is smaller than the {} stencil needs (at least {})", axis, n,
                                            nb.name(), least));
    };
    need("nx", shape.nx, nb.radius_x());
    need("ny", shape.ny, nb.radius_y());
    if (shape.dims == 3)
        need("nz", shape.nz, nb.radius_z());
    else if (shape.nz != 1)
        throw Error("grid", fmt::format("nz={} but a 2-D grid has nz=1", shape.nz));
}

// =====================================================================
// Partitions
// =====================================================================

namespace {

void check_threads(const Layout& L, unsigned halo, std::size_t threads) {
    if (threads == 0) throw Error("threads", "0 threads: need at least 1");
    const std::size_t interior = interior_slabs(L, halo);
    if (threads > interior)
        throw Error("threads", fmt::format("{} threads but the grid has only {} interior {}", threads, interior,
                                           L.shape.dims == 3 ? "planes" : "rows"));
}

// Clamps the raw cuts (one per rank boundary, threads + 1 of them) into
// [halo, slabs - halo], makes them monotone, fixes the ends and builds
// the work and owned blocks.
Partition from_cuts(const Layout& L, unsigned halo, std::vector<std::size_t> cuts, std::vector<double> weights) {
    const std::size_t lo = halo;
    const std::size_t hi = L.slabs - halo;
    const std::size_t threads = cuts.size() - 1;
    cuts.front() = lo;
    cuts.back() = hi;
    for (std::size_t r = 1; r < threads; ++r) cuts[r] = std::clamp(std::max(cuts[r], cuts[r - 1]), lo, hi);
    Partition p;
    p.work.resize(threads);
    p.owned.resize(threads);
    for (std::size_t r = 0; r < threads; ++r) {
        p.work[r] = {cuts[r], cuts[r + 1]};
        p.owned[r] = p.work[r];
    }
    p.owned.front().lo = 0;
    p.owned.back().hi = L.slabs;
    p.weights = std::move(weights);
    return p;
}

// halo + r * interior / threads, rounded to the nearest multiple of the
// granule (halves up), in integers.
std::vector<std::size_t> equal_cuts(const Layout& L, unsigned halo, std::size_t threads) {
    const std::size_t interior = interior_slabs(L, halo);
    const std::size_t g = L.granule;
    std::vector<std::size_t> cuts(threads + 1);
    for (std::size_t r = 0; r <= threads; ++r) {
        const std::size_t num = static_cast<std::size_t>(halo) * threads + r * interior;   // exact = num / threads
        cuts[r] = (2 * num + threads * g) / (2 * threads * g) * g;
    }
    return cuts;
}

}  // namespace

Partition partition_equal(const Layout& layout, unsigned halo, unsigned threads) {
    check_threads(layout, halo, threads);
    return from_cuts(layout, halo, equal_cuts(layout, halo, threads), std::vector<double>(threads, 1.0));
}

Partition partition_weighted(const Layout& layout, unsigned halo, std::span<const double> weights) {
    const std::size_t threads = weights.size();
    if (threads == 0) throw Error("threads", "0 threads (no weights): need at least 1");
    for (std::size_t i = 0; i < threads; ++i)
        if (!std::isfinite(weights[i]) || !(weights[i] > 0))
            throw Error(fmt::format("weights[{}]", i), fmt::format("must be positive and finite, got {}", weights[i]));
    check_threads(layout, halo, threads);
    std::vector<double> kept(weights.begin(), weights.end());
    const bool all_equal = std::all_of(kept.begin(), kept.end(), [&](double w) { return w == kept.front(); });
    if (all_equal) return from_cuts(layout, halo, equal_cuts(layout, halo, threads), std::move(kept));

    const double interior = static_cast<double>(interior_slabs(layout, halo));
    const double g = static_cast<double>(layout.granule);
    double total = 0;
    for (double w : kept) total += w;
    std::vector<std::size_t> cuts(threads + 1);
    double prefix = 0;
    for (std::size_t r = 0; r <= threads; ++r) {
        const double exact = static_cast<double>(halo) + interior * (prefix / total);
        cuts[r] = static_cast<std::size_t>(std::floor(exact / g + 0.5)) * layout.granule;
        if (r < threads) prefix += kept[r];
    }
    return from_cuts(layout, halo, std::move(cuts), std::move(kept));
}

}  // namespace numaware::stencil
