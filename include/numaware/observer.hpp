// numaware/observer.hpp — watch a task run without touching the scheduler.
//
// The real runtime (RuntimeOptions::observer) and the task-level simulator
// (SimOptions::observer) call the same hooks, so one tool sees both. Times
// are seconds since the run's clock zero: the runtime's steady clock at
// construction (or reset_metrics()), or simulated time.
//
//     numaware::tasks::ChromeTrace trace;
//     numaware::tasks::Runtime rt{team, "dep", {}, {.observer = &trace}};
//     ... spawn, barrier ...
//     trace.write("run.json");   // opens in Perfetto or chrome://tracing
//
// Threading contract: on_task_started and on_task_finished for worker w are
// called only from worker w (one thread per worker); on_task_created,
// on_task_ready, on_task_stolen and on_partition_done may come from any
// thread at any time, so an observer guards what they share. An observer
// must outlive the runtime or simulation that calls it, and must not throw.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "numaware/task_policy.hpp"

namespace numaware::tasks {

class Observer {
public:
    virtual ~Observer() = default;
    // Before anything else: the workers and the node (OS index) of each.
    // `label` names the run ("dep on live", "simulated on bullion-s16 (8 sockets)").
    virtual void on_setup(const std::vector<unsigned>& worker_nodes, std::string_view label) {
        (void)worker_nodes, (void)label;
    }
    virtual void on_task_created(TaskId task, double t) { (void)task, (void)t; }
    // Its last predecessor finished (or it had none).
    virtual void on_task_ready(TaskId task, double t) { (void)task, (void)t; }
    virtual void on_task_started(TaskId task, unsigned worker, unsigned node, double t) {
        (void)task, (void)worker, (void)node, (void)t;
    }
    virtual void on_task_finished(TaskId task, unsigned worker, unsigned node, double t) {
        (void)task, (void)worker, (void)node, (void)t;
    }
    // `thief` took the task from a queue it does not own.
    virtual void on_task_stolen(TaskId task, unsigned thief, double t) { (void)task, (void)thief, (void)t; }
    // A partition job (RIP-DEP, RIP-MW) covering `tasks` tasks ran from start to end.
    virtual void on_partition_done(std::size_t tasks, double start, double end) {
        (void)tasks, (void)start, (void)end;
    }
};

// An Observer that keeps every event and writes Chrome trace-event JSON
// (the "JSON Object Format" that Perfetto and chrome://tracing import):
// one process per node, one thread per worker, a B/E pair per task, instant
// events for creation, readiness and steals, and the partitioner as a
// thread of its own. Thread-safe per the contract above; memory grows with
// the events (about 100 bytes each).
class ChromeTrace final : public Observer {
public:
    ChromeTrace();
    ~ChromeTrace() override;
    ChromeTrace(const ChromeTrace&) = delete;
    ChromeTrace& operator=(const ChromeTrace&) = delete;

    void on_setup(const std::vector<unsigned>& worker_nodes, std::string_view label) override;
    void on_task_created(TaskId task, double t) override;
    void on_task_ready(TaskId task, double t) override;
    void on_task_started(TaskId task, unsigned worker, unsigned node, double t) override;
    void on_task_finished(TaskId task, unsigned worker, unsigned node, double t) override;
    void on_task_stolen(TaskId task, unsigned thief, double t) override;
    void on_partition_done(std::size_t tasks, double start, double end) override;

    // The trace as JSON text; events sorted by time.
    std::string to_json() const;
    // Writes to_json() to `path`; throws Error("path", ...) when it cannot.
    void write(const std::string& path) const;
    // Writes the document of to_json() to `out`, event by event.
    void write_json(std::ostream& out) const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace numaware::tasks
