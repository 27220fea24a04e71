// src/sim/graph.cpp — task graphs for the simulator: built directly or
// converted from a graph the real runtime recorded.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include <fmt/format.h>

#include "numaware/error.hpp"
#include "numaware/sim.hpp"

namespace numaware::sim {
namespace {

constexpr std::uint64_t page_bytes = 4096;

}  // namespace

std::uint32_t Graph::add_region(std::uint64_t bytes, int home) {
    if (bytes == 0) throw Error("bytes", "a region must have at least 1 byte, got 0");
    if (home < tasks::unallocated) throw Error("home", fmt::format("must be a node OS index or unallocated (-1), got {}", home));
    if (regions_.size() >= 0xffffffffu) throw Error("regions", "a graph holds at most 2^32 - 1 regions");
    const std::uint64_t span = (bytes + page_bytes - 1) / page_bytes * page_bytes;
    if (span < bytes || next_start_ > ~std::uint64_t{0} - span)
        throw Error("bytes", fmt::format("{} bytes do not fit in the synthetic address space", bytes));
    regions_.push_back(GraphRegion{next_start_, bytes, home, pages_++});
    next_start_ += span;
    return static_cast<std::uint32_t>(regions_.size() - 1);
}

std::uint32_t Graph::add_strided_regions(std::size_t count, std::uint64_t stride, std::uint64_t bytes, int home) {
    if (count == 0) throw Error("count", "at least 1 region, got 0");
    if (bytes == 0) throw Error("bytes", "a region must have at least 1 byte, got 0");
    if (stride < bytes) throw Error("stride", fmt::format("{} bytes is less than a region's {} bytes", stride, bytes));
    if (home < tasks::unallocated) throw Error("home", fmt::format("must be a node OS index or unallocated (-1), got {}", home));
    if (count > (std::uint64_t{1} << 32) / 2 || stride > (std::uint64_t{1} << 40))
        throw Error("count", fmt::format("{} regions {} bytes apart do not fit in the synthetic address space", count, stride));
    const std::uint64_t total = stride * (count - 1) + bytes;
    const std::uint64_t span = (total + page_bytes - 1) / page_bytes * page_bytes;
    const auto first = static_cast<std::uint32_t>(regions_.size());
    const std::uint32_t first_page = pages_;
    for (std::size_t k = 0; k < count; ++k) {
        const std::uint64_t offset = k * stride;
        regions_.push_back(GraphRegion{next_start_ + offset, bytes, home,
                                       first_page + static_cast<std::uint32_t>(offset / page_bytes)});
    }
    pages_ = first_page + static_cast<std::uint32_t>(span / page_bytes);
    next_start_ += span;
    return first;
}

tasks::TaskId Graph::add_task(double compute_s, std::span<const GraphDep> deps, int hint, int worker) {
    if (!std::isfinite(compute_s) || compute_s < 0)
        throw Error("compute_s", fmt::format("must be finite and >= 0 seconds, got {}", compute_s));
    if (hint < -1) throw Error("hint", fmt::format("must be a node OS index or -1, got {}", hint));
    if (worker < -1) throw Error("worker", fmt::format("must be a worker index or -1, got {}", worker));
    const std::size_t first = deps_.size();
    const std::size_t first_pred = preds_.size();
    try {
        for (std::size_t i = 0; i < deps.size(); ++i) {
            const GraphDep& d = deps[i];
            if (d.region >= regions_.size())
                throw Error(fmt::format("deps[{}]", i),
                            fmt::format("region {} does not exist (the graph has {})", d.region, regions_.size()));
            bool merged = false;
            for (std::size_t k = first; k < deps_.size(); ++k) {
                if (deps_[k].region != d.region) continue;
                if (deps_[k].access != d.access)
                    throw Error(fmt::format("deps[{}]", i),
                                fmt::format("region {} is named twice with different access", d.region));
                merged = true;
            }
            if (!merged) deps_.push_back(d);
        }
        if (tasks_.size() >= no_task) throw Error("tasks", "a graph holds at most 2^32 - 1 tasks");
        link_preds(first);
    } catch (...) {
        deps_.resize(first);
        preds_.resize(first_pred);
        throw;
    }
    GraphTask t;
    t.first_pred = static_cast<std::uint32_t>(first_pred);
    t.pred_count = static_cast<std::uint32_t>(preds_.size() - first_pred);
    t.compute_s = compute_s;
    t.hint = hint;
    t.worker = worker;
    t.after_barrier = pending_barrier_;
    t.first_dep = static_cast<std::uint32_t>(first);
    t.dep_count = static_cast<std::uint32_t>(deps_.size() - first);
    const auto me = static_cast<std::uint32_t>(tasks_.size());
    tasks_.push_back(t);
    last_edge_from_.push_back(0xffffffffu);   // room reserved by link_preds()
    successor_counts_.push_back(0);            // likewise
    for (std::size_t k = first_pred; k < preds_.size(); ++k) ++successor_counts_[preds_[k].from];
    // Committed: the regions' last writers and readers move on.
    for (std::size_t k = first; k < deps_.size(); ++k) {
        RegionUse& u = uses_[deps_[k].region];
        if (deps_[k].access == tasks::AccessMode::in) {
            u.readers.push_back(me);   // room reserved by link_preds()
        } else {
            u.readers.clear();
            u.writer = me;
        }
    }
    pending_barrier_ = false;
    compute_s_ += compute_s;
    for (std::size_t k = first; k < deps_.size(); ++k) dep_bytes_ += regions_[deps_[k].region].bytes;
    max_worker_ = std::max(max_worker_, worker);
    return tasks_.size() - 1;
}

// The predecessors of the task whose merged dependencies start at
// deps_[first], appended to preds_ (preds_of()). Changes nothing else but
// reserves room in each read region's reader list, so the commit that
// follows cannot fail.
void Graph::link_preds(std::size_t first) {
    if (uses_.size() < regions_.size()) uses_.resize(regions_.size());
    const std::size_t first_pred = preds_.size();
    const auto link = [&](std::uint32_t from, std::uint64_t bytes) {
        const std::uint32_t at = last_edge_from_[from];
        if (at >= first_pred && at < preds_.size() && preds_[at].from == from) {   // this task's edge from it: merge
            preds_[at].bytes += bytes;
            return;
        }
        last_edge_from_[from] = static_cast<std::uint32_t>(preds_.size());
        preds_.push_back(tasks::Edge{from, bytes});
    };
    for (std::size_t k = first; k < deps_.size(); ++k) {
        RegionUse& u = uses_[deps_[k].region];
        const std::uint64_t bytes = regions_[deps_[k].region].bytes;
        if (deps_[k].access == tasks::AccessMode::in) {
            if (u.writer != no_task) link(u.writer, bytes);
            if (u.readers.size() == u.readers.capacity()) u.readers.reserve(std::max<std::size_t>(4, 2 * u.readers.size()));
        } else {
            for (const std::uint32_t r : u.readers) link(r, bytes);
            if (u.readers.empty() && u.writer != no_task) link(u.writer, bytes);
        }
    }
    if (preds_.size() >= 0xffffffffu) throw Error("deps", "a graph holds at most 2^32 - 2 task-to-task edges");
    if (last_edge_from_.size() == last_edge_from_.capacity())
        last_edge_from_.reserve(std::max<std::size_t>(64, 2 * last_edge_from_.size()));   // for the commit
    if (successor_counts_.size() == successor_counts_.capacity())
        successor_counts_.reserve(std::max<std::size_t>(64, 2 * successor_counts_.size()));
}

void Graph::barrier() {
    if (!tasks_.empty()) pending_barrier_ = true;
}

void Graph::set_home(std::uint32_t region, int home) {
    if (region >= regions_.size())
        throw Error("region", fmt::format("region {} does not exist (the graph has {})", region, regions_.size()));
    if (home < tasks::unallocated) throw Error("home", fmt::format("must be a node OS index or unallocated (-1), got {}", home));
    // Every region of the page group: they share one home.
    const std::uint32_t page = regions_[region].page;
    for (std::size_t r = region; r < regions_.size() && regions_[r].page == page; ++r) regions_[r].home = home;
    for (std::size_t r = region; r-- > 0 && regions_[r].page == page;) regions_[r].home = home;
}

void Graph::reserve(std::size_t tasks, std::size_t deps, std::size_t regions) {
    tasks_.reserve(tasks);
    deps_.reserve(deps);
    preds_.reserve(deps);   // about one edge per dependency in the applications
    last_edge_from_.reserve(tasks);
    successor_counts_.reserve(tasks);
    regions_.reserve(regions);
}

std::size_t initial_part(const Graph& graph, std::size_t cap) {
    // Steps: maximal runs of tasks, in creation order, in which no region is
    // written twice. The first run is the initialisation (with whatever the
    // program writes for the first time right after it, such as the second
    // buffer of a double-buffered sweep); the second is the first step.
    std::vector<std::uint32_t> written_in_step(graph.regions().size(), 0);   // step + 1 of the last write
    std::uint32_t step = 0;
    std::size_t end = 0;
    for (; end < graph.size(); ++end) {
        const GraphTask& t = graph.tasks()[end];
        bool rewrites = false;
        for (const GraphDep& d : graph.deps_of(t))
            rewrites |= d.access != tasks::AccessMode::in && written_in_step[d.region] == step + 1;
        if (rewrites && ++step == initial_part_steps) break;
        for (const GraphDep& d : graph.deps_of(t))
            if (d.access != tasks::AccessMode::in) written_in_step[d.region] = step + 1;
    }
    return std::min(end, cap);
}

Graph Graph::from_recorded(const tasks::TaskGraph& recorded) {
    // Regions by address; a range must be identical to, or disjoint from,
    // every other (the runtime enforced it when it ran).
    std::map<std::uint64_t, std::uint64_t> ranges;   // start -> bytes
    for (std::size_t i = 0; i < recorded.tasks.size(); ++i) {
        const auto& deps = recorded.tasks[i].deps;
        for (std::size_t j = 0; j < deps.size(); ++j) {
            const auto& d = deps[j];
            const std::string field = fmt::format("tasks[{}].deps[{}]", i, j);
            if (d.bytes == 0) throw Error(field, "a dependency must have at least 1 byte, got 0");
            if (d.region > ~std::uint64_t{0} - d.bytes) throw Error(field, "range wraps the address space");
            auto [it, fresh] = ranges.emplace(d.region, d.bytes);
            if (!fresh && it->second != d.bytes)
                throw Error(field, fmt::format("range at {:#x} has {} bytes here and {} elsewhere", d.region, d.bytes,
                                               it->second));
        }
    }
    std::uint64_t end = 0;
    for (const auto& [start, bytes] : ranges) {
        if (start < end) throw Error("tasks", fmt::format("ranges overlap at address {:#x}", start));
        end = start + bytes;
    }
    Graph g;
    std::map<std::uint64_t, std::uint32_t> index;
    // Ranges on one page share its home, as the kernel places pages.
    std::uint64_t last_page = ~std::uint64_t{0};
    for (const auto& [start, bytes] : ranges) {
        const std::uint32_t r = g.add_region(bytes);
        const std::uint64_t page = start / page_bytes;
        if (page == last_page) {
            g.regions_[r].page = g.regions_[r - 1].page;
            --g.pages_;
        }
        last_page = (start + bytes - 1) / page_bytes;
        index.emplace(start, r);
    }
    std::vector<GraphDep> deps;
    for (std::size_t i = 0; i < recorded.tasks.size(); ++i) {
        const tasks::RecordedTask& t = recorded.tasks[i];
        deps.clear();
        for (const auto& d : t.deps) deps.push_back(GraphDep{index.at(d.region), d.access});
        g.add_task(std::max(0.0, t.seconds), deps, t.hint);
    }
    g.name = fmt::format("recorded graph ({} tasks)", recorded.tasks.size());
    g.initial_tasks = initial_part(g);
    return g;
}

}  // namespace numaware::sim
