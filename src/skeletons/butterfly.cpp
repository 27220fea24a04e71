// skeletons/butterfly.cpp — butterfly phases (the exchange pattern of an
// FFT or a Walsh–Hadamard transform) on page-aligned per-rank blocks.
//
// Each rank owns one contiguous block of both buffers. In phase p an
// element reads its partner i ^ 2^p: while 2^p is below the block size the
// partner is in the rank's own block (no halo at all); from then on the
// partner block is a whole block of another rank, so the phase reads as
// many bytes from that rank's node as the rank owns. The report counts
// this from the kernel's page locations, phase by phase.
//
// Report conventions: shape n x 1 (2-D, one row); a "sweep" is one phase;
// a rank's work and owned blocks are in elements; its Traffic is the sum
// over the run's phases divided by the number of phases (rounded down per
// field), so a far phase shows as 1/k of its bytes. Only the static
// distribution exists: the blocks are the placement.
#include <algorithm>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "numaware/error.hpp"
#include "os/os.hpp"
#include "skeletons/engine.hpp"
#include "util/bits.hpp"

namespace numaware::stencil::detail {

// The traffic of one rank in one phase (declared here, not in a header:
// butterfly.cpp and its unit test are its only users). `block` is in
// elements and page-aligned; in_nodes / out_nodes give the node of every
// page of the buffer read and the buffer written.
Traffic butterfly_phase_traffic(std::size_t page_elems, Block block, unsigned node, unsigned phase,
                                std::span<const int> in_nodes, std::span<const int> out_nodes);

Traffic butterfly_phase_traffic(std::size_t page_elems, Block block, unsigned node, unsigned phase,
                                std::span<const int> in_nodes, std::span<const int> out_nodes) {
    Traffic t;
    const std::size_t page_bytes = page_elems * sizeof(double);
    const std::size_t first = block.lo / page_elems;
    const std::size_t last = block.hi / page_elems;
    const std::size_t distance = std::size_t{1} << phase;
    const auto read_page = [&](std::size_t q) {
        t.read_bytes += page_bytes;
        const int where = in_nodes[q];
        if (where < 0) {
            t.unknown_read_bytes += page_bytes;
            return false;
        }
        if (static_cast<unsigned>(where) != node) {
            t.remote_read_bytes += page_bytes;
            return true;
        }
        return false;
    };
    for (std::size_t q = first; q < last; ++q) {
        // The rank's own element: every page of the block, once.
        read_page(q);
        ++t.block_pages;
        if (in_nodes[q] >= 0 && static_cast<unsigned>(in_nodes[q]) == node) ++t.block_pages_on_node;
        // Partners of page q's elements fill exactly one page: q itself
        // below a page's distance, page q ^ (distance / page) above.
        if (distance >= page_elems) {
            const std::size_t partner = q ^ (distance / page_elems);
            if (partner < first || partner >= last) {
                ++t.halo_pages;
                if (read_page(partner)) ++t.remote_halo_pages;
            }
        }
        t.write_bytes += page_bytes;
        if (out_nodes[q] >= 0 && static_cast<unsigned>(out_nodes[q]) != node) t.remote_write_bytes += page_bytes;
    }
    return t;
}

namespace {

Traffic averaged(const Traffic& sum, std::size_t phases) {
    Traffic t = sum;
    for (std::size_t* f : {&t.read_bytes, &t.remote_read_bytes, &t.unknown_read_bytes, &t.write_bytes,
                           &t.remote_write_bytes, &t.halo_pages, &t.remote_halo_pages, &t.block_pages,
                           &t.block_pages_on_node})
        *f /= phases;
    return t;
}

}  // namespace
}  // namespace numaware::stencil::detail

namespace numaware::stencil {

using detail::PlacedArray;

struct Butterfly::Impl {
    Team& team;
    Options options;
    os::Os& os;
    std::size_t n = 0;
    unsigned phases = 0;          // k = log2(n)
    std::size_t page_elems = 0;   // doubles per page
    std::vector<Block> blocks;    // elements, per rank
    PlacedArray buf[2];
    unsigned current = 0;         // the buffer holding the values
    PlacementReport placement;

    Impl(Team& t, std::size_t size, Options o, os::Os& the_os)
        : team(t), options(std::move(o)), os(the_os), n(size),
          buf{PlacedArray(size * sizeof(double)), PlacedArray(size * sizeof(double))} {}
};

namespace {

// Checks everything before anything is allocated (a failed constructor
// leaves nothing behind).
void check_input(const Team& team, std::size_t n, const Options& o, std::size_t page_size) {
    const std::size_t threads = team.size();
    if (!is_power_of_two(n))
        throw Error("n", "n=" + std::to_string(n) + " is not a power of two (butterfly phases pair i with i ^ 2^p)");
    if (n < 512 * threads)
        throw Error("n", "n=" + std::to_string(n) + " is smaller than 512 x " + std::to_string(threads) +
                             " threads = " + std::to_string(512 * threads) +
                             " (each rank's block must fill at least one 4 KiB page)");
    if (n * sizeof(double) < page_size * threads)
        throw Error("n", "n=" + std::to_string(n) + " gives fewer pages of " + std::to_string(page_size) +
                             " bytes than the " + std::to_string(threads) + " threads");
    // Its blocks are fixed by the placement.
    detail::check_options(o, "butterfly");
}

}  // namespace

Butterfly::Butterfly(Team& team, std::size_t n, const std::function<double(std::size_t)>& init, Options options) {
    os::Os& the_os = detail::os_of(options);
    const std::size_t page_size = the_os.page_size();
    check_input(team, n, options, page_size);
    auto impl = std::make_unique<Impl>(team, n, std::move(options), the_os);
    impl->page_elems = page_size / sizeof(double);
    while ((std::size_t{1} << impl->phases) < n) ++impl->phases;

    // Blocks: pages dealt evenly, so every cut is page-aligned (with a
    // power-of-two team each block is exactly n / threads elements).
    const std::size_t threads = team.size();
    const std::size_t pages = n / impl->page_elems;
    std::vector<detail::ByteRange> owned;
    for (std::size_t r = 0; r < threads; ++r) {
        const std::size_t lo = pages * r / threads * impl->page_elems;
        const std::size_t hi = pages * (r + 1) / threads * impl->page_elems;
        impl->blocks.push_back({lo, hi});
        owned.emplace_back(lo * sizeof(double), hi * sizeof(double));
    }

    Impl& m = *impl;
    m.placement = detail::place(
        team, m.buf[0], m.options.placement, m.options.explicit_policy, owned,
        [&](unsigned, std::size_t lo, std::size_t hi) {
            double* p = m.buf[0].data();
            for (std::size_t i = lo / sizeof(double); i < hi / sizeof(double); ++i) p[i] = init(i);
        },
        m.options.verify_placement, m.os);
    const PlacementReport second = detail::place(
        team, m.buf[1], m.options.placement, m.options.explicit_policy, owned,
        [&](unsigned, std::size_t lo, std::size_t hi) {
            double* p = m.buf[1].data();
            std::fill(p + lo / sizeof(double), p + hi / sizeof(double), 0.0);
        },
        m.options.verify_placement, m.os);
    detail::merge(m.placement, second);
    impl_ = std::move(impl);
}

Butterfly::~Butterfly() = default;

double Butterfly::at(std::size_t i) const {
    if (i >= impl_->n)
        throw Error("i", "index " + std::to_string(i) + " is outside the " + std::to_string(impl_->n) + " elements");
    return impl_->buf[impl_->current].data()[i];
}

std::size_t Butterfly::size() const { return impl_->n; }

Report Butterfly::run(const Fn& f) {
    Impl& m = *impl_;
    const unsigned k = m.phases;
    const unsigned start = m.current;
    const bool stream = m.options.streaming_stores;
    const std::size_t threads = m.team.size();
    std::vector<std::size_t> updated(threads, 0);

    detail::BalancingScope balancing(m.options.balancing_off, m.os);
    for (const PlacedArray& a : m.buf) balancing.hold_still(a);
    const detail::Timing timing = detail::run_phases(
        m.team, k,
        [&](TeamContext& ctx, std::size_t phase) {
            const Block b = m.blocks[ctx.rank()];
            const double* in = m.buf[(start + phase) % 2].data();
            double* out = m.buf[(start + phase + 1) % 2].data();
            const std::size_t distance = std::size_t{1} << phase;
            const auto p = static_cast<unsigned>(phase);
            if (stream) {
                // Streaming stores: compute a cache-resident chunk, then
                // write it past the cache (the output is not read again
                // in this phase).
                constexpr std::size_t kChunk = 256;
                alignas(64) double chunk[kChunk];
                for (std::size_t i0 = b.lo; i0 < b.hi; i0 += kChunk) {
                    const std::size_t len = std::min(kChunk, b.hi - i0);
                    for (std::size_t j = 0; j < len; ++j) {
                        const std::size_t i = i0 + j;
                        chunk[j] = f(in[i], in[i ^ distance], i, p);
                    }
                    detail::stream_store(out + i0, chunk, len);
                }
                detail::stream_fence();
            } else {
                for (std::size_t i = b.lo; i < b.hi; ++i) out[i] = f(in[i], in[i ^ distance], i, p);
            }
            updated[ctx.rank()] += b.size();
        },
        [&](std::size_t phase) {
            if (m.options.on_sweep) m.options.on_sweep(phase);
        });
    m.current = (start + k) % 2;

    Report r;
    r.kind = std::string(to_string(Kind::butterfly));
    r.neighbourhood = "butterfly";
    r.placement = std::string(to_string(m.options.placement));
    r.distribution = std::string(to_string(m.options.distribution));
    r.shape = Shape::d2(m.n, 1);
    r.threads = static_cast<unsigned>(threads);
    r.sweeps = k;
    r.seconds = timing.seconds;
    r.seconds_per_sweep = k > 0 ? timing.seconds / k : 0;
    r.updates_per_sweep = m.n;
    r.updates_per_second = timing.seconds > 0 ? static_cast<double>(m.n) * k / timing.seconds : 0;
    // Model: every element read once and written once per phase; written
    // through the cache, the write also reads the line first.
    r.arrays_counted = stream ? 2 : 3;
    r.bytes_per_sweep = r.arrays_counted * m.n * sizeof(double);
    r.bandwidth_gbs = r.seconds_per_sweep > 0 ? static_cast<double>(r.bytes_per_sweep) / r.seconds_per_sweep / 1e9 : 0;

    // Traffic from where the kernel says the pages are now.
    const std::vector<int> nodes[2] = {m.buf[0].page_nodes(m.os), m.buf[1].page_nodes(m.os)};
    const std::vector<unsigned> rank_node = detail::rank_nodes(m.team);
    const auto& places = m.team.layout().ranks;
    for (std::size_t rank = 0; rank < threads; ++rank) {
        Traffic sum;
        for (unsigned p = 0; p < k; ++p) {
            const unsigned in = (start + p) % 2;
            sum += detail::butterfly_phase_traffic(m.page_elems, m.blocks[rank], rank_node[rank], p, nodes[in],
                                                   nodes[1 - in]);
        }
        RankReport rr;
        rr.rank = static_cast<unsigned>(rank);
        rr.cpu = places[rank].cpu;
        rr.node = rank_node[rank];
        rr.work = m.blocks[rank];
        rr.owned = m.blocks[rank];
        rr.weight = 1.0;
        rr.busy_seconds = rank < timing.busy_seconds.size() ? timing.busy_seconds[rank] : 0;
        rr.slabs_updated = updated[rank];
        rr.traffic = k > 0 ? detail::averaged(sum, k) : Traffic{};
        r.read_bytes_per_sweep += rr.traffic.read_bytes;
        r.remote_read_bytes_per_sweep += rr.traffic.remote_read_bytes;
        r.remote_write_bytes_per_sweep += rr.traffic.remote_write_bytes;
        r.halo_pages += rr.traffic.halo_pages;
        r.remote_halo_pages += rr.traffic.remote_halo_pages;
        r.ranks.push_back(rr);
    }
    r.placement_report = m.placement;
    r.balancing = balancing.finish();
    return r;
}

}  // namespace numaware::stencil
