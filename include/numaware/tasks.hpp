// numaware/tasks.hpp — the task runtime (the `tasks` layer).
//
// Tasks declare the memory they read and write; the runtime orders them by
// those dependencies (read-after-write, write-after-read, write-after-write),
// and a scheduler policy (numaware/task_policy.hpp) decides where each
// ready task runs. The team's pinned threads are the workers.
//
//     numaware::Team team{machine, {.threads = 8, .kind = numaware::MappingKind::scatter}};
//     numaware::tasks::Runtime rt{team, "rip-dep"};
//     for (int b = 0; b < blocks; ++b)
//         rt.spawn([=] { sweep(b); }, {in(a + b * n, n * 8), out(c + b * n, n * 8)});
//     rt.taskwait();
//     fmt::print("{}\n", rt.report().to_json());
//
// Regions: a dependency is an address range. Two ranges that tasks name
// must be identical or disjoint; a range that partially overlaps a range
// already in use is rejected (Error naming "deps[i]").
//
// Homes: the node that holds a region is found once and cached: from
// register_region(), from the partitioned heap (psm_owner_of) for its
// blocks, from the pages that placement's apply() placed and remembers
// (numaware/placement.hpp, placed_bytes), otherwise from the kernel
// (move_pages) for every page of the
// region (RuntimeOptions::home_sample_pages). A region with no page touched
// yet is `unallocated`; a task that writes it first touches it, and its
// home becomes what the kernel then reports. A region whose pages lie on
// several nodes has the node with most of its bytes as home (what policies
// see), and its cross-node bytes (RunReport) are counted page by page.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "numaware/metrics.hpp"
#include "numaware/observer.hpp"
#include "numaware/task_policy.hpp"
#include "numaware/team.hpp"

namespace numaware::tasks {

// A dependency as the application names it.
struct Dep {
    const void* addr = nullptr;
    std::size_t bytes = 0;
    AccessMode access = AccessMode::in;
    // Tasks depend on each other only through dependencies of one scope:
    // 0, every task's unless it says otherwise, or one that
    // Runtime::open_scope() handed out (OpenMP's rule that only sibling
    // tasks depend on each other is one scope per parent task). A scoped
    // range must lie below 2^48, where the scope takes the key's top bits.
    std::uint16_t scope = 0;
};
inline Dep in(const void* addr, std::size_t bytes) { return {addr, bytes, AccessMode::in}; }
inline Dep out(void* addr, std::size_t bytes) { return {addr, bytes, AccessMode::out}; }
inline Dep inout(void* addr, std::size_t bytes) { return {addr, bytes, AccessMode::inout}; }

struct RuntimeOptions {
    // Ask the kernel (move_pages) for the home of regions nobody registered
    // (every page of a region; small regions in one page share the page's
    // answer). Off: homes are learned as first touch places pages. A region counts
    // as `unallocated` until a task writes it and then belongs to the
    // writer's node, except where the page it starts in is placed already
    // (a task finished writing another region there): then it belongs to
    // that page's node. So small regions that share a page share its home.
    bool kernel_homes = true;
    // With kernel homes: 0 asks the kernel about every page of a region (in
    // batches), so a region spread over nodes counts each page's bytes where
    // they are; k > 0 asks about at most k pages spread evenly over the
    // region and gives it the majority node (faster for huge regions,
    // approximate).
    std::size_t home_sample_pages = 0;
    // Keep the task graph (tasks, dependencies, bytes, measured durations)
    // for replay; see Runtime::graph().
    bool record_graph = false;
    // Told of every task's creation, readiness, start, finish and steal,
    // and of partition jobs (numaware/observer.hpp); not owned. Null: none.
    Observer* observer = nullptr;
    // Hosted runtimes (threads take the seats; see host()): a waiting
    // thread cuts a partly filled RIP window, which another thread may
    // still be filling, only when it submitted the window's last task
    // itself, or when no task has been submitted for this long: the
    // fallback for a submitter that neither fills its window nor waits
    // (it computes, or spins on a flag that a held task sets). A submission
    // can take milliseconds (the kernel asked for homes, a preempted
    // thread), and a window cut by a peer's impatience is lost to RIP-DEP
    // (it falls back to DEP), so the default is well above the 3-24 ms
    // time slices of Linux's scheduler on a busy machine. Negative:
    // Error("held_stall").
    std::chrono::microseconds held_stall{100000};
};

// A recorded task graph (RuntimeOptions::record_graph).
struct RecordedDep {
    std::uint64_t region = 0;
    std::uint64_t bytes = 0;
    AccessMode access = AccessMode::in;
};
struct RecordedTask {
    TaskId id = 0;
    int hint = -1;
    std::vector<RecordedDep> deps;
    std::vector<Edge> preds;
    double seconds = 0;      // measured duration of the body
    unsigned worker = 0;     // who ran it
};
struct TaskGraph {
    std::vector<RecordedTask> tasks;
    std::string to_json() const;
    static TaskGraph from_json(std::string_view text);   // throws Error naming the field
};

namespace detail {
// A move-only callable with room for small captures inline, so spawning a
// task with a few captured values allocates nothing beyond the task itself.
class TaskFn {
public:
    static constexpr std::size_t inline_bytes = 48;
    TaskFn() = default;
    template <class F, class D = std::decay_t<F>,
              class = std::enable_if_t<!std::is_same_v<D, TaskFn> && std::is_invocable_v<D&>>>
    TaskFn(F&& f) {   // NOLINT: implicit by design
        if constexpr (sizeof(D) <= inline_bytes && alignof(D) <= alignof(std::max_align_t) &&
                      std::is_nothrow_move_constructible_v<D>) {
            ::new (static_cast<void*>(buf_)) D(std::forward<F>(f));
            ops_ = &inline_ops<D>;
        } else {
            *reinterpret_cast<D**>(buf_) = new D(std::forward<F>(f));
            ops_ = &heap_ops<D>;
        }
    }
    TaskFn(TaskFn&& o) noexcept : ops_(o.ops_) {
        if (ops_) ops_->move(o.buf_, buf_);
        o.ops_ = nullptr;
    }
    TaskFn& operator=(TaskFn&& o) noexcept {
        if (this != &o) {
            reset();
            ops_ = o.ops_;
            if (ops_) ops_->move(o.buf_, buf_);
            o.ops_ = nullptr;
        }
        return *this;
    }
    TaskFn(const TaskFn&) = delete;
    TaskFn& operator=(const TaskFn&) = delete;
    ~TaskFn() { reset(); }

    explicit operator bool() const { return ops_ != nullptr; }
    void operator()() { ops_->call(buf_); }
    void reset() {
        if (ops_) ops_->destroy(buf_);
        ops_ = nullptr;
    }

private:
    struct Ops {
        void (*call)(void*);
        void (*move)(void* from, void* to);
        void (*destroy)(void*);
    };
    template <class D>
    static constexpr Ops inline_ops{
        [](void* p) { (*static_cast<D*>(p))(); },
        [](void* from, void* to) {
            ::new (to) D(std::move(*static_cast<D*>(from)));
            static_cast<D*>(from)->~D();
        },
        [](void* p) { static_cast<D*>(p)->~D(); }};
    template <class D>
    static constexpr Ops heap_ops{
        [](void* p) { (**static_cast<D**>(p))(); },
        [](void* from, void* to) { *static_cast<D**>(to) = *static_cast<D**>(from); },
        [](void* p) { delete *static_cast<D**>(p); }};

    alignas(std::max_align_t) unsigned char buf_[inline_bytes];
    const Ops* ops_ = nullptr;
};
}  // namespace detail

class Runtime {
public:
    // Starts the team's threads as workers; `policy` is attached to the
    // team's layout. Throws Error("policy", ...) for a null policy and
    // whatever Policy::attach() throws.
    Runtime(Team& team, std::unique_ptr<Policy> policy, RuntimeOptions options = {});
    // The same with a built-in policy by name (make_policy()).
    Runtime(Team& team, std::string_view policy, const PolicyOptions& policy_options = {},
            RuntimeOptions options = {});
    // Waits for every task, then stops the workers. Exceptions still
    // pending from tasks are dropped here; call barrier() to see them.
    // Hosted workers: no thread is started. Worker w, on layout.ranks[w]'s
    // node of `machine`, is whichever thread calls host(w), and it runs
    // tasks only while it waits in run_until() (or in a taskwait() inside a
    // task). libnumaware_omp.so's mode: an OpenMP team's threads are the
    // workers and run tasks at their barriers and task waits.
    Runtime(const Machine& machine, const TeamLayout& layout, std::unique_ptr<Policy> policy,
            RuntimeOptions options = {});
    ~Runtime();

    // ---- hosted runtimes only (throw Error otherwise) ----
    void host(unsigned worker);   // the calling thread takes worker `worker`'s seat
    void unhost();                // the calling thread leaves its seat (no-op without one)
    // Nested parallelism: a seated thread (even one inside a task) that
    // joins another team sets its seat aside, with the task it is running,
    // so that it may take a seat in the other team's runtime; it takes the
    // seat back once it holds none again. The seat stays the thread's: its
    // runtime sees that worker as busy with that task meanwhile.
    class SetAside {
    public:
        SetAside() = default;
        explicit operator bool() const { return rt_ != nullptr; }

    private:
        friend class Runtime;
        const void* rt_ = nullptr;
        void* worker_ = nullptr;
        void* current_ = nullptr;
    };
    static SetAside set_seat_aside() noexcept;   // empty when the thread has no seat
    static void restore_seat(const SetAside& seat);   // throws while the thread holds a seat
    // The seated calling thread runs tasks until done(arg) holds. With
    // none ready it sleeps until a task is pushed or wake() is called, so
    // whoever makes done() true calls wake() after; with Sleep::never it
    // pauses and yields instead (for a condition that no one wakes for,
    // such as quiescent()). It returns with every task it ran completed
    // (successors released, counted in quiescent()), so the seat may stay
    // empty for as long as the thread likes.
    enum class Sleep { allowed, never };
    void run_until(bool (*done)(void*), void* arg, Sleep sleep = Sleep::allowed);
    // A seated thread that creates tasks faster than they finish (the
    // OpenMP shim's task throttle) runs up to max_tasks ready ones itself,
    // those its policy lets it take, returning at the first search that
    // finds none; it returns how many it ran. Only where that decides
    // nothing early: its policy places tasks as they come (RIP holds a
    // window of tasks, which a wait of the thread that spawns would cut
    // short; there it runs none). Throws as run_until() does.
    std::size_t help(std::size_t max_tasks);
    // Wakes the threads asleep in run_until(): call it after making their
    // done() true from outside the tasks.
    void wake();

    // Every task spawned so far has completed (nobody is woken when it
    // becomes true: wait for it with Sleep::never).
    bool quiescent() const;
    // Tasks spawned and not completed yet: queued, waiting for their
    // predecessors or running. A snapshot, exact only while no task is
    // spawned or completes; it reads every worker's completion count, so
    // callers that spawn often read it now and then (libnumaware_omp.so's
    // task throttle reads it once every 16 tasks a thread creates).
    std::uint64_t unfinished() const;

    // Dependency scopes (Dep::scope): a new one, 1 to 65,535, and closing
    // one whose tasks have all finished (its number is reused, oldest first).
    // Throws when 65,535 are open.
    std::uint16_t open_scope();
    void close_scope(std::uint16_t scope);

    Runtime(const Runtime&) = delete;
    Runtime& operator=(const Runtime&) = delete;

    // Creates a task that runs fn() once every earlier task it depends on
    // has finished. Callable from any thread, including from inside a task
    // (which makes the new task its child). Throws Error, leaving the
    // runtime unchanged, for: a dependency with a null address or zero
    // bytes, a range that partially overlaps a range in use ("deps[i]"),
    // the same range named twice with different access in one task.
    template <class F>
    TaskId spawn(F&& fn, std::initializer_list<Dep> deps = {}) {
        return submit(detail::TaskFn(std::forward<F>(fn)), std::span<const Dep>(deps.begin(), deps.size()), -1);
    }
    template <class F>
    TaskId spawn(F&& fn, std::span<const Dep> deps) {
        return submit(detail::TaskFn(std::forward<F>(fn)), deps, -1);
    }
    // The same with a node hint for the SA policy (other policies may
    // ignore it). Throws Error("node", ...) for a node without workers.
    template <class F>
    TaskId spawn_on(unsigned node, F&& fn, std::initializer_list<Dep> deps = {}) {
        return submit(detail::TaskFn(std::forward<F>(fn)), std::span<const Dep>(deps.begin(), deps.size()),
                      checked_node(node));
    }
    template <class F>
    TaskId spawn_on(unsigned node, F&& fn, std::span<const Dep> deps) {
        return submit(detail::TaskFn(std::forward<F>(fn)), deps, checked_node(node));
    }

    // Inside a task: waits for the task's children (running other tasks
    // meanwhile). Outside any task: waits for every task spawned from
    // outside, and their descendants. Rethrows the first exception a waited
    // task threw.
    void taskwait();
    // Waits for every task of the runtime, from anywhere outside a task.
    // Throws Error("barrier", ...) when called from inside a task.
    void barrier();

    // Detached completion (OpenMP's `detach` clause). Inside a task,
    // detach() makes the task's completion wait, beyond its body, for
    // fulfill(token): until both, its successors stay blocked and its
    // parent's taskwait, its group and barrier() wait for it. fulfill() may
    // come from any thread, before or after the body ends, once per token.
    // Throws Error("detach") outside a task of this runtime or for a task
    // detached already.
    std::uintptr_t detach();
    void fulfill(std::uintptr_t token);

    // Tells the runtime where a region lives (the heap and the placement
    // layer know). Throws Error for a null range or a node without memory.
    void register_region(const void* addr, std::size_t bytes, unsigned node);

    RunReport report() const;   // call after barrier() for complete figures
    void reset_metrics();       // only while no task is in flight
    const TaskGraph& graph() const;   // the recording; empty unless record_graph

    std::size_t workers() const;
    // Nodes with at least one worker, ascending (the node queues; valid
    // spawn_on() targets).
    const std::vector<unsigned>& nodes() const;
    std::string_view policy_name() const;
    // Inside a task: the worker running it (0..workers()-1); -1 outside.
    static int current_worker();

    // Waits for the tasks created before it in this group only.
    class Group;

private:
    TaskId submit(detail::TaskFn fn, std::span<const Dep> deps, int hint, Group* group = nullptr);
    int checked_node(unsigned node) const;
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// A set of tasks to wait for together, like tbb::task_group.
class Runtime::Group {
public:
    explicit Group(Runtime& rt);
    ~Group();   // waits

    template <class F>
    TaskId spawn(F&& fn, std::initializer_list<Dep> deps = {}) {
        return rt_.submit(detail::TaskFn(std::forward<F>(fn)), std::span<const Dep>(deps.begin(), deps.size()), -1,
                          this);
    }
    template <class F>
    TaskId spawn(F&& fn, std::span<const Dep> deps) {
        return rt_.submit(detail::TaskFn(std::forward<F>(fn)), deps, -1, this);
    }
    void wait();   // rethrows the first exception of the group's tasks

    struct State;
    State& state() { return *state_; }

private:
    Runtime& rt_;
    std::unique_ptr<State> state_;
};

using TaskGroup = Runtime::Group;

}  // namespace numaware::tasks
