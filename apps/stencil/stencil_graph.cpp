// apps/stencil/stencil_graph.cpp — fork-join stencil sweeps as simulator task
// graphs: one pinned task per thread per sweep, a barrier between sweeps,
// the pages of both arrays homed as the placement mode says.
//
// The geometry (layout, cut, NUMA weights) is the stencil skeleton's own
// pure code; this file only names the memory each thread touches.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "numaware/error.hpp"
#include "apps/stencil/stencil_graph.hpp"

namespace numaware::apps {
namespace {

constexpr std::uint64_t kDouble = sizeof(double);

// A part of one owned block of one array, before it becomes regions.
struct Part {
    std::uint64_t lo = 0;   // byte offsets in the array
    std::uint64_t hi = 0;
    unsigned owner = 0;
    std::uint32_t first_region = 0;   // its regions: [first_region, first_region + region_count)
    std::uint32_t region_count = 0;
};

// SplitMix64: a small generator whose output is fixed by its definition
// (std::shuffle's is not), so migrating runs are the same everywhere.
std::uint64_t splitmix(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// Fisher-Yates over 0..n-1 with draws from `state`.
std::vector<unsigned> permutation(unsigned n, std::uint64_t& state) {
    std::vector<unsigned> p(n);
    for (unsigned i = 0; i < n; ++i) p[i] = i;
    for (unsigned i = n; i > 1; --i) {
        const auto j = static_cast<unsigned>(splitmix(state) % i);
        std::swap(p[i - 1], p[j]);
    }
    return p;
}

std::uint64_t round_down(std::uint64_t v, std::uint64_t page) { return v / page * page; }
std::uint64_t round_up(std::uint64_t v, std::uint64_t page) { return (v + page - 1) / page * page; }

}  // namespace

std::string_view to_string(StencilSim::PagePlacement placement) {
    switch (placement) {
    case StencilSim::PagePlacement::stencil_aware: return "stencil-aware";
    case StencilSim::PagePlacement::serial_first_touch: return "serial-first-touch";
    case StencilSim::PagePlacement::interleave: return "interleave";
    }
    return "?";
}

StencilSim::PagePlacement parse_stencil_placement(std::string_view text, std::string_view field) {
    for (auto p : {StencilSim::PagePlacement::stencil_aware, StencilSim::PagePlacement::serial_first_touch,
                   StencilSim::PagePlacement::interleave})
        if (text == to_string(p)) return p;
    throw Error(std::string(field),
                fmt::format("unknown placement '{}' (stencil-aware, serial-first-touch, interleave)", text));
}

StencilBuild build_stencil_plan(const sim::TimedMachine& m, const std::vector<unsigned>& worker_node,
                                const StencilSim& s) {
    const Machine& machine = m.machine;
    if (s.threads == 0) throw Error("threads", "0 threads: need at least 1");
    if (s.sweeps == 0) throw Error("sweeps", "0 sweeps: need at least 1");
    if (worker_node.empty()) throw Error("worker_node", "no workers: need at least 1");
    if (s.threads > worker_node.size())
        throw Error("threads", fmt::format("{} threads but the simulation has only {} workers (one thread per worker)",
                                           s.threads, worker_node.size()));
    for (std::size_t w = 0; w < worker_node.size(); ++w) {
        const auto it = std::find_if(machine.nodes.begin(), machine.nodes.end(),
                                     [&](const Node& n) { return n.os_index == worker_node[w]; });
        if (it == machine.nodes.end() || !it->has_cpus())
            throw Error(fmt::format("worker_node[{}]", w),
                        fmt::format("node {} is not a node with CPUs of {}", worker_node[w], m.name));
    }
    if (!(s.compute.flops_per_s > 0) || !std::isfinite(s.compute.flops_per_s))
        throw Error("flops_per_s", fmt::format("must be positive and finite, got {}", s.compute.flops_per_s));
    // The unit pages are placed and cut at is the simulated machine's page,
    // never the host's.
    const std::uint64_t page = machine.page_bytes;
    if (page < 64 || (page & (page - 1)) != 0)
        throw Error("page_bytes", fmt::format("the machine's page size must be a power of two >= 64, got {}", page));

    const stencil::Neighbourhood& nb = s.neighbourhood;
    stencil::check_grid(s.shape, nb);

    StencilBuild out;
    out.layout = stencil::Layout::make(s.shape, static_cast<std::size_t>(page));
    const stencil::Layout& L = out.layout;
    const unsigned halo = nb.radius_slab();
    out.thread_nodes.assign(worker_node.begin(), worker_node.begin() + s.threads);

    if (s.numa_chunks) {
        stencil::WeightPlan wp = stencil::numa_weights(L, nb, out.thread_nodes, machine);
        out.partition = stencil::partition_weighted(L, halo, wp.weights);
        out.weight_rule = std::move(wp.rule);
    } else {
        out.partition = stencil::partition_equal(L, halo, s.threads);
        out.weight_rule = "equal";
    }
    const stencil::Partition& P = out.partition;

    // Nodes that take interleaved pages.
    std::vector<unsigned> with_memory;
    for (const Node& n : machine.nodes)
        if (n.memory_bytes > 0) with_memory.push_back(n.os_index);
    if (s.placement == StencilSim::PagePlacement::interleave && with_memory.empty())
        throw Error("placement", fmt::format("interleave needs a node with memory; {} has none", m.name));

    const std::uint64_t slab_bytes = L.slab_stride * kDouble;
    const std::uint64_t array_bytes = L.bytes;

    // Bytes of the owned block of each thread: a page belongs to the thread
    // owning its first byte (the skeleton's rule; cuts are page-aligned
    // except next to an empty work block), the last block runs to the end
    // of the array, which Layout rounds up to a page.
    std::vector<std::uint64_t> own_lo(s.threads), own_hi(s.threads);
    for (unsigned t = 0; t < s.threads; ++t)
        own_lo[t] = t == 0 ? 0 : std::min<std::uint64_t>(round_up(P.owned[t].lo * slab_bytes, page), array_bytes);
    for (unsigned t = 0; t < s.threads; ++t)
        own_hi[t] = t + 1 == s.threads ? array_bytes : std::max(own_lo[t], own_lo[t + 1]);
    // What each thread reads: slabs [work.lo - halo, work.hi + halo), in bytes.
    std::vector<std::uint64_t> read_lo(s.threads), read_hi(s.threads);
    for (unsigned t = 0; t < s.threads; ++t) {
        const stencil::Block w = P.work[t];
        if (w.lo == w.hi) {
            read_lo[t] = read_hi[t] = 0;
            continue;
        }
        read_lo[t] = (w.lo - halo) * slab_bytes;
        read_hi[t] = std::min<std::uint64_t>((w.hi + halo) * slab_bytes, array_bytes);
    }

    // Cut every owned block at the (page-rounded) edges of what the other
    // threads read of it. The same cut for both arrays.
    std::vector<Part> cut;   // one array's parts, in address order
    for (unsigned r = 0; r < s.threads; ++r) {
        if (own_lo[r] == own_hi[r]) continue;
        std::vector<std::uint64_t> points{own_lo[r], own_hi[r]};
        for (unsigned u = 0; u < s.threads; ++u) {
            if (u == r || read_lo[u] == read_hi[u]) continue;
            const std::uint64_t lo = std::max(read_lo[u], own_lo[r]);
            const std::uint64_t hi = std::min(read_hi[u], own_hi[r]);
            if (lo >= hi) continue;
            points.push_back(std::max(round_down(lo, page), own_lo[r]));
            points.push_back(std::min(round_up(hi, page), own_hi[r]));
        }
        std::sort(points.begin(), points.end());
        points.erase(std::unique(points.begin(), points.end()), points.end());
        for (std::size_t i = 0; i + 1 < points.size(); ++i) cut.push_back(Part{points[i], points[i + 1], r, 0, 0});
    }

    // Regions: array 0's parts, then array 1's; interleave splits each
    // part into one region per node holding some of its pages.
    sim::Graph& g = out.graph;
    std::vector<std::vector<Part>> parts(2, cut);
    for (unsigned a = 0; a < 2; ++a) {
        for (Part& p : parts[a]) {
            p.first_region = static_cast<std::uint32_t>(g.regions().size());
            const auto add = [&](std::uint64_t bytes, unsigned home) {
                g.add_region(bytes, static_cast<int>(home));
                out.regions.push_back(StencilRegion{a, p.owner, p.lo, p.hi - p.lo, bytes, home});
            };
            switch (s.placement) {
            case StencilSim::PagePlacement::stencil_aware: add(p.hi - p.lo, out.thread_nodes[p.owner]); break;
            case StencilSim::PagePlacement::serial_first_touch: add(p.hi - p.lo, out.thread_nodes[0]); break;
            case StencilSim::PagePlacement::interleave: {
                // Page i of the array is on with_memory[i mod n]; a part
                // may start or end inside a page only at the array's end.
                const std::uint64_t n = with_memory.size();
                std::vector<std::uint64_t> share(n, 0);
                for (std::uint64_t b = p.lo; b < p.hi;) {
                    const std::uint64_t next = std::min(round_down(b, page) + page, p.hi);
                    share[(b / page) % n] += next - b;
                    b = next;
                }
                for (std::uint64_t k = 0; k < n; ++k)
                    if (share[k] > 0) add(share[k], with_memory[k]);
                break;
            }
            }
            p.region_count = static_cast<std::uint32_t>(g.regions().size()) - p.first_region;
        }
    }

    // Dependencies of each thread on each array (the same every sweep).
    std::vector<std::vector<sim::GraphDep>> reads(2 * s.threads), writes(2 * s.threads);
    for (unsigned t = 0; t < s.threads; ++t) {
        const stencil::Block w = P.work[t];
        if (w.lo == w.hi) continue;
        const std::uint64_t wlo = w.lo * slab_bytes, whi = w.hi * slab_bytes;
        for (unsigned a = 0; a < 2; ++a) {
            for (const Part& p : parts[a]) {
                for (std::uint32_t k = 0; k < p.region_count; ++k) {
                    const std::uint32_t region = p.first_region + k;
                    if (p.lo < read_hi[t] && read_lo[t] < p.hi)
                        reads[2 * t + a].push_back(sim::GraphDep{region, tasks::AccessMode::in});
                    if (p.lo < whi && wlo < p.hi) writes[2 * t + a].push_back(sim::GraphDep{region, tasks::AccessMode::out});
                }
            }
        }
    }

    // Compute per task: interior cells of the work block × points per cell.
    const std::uint64_t row_cells = L.shape.nx - 2 * std::uint64_t{nb.radius_x()};
    const std::uint64_t rows = L.shape.dims == 3 ? L.shape.ny - 2 * std::uint64_t{nb.radius_y()} : 1;
    const double flops_per_cell = static_cast<double>(nb.offsets().size());

    // Who runs where, sweep by sweep.
    const auto workers_n = static_cast<unsigned>(worker_node.size());
    std::uint64_t state = s.seed;
    out.workers.reserve(s.sweeps);
    for (unsigned sweep = 0; sweep < s.sweeps; ++sweep) {
        std::vector<unsigned> w(s.threads);
        if (s.migrating) {
            std::vector<unsigned> perm = permutation(workers_n, state);
            std::copy(perm.begin(), perm.begin() + s.threads, w.begin());
        } else {
            for (unsigned t = 0; t < s.threads; ++t) w[t] = t;
        }
        out.workers.push_back(std::move(w));
    }

    std::size_t dep_total = 0;
    for (unsigned t = 0; t < s.threads; ++t) dep_total += reads[2 * t].size() + writes[2 * t + 1].size();
    g.reserve(std::size_t{s.sweeps} * s.threads, dep_total * s.sweeps, 0);
    std::vector<sim::GraphDep> deps;
    for (unsigned sweep = 0; sweep < s.sweeps; ++sweep) {
        if (sweep > 0) g.barrier();
        const unsigned src = sweep % 2, dst = 1 - src;
        for (unsigned t = 0; t < s.threads; ++t) {
            deps.clear();
            deps.insert(deps.end(), reads[2 * t + src].begin(), reads[2 * t + src].end());
            deps.insert(deps.end(), writes[2 * t + dst].begin(), writes[2 * t + dst].end());
            const double cells = static_cast<double>(P.work[t].size() * row_cells * rows);
            const unsigned worker = out.workers[sweep][t];
            g.add_task(cells * flops_per_cell / s.compute.flops_per_s, deps, static_cast<int>(worker_node[worker]),
                       static_cast<int>(worker));
        }
    }
    g.name = fmt::format("stencil {} {} sweeps={} threads={} {} {} {}", s.shape.to_string(), nb.name(), s.sweeps,
                         s.threads, to_string(s.placement), s.migrating ? "migrating" : "pinned",
                         s.numa_chunks ? "numa-chunks" : "equal-chunks");
    return out;
}

sim::Graph build_stencil(const sim::TimedMachine& m, const std::vector<unsigned>& worker_node, const StencilSim& s) {
    return build_stencil_plan(m, worker_node, s).graph;
}

}  // namespace numaware::apps
