// placement/plan.cpp — policies as pure functions: (policy, range, machine,
// options) -> page-to-node plan. Nothing here touches the system.
#include <algorithm>
#include <limits>
#include <string>

#include "numaware/error.hpp"
#include "numaware/placement.hpp"

namespace numaware {

using Kind = PlacementPolicy::Kind;

namespace {

std::string size_text(std::size_t bytes) { return format_size(bytes); }

// Node the kernel's zonelist picks first for a fault on `from` when the
// allowed nodes are `set`: the nearest by SLIT. Equal distances are broken
// by the kernel with penalties we do not model (CPU-less nodes first, node
// load), so a tie yields -1, "kernel decides".
int nearest_unique(const Machine& m, unsigned from, const NodeSet& set) {
    if (set.contains(from) && m.node(from).holds_pages()) return static_cast<int>(from);
    unsigned best = std::numeric_limits<unsigned>::max();
    int best_node = -1;
    bool tie = false;
    for (unsigned node : set.to_vector()) {
        if (!m.node(node).holds_pages()) continue;
        const unsigned d = m.distance(from, node);
        if (d < best) {
            best = d;
            best_node = static_cast<int>(node);
            tie = false;
        } else if (d == best) {
            tie = true;
        }
    }
    return tie ? -1 : best_node;
}

// The node a local/remote policy is relative to.
unsigned anchor_node(const PlacementPolicy& p, const Machine& m, const PlanOptions& o,
                     const std::string& field) {
    switch (p.anchor) {
    case Anchor::node: return p.anchor_index;
    case Anchor::cpu: return m.node_of_cpu(p.anchor_index);
    case Anchor::calling_thread:
        if (!o.thread_cpu)
            throw Error(field, "placement relative to the calling thread needs its CPU "
                               "(PlanOptions::thread_cpu), which was not given");
        return m.node_of_cpu(*o.thread_cpu);
    }
    return 0;
}

unsigned remote_node(const Machine& m, unsigned from, const std::string& field) {
    unsigned best = std::numeric_limits<unsigned>::max();
    int best_node = -1;
    for (const Node& n : m.nodes) {
        if (n.os_index == from || !n.holds_pages()) continue;
        const unsigned d = m.distance(from, n.os_index);
        if (d < best) {   // ascending OS order: ties keep the lower index
            best = d;
            best_node = static_cast<int>(n.os_index);
        }
    }
    if (best_node < 0)
        throw Error(field, "no node other than node " + std::to_string(from) +
                               " has memory, so nothing is remote to it");
    return static_cast<unsigned>(best_node);
}

// The kernel's weighted_interleave_nid(): index modulo the total weight,
// then walk the nodes in ascending order subtracting weights.
unsigned weighted_node(const std::vector<std::pair<unsigned, unsigned>>& sorted_weights,
                       unsigned total, std::uintptr_t index) {
    unsigned target = static_cast<unsigned>(index % total);
    for (const auto& [node, weight] : sorted_weights) {
        if (target < weight) return node;
        target -= weight;
    }
    return sorted_weights.back().first;
}

}  // namespace

PlacementPlan plan(const PlacementPolicy& policy, const void* addr, std::size_t bytes,
                   const Machine& machine, const PlanOptions& o) {
    const std::string field = "policy '" + policy.to_string() + "'";
    if (o.page_size == 0 || (o.page_size & (o.page_size - 1)) != 0)
        throw Error("page_size", "page size " + std::to_string(o.page_size) + " is not a power of two");
    if (o.huge_page_size < o.page_size || o.huge_page_size % o.page_size != 0)
        throw Error("huge_page_size", "huge page size " + std::to_string(o.huge_page_size) +
                                          " is not a multiple of the page size " + std::to_string(o.page_size));
    const auto start = reinterpret_cast<std::uintptr_t>(addr);
    if (start % o.page_size != 0)
        throw Error("addr", "address " + std::to_string(start) + " is not aligned to the page size " +
                                std::to_string(o.page_size));
    if (bytes == 0) throw Error("bytes", "the range is empty (0 bytes)");
    validate_policy(policy, machine, field);

    PlacementPlan p;
    p.policy = policy;
    p.start = start;
    p.bytes = bytes;
    p.page_size = o.page_size;
    const std::size_t pages = (bytes + o.page_size - 1) / o.page_size;
    p.page_nodes.assign(pages, -1);
    p.unit_bytes = o.page_size;

    const std::uintptr_t first_vpn = start / o.page_size;
    const std::size_t pages_per_huge = o.huge_page_size / o.page_size;
    const bool huge = policy.fine_grained() && policy.kind != Kind::page_map &&
                      o.fine_grained == HugePageHandling::huge_units;
    const std::string page_text = size_text(o.page_size);
    const std::string huge_text = size_text(o.huge_page_size);

    auto fill = [&](int node) { std::fill(p.page_nodes.begin(), p.page_nodes.end(), node); };
    auto toucher_node = [&]() -> std::optional<unsigned> {
        if (!o.thread_cpu) return std::nullopt;
        return machine.node_of_cpu(*o.thread_cpu);
    };
    // Single-target and toucher-decided plans keep huge pages: a huge page
    // lands whole on the one node every one of its small pages would get.
    auto coarse = [&](const std::string& why) {
        p.granularity = page_text + " pages; huge pages allowed (" + why + ")";
    };

    switch (policy.kind) {
    case Kind::first_touch: {
        p.allowed = machine.memory_nodes();
        p.mode = MemoryPolicyMode::default_;
        if (auto t = toucher_node(); t && machine.node(*t).holds_pages()) fill(static_cast<int>(*t));
        coarse("each page goes to the node of the CPU that touches it first");
        break;
    }
    case Kind::bind:
    case Kind::preferred_many: {
        p.allowed = policy.nodes;
        p.mode = policy.kind == Kind::bind ? MemoryPolicyMode::bind : MemoryPolicyMode::preferred_many;
        p.mode_nodes = policy.nodes;
        if (policy.nodes.size() == 1) {
            fill(static_cast<int>(policy.nodes.to_vector().front()));
            coarse("one target node");
        } else {
            if (auto t = toucher_node()) fill(nearest_unique(machine, *t, policy.nodes));
            coarse("the kernel fills the nearest node of the set first");
        }
        break;
    }
    case Kind::preferred: {
        const unsigned node = policy.nodes.to_vector().front();
        p.allowed = machine.memory_nodes();
        p.mode = MemoryPolicyMode::preferred;
        p.mode_nodes = policy.nodes;
        fill(static_cast<int>(node));
        coarse("one target node");
        break;
    }
    case Kind::local:
    case Kind::remote: {
        const unsigned from = anchor_node(policy, machine, o, field);
        if (policy.kind == Kind::local && !machine.node(from).has_cpus())
            throw Error(field, "local placement for a thread on node " + std::to_string(from) +
                                   " is impossible: node " + std::to_string(from) + " has no CPUs");
        const unsigned target = policy.kind == Kind::local ? from : remote_node(machine, from, field);
        machine.check_placement_target(target, field);
        // Bound, not MPOL_LOCAL: the pages belong to that thread's node
        // whichever thread happens to touch them first.
        p.allowed = NodeSet{target};
        p.mode = MemoryPolicyMode::bind;
        p.mode_nodes = NodeSet{target};
        fill(static_cast<int>(target));
        coarse("one target node");
        break;
    }
    case Kind::interleave: {
        const auto set = policy.nodes.to_vector();
        p.allowed = policy.nodes;
        if (!huge) {
            // The kernel's interleave index for anonymous memory is the
            // virtual page number (vm_pgoff + offset in the VMA), taken
            // modulo 2^32 before Linux 6.7.
            for (std::size_t i = 0; i < pages; ++i) {
                const std::uintptr_t index = first_vpn + i;
                p.page_nodes[i] = static_cast<int>(
                    set[(o.interleave_index_32bit ? static_cast<std::uint32_t>(index) : index) % set.size()]);
            }
            p.mode = MemoryPolicyMode::interleave;
            p.mode_nodes = policy.nodes;
        } else {
            // For a huge page the kernel's index is the virtual huge page number.
            for (std::size_t i = 0; i < pages; ++i)
                p.page_nodes[i] = static_cast<int>(set[((first_vpn + i) / pages_per_huge) % set.size()]);
        }
        break;
    }
    case Kind::weighted_interleave: {
        auto sorted = policy.weights;
        std::sort(sorted.begin(), sorted.end());
        unsigned total = 0;
        for (const auto& w : sorted) total += w.second;
        p.allowed = policy.nodes;
        for (std::size_t i = 0; i < pages; ++i) {
            const std::uintptr_t index = huge ? (first_vpn + i) / pages_per_huge : first_vpn + i;
            p.page_nodes[i] = static_cast<int>(weighted_node(sorted, total, index));
        }
        p.node_weights = sorted;
        if (!huge) {
            p.mode = MemoryPolicyMode::weighted_interleave;
            p.mode_nodes = policy.nodes;
        }
        break;
    }
    case Kind::block: {
        unsigned long long total = 0;
        for (const auto& w : policy.weights) total += w.second;
        p.allowed = policy.nodes;
        unsigned long long cumulative = 0;
        std::size_t begin = 0;
        for (const auto& [node, weight] : policy.weights) {
            cumulative += weight;
            std::size_t end = static_cast<std::size_t>(pages * cumulative / total);
            if (huge && cumulative != total) {
                // Move the boundary down to a huge-page-aligned address.
                const std::uintptr_t vpn = first_vpn + end;
                const std::uintptr_t aligned = vpn - vpn % pages_per_huge;
                end = aligned < first_vpn ? 0 : static_cast<std::size_t>(aligned - first_vpn);
                end = std::max(end, begin);
            }
            for (std::size_t i = begin; i < end; ++i) p.page_nodes[i] = static_cast<int>(node);
            begin = end;
        }
        break;
    }
    case Kind::cyclic: {
        const auto set = policy.nodes.to_vector();
        p.allowed = policy.nodes;
        if (!huge) {
            for (std::size_t i = 0; i < pages; ++i)
                p.page_nodes[i] = static_cast<int>(set[(i / policy.unit_pages) % set.size()]);
        } else {
            // Units rounded up to whole huge pages, counted from the
            // huge-page boundary at or below the range start.
            const std::size_t unit = (policy.unit_pages + pages_per_huge - 1) / pages_per_huge * pages_per_huge;
            const std::uintptr_t base = first_vpn - first_vpn % pages_per_huge;
            for (std::size_t i = 0; i < pages; ++i)
                p.page_nodes[i] = static_cast<int>(set[((first_vpn + i - base) / unit) % set.size()]);
        }
        break;
    }
    case Kind::page_map: {
        if (policy.map.size() != pages)
            throw Error(field, "the page map has " + std::to_string(policy.map.size()) +
                                   " entries but the range has " + std::to_string(pages) + " pages");
        p.allowed = policy.nodes;
        for (std::size_t i = 0; i < pages; ++i) p.page_nodes[i] = static_cast<int>(policy.map[i]);
        break;
    }
    }

    // Runs of equal planned nodes: what per-run mbind needs.
    for (std::size_t i = 0; i < pages; ++i) {
        const int node = p.page_nodes[i];
        if (node < 0) continue;
        if (!p.runs.empty() && p.runs.back().node == static_cast<unsigned>(node) &&
            p.runs.back().first_page + p.runs.back().pages == i)
            ++p.runs.back().pages;
        else
            p.runs.push_back({i, 1, static_cast<unsigned>(node)});
    }
    for (int node : p.page_nodes) {
        if (node < 0)
            ++p.undecided_pages;
        else
            ++p.intent[static_cast<unsigned>(node)];
    }

    if (policy.fine_grained()) {
        const bool one_policy = !huge && (policy.kind == Kind::interleave || policy.kind == Kind::weighted_interleave);
        if (one_policy)
            p.realisation = Realisation::range_policy;
        else
            p.realisation = p.runs.size() <= o.max_mbind_runs ? Realisation::per_run_mbind : Realisation::move_pages;
        if (huge) {
            p.unit_bytes = policy.kind == Kind::cyclic
                               ? (policy.unit_pages + pages_per_huge - 1) / pages_per_huge * o.huge_page_size
                               : o.huge_page_size;
            p.no_huge_pages = false;
            p.granularity = size_text(p.unit_bytes) + " units aligned to " + huge_text +
                            " huge pages; huge pages allowed";
        } else {
            p.unit_bytes = o.page_size * (policy.kind == Kind::cyclic ? policy.unit_pages : 1);
            p.no_huge_pages = true;
            p.granularity = page_text + " pages; MADV_NOHUGEPAGE asked (a " + huge_text +
                            " huge page would land whole on one node)";
        }
    }
    return p;
}

std::string PlacementPlan::realisation_text() const {
    switch (realisation) {
    case Realisation::range_policy:
        return "mbind(" + to_string(mode) + (mode_nodes.empty() ? "" : ", " + mode_nodes.to_string()) +
               ") over the range";
    case Realisation::per_run_mbind:
        return "mbind(bind) per run, " + std::to_string(runs.size()) + " runs";
    case Realisation::move_pages:
        return "populate, then move_pages page by page (" + std::to_string(runs.size()) + " runs)";
    }
    return "?";
}

}  // namespace numaware
