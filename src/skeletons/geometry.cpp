// skeletons/geometry.cpp — the pure decisions of the stencil skeleton:
// neighbourhoods, the padded layout, the cuts between ranks, the
// NUMA-aware weights and the traffic accounting. Nothing here touches
// memory placement or threads; see numaware/stencil.hpp for the contract.
#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "numaware/error.hpp"
#include "numaware/stencil.hpp"

namespace numaware::stencil {

namespace {

constexpr int kMaxOffset = 8;
constexpr std::size_t kDouble = sizeof(double);

unsigned magnitude(int v) { return static_cast<unsigned>(v < 0 ? -v : v); }

std::string offset_text(const Offset& o, unsigned dims) {
    return dims == 3 ? fmt::format("({},{},{})", o.dx, o.dy, o.dz) : fmt::format("({},{})", o.dx, o.dy);
}

// a * b, or Error("grid", ...) when it does not fit.
std::size_t checked_mul(std::size_t a, std::size_t b, const Shape& shape) {
    std::size_t r = 0;
    if (__builtin_mul_overflow(a, b, &r) || r > (std::size_t{1} << 60))
        throw Error("grid", fmt::format("{} is too large to lay out", shape.to_string()));
    return r;
}

std::size_t round_up(std::size_t v, std::size_t unit) { return (v + unit - 1) / unit * unit; }

bool parse_unsigned(std::string_view text, unsigned& out) {
    if (text.empty()) return false;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, out);
    return ec == std::errc{} && ptr == end;
}

}  // namespace

// =====================================================================
// Neighbourhood
// =====================================================================

Neighbourhood::Neighbourhood(unsigned dims, std::vector<Offset> offsets, std::string name)
    : dims_(dims), offsets_(std::move(offsets)), name_(std::move(name)) {
    if (dims_ != 2 && dims_ != 3)
        throw Error("neighbourhood", fmt::format("dims must be 2 or 3, got {}", dims_));
    if (offsets_.empty()) throw Error("neighbourhood", "needs at least one offset, got none");
    constexpr int kSide = 2 * kMaxOffset + 1;
    std::vector<bool> seen(static_cast<std::size_t>(kSide * kSide * kSide), false);
    for (const Offset& o : offsets_) {
        if (magnitude(o.dx) > kMaxOffset || magnitude(o.dy) > kMaxOffset || magnitude(o.dz) > kMaxOffset)
            throw Error("neighbourhood", fmt::format("offset {} is farther than {} cells along an axis",
                                                     offset_text(o, 3), kMaxOffset));
        if (dims_ == 2 && o.dz != 0)
            throw Error("neighbourhood",
                        fmt::format("offset {} has dz != 0 in a 2-D neighbourhood", offset_text(o, 3)));
        const auto key = static_cast<std::size_t>(((o.dz + kMaxOffset) * kSide + (o.dy + kMaxOffset)) * kSide +
                                                  (o.dx + kMaxOffset));
        if (seen[key])
            throw Error("neighbourhood", fmt::format("offset {} is listed twice", offset_text(o, dims_)));
        seen[key] = true;
        rx_ = std::max(rx_, magnitude(o.dx));
        ry_ = std::max(ry_, magnitude(o.dy));
        rz_ = std::max(rz_, magnitude(o.dz));
    }
}

namespace {
void check_shape_args(unsigned dims, unsigned radius) {
    if (dims != 2 && dims != 3) throw Error("neighbourhood", fmt::format("dims must be 2 or 3, got {}", dims));
    if (radius < 1 || radius > static_cast<unsigned>(kMaxOffset))
        throw Error("neighbourhood", fmt::format("radius must be 1..{}, got {}", kMaxOffset, radius));
}
}  // namespace

Neighbourhood Neighbourhood::star(unsigned dims, unsigned radius) {
    check_shape_args(dims, radius);
    const int r = static_cast<int>(radius);
    const int zr = dims == 3 ? r : 0;
    std::vector<Offset> offsets;
    // Memory order: z, then y, then x.
    for (int dz = -zr; dz <= zr; ++dz)
        for (int dy = -r; dy <= r; ++dy)
            for (int dx = -r; dx <= r; ++dx) {
                const int axes = (dx != 0) + (dy != 0) + (dz != 0);
                if (axes <= 1) offsets.push_back({dx, dy, dz});
            }
    std::string name = radius == 1 ? (dims == 2 ? "5-point" : "7-point") : fmt::format("star:{}:{}", dims, radius);
    return Neighbourhood(dims, std::move(offsets), std::move(name));
}

Neighbourhood Neighbourhood::box(unsigned dims, unsigned radius) {
    check_shape_args(dims, radius);
    const int r = static_cast<int>(radius);
    const int zr = dims == 3 ? r : 0;
    std::vector<Offset> offsets;
    for (int dz = -zr; dz <= zr; ++dz)
        for (int dy = -r; dy <= r; ++dy)
            for (int dx = -r; dx <= r; ++dx) offsets.push_back({dx, dy, dz});
    std::string name = radius == 1 ? (dims == 2 ? "9-point" : "27-point") : fmt::format("box:{}:{}", dims, radius);
    return Neighbourhood(dims, std::move(offsets), std::move(name));
}

Neighbourhood Neighbourhood::parse(std::string_view text, std::string_view field) {
    const std::string f(field);
    if (text == "5-point") return star(2, 1);
    if (text == "7-point") return star(3, 1);
    if (text == "9-point") return box(2, 1);
    if (text == "27-point") return box(3, 1);
    const auto refuse = [&]() {
        return Error(f, fmt::format("'{}' is not a neighbourhood; accepted: 5-point, 9-point, 7-point, 27-point, "
                                    "star:D:R, box:D:R (D = 2 or 3, R = 1..{})",
                                    text, kMaxOffset));
    };
    const bool is_star = text.starts_with("star:");
    const bool is_box = text.starts_with("box:");
    if (!is_star && !is_box) throw refuse();
    const std::string_view rest = text.substr(is_star ? 5 : 4);
    const std::size_t colon = rest.find(':');
    if (colon == std::string_view::npos) throw refuse();
    unsigned dims = 0;
    unsigned radius = 0;
    if (!parse_unsigned(rest.substr(0, colon), dims) || !parse_unsigned(rest.substr(colon + 1), radius))
        throw refuse();
    if ((dims != 2 && dims != 3) || radius < 1 || radius > static_cast<unsigned>(kMaxOffset)) throw refuse();
    return is_star ? star(dims, radius) : box(dims, radius);
}

unsigned Neighbourhood::radius() const { return std::max({rx_, ry_, rz_}); }

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

std::size_t interior_slabs(const Layout& L, unsigned halo) {
    const std::size_t h2 = 2 * static_cast<std::size_t>(halo);
    return L.slabs > h2 ? L.slabs - h2 : 0;
}

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

// =====================================================================
// Traffic accounting
// =====================================================================

Traffic& Traffic::operator+=(const Traffic& o) {
    read_bytes += o.read_bytes;
    remote_read_bytes += o.remote_read_bytes;
    unknown_read_bytes += o.unknown_read_bytes;
    write_bytes += o.write_bytes;
    remote_write_bytes += o.remote_write_bytes;
    halo_pages += o.halo_pages;
    remote_halo_pages += o.remote_halo_pages;
    block_pages += o.block_pages;
    block_pages_on_node += o.block_pages_on_node;
    return *this;
}

namespace {

// The interior slabs of `work` (slabs outside [rs, slabs - rs) are never updated).
Block interior_part(const Layout& L, const Neighbourhood& nb, Block work) {
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

void check_block(const Layout& L, Block b, const char* field) {
    if (b.lo > b.hi || b.hi > L.slabs)
        throw Error(field, fmt::format("[{}, {}) is not a range of the grid's {} slabs", b.lo, b.hi, L.slabs));
}

void check_accounting_input(const Layout& L, const Neighbourhood& nb, Block work, Block owned,
                            std::size_t read_entries, std::size_t written_entries) {
    check_grid(L.shape, nb);
    check_block(L, work, "work");
    check_block(L, owned, "owned");
    if (read_entries != L.pages())
        throw Error("page_nodes_read",
                    fmt::format("has {} entries but the grid has {} pages", read_entries, L.pages()));
    if (written_entries != L.pages())
        throw Error("page_nodes_written",
                    fmt::format("has {} entries but the grid has {} pages", written_entries, L.pages()));
}

}  // namespace

Traffic account(const Layout& layout, const Neighbourhood& nb, Block work, Block owned, unsigned node,
                std::span<const int> page_nodes_read, std::span<const int> page_nodes_written) {
    check_accounting_input(layout, nb, work, owned, page_nodes_read.size(), page_nodes_written.size());
    const int me = static_cast<int>(node);
    const std::size_t ps = layout.page_size;

    // The owned block's pages: every page with a byte in the owned byte range.
    std::size_t own_p0 = 0;
    std::size_t own_p1 = 0;
    {
        const std::size_t b0 = owned.lo * layout.slab_stride * kDouble;
        const std::size_t b1 = std::min(owned.hi * layout.slab_stride * kDouble, layout.bytes);
        if (b0 < b1) {
            own_p0 = b0 / ps;
            own_p1 = (b1 + ps - 1) / ps;
        }
    }

    Traffic t;
    t.block_pages = own_p1 - own_p0;
    for (std::size_t p = own_p0; p < own_p1; ++p)
        if (page_nodes_read[p] == me) ++t.block_pages_on_node;

    const Block w = interior_part(layout, nb, work);
    std::size_t last_page = std::numeric_limits<std::size_t>::max();
    for_each_read(layout, nb, w, [&](std::size_t b0, std::size_t b1) {
        split_pages(ps, b0, b1, [&](std::size_t page, std::size_t n) {
            const int at = page_nodes_read[page];
            t.read_bytes += n;
            if (at < 0)
                t.unknown_read_bytes += n;
            else if (at != me)
                t.remote_read_bytes += n;
            if (page != last_page) {   // ascending order: a new page is a distinct page
                last_page = page;
                if (page < own_p0 || page >= own_p1) {
                    ++t.halo_pages;
                    if (at >= 0 && at != me) ++t.remote_halo_pages;
                }
            }
        });
    });
    for_each_write(layout, nb, w, [&](std::size_t b0, std::size_t b1) {
        split_pages(ps, b0, b1, [&](std::size_t page, std::size_t n) {
            const int at = page_nodes_written[page];
            t.write_bytes += n;
            if (at >= 0 && at != me) t.remote_write_bytes += n;
        });
    });
    return t;
}

// =====================================================================
// NUMA-aware weights
// =====================================================================

CostRatio remote_cost(const Machine& machine, unsigned reader_node, unsigned home_node) {
    const std::size_t r = machine.index_of(reader_node);
    const std::size_t h = machine.index_of(home_node);
    const auto entry = [](const std::optional<NodeMatrix<double>>& m, std::size_t i, std::size_t j) {
        if (!m || i >= m->size() || j >= (*m)[i].size()) return 0.0;
        const double v = (*m)[i][j];
        return std::isfinite(v) && v > 0 ? v : 0.0;
    };
    const double bw_home = entry(machine.bandwidth_gbps, h, h);
    const double bw_reader = entry(machine.bandwidth_gbps, r, h);
    if (bw_home > 0 && bw_reader > 0)
        return {bw_home / bw_reader, fmt::format("bandwidth {:.1f}/{:.1f} GB/s", bw_home, bw_reader)};
    const double lat_reader = entry(machine.latency_ns, r, h);
    const double lat_home = entry(machine.latency_ns, h, h);
    if (lat_reader > 0 && lat_home > 0)
        return {lat_reader / lat_home, fmt::format("latency {:g}/{:g} ns", lat_reader, lat_home)};
    const unsigned d_reader = machine.distances.at(r).at(h);
    const unsigned d_home = machine.distances.at(h).at(h);
    return {static_cast<double>(d_reader) / static_cast<double>(d_home), fmt::format("SLIT {}/{}", d_reader, d_home)};
}

WeightPlan numa_weights(const Layout& layout, const Neighbourhood& nb, const std::vector<unsigned>& rank_nodes,
                        const Machine& machine, double remote_cost_override) {
    if (!std::isfinite(remote_cost_override) || remote_cost_override < 0)
        throw Error("remote_cost",
                    fmt::format("must be finite and >= 0 (0: from the machine), got {}", remote_cost_override));
    if (rank_nodes.size() > std::numeric_limits<unsigned>::max())
        throw Error("threads", fmt::format("{} ranks is too many", rank_nodes.size()));
    check_grid(layout.shape, nb);
    const auto threads = static_cast<unsigned>(rank_nodes.size());
    const unsigned halo = nb.radius_slab();
    const Partition cut = partition_equal(layout, halo, threads);

    // Synthetic placement: each owned block's pages on its rank's node
    // (a page belongs to the rank owning its first byte).
    const std::size_t pages = layout.pages();
    const std::size_t slab_bytes = layout.slab_stride * kDouble;
    std::vector<unsigned> owner(pages);
    std::vector<int> page_node(pages);
    {
        std::size_t r = 0;
        for (std::size_t p = 0; p < pages; ++p) {
            const std::size_t slab = p * layout.page_size / slab_bytes;
            while (r + 1 < threads && slab >= cut.owned[r].hi) ++r;
            owner[p] = static_cast<unsigned>(r);
            page_node[p] = static_cast<int>(rank_nodes[r]);
        }
    }

    std::map<std::pair<unsigned, unsigned>, CostRatio> ratios;   // (reader, home) -> rho
    const auto rho = [&](unsigned reader, unsigned home) -> const CostRatio& {
        auto it = ratios.find({reader, home});
        if (it == ratios.end()) {
            CostRatio c = remote_cost_override > 0 ? CostRatio{remote_cost_override, "given"}
                                                   : remote_cost(machine, reader, home);
            it = ratios.emplace(std::make_pair(reader, home), std::move(c)).first;
        }
        return it->second;
    };

    WeightPlan plan;
    plan.weights.assign(threads, 1.0);
    plan.cost_ratio.assign(threads, 1.0);
    plan.halo_bytes.assign(threads, 0);
    std::vector<double> extra(threads, 0.0);   // X_t = sum (rho - 1) * halo bytes from each remote home
    std::vector<std::size_t> from_rank(threads, 0);
    for (unsigned t = 0; t < threads; ++t) {
        const unsigned me = rank_nodes[t];
        const Traffic tr = account(layout, nb, cut.work[t], cut.owned[t], me, page_node, page_node);
        plan.halo_bytes[t] = tr.remote_read_bytes;
        // The same remote bytes, split by the rank whose block they are in.
        std::fill(from_rank.begin(), from_rank.end(), 0);
        for_each_read(layout, nb, interior_part(layout, nb, cut.work[t]), [&](std::size_t b0, std::size_t b1) {
            split_pages(layout.page_size, b0, b1, [&](std::size_t page, std::size_t n) {
                if (rank_nodes[owner[page]] != me) from_rank[owner[page]] += n;
            });
        });
        double largest = 1.0;
        for (unsigned u = 0; u < threads; ++u) {
            const bool neighbour = u + 1 == t || u == t + 1;
            if (rank_nodes[u] == me || (from_rank[u] == 0 && !neighbour)) continue;
            const double ratio = rho(me, rank_nodes[u]).ratio;
            largest = std::max(largest, ratio);
            extra[t] += (ratio - 1.0) * static_cast<double>(from_rank[u]);
        }
        plan.cost_ratio[t] = largest;
    }

    const std::size_t interior_slabs_n = interior_slabs(layout, halo);
    const std::size_t row_cells = layout.shape.nx - 2 * static_cast<std::size_t>(nb.radius_x());
    const std::size_t row_count =
        layout.shape.dims == 3 ? layout.shape.ny - 2 * static_cast<std::size_t>(nb.radius_y()) : 1;
    const std::size_t slab_cells = row_cells * row_count;
    const double S = 2.0 * static_cast<double>(slab_cells) * static_cast<double>(kDouble);
    const double N = static_cast<double>(interior_slabs_n);
    const double T = static_cast<double>(threads);
    double sum_extra = 0;
    for (double x : extra) sum_extra += x;

    unsigned remote_ranks = 0;
    for (unsigned t = 0; t < threads; ++t)
        if (plan.halo_bytes[t] > 0) ++remote_ranks;

    if (sum_extra != 0) {
        const double floor_weight = static_cast<double>(layout.granule) * T / N;
        double total = 0;
        for (unsigned t = 0; t < threads; ++t) {
            const double n_t = (N * S + sum_extra) / (T * S) - extra[t] / S;
            plan.weights[t] = std::max(n_t / (N / T), floor_weight);
            total += plan.weights[t];
        }
        for (double& w : plan.weights) w *= T / total;
    }

    // The rule, in one sentence with the numbers.
    if (remote_ranks == 0) {
        plan.rule = fmt::format(
            "no rank reads a remote halo under the equal cut ({} ranks, {} interior slabs), so every weight is 1",
            threads, interior_slabs_n);
        return plan;
    }
    std::string sources;
    {
        std::vector<std::string> seen;
        for (const auto& [key, c] : ratios) {
            const std::string one = fmt::format("{:.2f} ({})", c.ratio, c.source);
            if (std::find(seen.begin(), seen.end(), one) == seen.end()) seen.push_back(one);
        }
        for (std::size_t i = 0; i < seen.size(); ++i) sources += (i ? ", " : "") + seen[i];
    }
    std::size_t h_min = std::numeric_limits<std::size_t>::max();
    std::size_t h_max = 0;
    for (std::size_t h : plan.halo_bytes)
        if (h > 0) {
            h_min = std::min(h_min, h);
            h_max = std::max(h_max, h);
        }
    const auto [w_min, w_max] = std::minmax_element(plan.weights.begin(), plan.weights.end());
    plan.rule = fmt::format(
        "rho = {} for the {} of {} ranks with a remote halo ({} B/sweep under the equal cut); equalising "
        "T_t = n_t*S + sum (rho-1)*H_t with S = {:.0f} B per slab update over {} interior slabs gives weights "
        "{:.3f}..{:.3f} (each at least one granule = {} slab{}, mean 1)",
        sources, remote_ranks, threads, h_min == h_max ? fmt::format("{}", h_min) : fmt::format("{}..{}", h_min, h_max),
        S, interior_slabs_n, *w_min, *w_max, layout.granule, layout.granule == 1 ? "" : "s");
    return plan;
}

// =====================================================================
// Names
// =====================================================================

namespace {
constexpr std::array<std::pair<Kind, std::string_view>, 6> kKinds{{{Kind::jacobi, "jacobi"},
                                                                   {Kind::gauss_seidel, "gauss-seidel"},
                                                                   {Kind::red_black, "red-black"},
                                                                   {Kind::variable, "variable"},
                                                                   {Kind::multigrid, "multigrid"},
                                                                   {Kind::butterfly, "butterfly"}}};
constexpr std::array<std::pair<Placement, std::string_view>, 5> kPlacements{
    {{Placement::serial_first_touch, "serial-first-touch"},
     {Placement::parallel_first_touch, "parallel-first-touch"},
     {Placement::interleave, "interleave"},
     {Placement::stencil_aware, "stencil-aware"},
     {Placement::explicit_plan, "explicit"}}};
constexpr std::array<std::pair<Distribution, std::string_view>, 4> kDistributions{
    {{Distribution::static_equal, "static"},
     {Distribution::dynamic, "dynamic"},
     {Distribution::guided, "guided"},
     {Distribution::numa_weighted, "numa-weighted"}}};

template <class E, std::size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& table, E value) {
    for (const auto& [v, name] : table)
        if (v == value) return name;
    return "unknown";
}

template <class E, std::size_t N>
E parse_name(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view text,
             std::string_view field, std::string_view what) {
    std::string accepted;
    for (const auto& [v, name] : table) {
        if (name == text) return v;
        accepted += (accepted.empty() ? "" : ", ") + std::string(name);
    }
    throw Error(std::string(field), fmt::format("'{}' is not a {}; accepted: {}", text, what, accepted));
}
}  // namespace

std::string_view to_string(Kind kind) { return name_of(kKinds, kind); }
std::string_view to_string(Placement placement) { return name_of(kPlacements, placement); }
std::string_view to_string(Distribution distribution) { return name_of(kDistributions, distribution); }

Kind parse_kind(std::string_view text, std::string_view field) {
    return parse_name(kKinds, text, field, "stencil kind");
}
Placement parse_placement(std::string_view text, std::string_view field) {
    return parse_name(kPlacements, text, field, "placement mode");
}
Distribution parse_distribution(std::string_view text, std::string_view field) {
    return parse_name(kDistributions, text, field, "work distribution");
}

// =====================================================================
// Calibration
// =====================================================================

std::vector<double> calibrate_weights(const Report& measured) {
    if (measured.ranks.empty()) throw Error("report", "has no ranks to calibrate from");
    std::vector<double> rates;
    rates.reserve(measured.ranks.size());
    double total = 0;
    for (std::size_t i = 0; i < measured.ranks.size(); ++i) {
        const RankReport& r = measured.ranks[i];
        if (r.slabs_updated == 0)
            throw Error("report", fmt::format("rank {} updated no slabs: cannot derive its speed", r.rank));
        if (!std::isfinite(r.busy_seconds) || !(r.busy_seconds > 0))
            throw Error("report", fmt::format("rank {} has no busy time (busy_seconds = {})", r.rank, r.busy_seconds));
        rates.push_back(static_cast<double>(r.slabs_updated) / r.busy_seconds);
        total += rates.back();
    }
    const double scale = static_cast<double>(rates.size()) / total;
    for (double& w : rates) w *= scale;
    return rates;
}

}  // namespace numaware::stencil
