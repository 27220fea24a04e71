// tasks/executor.hpp — the executor behind numaware/tasks.hpp: it owns the
// objects of a run and does the work of the scheduler lock.
//
// The objects, one file each:
//   task_pool.*          task records, allocated and recycled
//   node_queues.*        the per-worker and per-node queues and the search
//   worker.*             the worker loop, sleeping, completion
//   partition_service.*  the background thread of partition jobs
//   run_metrics.*        per-worker counters and the clock -> RunReport
// and runtime.cpp, the public facade, which checks arguments and calls in.
//
// Design:
//  * One scheduler lock serialises submissions (the dependency tracker's
//    add(), the region homes) and every policy call but steal_order() and,
//    for a policy whose concurrent_place() is true, place(), as the policy
//    threading contract asks. A task without dependencies takes the lock
//    only to be numbered and placed, and not even that when the policy
//    places concurrently and is not called at submission; its completion
//    takes no lock at all.
//  * A task with dependencies completes without the lock too when the
//    policy places concurrently and no graph is recorded
//    (`unlocked_completion`), unless it wrote a region whose home the
//    kernel must be asked for (RegionHomes::written_settled): the
//    tracker's complete() is thread-safe, and the finishing worker places
//    the tasks it made ready itself. Otherwise the completion needs the
//    lock; one
//    that finds it taken is deferred and settled in a small batch
//    (Worker::complete()), so completing workers run ready tasks instead of
//    spinning while a spawning thread holds the lock.
//  * Partition jobs (take_job()) run one at a time on the partition
//    service's thread; the tasks finish_job() releases are routed like any
//    ready task.
//  * Held tasks cannot deadlock a wait: every waiter registers in
//    `waiters` (a worker helping in a wait only when the policy may hold
//    tasks), calls flush() when tasks are held and no job is out, and
//    idle workers do the same while someone waits. A hosted runtime's
//    waiters are its own threads, waiting while another one may still be
//    spawning into the window: there only the thread that submitted the
//    last task flushes at once, and the others when no task has been
//    submitted for RuntimeOptions::held_stall (may_cut()), so a window is
//    cut when its producer waits or stops, not whenever one of its peers
//    runs dry. The first task held wakes the sleepers to watch for that.
//  * Completion: a task's count holds a share for its body, and each
//    finished child takes one off; the body's release gives back its share
//    less the children it spawned (counted without an atomic operation on
//    the body's thread, Task::children). When the count drops to zero the
//    task goes back to the pool and releases its parent. So taskwait()
//    inside a task waits for the whole subtree. Quiescence for barrier()
//    is "tasks completed == tasks spawned", with per-worker completion
//    counters (no shared counter on the hot path).
//  * Exceptions: the first one thrown by a task goes to its group, else to
//    its parent task (rethrown by the parent's taskwait, or passed on to
//    the parent's own destination if the parent never waits), else to the
//    runtime (rethrown by taskwait()/barrier() outside tasks).
//  * Observer (RuntimeOptions::observer): every hook site is one branch on
//    a null pointer; with an observer, start and finish reuse the clock
//    reads of the metrics, and the other hooks read the clock themselves.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <unordered_map>
#include <vector>

#include "numaware/machine.hpp"
#include "numaware/tasks.hpp"
#include "os/os.hpp"
#include "tasks/deps.hpp"
#include "tasks/node_queues.hpp"
#include "tasks/partition_service.hpp"
#include "tasks/region_homes.hpp"
#include "tasks/run_metrics.hpp"
#include "tasks/sync.hpp"
#include "tasks/task_pool.hpp"
#include "tasks/worker.hpp"

namespace numaware::tasks {

struct Runtime::Group::State {
    std::atomic<std::uint64_t> count{0};   // unfinished tasks of the group
    std::mutex mutex;                      // guards error
    std::exception_ptr error;
};

// The executor's objects are internal to the library: hidden, so calls
// between them bind locally and may be inlined. (A default-visibility
// function of a shared library may be interposed, so GCC neither inlines
// it nor calls it directly: every call of the worker loop's per-task
// path went through the PLT, measured as a fifth of the spawn benchmark's time.)
#pragma GCC visibility push(hidden)

namespace detail {

// What the calling thread is to the runtime.
struct Tls {
    const Executor* rt = nullptr;   // the executor the thread works for
    Worker* worker = nullptr;
    Task* current = nullptr;        // the task whose body runs
};
// Every spawn and every task reads it: initial-exec, as the heap's thread
// caches (the library already needs static TLS), so no __tls_get_addr call.
extern constinit thread_local Tls tls __attribute__((tls_model("initial-exec")));

// How often a thread waiting outside the tasks looks at held tasks
// (block_until()).
inline constexpr std::chrono::milliseconds outside_poll{1};

struct Executor {
    // Workers on the team's threads, or (team == nullptr) hosted: the
    // caller's threads take the workers' seats (Runtime::host()) and run
    // tasks when they wait (Worker::wait_hosted()); `layout` is where.
    Executor(Team* t, const Machine& m, const TeamLayout& layout, std::unique_ptr<Policy> p, RuntimeOptions o,
             os::Os& os);
    Executor(const Executor&) = delete;
    Executor& operator=(const Executor&) = delete;

    void start();
    void shutdown() noexcept;

    // ---- set-up --------------------------------------------------------
    Team* const team;   // null: hosted workers
    const TeamLayout layout;
    std::unique_ptr<Policy> policy;
    const RuntimeOptions options;
    Observer* const observer;
    const Machine machine;
    bool unlocked_completion = false;   // set by start(), see the design above
    bool policy_uses_submissions = true;   // Policy::uses_submissions(), set by start()
    bool policy_reads_homes = true;        // Policy::reads_homes(), set by start()
    bool policy_places_by_id = false;      // Policy::places_by_id(), set by start()
    // Whether the policy may hold tasks (not concurrent_place()): only then
    // does a worker that helps in a wait count itself in `waiters`, for
    // the flush of held tasks (Worker::help_begin). Set by start().
    bool policy_may_hold = true;
    // More workers than CPUs to run them (the machine model's, at most the
    // host's online ones): waiting workers yield instead of spinning
    // (Worker::spin_pause). Set by start().
    bool oversubscribed = false;
    std::optional<Destination> fixed_destination;   // Policy::fixed_destination(), set by start()
    PolicyContext ctx;
    std::vector<std::unique_ptr<Worker>> workers;
    NodeQueues queues;
    std::thread team_thread;

    // ---- under the scheduler lock ----------------------------------------
    // The lock word has a 128-byte pair of lines to itself: threads that
    // spin on it must not be invalidated by the holder's writes to the
    // tracker (measured: 13% of the wavefront benchmark when they shared).
    alignas(128) SleepLock sched;
    alignas(128) DepTracker tracker;
    RegionHomes region_homes;
    std::unordered_map<TaskId, Task*> held;
    std::vector<ReadyNode> ready_scratch;   // locked completions
    std::vector<void*> forgotten_scratch;   // region homes of regions the tracker forgot
    std::vector<Released> released_scratch;
    std::vector<DepInfo> submit_infos;   // submit()'s view of the new task's dependencies
    TaskGraph graph;

    // ---- shared atomics ----------------------------------------------------
    // `spawned` is written by every spawn, whose id it gives (a task
    // without dependencies, of a policy that places concurrently, takes no
    // lock: Executor::submit); the flags below are read by idle workers,
    // so they live on another pair of lines.
    alignas(128) std::atomic<std::uint64_t> spawned{0};
    alignas(128) std::atomic<std::uint64_t> held_count{0};
    // Hosted runtimes only: the last submission's Ticks and worker (-1: a
    // thread without a seat), for may_cut().
    std::atomic<std::uint64_t> submitted_at{0};
    std::atomic<int> submitted_by{-1};
    std::uint64_t stall_ticks = 0;   // options.held_stall in Ticks, set by start()
    std::atomic<int> waiters{0};
    std::atomic<bool> stopping{false};
    RunMetrics metrics;
    // Sleeping workers, in all and per node (position in ctx.nodes): a
    // worker sleeps on its node's epoch.
    alignas(128) std::atomic<int> sleepers{0};
    struct alignas(128) NodeWake {
        std::atomic<std::uint32_t> epoch{0};
        std::atomic<int> sleepers{0};
    };
    std::vector<std::unique_ptr<NodeWake>> node_wake;

    // Detached tasks fulfilled by a thread that is no worker of this
    // runtime: a worker completes them (Worker::take_fulfilled()).
    std::mutex fulfilled_mutex;
    std::vector<Task*> fulfilled;
    std::atomic<std::size_t> fulfilled_count{0};
    std::atomic<int> fulfilling{0};   // threads inside Runtime::fulfill's hand-over

    // ---- waiting outside tasks ---------------------------------------------
    std::mutex wait_mutex;
    std::condition_variable wait_cv;

    // ---- dependency scopes (Runtime::open_scope) -------------------------------
    std::mutex scope_mutex;
    std::uint16_t scopes_made = 0;
    std::deque<std::uint16_t> free_scopes;   // closed, reused oldest first

    // ---- exceptions --------------------------------------------------------
    std::mutex error_mutex;
    std::exception_ptr first_error;

    PartitionService partitions;
    TaskPool pool;

    // ---- waking ---------------------------------------------------------------
    // Sleepers and pushers meet on sequentially consistent fences (the
    // store-buffering pattern): a pusher pushes, fences and reads a
    // sleeper count; a sleeper counts itself in its node's count and in
    // the total, fences and checks the queues. Either the pusher's fence
    // comes first, and the sleeper's check sees the push, or the
    // sleeper's does, and the pusher sees the count and wakes it. The
    // pusher only reads the counts: a read-modify-write there (as before)
    // took each count's line from the other CPUs at every push, 44% of
    // submit() in the shim's fib (BENCHMARKS.md, 2026-12-06).
    //
    // A push wakes the sleepers of the node whose workers own the queue
    // (wake_node): the other nodes' workers would only take the task after
    // their steal delay. When none of that node's workers sleeps (all are
    // busy), everyone is woken (wake_workers), so that a farther worker can
    // take the task once its delay has passed or the backlog rule applies.
    void wake_workers() {
        full_fence();
        wake_all_seen();
    }
    void wake_node(std::size_t slot) {
        full_fence();
        NodeWake& n = *node_wake[slot];
        if (n.sleepers.load(std::memory_order_relaxed) > 0) {
            n.epoch.fetch_add(1, std::memory_order_release);
            n.epoch.notify_all();
            return;
        }
        wake_all_seen();
    }
    // After the pusher's fence: every node's sleepers if there are any.
    void wake_all_seen() {
        if (sleepers.load(std::memory_order_relaxed) > 0)
            for (auto& n : node_wake) {
                n->epoch.fetch_add(1, std::memory_order_release);
                n->epoch.notify_all();
            }
    }
    void wake_waiters();

    // The run's mean task duration (useful ticks per task over every
    // worker) / rounds_per_task, at least 1; 0 while no task has finished.
    std::uint64_t ticks_per_round() const;

    // ---- placement (scheduler lock held) ---------------------------------------
    // The policy's view of t's dependencies, with each region's home as it
    // is now, written to out[0, deps): built where it is used, not kept in
    // the task (a worker on another CPU reads every line of a task).
    // Without `homes`, every home is `unallocated` (Policy::reads_homes()).
    static std::span<const DepInfo> dep_infos(const Task& t, DepInfo* out, bool homes = true) {
        for (std::size_t k = 0; k < t.deps.size(); ++k) {
            const TrackedDep& d = t.deps[k];
            out[k] = DepInfo{d.region, d.bytes, d.access,
                             homes ? t.homes[k]->home.load(std::memory_order_relaxed) : unallocated};
        }
        return std::span<const DepInfo>(out, t.deps.size());
    }
    // `id` is t->id, which a caller that has it (a ReadyNode) passes so
    // that a policy placing by id alone does not read the task.
    // `spawner_node`: at submission, the spawning worker's node (TaskView).
    Destination place(Task* t, TaskId id, int spawner_node = -1) {
        if (fixed_destination) return *fixed_destination;
        if (policy_places_by_id) return policy->place(TaskView{id});
        SmallVec<DepInfo, 8> view;   // on the stack up to 8 dependencies
        view.resize(t->deps.size());
        return policy->place(
            TaskView{t->id, dep_infos(*t, view.data(), policy_reads_homes), {}, t->hint, spawner_node});
    }
    // The queue a placement names, or nullptr after holding the task (which
    // needs the scheduler lock; pushing to the queue does not, so callers
    // push after unlocking to keep the lock short).
    QueueSlot* queue_for(Task* t, Destination p) {
        if (p.kind == Destination::Kind::hold) {
            held.emplace(t->id, t);
            held_count.fetch_add(1, std::memory_order_release);
            return nullptr;
        }
        return &queues.queue_for(p);
    }
    bool route_released();
    void take_jobs();
    void job_done(std::unique_ptr<PartitionJob> job, std::exception_ptr error, std::uint64_t start,
                  std::uint64_t end);

    // flush() when tasks are held and no job can release them; a hosted
    // runtime's waiting worker `waiter` only when may_cut() too.
    static constexpr int any_waiter = -2;
    void maybe_flush(int waiter = any_waiter) {
        if (held_count.load(std::memory_order_acquire) == 0 || partitions.outstanding() != 0) return;
        flush_held(waiter);
    }
    void flush_held(int waiter);
    // Hosted runtimes: whether waiting worker `worker` may flush held tasks
    // at `now`: it submitted the last task, or no task was
    // submitted for options.held_stall, so the window is not being filled.
    bool may_cut(int worker, std::uint64_t now) const {
        return submitted_by.load(std::memory_order_relaxed) == worker || stall_left(now) == 0;
    }
    // Ticks until may_cut() holds for every waiter (0: it does). The clock
    // of another CPU may be behind the submitter's (a virtual machine's
    // TSCs need not agree): a `now` before the submission counts as none
    // of the stall gone, never as a wrapped-around eternity.
    std::uint64_t stall_left(std::uint64_t now) const {
        const std::uint64_t at = submitted_at.load(std::memory_order_relaxed);
        const std::uint64_t since = now > at ? now - at : 0;
        return since >= stall_ticks ? 0 : stall_ticks - since;
    }

    // ---- submission ------------------------------------------------------------
    TaskId submit(TaskFn&& fn, std::span<const Dep> deps, int hint, Runtime::Group::State* group);
    // A new task's fields, before anyone else may see it.
    static void init_task(Task& t, TaskId id, TaskFn&& fn, int hint, Runtime::Group::State* group, Task* parent);
    void announce_created(TaskId id, bool ready, std::uint64_t at);

    // ---- exceptions ----------------------------------------------------------------
    void record_error(Runtime::Group::State* group, Task* parent, std::exception_ptr e);
    std::exception_ptr take_error(std::exception_ptr& slot);
    void rethrow_runtime_error();

    // ---- waiting -------------------------------------------------------------------
    std::uint64_t completed_count() const;   // every worker's completions, summed
    bool quiescent() const;
    std::uint64_t unfinished() const;   // Runtime::unfinished()
    template <class Pred>
    void block_until(Pred done);
    void wait_all();
    void taskwait();
    void wait_group(Runtime::Group::State& g);

    // ---- metrics -------------------------------------------------------------------
    RunReport report() const;
    void reset_metrics();
};

}  // namespace detail

#pragma GCC visibility pop

}  // namespace numaware::tasks
