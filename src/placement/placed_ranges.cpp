// placement/placed_ranges.cpp — remembered placements (see placed_ranges.hpp).
#include "placement/placed_ranges.hpp"

#include <algorithm>
#include <atomic>
#include <iterator>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "numaware/placement.hpp"
#include "os/os.hpp"

namespace numaware {
namespace placement_detail {

namespace {

struct Run {
    std::uintptr_t start;   // address of the run's first byte
    unsigned node;
};
struct Placed {
    std::uintptr_t end = 0;
    std::vector<Run> runs;   // ascending by start; the first starts at the range's start; a run ends where the next starts
};

struct Registry {
    std::shared_mutex mutex;
    std::map<std::uintptr_t, Placed> ranges;   // by start, disjoint; its size is remembered_ranges
};

Registry& registry() {
    static Registry* r = new Registry;   // never destroyed: usable from static destructors
    return *r;
}

// The part of `p` (starting at `start`) inside [lo, hi), as a range of its own.
Placed cut(std::uintptr_t start, const Placed& p, std::uintptr_t lo, std::uintptr_t hi, std::uintptr_t& new_start) {
    new_start = std::max(start, lo);
    Placed out;
    out.end = std::min(p.end, hi);
    for (std::size_t k = 0; k < p.runs.size(); ++k) {
        const std::uintptr_t rs = p.runs[k].start;
        const std::uintptr_t re = k + 1 < p.runs.size() ? p.runs[k + 1].start : p.end;
        if (re <= new_start || rs >= out.end) continue;
        out.runs.push_back(Run{std::max(rs, new_start), p.runs[k].node});
    }
    return out;
}

// Cuts [lo, hi) out of every known range; the caller holds the lock.
void erase_locked(Registry& reg, std::uintptr_t lo, std::uintptr_t hi) {
    auto it = reg.ranges.upper_bound(lo);
    if (it != reg.ranges.begin()) --it;
    while (it != reg.ranges.end() && it->first < hi) {
        if (it->second.end <= lo) {
            ++it;
            continue;
        }
        const std::uintptr_t s = it->first;
        const Placed old = std::move(it->second);
        it = reg.ranges.erase(it);
        std::uintptr_t part_start = 0;
        if (s < lo) {
            Placed left = cut(s, old, s, lo, part_start);
            reg.ranges.emplace(part_start, std::move(left));
        }
        if (old.end > hi) {
            Placed right = cut(s, old, hi, old.end, part_start);
            it = reg.ranges.emplace(part_start, std::move(right)).first;
            ++it;
        }
    }
}

}  // namespace

void remember_placement(std::uintptr_t start, std::size_t page_size, std::span<const int> page_nodes) {
    if (page_nodes.empty() || page_size == 0) return;
    Placed p;
    p.end = start + page_nodes.size() * page_size;
    for (std::size_t i = 0; i < page_nodes.size(); ++i) {
        const auto node = static_cast<unsigned>(page_nodes[i]);
        if (p.runs.empty() || p.runs.back().node != node) p.runs.push_back(Run{start + i * page_size, node});
    }
    Registry& reg = registry();
    std::unique_lock lock(reg.mutex);
    erase_locked(reg, start, p.end);
    reg.ranges.emplace(start, std::move(p));
    remembered_ranges.store(reg.ranges.size(), std::memory_order_relaxed);
}

void forget_placement(std::uintptr_t start, std::size_t bytes) {
    if (bytes == 0) return;
    const std::uintptr_t end = bytes > UINTPTR_MAX - start ? UINTPTR_MAX : start + bytes;
    if (!anything_placed()) return;
    Registry& reg = registry();
    std::unique_lock lock(reg.mutex);
    erase_locked(reg, start, end);
    remembered_ranges.store(reg.ranges.size(), std::memory_order_relaxed);
}

std::optional<std::vector<std::pair<unsigned, std::size_t>>> placed_bytes(std::uintptr_t start, std::size_t bytes) {
    if (bytes == 0 || bytes > UINTPTR_MAX - start) return std::nullopt;
    const std::uintptr_t end = start + bytes;
    if (!anything_placed()) return std::nullopt;
    Registry& reg = registry();
    std::shared_lock lock(reg.mutex);
    auto it = reg.ranges.upper_bound(start);
    if (it == reg.ranges.begin()) return std::nullopt;
    --it;
    // Remembered ranges that touch end to end cover [start, end) together.
    std::vector<std::pair<unsigned, std::size_t>> out;
    std::uintptr_t at = start;
    while (at < end) {
        if (it == reg.ranges.end() || it->first > at || it->second.end <= at) return std::nullopt;
        const Placed& p = it->second;
        auto r = std::upper_bound(p.runs.begin(), p.runs.end(), at,
                                  [](std::uintptr_t a, const Run& run) { return a < run.start; });
        --r;   // the run holding `at` (the first run starts at the range's start <= at)
        for (; r != p.runs.end() && at < end; ++r) {
            const std::uintptr_t re = std::next(r) != p.runs.end() ? std::next(r)->start : p.end;
            const std::uintptr_t hi = std::min(re, end);
            auto slot = std::lower_bound(out.begin(), out.end(), r->node,
                                         [](const std::pair<unsigned, std::size_t>& x, unsigned n) { return x.first < n; });
            if (slot == out.end() || slot->first != r->node) slot = out.insert(slot, {r->node, 0});
            slot->second += hi - at;
            at = hi;
        }
        ++it;
    }
    return out;
}

}  // namespace placement_detail

void forget_placement(const void* addr, std::size_t bytes) {
    placement_detail::forget_placement(reinterpret_cast<std::uintptr_t>(addr), bytes);
}

// A remembered range still holds its pages where they were only while it
// keeps the policy apply() gave it. numaware cannot see munmap, but memory
// mapped again at the same address comes back under the default policy: a
// default (or unreadable) policy at either end of the query means the
// record is stale, and it is forgotten.
std::optional<std::vector<std::pair<unsigned, std::size_t>>> placed_bytes(const void* addr, std::size_t bytes) {
    const auto start = reinterpret_cast<std::uintptr_t>(addr);
    auto found = placement_detail::placed_bytes(start, bytes);
    if (!found) return found;
    os::Os& os = os::linux_os();
    for (const std::uintptr_t at : {start, start + bytes - 1}) {
        os::PolicyQuery q;
        if (os.get_mempolicy(reinterpret_cast<const void*>(at), q) != 0 || q.mode == MemoryPolicyMode::default_) {
            placement_detail::forget_placement(start, bytes);
            return std::nullopt;
        }
    }
    return found;
}

}  // namespace numaware
