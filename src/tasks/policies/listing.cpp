// src/tasks/policies/listing.cpp — queue_listings(): when a worker's search
// (Policy::steal_order) first lists each queue.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "numaware/task_policy.hpp"

namespace numaware::tasks {

namespace {

constexpr std::uint64_t unlisted_round = ~std::uint64_t{0};

// The first round of each queue, in a flat table: worker queues first,
// then node queues, each by index. (A hash map per worker cost the
// simulator 30 ms per run at 288 workers, which each list every queue.)
class FirstRounds {
public:
    FirstRounds(const std::vector<QueueRef>& a, const std::vector<QueueRef>& b) {
        unsigned nodes = 0;
        for (const std::vector<QueueRef>* v : {&a, &b})
            for (const QueueRef& q : *v) {
                unsigned& n = q.kind == QueueRef::Kind::worker ? workers_ : nodes;
                n = std::max(n, q.index + 1);
            }
        first_.assign(std::size_t{workers_} + nodes, unlisted_round);
    }
    // Null for a queue outside the table: one that neither round 0 nor the
    // widest search lists, which a policy that only widens never names.
    std::uint64_t* at(const QueueRef& q) {
        if (q.kind == QueueRef::Kind::worker) return q.index < workers_ ? &first_[q.index] : nullptr;
        const std::size_t i = std::size_t{workers_} + q.index;
        return i < first_.size() ? &first_[i] : nullptr;
    }

private:
    unsigned workers_ = 0;
    std::vector<std::uint64_t> first_;
};

}  // namespace

std::vector<QueueListing> queue_listings(const Policy& policy, unsigned worker) {
    // The first round of every queue the search ever lists. A policy only
    // widens its search, so the rounds where it widens are found by
    // bisection, one per widening (a few rings of nodes), not one per queue.
    std::vector<QueueRef> round0, deep, order;
    policy.steal_order(worker, 0, round0);
    policy.steal_order(worker, max_search_round, deep);
    FirstRounds first(round0, deep);
    const auto note = [&first](const QueueRef& q, std::uint64_t round) {
        std::uint64_t* f = first.at(q);
        if (f != nullptr && *f == unlisted_round) *f = round;
    };
    for (const QueueRef& q : round0) note(q, 0);
    const auto unlisted = [&first](const std::vector<QueueRef>& v) {
        for (const QueueRef& q : v) {
            const std::uint64_t* f = first.at(q);
            if (f != nullptr && *f == unlisted_round) return true;
        }
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
        for (const QueueRef& q : order) note(q, lo);
        from = lo + 1;
    }
    // In search order, each once: round 0's order, then the widest one's.
    std::vector<QueueListing> out;
    out.reserve(round0.size() + deep.size());
    for (const std::vector<QueueRef>* v : {&round0, &deep})
        for (const QueueRef& q : *v) {
            std::uint64_t* f = first.at(q);
            if (*f == unlisted_round) continue;   // emitted already
            out.push_back({q, *f});
            *f = unlisted_round;
        }
    return out;
}

}  // namespace numaware::tasks
