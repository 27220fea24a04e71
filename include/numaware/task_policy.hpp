// numaware/task_policy.hpp — scheduler policies of the `tasks` layer.
//
// A policy decides two things and nothing else:
//   * where a ready task goes: a worker's queue or a node's queue (place());
//   * which queues a worker looks at, in order, when it wants work
//     (steal_order()).
// It never creates threads, never reads a clock and never touches memory
// outside its own state, so the same object drives the real executor
// (numaware/tasks.hpp) and the task-level simulator. Everything it is told
// comes in through TaskView; everything random comes from the seed in
// PolicyContext, mixed with task ids, so a run can be reproduced.
//
// Threading contract (what the executor guarantees):
//   * attach(), on_submit(), place(), take_job(), finish_job() and flush()
//     are called one at a time, under the executor's scheduler lock;
//     on_submit() is called in task-creation order;
//   * steal_order() is const and may be called from any worker at any time,
//     concurrently with everything else: it reads only what attach() set;
//   * place() too, for a policy whose concurrent_place() is true: such a
//     policy's placement is a function of the task's view and of what
//     attach() set, so the executor places the tasks that a finishing task
//     makes ready on the finishing worker, without the lock;
//   * PartitionJob::run() runs on a background thread, concurrently with
//     the calls above: it must touch only the job's own data.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "numaware/machine.hpp"

namespace numaware::tasks {

using TaskId = std::uint64_t;   // creation order within one runtime: 0, 1, 2, ...

// Rounds of an idle worker's search per mean task duration (Policy::steal_order).
inline constexpr std::uint64_t rounds_per_task = 16;
// RIP's first window ends at a step boundary (a task writing a region the
// current run of tasks already wrote) at or after PolicyOptions::window
// tasks, or at twice that, but not beyond this many tasks (unless the
// window itself is larger): the initialisation and first sweep of a
// 128 x 128-tile wavefront, so that partitioning stays bounded
// (docs/SIMULATOR.md, "Partitioning cost", has Scotch's time for it). The
// simulator caps the graph's initial part (sim::initial_part_cap) alike.
inline constexpr std::size_t window_step_cap = 32768;
// RIP's first window is at most the graph's first window_initial_steps
// steps: the initialisation (with what the program writes for the first
// time right after it, such as a double-buffered sweep's second buffer) and
// the first iteration, the published window being the initialisation and
// the first 2-3 iterations. It ends there once it holds a task per part:
// on small steps a window of PolicyOptions::window tasks spanned the whole
// run, and the partition cut along time (BENCHMARKS.md, 2026-12-06, 16
// nodes). The simulator's sim::initial_part counts the same steps.
inline constexpr unsigned window_initial_steps = 2;
// PolicyOptions::steal_delay_tasks when unset (see there).
inline constexpr double default_steal_delay_tasks = 32;
// A command-line steal delay, where a negative value asks for the default:
// unset when negative, the value otherwise. NaN is kept, so that
// make_policy rejects it (it is not "negative": no silent default).
inline std::optional<double> steal_delay_setting(double tasks) {
    if (tasks < 0) return std::nullopt;
    return tasks;
}

// The home of memory that no page of has been touched yet: DEP's
// "virtual socket". A task that writes it first places it by first touch.
inline constexpr int unallocated = -1;

enum class AccessMode : std::uint8_t { in, out, inout };

// One dependency of a task, as a policy sees it.
struct DepInfo {
    std::uint64_t region = 0;   // the region's id (its start address), stable for the runtime's life
    std::uint64_t bytes = 0;
    AccessMode access = AccessMode::in;
    int home = unallocated;     // node OS index holding the region, or `unallocated`
};

// A true, anti or output dependency on an earlier task, with the bytes of
// the region they share: the edge weight of the task dependency graph.
struct Edge {
    TaskId from = 0;
    std::uint64_t bytes = 0;
};

struct TaskView {
    TaskId id = 0;
    std::span<const DepInfo> deps{};
    std::span<const Edge> preds{};   // set at submission; empty in place() views
    int hint = -1;                   // node OS index from spawn_on(), or -1
    // In place() at the task's submission (it was ready at once): the node
    // OS index of the worker that spawned it, from a task it runs or a
    // hosted thread's seat; -1 for a task spawned from outside the workers,
    // made ready later by a predecessor, or in a simulated graph.
    int spawner_node = -1;
};

// Where a ready task goes.
struct Destination {
    enum class Kind : std::uint8_t {
        worker,   // the queue of worker `index`
        node,     // the queue of node `index` (OS index): any worker there may run it
        hold,     // the policy keeps it; it comes back later from finish_job() or flush()
    };
    Kind kind = Kind::node;
    unsigned index = 0;

    static constexpr Destination to_worker(unsigned w) { return {Kind::worker, w}; }
    static constexpr Destination to_node(unsigned n) { return {Kind::node, n}; }
    static constexpr Destination held() { return {Kind::hold, 0}; }
    bool operator==(const Destination&) const = default;
};

// A queue a worker may take work from.
struct QueueRef {
    enum class Kind : std::uint8_t { worker, node };
    Kind kind = Kind::worker;
    unsigned index = 0;   // worker id, or node OS index
    bool operator==(const QueueRef&) const = default;
};

// A held task the policy lets go, and where it goes; with `place_again`,
// `where` is ignored and the executor (or the simulator) asks place() for
// it now, with the homes of its data as they are at that moment. The policy
// must then place it (not hold it again).
struct Released {
    TaskId id = 0;
    Destination where{};
    bool place_again = false;
    static Released to_place(TaskId id) { return Released{id, {}, true}; }
    bool operator==(const Released&) const = default;
};

// What the executor (or the simulator) tells a policy once, before any task.
struct PolicyContext {
    const Machine* machine = nullptr;     // outlives the policy's use of it
    std::vector<unsigned> worker_node;    // node OS index of each worker
    std::vector<unsigned> nodes;          // nodes with at least one worker, ascending
    std::uint64_t seed = 1;
};

// Work a policy wants done off the critical path (graph partitioning).
// run() is pure computation on the job's own data; the executor runs it on
// a background thread while tasks execute, the simulator charges its time.
// The size of a partitioning problem: what its cost depends on.
struct PartitionSize {
    std::size_t vertices = 0;   // tasks of the window, fixed vertices included
    std::size_t edges = 0;      // undirected edges given to the partitioner
    std::size_t parts = 0;      // target parts (worker nodes)
};

class PartitionJob {
public:
    virtual ~PartitionJob() = default;
    virtual void run() = 0;
    virtual std::size_t tasks() const = 0;   // size of the window it partitions
    // The problem's size (the simulator models the job's time from it).
    virtual PartitionSize size() const { return PartitionSize{tasks(), 0, 0}; }
};

class Policy {
public:
    virtual ~Policy() = default;

    virtual std::string_view name() const = 0;

    // Once, before any other call. Throws Error for a context the policy
    // cannot work with (no workers, a machine without a distance matrix).
    virtual void attach(const PolicyContext& ctx) = 0;

    // Every task, in creation order, when it is spawned, with its
    // dependencies and predecessor edges. Default: nothing.
    virtual void on_submit(const TaskView& /*task*/) {}
    // False when on_submit() and take_job() never do anything, so that the
    // executor and the simulator may skip them and the view they would
    // build for them. Default: true (a policy that does not say is called).
    virtual bool uses_submissions() const { return true; }

    // A task whose predecessors have all finished. `task.deps[i].home` is
    // the region's current home as the executor knows it.
    virtual Destination place(const TaskView& task) = 0;
    // True when place() reads only `task` and what attach() set, never
    // holds a task, and may run on any thread at once (see the contract
    // above). Default: false.
    virtual bool concurrent_place() const { return false; }
    // False when place() never reads `task.deps[i].home`: the executor then
    // passes every home as `unallocated` and does not read the regions'
    // homes, which workers on other CPUs write as their tasks finish.
    // Default: true.
    virtual bool reads_homes() const { return true; }
    // True when place() reads only `task.id` (and what attach() set): the
    // executor then passes no dependencies and no hint, and the worker
    // that made a task ready places it without reading the task. Default:
    // false.
    virtual bool places_by_id() const { return false; }
    // Where place() sends every task, whatever the task, when that is
    // settled once attach() has run (a node policy whose workers are all on
    // one node); the executor then places without reading the task's
    // dependencies, which the worker that made it ready may not have in
    // its cache. Read after attach(). Default: none (place() decides).
    virtual std::optional<Destination> fixed_destination() const { return std::nullopt; }

    // The queues worker `worker` tries, in order, when it has been looking
    // for work for `round` rounds since it last found some (round 0: its
    // first search). A round is 1/rounds_per_task of the run's mean task
    // duration of idle time (the executor measures both; the simulator uses
    // its graph's mean task time). Must start with the worker's own
    // queue(s). Thread-safe and const (see the contract above).
    virtual void steal_order(unsigned worker, std::uint64_t round,
                             std::vector<QueueRef>& order) const = 0;

    // A job to run in the background, or nullptr. The executor asks after
    // every on_submit() and runs at most one job at a time.
    virtual std::unique_ptr<PartitionJob> take_job() { return nullptr; }

    // A job from take_job() has run; held tasks it settles are appended to
    // `released`.
    virtual void finish_job(std::unique_ptr<PartitionJob> /*job*/, std::vector<Released>& /*released*/) {}

    // No more submissions for now (a taskwait or barrier is waiting): the
    // policy must release every held task without waiting for a window to
    // fill, either by taking a job for the partial window (return true) or
    // by appending the tasks to `released` (return false).
    virtual bool flush(std::vector<Released>& /*released*/) { return false; }
};

// Settings of the built-in policies.
struct PolicyOptions {
    std::uint64_t seed = 1;
    // RIP-DEP and RIP-MW: tasks per partitioned window (>= 1), extra tasks
    // added to the first window, and (RIP-MW) tasks of the previous window
    // kept in the next one as fixed vertices (< window).
    std::size_t window = 256;
    std::size_t initial_extra = 0;
    // RIP: the first window also ends after this many steps of the graph
    // (tasks::window_initial_steps, the published window), once it holds a
    // task per part; 0: only `window` + `initial_extra` count.
    unsigned first_window_steps = window_initial_steps;
    std::size_t intersection = 32;
    // Allowed load imbalance of a partition, as a fraction (Scotch's
    // balance ratio). In [0, 1).
    double imbalance = 0.05;
    // RIP-DEP and RIP-MW: also balance the bytes each task touches first
    // (the out/inout regions with no home that no earlier task of the
    // window writes), so that every node homes a fair share of the data:
    // a second constraint, partitioned by METIS. Off: task count alone, as
    // published.
    bool rip_balance_first_touch = false;
    // The node-queue policies (LQ, DEP, RIP-DEP, RIP-MW): an idle worker
    // searches only its own node's queue until it has been idle for
    // steal_delay_tasks mean task durations of the run, then adds the next
    // ring of nodes by distance (nearest first) every steal_delay_tasks
    // more; 0: every node at once. Unset: default_steal_delay_tasks (32):
    // a node whose workers hold more tasks than they can start at once
    // (3 blocks on 2 workers) leaves one worker idle for about a task
    // duration in every sweep, and a delay near 1 turned that into a
    // cross-node steal per sweep; persistent imbalance (DEP's random homes)
    // still gets stolen from. Simulated on the bullion model, the eight
    // applications: RIP-DEP over DEP 0.84/0.91/0.69x at 4/8/16 sockets with
    // 1, 0.85/0.92/0.79x with 8, 0.86/0.99/0.88x with 32 and the same with
    // 128 (BENCHMARKS.md, issue 13). Tied to the tasks' duration, not to a
    // count of searches, so the same setting holds for 10-microsecond and
    // 10-millisecond tasks. A node queue holding more tasks than its
    // workers start within the delay is stolen from at once (the backlog
    // rule, queue_listings): without it, a worker fed a trickle of its own
    // node's tasks was never idle for the delay and never helped a node
    // with a backlog (spawn of empty tasks 2.2-2.6x slower with LQ and DEP).
    // In [0, 1e6]. SA never steals across nodes; DFIFO steals from every
    // worker at once.
    std::optional<double> steal_delay_tasks = std::nullopt;
};

// The built-in policies by name: "dfifo", "lq", "dep", "sa", "rip-dep",
// "rip-mw". Throws Error("policy", ...) naming the accepted names for any
// other, and Error("window"|"intersection"|"imbalance", ...) for settings
// out of range.
std::unique_ptr<Policy> make_policy(std::string_view name, const PolicyOptions& options = {});

// The names make_policy() accepts, in the order above.
std::span<const std::string_view> policy_names();

// Throws Error(field, "unknown policy 'NAME'; expected one of ...") unless
// `name` is one of policy_names() (what make_policy checks first; tools that
// pass a name on, such as the OpenMP drop-in, check it up front).
void check_policy_name(std::string_view name, std::string_view field = "policy");

// The queues worker `worker` searches in some round of Policy::steal_order,
// each with the first round that lists it (0: from the start), in search
// order, each once. Found by bisection: a policy widens its search as the
// rounds go by and never narrows it. Used by the executor and the simulator
// for the backlog rule: a queue listed from round r > 0 on is searched at
// once when it holds more tasks than its node's workers start in r rounds
// (workers x r / rounds_per_task): its last task would wait longer at home
// than the delay meant to keep it there.
struct QueueListing {
    QueueRef queue;
    std::uint64_t first_round = 0;
};
std::vector<QueueListing> queue_listings(const Policy& policy, unsigned worker);
inline constexpr std::uint64_t max_search_round = std::uint64_t{1} << 40;
// The backlog above which a node queue with `workers` workers, listed from
// round `first_round` > 0 on, is searched at once (see queue_listings).
inline std::size_t backlog_limit(std::size_t workers, std::uint64_t first_round) {
    return std::max<std::size_t>(1, workers * first_round / rounds_per_task);
}
// Why a worker took a task from a queue: the queue was in its search order
// at that time (at once, or its delay had passed), or a node queue of a
// later round was searched early by the backlog rule or by the occupied
// rule (every worker of its node has run its task for longer than the
// delay), or by a worker waiting inside a task for that task's own
// descendant (which the node's workers, busy or in waits of their own, do
// not take: only the waiter or an idle worker may). The executor and the
// simulator apply the rules in this order; RunReport counts the cross-node
// steals of the backlog and occupied rules.
enum class TakeRule : std::uint8_t { in_order, backlog, occupied, descendant };

}  // namespace numaware::tasks
