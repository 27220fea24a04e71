// skeletons/traffic.cpp — traffic accounting: the bytes a rank reads and
// writes per sweep, and which of them are remote, from a page -> node map.
// Pure.
#include <algorithm>
#include <cstddef>
#include <limits>
#include <span>

#include <fmt/format.h>

#include "numaware/error.hpp"
#include "numaware/stencil.hpp"
#include "skeletons/geometry.hpp"

namespace numaware::stencil {

using detail::for_each_read;
using detail::for_each_write;
using detail::interior_part;
using detail::kDouble;
using detail::split_pages;

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

}  // namespace numaware::stencil
