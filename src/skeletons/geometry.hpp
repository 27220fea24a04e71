// skeletons/geometry.hpp — internals shared by the stencil skeleton's pure
// geometry files (neighbourhood.cpp, layout.cpp, traffic.cpp,
// numa_weights.cpp): the neighbourhood's reach, the interior of a grid, and
// which bytes the updates of a block read and write. The enumerations are
// templates so that account() and numa_weights() inline their callbacks.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "numaware/stencil.hpp"

namespace numaware::stencil::detail {

// The farthest a neighbourhood offset may reach along an axis; read masks
// keep one bit per dx in [-kMaxOffset, kMaxOffset].
constexpr int kMaxOffset = 8;
constexpr std::size_t kDouble = sizeof(double);

// Slabs updated when `halo` slabs at each end are boundary.
inline std::size_t interior_slabs(const Layout& L, unsigned halo) {
    const std::size_t h2 = 2 * static_cast<std::size_t>(halo);
    return L.slabs > h2 ? L.slabs - h2 : 0;
}

// The interior slabs of `work` (slabs outside [rs, slabs - rs) are never updated).
inline Block interior_part(const Layout& L, const Neighbourhood& nb, Block work) {
    const std::size_t rs = nb.radius_slab();
    const std::size_t lo = std::max(work.lo, rs);
    const std::size_t hi = std::min(work.hi, L.slabs > rs ? L.slabs - rs : 0);
    return lo < hi ? Block{lo, hi} : Block{lo, lo};
}

// Calls emit(byte_lo, byte_hi) for the union of the cells read by the
// updates of work slabs `w` (already the interior part): for every
// offset, the interior cells shifted by it. The intervals are disjoint
// and come in ascending address order (rows in address order, merged
// within a row).
template <class Emit>
void for_each_read(const Layout& L, const Neighbourhood& nb, Block w, Emit&& emit) {
    if (w.lo >= w.hi) return;
    const bool d3 = L.shape.dims == 3;
    const auto rx = static_cast<std::ptrdiff_t>(nb.radius_x());
    const auto ry = static_cast<std::ptrdiff_t>(nb.radius_y());
    const auto rs = static_cast<std::ptrdiff_t>(nb.radius_slab());
    const auto nx = static_cast<std::ptrdiff_t>(L.shape.nx);
    const auto ny = static_cast<std::ptrdiff_t>(L.shape.ny);
    const auto lo = static_cast<std::ptrdiff_t>(w.lo);
    const auto hi = static_cast<std::ptrdiff_t>(w.hi);
    const std::ptrdiff_t len = nx - 2 * rx;   // interior cells per row, >= 1 (check_grid)

    // Emits the union of [rx + dx, rx + dx + len) over the dx bits of mask, on the row at `base` (elements).
    const auto emit_row = [&](std::size_t base, std::uint32_t mask) {
        const auto flush = [&](std::ptrdiff_t a, std::ptrdiff_t b) {
            emit((base + static_cast<std::size_t>(a)) * kDouble, (base + static_cast<std::size_t>(b)) * kDouble);
        };
        std::ptrdiff_t cur_lo = 0;
        std::ptrdiff_t cur_hi = -1;
        while (mask != 0) {
            const int bit = std::countr_zero(mask);
            mask &= mask - 1;
            const std::ptrdiff_t a = rx + (bit - kMaxOffset);
            const std::ptrdiff_t b = a + len;
            if (cur_hi < 0) {
                cur_lo = a;
                cur_hi = b;
            } else if (a <= cur_hi) {
                cur_hi = std::max(cur_hi, b);
            } else {
                flush(cur_lo, cur_hi);
                cur_lo = a;
                cur_hi = b;
            }
        }
        if (cur_hi >= 0) flush(cur_lo, cur_hi);
    };

    const auto& offs = nb.offsets();
    std::vector<const Offset*> active;
    active.reserve(offs.size());
    for (std::ptrdiff_t s = lo - rs; s < hi + rs; ++s) {
        // Offsets whose source slab s - d lies in the work block.
        active.clear();
        for (const Offset& o : offs) {
            const std::ptrdiff_t src = s - (d3 ? o.dz : o.dy);
            if (src >= lo && src < hi) active.push_back(&o);
        }
        if (active.empty()) continue;
        if (!d3) {
            std::uint32_t mask = 0;
            for (const Offset* o : active) mask |= std::uint32_t{1} << (o->dx + kMaxOffset);
            emit_row(static_cast<std::size_t>(s) * L.slab_stride, mask);
            continue;
        }
        for (std::ptrdiff_t y = 0; y < ny; ++y) {
            std::uint32_t mask = 0;
            for (const Offset* o : active) {
                const std::ptrdiff_t src = y - o->dy;
                if (src >= ry && src < ny - ry) mask |= std::uint32_t{1} << (o->dx + kMaxOffset);
            }
            if (mask != 0) {
                const std::size_t base =
                    static_cast<std::size_t>(s) * L.slab_stride + static_cast<std::size_t>(y) * L.row_stride;
                emit_row(base, mask);
            }
        }
    }
}

// Calls emit(byte_lo, byte_hi) for every row of interior cells of the work slabs `w`.
template <class Emit>
void for_each_write(const Layout& L, const Neighbourhood& nb, Block w, Emit&& emit) {
    const std::size_t rx = nb.radius_x();
    const std::size_t ry = nb.radius_y();
    const std::size_t nx = L.shape.nx;
    const std::size_t ny = L.shape.ny;
    for (std::size_t s = w.lo; s < w.hi; ++s) {
        if (L.shape.dims == 2) {
            const std::size_t base = s * L.slab_stride;
            emit((base + rx) * kDouble, (base + nx - rx) * kDouble);
            continue;
        }
        for (std::size_t y = ry; y + ry < ny; ++y) {
            const std::size_t base = s * L.slab_stride + y * L.row_stride;
            emit((base + rx) * kDouble, (base + nx - rx) * kDouble);
        }
    }
}

// Splits [b0, b1) at page boundaries: fn(page, bytes).
template <class Fn>
void split_pages(std::size_t page_size, std::size_t b0, std::size_t b1, Fn&& fn) {
    while (b0 < b1) {
        const std::size_t page = b0 / page_size;
        const std::size_t end = std::min(b1, (page + 1) * page_size);
        fn(page, end - b0);
        b0 = end;
    }
}

}  // namespace numaware::stencil::detail
