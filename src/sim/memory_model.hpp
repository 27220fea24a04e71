// sim/memory_model.hpp — the task simulator's memory model: how long a
// running task's memory accesses take, given what else runs.
//
// A model is one module behind these hooks, chosen by name through
// make_memory_model(); the simulator knows no model by its type. Today:
//   "snapshot"  memory_snapshot.cpp: a task's bandwidth shares are fixed
//               when it starts (fast, the default);
//   "exact"     memory_exact.cpp: max-min fair sharing on a FlowNetwork,
//               revised at every transfer's start and end.
// A new model (a cache hierarchy, a prefetcher in front of memory) is one
// more file implementing MemoryModel and one line in make_memory_model().
//
// Contract, in the order the simulator calls the hooks:
//   attach(setup)            once, before any task;
//   task_start(w, accesses, cost)
//                            worker w starts a task; the model schedules
//                            its end: an EventKind::finish event for w on
//                            setup.engine, at the latest when step() is
//                            next called with a later time. `accesses`
//                            stays valid until task_end(w);
//   step(t_next)             only while pending(): the next event of the
//                            simulation is at t_next (infinity: none). The
//                            model may act on its own events first (and
//                            move the clock, never past t_next); true when it
//                            did, so the simulator looks again;
//   task_end(w)              w's task ended (its finish event ran);
//   final_stats(report)      once, at the end: the report fields it owns.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "numaware/sim.hpp"
#include "sim/event_engine.hpp"

namespace numaware::sim {

// One dependency of a running task, as the memory sees it.
struct MemoryAccess {
    std::uint64_t start = 0;        // the region's synthetic address
    std::uint64_t bytes = 0;
    std::uint32_t home = 0;         // node position of the memory holding it now
    tasks::AccessMode access = tasks::AccessMode::in;
};

// A task's time besides memory, kept in parts: the models add them in one
// fixed order, so results do not depend on rounding of a pre-summed value.
struct TaskCost {
    double overhead_s = 0;   // SimOptions::task_overhead_s
    double compute_s = 0;    // GraphTask::compute_s
    double extra_s = 0;      // the balancing model's faults and migrations
};

struct MemorySetup {
    const TimedMachine* machine = nullptr;
    std::vector<std::size_t> worker_pos;   // node position of each worker (the reader)
    EventEngine* engine = nullptr;
};

class MemoryModel {
public:
    virtual ~MemoryModel() = default;
    virtual void attach(const MemorySetup& setup) = 0;
    virtual void task_start(std::uint32_t worker, std::span<const MemoryAccess> accesses, const TaskCost& cost) = 0;
    virtual bool step(double t_next) = 0;
    virtual void task_end(std::uint32_t worker) = 0;
    // Bytes per (reader, home) pair (SimReport::link_bytes) and whatever
    // else the model measures.
    virtual void final_stats(SimReport& report) const = 0;

    // Whether step() has anything to do: read inline on every turn of the
    // event loop, so an idle model costs one load and a branch.
    bool pending() const { return pending_; }

protected:
    bool pending_ = false;
};

// The model named `name` ("snapshot", "exact"); Error("contention", ...)
// naming the choices otherwise.
std::unique_ptr<MemoryModel> make_memory_model(std::string_view name);

// Each model's maker, for make_memory_model()'s table.
std::unique_ptr<MemoryModel> make_snapshot_memory();
std::unique_ptr<MemoryModel> make_exact_memory();

}  // namespace numaware::sim
