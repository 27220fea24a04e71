// tasks/run_metrics.hpp — the real runtime's metrics: counters each worker
// writes alone, on its own cache line, and the run's clock; report() folds
// them into the one metrics model (numaware/metrics.hpp).
//
// Per worker: tasks, bytes, useful ticks (in bodies, minus time the body
// spent in spawn or taskwait) and runtime ticks (from the end of the
// previous body, or the start of a successful search, to the next body's
// start, which covers completion work, plus spawn calls made by bodies).
// Idle searching and sleeping count as neither. Two clock reads per task
// (TSC on x86).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "numaware/metrics.hpp"
#include "tasks/sync.hpp"

#pragma GCC visibility push(hidden)   // library-internal: see executor.hpp

namespace numaware::tasks::detail {

// Written by its worker only, read by report().
struct WorkerCounters {
    std::atomic<std::uint64_t> tasks{0};
    std::atomic<std::uint64_t> useful{0};
    std::atomic<std::uint64_t> runtime{0};
    std::atomic<std::uint64_t> dep_bytes{0};
    std::atomic<std::uint64_t> cross_bytes{0};
    std::atomic<std::uint64_t> steals{0};         // tasks taken from another node's queues
    std::atomic<std::uint64_t> steal_cross_bytes{0};   // their cross-node bytes
    std::atomic<std::uint64_t> steals_backlog{0};      // of steals, by the backlog rule
    std::atomic<std::uint64_t> steals_occupied{0};     // of steals, by the occupied rule
    std::atomic<std::uint64_t> last_done{0};

    // One writer: a load and a store, no read-modify-write.
    static void add(std::atomic<std::uint64_t>& a, std::uint64_t v) {
        a.store(a.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
    }
    void reset();
};

class RunMetrics {
public:
    // Calibrates the clock and sets its zero.
    void start();

    double seconds_per_tick() const { return spt_; }
    // Seconds from the clock zero (construction or the last reset) to
    // `ticks`: the observer's time.
    double seconds(std::uint64_t ticks) const {
        const auto d = static_cast<std::int64_t>(ticks - zero_.load(std::memory_order_relaxed));
        return static_cast<double>(d) * spt_;
    }
    // The makespan starts at the first spawn (spawns without a dependency
    // may race here: the first stamp stays).
    void note_spawn() {
        if (first_spawn_.load(std::memory_order_relaxed) != 0) return;
        std::uint64_t none = 0;
        first_spawn_.compare_exchange_strong(none, Ticks::now(), std::memory_order_relaxed);
    }
    void add_partition(std::uint64_t ticks) { partition_ticks_.fetch_add(ticks, std::memory_order_relaxed); }

    // One worker's figures: its counters and the position of its node in `nodes`.
    struct WorkerView {
        const WorkerCounters* counters;
        std::size_t node_slot;
    };
    RunReport report(std::string policy, const std::vector<unsigned>& nodes, std::span<const WorkerView> workers) const;
    // Only while no task is in flight; the workers' counters are reset by the caller.
    void reset();

private:
    double spt_ = 1e-9;   // seconds per tick
    std::atomic<std::uint64_t> zero_{0};
    std::atomic<std::uint64_t> first_spawn_{0};
    std::atomic<std::uint64_t> partition_ticks_{0};
};

}  // namespace numaware::tasks::detail

#pragma GCC visibility pop
