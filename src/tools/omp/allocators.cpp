// tools/omp/allocators.cpp — OpenMP allocators as data (allocators.hpp).
#include "tools/omp/allocators.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace numaware::omp {

namespace {

// omp.h's numbers.
enum Key : std::uintptr_t { sync_hint = 1, alignment = 2, access = 3, pool_size = 4, fallback = 5, fb_data = 6,
                            pinned = 7, partition = 8 };
enum Value : std::uintptr_t { v_false = 0, v_true = 1, contended = 3, uncontended = 4, serialized = 5,
                              private_ = 6, all = 7, thread = 8, pteam = 9, cgroup = 10, default_mem_fb = 11,
                              null_fb = 12, abort_fb = 13, allocator_fb = 14, environment = 15, nearest = 16,
                              blocked = 17, interleaved = 18 };
constexpr std::uintptr_t v_default = ~std::uintptr_t{0};

bool fail(std::string* why, std::string text) {
    if (why != nullptr) *why = std::move(text);
    return false;
}

bool apply_trait(AllocatorSpec& s, const AllocTrait& t, bool& has_fb_data, std::string* why) {
    const std::uintptr_t v = t.value;
    switch (t.key) {
    case sync_hint:
        if (v == v_default || v == contended || v == uncontended || v == serialized || v == private_) return true;
        return fail(why, fmt::format("sync_hint value {} is not contended, uncontended, serialized or private", v));
    case alignment:
        if (v == v_default) return true;
        if (v == 0 || (v & (v - 1)) != 0) return fail(why, fmt::format("alignment {} is not a power of two", v));
        s.alignment = v;
        return true;
    case access:
        if (v == v_default || v == all || v == cgroup || v == pteam || v == thread) return true;
        return fail(why, fmt::format("access value {} is not all, cgroup, pteam or thread", v));
    case pool_size:
        s.pool_size = v == v_default ? 0 : v;
        return true;
    case fallback:
        if (v == v_default || v == default_mem_fb) s.fallback = Fallback::default_mem;
        else if (v == null_fb) s.fallback = Fallback::null;
        else if (v == abort_fb) s.fallback = Fallback::abort;
        else if (v == allocator_fb) s.fallback = Fallback::allocator;
        else return fail(why, fmt::format("fallback value {} is not default_mem_fb, null_fb, abort_fb or allocator_fb", v));
        return true;
    case fb_data:
        s.fb_data = v;
        has_fb_data = true;
        return true;
    case pinned:
        if (v == v_default || v == v_false) s.pinned = false;
        else if (v == v_true) s.pinned = true;
        else return fail(why, fmt::format("pinned value {} is not true or false", v));
        return true;
    case partition:
        if (v == v_default || v == environment) s.partition = Partition::environment;
        else if (v == nearest) s.partition = Partition::nearest;
        else if (v == blocked) s.partition = Partition::blocked;
        else if (v == interleaved) s.partition = Partition::interleaved;
        else return fail(why, fmt::format("partition value {} is not environment, nearest, blocked or interleaved", v));
        return true;
    default: return fail(why, fmt::format("trait key {} is not one of OpenMP 5.0's (1 to 8)", t.key));
    }
}

bool hbm(const Node& n) { return n.kind == "HBM" || n.kind == "MCDRAM"; }

}  // namespace

std::optional<AllocatorSpec> read_allocator(std::uintptr_t space, std::span<const AllocTrait> traits,
                                            std::string* why) {
    if (space > static_cast<std::uintptr_t>(MemSpace::low_lat)) {
        fail(why, fmt::format("memory space {} is not one of OpenMP 5.0's (0 to 4)", space));
        return std::nullopt;
    }
    AllocatorSpec s;
    s.space = static_cast<MemSpace>(space);
    bool has_fb_data = false;
    for (const AllocTrait& t : traits)
        if (!apply_trait(s, t, has_fb_data, why)) return std::nullopt;
    if (s.fallback == Fallback::allocator && (!has_fb_data || s.fb_data == 0)) {
        fail(why, "fallback allocator_fb needs an fb_data allocator");
        return std::nullopt;
    }
    return s;
}

std::optional<AllocatorSpec> predefined_allocator(std::uintptr_t handle) {
    AllocatorSpec s;
    switch (handle) {
    case 1: s.space = MemSpace::default_; break;    // omp_default_mem_alloc
    case 2: s.space = MemSpace::large_cap; break;   // omp_large_cap_mem_alloc
    case 3: s.space = MemSpace::const_; break;      // omp_const_mem_alloc
    case 4: s.space = MemSpace::high_bw; break;     // omp_high_bw_mem_alloc
    case 5:                                         // omp_low_lat_mem_alloc
    case 6:                                         // omp_cgroup_mem_alloc
    case 7:                                         // omp_pteam_mem_alloc
    case 8: s.space = MemSpace::low_lat; break;     // omp_thread_mem_alloc
    default: return std::nullopt;
    }
    return s;
}

std::vector<unsigned> memspace_nodes(const Machine& machine, MemSpace space) {
    std::vector<unsigned> out;
    int lowest = 0, highest = 0;
    bool any = false;
    for (const Node& n : machine.nodes) {
        if (!n.holds_pages()) continue;
        lowest = any ? std::min(lowest, n.tier) : n.tier;
        highest = any ? std::max(highest, n.tier) : n.tier;
        any = true;
    }
    for (const Node& n : machine.nodes) {
        if (!n.holds_pages()) continue;
        switch (space) {
        case MemSpace::high_bw:
            if (hbm(n)) out.push_back(n.os_index);
            break;
        case MemSpace::large_cap:
            if (n.tier == (highest > lowest ? highest : lowest)) out.push_back(n.os_index);
            break;
        default:
            if (n.tier == lowest && !hbm(n)) out.push_back(n.os_index);
            break;
        }
    }
    // A machine of HBM nodes only (all memory is high-bandwidth): the default
    // space is that memory.
    if (out.empty() && space != MemSpace::high_bw)
        for (const Node& n : machine.nodes)
            if (n.memory_bytes != 0 && n.tier == lowest) out.push_back(n.os_index);
    std::sort(out.begin(), out.end());
    return out;
}

AllocPlace place_allocation(const AllocatorSpec& spec, const Machine& machine, int thread_node) {
    const std::vector<unsigned> nodes = memspace_nodes(machine, spec.space);
    AllocPlace p;
    if (nodes.empty()) {
        p.kind = AllocPlace::Kind::none;
        return p;
    }
    const auto nearest = [&] {
        if (thread_node < 0) return nodes.front();
        const auto from = static_cast<unsigned>(thread_node);
        unsigned best = nodes.front();
        for (unsigned n : nodes)
            if (machine.distance(from, n) < machine.distance(from, best)) best = n;
        return best;
    };
    switch (spec.partition) {
    case Partition::environment:
        if (spec.space == MemSpace::default_ || spec.space == MemSpace::const_ || spec.space == MemSpace::low_lat) {
            p.kind = AllocPlace::Kind::environment;
            return p;
        }
        [[fallthrough]];
    case Partition::nearest:
        p.kind = AllocPlace::Kind::node;
        p.node = nearest();
        return p;
    case Partition::interleaved:
    case Partition::blocked:
        if (nodes.size() == 1) {
            p.kind = AllocPlace::Kind::node;
            p.node = nodes.front();
            return p;
        }
        p.kind = spec.partition == Partition::interleaved ? AllocPlace::Kind::interleave : AllocPlace::Kind::block;
        p.nodes = nodes;
        return p;
    }
    return p;
}

}  // namespace numaware::omp
