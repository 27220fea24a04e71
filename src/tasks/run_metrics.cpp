// tasks/run_metrics.cpp — the runtime's clock and its RunReport.
#include "tasks/run_metrics.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

namespace numaware::tasks::detail {

double Ticks::seconds_per_tick() {
#if defined(__x86_64__) || defined(__i386__)
    static const double value = [] {
        const auto c0 = std::chrono::steady_clock::now();
        const std::uint64_t t0 = now();
        std::this_thread::sleep_for(std::chrono::milliseconds(3));
        const auto c1 = std::chrono::steady_clock::now();
        const std::uint64_t t1 = now();
        const double secs = std::chrono::duration<double>(c1 - c0).count();
        return t1 > t0 ? secs / static_cast<double>(t1 - t0) : 1e-9;
    }();
    return value;
#else
    return 1e-9;
#endif
}

void WorkerCounters::reset() {
    tasks.store(0, std::memory_order_relaxed);
    useful.store(0, std::memory_order_relaxed);
    runtime.store(0, std::memory_order_relaxed);
    dep_bytes.store(0, std::memory_order_relaxed);
    cross_bytes.store(0, std::memory_order_relaxed);
    steals.store(0, std::memory_order_relaxed);
    steal_cross_bytes.store(0, std::memory_order_relaxed);
    steals_backlog.store(0, std::memory_order_relaxed);
    steals_occupied.store(0, std::memory_order_relaxed);
    last_done.store(0, std::memory_order_relaxed);
}

void RunMetrics::start() {
    spt_ = Ticks::seconds_per_tick();
    zero_.store(Ticks::now(), std::memory_order_relaxed);
}

void RunMetrics::reset() {
    first_spawn_.store(0, std::memory_order_relaxed);
    partition_ticks_.store(0, std::memory_order_relaxed);
    zero_.store(Ticks::now(), std::memory_order_relaxed);
}

RunReport RunMetrics::report(std::string policy, const std::vector<unsigned>& nodes,
                             std::span<const WorkerView> workers) const {
    RunReport r;
    r.policy = std::move(policy);
    r.nodes = nodes;
    r.tasks_per_node.assign(nodes.size(), 0);
    std::uint64_t last = 0, runtime_sum = 0;
    std::vector<double> useful;
    useful.reserve(workers.size());
    for (const WorkerView& w : workers) {
        const WorkerCounters& c = *w.counters;
        const std::uint64_t n = c.tasks.load(std::memory_order_acquire);
        r.tasks += n;
        r.tasks_per_node[w.node_slot] += n;
        r.dep_bytes += c.dep_bytes.load(std::memory_order_relaxed);
        r.cross_node_bytes += c.cross_bytes.load(std::memory_order_relaxed);
        r.cross_node_steals += c.steals.load(std::memory_order_relaxed);
        r.cross_node_steal_bytes += c.steal_cross_bytes.load(std::memory_order_relaxed);
        r.cross_node_steals_backlog += c.steals_backlog.load(std::memory_order_relaxed);
        r.cross_node_steals_occupied += c.steals_occupied.load(std::memory_order_relaxed);
        useful.push_back(static_cast<double>(c.useful.load(std::memory_order_relaxed)));
        runtime_sum += c.runtime.load(std::memory_order_relaxed);
        last = std::max(last, c.last_done.load(std::memory_order_relaxed));
    }
    const std::uint64_t first = first_spawn_.load(std::memory_order_relaxed);
    const double nw = static_cast<double>(workers.size());
    if (first != 0 && last > first) r.makespan_s = static_cast<double>(last - first) * spt_;
    r.load_balance_pct = load_balance_pct(useful);
    if (r.makespan_s > 0) {
        r.runtime_overhead_pct = static_cast<double>(runtime_sum) * spt_ / (nw * r.makespan_s) * 100.0;
        r.partition_overhead_pct =
            static_cast<double>(partition_ticks_.load(std::memory_order_relaxed)) * spt_ / (nw * r.makespan_s) * 100.0;
    }
    return r;
}

}  // namespace numaware::tasks::detail
