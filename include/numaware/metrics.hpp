// numaware/metrics.hpp — the one metrics model of a task run.
//
// The real runtime (numaware/tasks.hpp) and the task-level simulator
// (numaware/sim.hpp) both fill a RunReport; the simulator's SimReport holds
// one and adds only what a simulation alone knows. Every figure that both
// report is defined here, once.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace numaware::tasks {

// Load balance of a run: Σ useful ÷ (max useful × workers) × 100, where
// `useful` is each worker's time in task bodies. 100 when nothing ran (no
// worker had useful time, or there are no workers): an idle machine is
// perfectly balanced, and both backends say so.
double load_balance_pct(std::span<const double> useful_per_worker);

// Metrics of the tasks run since a runtime was built or last reset, or of
// one simulation.
struct RunReport {
    std::string policy;
    std::uint64_t tasks = 0;
    double makespan_s = 0;                 // first spawn to last completion
    std::uint64_t dep_bytes = 0;           // bytes of all dependencies of all tasks
    std::uint64_t cross_node_bytes = 0;    // of which homed on a node other than the runner's
    std::vector<unsigned> nodes;           // nodes with workers, ascending OS index
    std::vector<std::uint64_t> tasks_per_node;   // parallel to `nodes`
    double load_balance_pct = 100;         // load_balance_pct() of the workers' useful time
    double runtime_overhead_pct = 0;       // worker time in the runtime / (workers * makespan) * 100
    double partition_overhead_pct = 0;     // partitioning time / (workers * makespan) * 100
    // Tasks a worker took from a queue that belongs to another node's
    // workers (a node's queue, or the queue of a worker on another node),
    // and of cross_node_bytes those of these tasks: what stealing, rather
    // than placement, moved across nodes.
    std::uint64_t cross_node_steals = 0;
    std::uint64_t cross_node_steal_bytes = 0;
    // Of cross_node_steals, those whose queue the thief could not search
    // yet by its steal order (PolicyOptions::steal_delay_tasks), taken by
    // one of the two rules that search a farther node's queue early: it
    // held more tasks than its workers start within the delay (backlog), or
    // every one of its workers had run its task for longer than the delay
    // (occupied). The rest were in the thief's order: every node at once
    // (DFIFO), or the ring's delay had passed.
    std::uint64_t cross_node_steals_backlog = 0;
    std::uint64_t cross_node_steals_occupied = 0;
    // Where the homes of the dependencies' data came from: "kernel" (every
    // page asked with move_pages), "kernel, N pages sampled a region", or
    // "first writers" (RuntimeOptions::kernel_homes off), followed by
    // " (the kernel refused move_pages: EPERM)" where the runtime fell back
    // to them because the kernel would not answer (a container's seccomp
    // profile). Empty in reports that do not come from a runtime.
    std::string homes;

    std::string to_json() const;
};

}  // namespace numaware::tasks
