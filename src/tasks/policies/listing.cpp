// src/tasks/policies/listing.cpp — queue_listings(): when a worker's search
// (Policy::steal_order) first lists each queue.
#include <unordered_map>
#include <vector>

#include "numaware/task_policy.hpp"

namespace numaware::tasks {

namespace {

std::uint64_t key_of(const QueueRef& q) { return std::uint64_t{static_cast<std::uint8_t>(q.kind)} << 32 | q.index; }

}  // namespace

std::vector<QueueListing> queue_listings(const Policy& policy, unsigned worker) {
    // The first round of every queue the search ever lists. A policy only
    // widens its search, so the rounds where it widens are found by
    // bisection, one per widening (a few rings of nodes), not one per queue.
    std::unordered_map<std::uint64_t, std::uint64_t> first;
    std::vector<QueueRef> round0, deep, order;
    policy.steal_order(worker, 0, round0);
    for (const QueueRef& q : round0) first.emplace(key_of(q), 0);
    policy.steal_order(worker, max_search_round, deep);
    const auto unlisted = [&first](const std::vector<QueueRef>& v) {
        for (const QueueRef& q : v)
            if (!first.contains(key_of(q))) return true;
        return false;
    };
    std::uint64_t from = 1;
    while (unlisted(deep)) {
        std::uint64_t lo = from, hi = max_search_round;   // the next widening is in [lo, hi]
        while (lo < hi) {
            const std::uint64_t mid = lo + (hi - lo) / 2;
            policy.steal_order(worker, mid, order);
            if (unlisted(order))
                hi = mid;
            else
                lo = mid + 1;
        }
        policy.steal_order(worker, lo, order);
        for (const QueueRef& q : order) first.emplace(key_of(q), lo);
        from = lo + 1;
    }
    // In search order, each once: round 0's order, then the widest one's.
    std::vector<QueueListing> out;
    out.reserve(first.size());
    for (const std::vector<QueueRef>* v : {&round0, &deep})
        for (const QueueRef& q : *v) {
            const auto it = first.find(key_of(q));
            if (it == first.end()) continue;   // emitted already
            out.push_back({q, it->second});
            first.erase(it);
        }
    return out;
}

}  // namespace numaware::tasks
