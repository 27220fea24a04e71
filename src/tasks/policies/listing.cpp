// src/tasks/policies/listing.cpp — queue_listings(): when a worker's search
// (Policy::steal_order) first lists each queue.
#include <algorithm>
#include <vector>

#include "numaware/task_policy.hpp"

namespace numaware::tasks {

std::vector<QueueListing> queue_listings(const Policy& policy, unsigned worker) {
    std::vector<QueueListing> out;
    std::vector<QueueRef> order;
    const auto listed = [&out](const QueueRef& q) {
        return std::any_of(out.begin(), out.end(), [&q](const QueueListing& l) { return l.queue == q; });
    };
    policy.steal_order(worker, 0, order);
    for (const QueueRef& q : order)
        if (!listed(q)) out.push_back({q, 0});
    std::vector<QueueRef> deep;
    policy.steal_order(worker, max_search_round, deep);
    for (const QueueRef& q : deep) {
        if (listed(q)) continue;
        std::uint64_t lo = 1, hi = max_search_round;   // listed at hi, not at lo - 1
        while (lo < hi) {
            const std::uint64_t mid = lo + (hi - lo) / 2;
            policy.steal_order(worker, mid, order);
            if (std::find(order.begin(), order.end(), q) != order.end())
                hi = mid;
            else
                lo = mid + 1;
        }
        out.push_back({q, lo});
    }
    return out;
}

}  // namespace numaware::tasks
