// tasks/runtime.cpp — the executor of numaware/tasks.hpp.
//
// Design:
//  * Workers are the team's ranks: a helper thread calls Team::run() with
//    a worker loop that lasts until the runtime is destroyed. Worker w is
//    rank w and lives on layout().ranks[w].node.
//  * Queues: one per worker and one per worker node. The policy's place()
//    chooses the queue of a ready task; a worker searches the queues its
//    policy's steal_order() lists (round 0's list is cached: it depends only
//    on what attach() set), its own queue newest first, every other queue
//    oldest first. A failed search increments `round`; after a short spin a
//    worker sleeps on a futex (std::atomic::wait) until a push bumps
//    `epoch_`.
//  * One scheduler lock serialises the dependency tracker, the home
//    registry and every policy call but steal_order(), as the policy
//    threading contract asks. A task without dependencies takes the lock
//    only to be numbered and placed; its completion takes no lock at all.
//    A completion that finds the lock taken is deferred and settled in a
//    small batch (see complete()), so completing workers run ready tasks
//    instead of spinning while a spawning thread holds the lock.
//  * Partition jobs (take_job()) run one at a time on a helper thread; the
//    tasks finish_job() releases are routed like any ready task.
//  * Held tasks cannot deadlock a wait: every waiter registers in
//    `waiters_`, calls flush() when tasks are held and no job is out, and
//    idle workers do the same while someone waits.
//  * Completion: a task holds one reference for its body and one per live
//    child; when the count drops to zero the task goes back to the pool and
//    releases its parent. So taskwait() inside a task waits for the whole
//    subtree. Quiescence for barrier() is "tasks completed == tasks
//    spawned", with per-worker completion counters (no shared counter on
//    the hot path).
//  * Exceptions: the first one thrown by a task goes to its group, else to
//    its parent task (rethrown by the parent's taskwait, or passed on to
//    the parent's own destination if the parent never waits), else to the
//    runtime (rethrown by taskwait()/barrier() outside tasks).
//  * Metrics: per worker, on its own cache line: tasks, bytes, useful ticks
//    (in bodies, minus time the body spent in spawn or taskwait) and
//    runtime ticks (from the end of the previous body, or the start of a
//    successful search, to the next body's start, which covers completion
//    work, plus spawn calls made by bodies). Idle searching and sleeping
//    count as neither. Two clock reads per task (TSC on x86).
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>

#include "numaware/error.hpp"
#include "numaware/tasks.hpp"
#include "os/os.hpp"
#include "tasks/deps.hpp"
#include "tasks/registry.hpp"
#include "tasks/sync.hpp"

namespace numaware::tasks {

using detail::DepNode;
using detail::HomeEntry;
using detail::SpinLock;
using detail::Ticks;

double detail::Ticks::seconds_per_tick() {
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

struct Runtime::Group::State {
    std::atomic<std::uint64_t> count{0};   // unfinished tasks of the group
    std::mutex mutex;                      // guards error
    std::exception_ptr error;
};

namespace {

struct Task : DepNode {
    detail::TaskFn fn;
    Task* parent = nullptr;                 // the spawning task, holds a reference of it
    Runtime::Group::State* group = nullptr;
    std::atomic<std::uint32_t> refs{0};     // 1 for the body + 1 per unrecycled child
    int hint = -1;
    detail::SmallVec<DepInfo, 3> infos;     // parallel to deps
    detail::SmallVec<HomeEntry*, 3> homes;  // parallel to deps
    std::exception_ptr error;               // from children, guarded by the runtime's error mutex
    std::uint64_t body_ticks = 0;           // for the recorded graph
    Task* next_free = nullptr;
    Task* next_batch = nullptr;             // pool: the next chain of free tasks
    std::size_t batch_count = 0;            // pool: tasks in the chain this one heads
};

struct alignas(64) Worker {
    unsigned id = 0;
    unsigned node = 0;
    detail::TaskQueue<Task> queue;
    std::vector<QueueRef> order0;   // steal_order(id, 0), cached
    std::vector<QueueRef> order;    // scratch for later rounds
    // Pool cache, touched only by this worker.
    Task* free = nullptr;
    std::size_t free_count = 0;
    // Accounting of the task running on this worker.
    std::uint64_t since = 0;      // start of runtime-accounted time
    std::uint64_t excluded = 0;   // ticks the current body spent in spawn/taskwait
    std::vector<Task*> deferred;  // finished tasks whose completion waits for the lock
    std::vector<std::pair<detail::TaskQueue<Task>*, Task*>> to_push;   // settle_locked(): after unlocking
    // References to drop from one parent, batched: consecutive children of
    // one task finishing here touch the parent's counter once per batch.
    Task* rel_parent = nullptr;
    std::uint32_t rel_count = 0;
    // 1 while a batch is pending or being flushed: quiescence waits for it,
    // so a parent's disposal (its exception forwarded, its group counted)
    // is done when barrier() or an outside taskwait() returns.
    std::atomic<std::uint32_t> unsettled{0};
    // Metrics: written by this worker only, read by report().
    std::atomic<std::uint64_t> tasks{0};
    std::atomic<std::uint64_t> useful{0};
    std::atomic<std::uint64_t> runtime{0};
    std::atomic<std::uint64_t> dep_bytes{0};
    std::atomic<std::uint64_t> cross_bytes{0};
    std::atomic<std::uint64_t> last_done{0};
    alignas(64) std::atomic<std::uint64_t> completed{0};   // never reset: quiescence
};

struct Tls {
    const void* rt = nullptr;   // the Runtime::Impl the thread works for
    Worker* worker = nullptr;
    Task* current = nullptr;
};
thread_local Tls tls;

constexpr std::size_t pool_cache_max = 256;
constexpr std::size_t pool_batch = 64;
constexpr std::size_t pool_chunk = 64;
constexpr std::size_t max_deferred = 16;
constexpr std::uint32_t max_batched_releases = 1024;

std::string node_list(const std::vector<unsigned>& nodes) {
    std::string s;
    for (unsigned n : nodes) s += (s.empty() ? "" : ",") + std::to_string(n);
    return s;
}

}  // namespace

struct Runtime::Impl {
    Impl(Team& t, std::unique_ptr<Policy> p, RuntimeOptions o, os::Os& os)
        : team(t), policy(std::move(p)), options(o), machine(t.machine()),
          registry(os, o.kernel_homes) {}

    // ---- set-up --------------------------------------------------------
    Team& team;
    std::unique_ptr<Policy> policy;
    const RuntimeOptions options;
    const Machine machine;
    PolicyContext ctx;
    std::vector<std::unique_ptr<Worker>> workers;
    std::vector<std::unique_ptr<detail::TaskQueue<Task>>> node_queues;   // by position in ctx.nodes
    std::vector<int> node_slot;                                          // OS index -> position, -1
    std::thread team_thread;
    double spt = 1e-9;   // seconds per tick

    // ---- under the scheduler lock ----------------------------------------
    detail::SleepLock sched;
    detail::DepTracker tracker;
    detail::HomeRegistry registry;
    TaskId next_id = 0;
    std::unordered_map<TaskId, Task*> held;
    std::vector<DepNode*> ready_scratch;
    std::vector<Released> released_scratch;
    TaskGraph graph;

    // ---- shared atomics ----------------------------------------------------
    alignas(64) std::atomic<std::uint64_t> spawned{0};
    std::atomic<std::uint64_t> held_count{0};
    std::atomic<std::uint64_t> jobs_out{0};   // taken and not yet finished
    std::atomic<int> waiters{0};
    std::atomic<bool> stopping{false};
    std::atomic<std::uint64_t> first_spawn{0};
    std::atomic<std::uint64_t> partition_ticks{0};
    alignas(64) std::atomic<std::uint32_t> epoch{0};
    std::atomic<int> sleepers{0};

    // ---- waiting outside tasks ---------------------------------------------
    std::mutex wait_mutex;
    std::condition_variable wait_cv;

    // ---- exceptions --------------------------------------------------------
    std::mutex error_mutex;
    std::exception_ptr first_error;

    // ---- partition jobs ----------------------------------------------------
    std::mutex job_mutex;
    std::condition_variable job_cv;
    std::deque<std::unique_ptr<PartitionJob>> jobs;
    bool jobs_stop = false;
    std::thread job_thread;

    // ---- task pool ---------------------------------------------------------
    SpinLock pool_lock;
    Task* pool_free = nullptr;      // single tasks, linked by next_free
    Task* pool_batches = nullptr;   // whole worker caches, linked by next_batch
    std::vector<std::unique_ptr<Task[]>> pool_all;

    // =========================================================================
    void start() {
        spt = Ticks::seconds_per_tick();
        const TeamLayout& layout = team.layout();
        ctx.machine = &machine;
        ctx.seed = 1;
        for (const RankPlace& r : layout.ranks) ctx.worker_node.push_back(r.node);
        ctx.nodes = ctx.worker_node;
        std::sort(ctx.nodes.begin(), ctx.nodes.end());
        ctx.nodes.erase(std::unique(ctx.nodes.begin(), ctx.nodes.end()), ctx.nodes.end());
        policy->attach(ctx);
        node_slot.assign(ctx.nodes.empty() ? 0 : ctx.nodes.back() + 1, -1);
        for (std::size_t i = 0; i < ctx.nodes.size(); ++i) {
            node_slot[ctx.nodes[i]] = static_cast<int>(i);
            node_queues.push_back(std::make_unique<detail::TaskQueue<Task>>());
        }
        for (std::size_t w = 0; w < layout.size(); ++w) {
            auto wk = std::make_unique<Worker>();
            wk->id = static_cast<unsigned>(w);
            wk->node = layout.ranks[w].node;
            policy->steal_order(wk->id, 0, wk->order0);
            workers.push_back(std::move(wk));
        }
        team_thread = std::thread([this] {
            team.run([this](TeamContext& c) { worker_main(*workers[c.rank()]); });
        });
    }

    void shutdown() noexcept {
        try {
            wait_all();
        } catch (...) {
        }
        stopping.store(true, std::memory_order_release);
        epoch.fetch_add(1, std::memory_order_release);
        epoch.notify_all();
        if (team_thread.joinable()) team_thread.join();
        {
            std::lock_guard lk(job_mutex);
            jobs_stop = true;
        }
        job_cv.notify_all();
        if (job_thread.joinable()) job_thread.join();
        pool_all.clear();
    }

    // ---- pool ---------------------------------------------------------------
    // Workers keep a private cache of free tasks. A full cache goes to the
    // pool whole, as one chain, and an empty one takes a whole chain back:
    // both O(1) under the pool lock, whatever the chain's length.
    Task* alloc(Worker* w) {
        if (w != nullptr && w->free == nullptr) {
            std::lock_guard lk(pool_lock);
            if (pool_batches != nullptr) {
                Task* chain = pool_batches;
                pool_batches = chain->next_batch;
                chain->next_batch = nullptr;
                w->free = chain;
                w->free_count = chain->batch_count;
            } else {
                for (std::size_t i = 0; i < pool_batch && pool_free != nullptr; ++i) {
                    Task* t = pool_free;
                    pool_free = t->next_free;
                    t->next_free = w->free;
                    w->free = t;
                    ++w->free_count;
                }
            }
        }
        if (w != nullptr && w->free != nullptr) {
            Task* t = w->free;
            w->free = t->next_free;
            --w->free_count;
            // The next free task was last written by whichever worker ran
            // it: fetch its link and header now, not at the next spawn.
            if (Task* next = w->free) {
                __builtin_prefetch(&next->next_free, 1);
                __builtin_prefetch(next, 1);
            }
            return t;
        }
        {
            std::lock_guard lk(pool_lock);
            if (pool_free != nullptr) {
                Task* t = pool_free;
                pool_free = t->next_free;
                return t;
            }
            if (pool_batches != nullptr) {
                Task* t = pool_batches;
                pool_batches = t->next_batch;
                t->next_batch = nullptr;
                if (Task* rest = t->next_free) {
                    rest->batch_count = t->batch_count - 1;
                    rest->next_batch = pool_batches;
                    pool_batches = rest;
                }
                return t;
            }
        }
        // Tasks are made in chunks, not one allocation each.
        auto chunk = std::make_unique<Task[]>(pool_chunk);
        Task* c = chunk.get();
        std::lock_guard lk(pool_lock);
        pool_all.push_back(std::move(chunk));
        for (std::size_t i = 1; i < pool_chunk; ++i) {
            c[i].next_free = pool_free;
            pool_free = &c[i];
        }
        return &c[0];
    }

    void recycle(Worker* w, Task* t) {
        t->fn.reset();
        t->clear_deps();
        t->infos.clear();
        t->homes.clear();
        t->error = nullptr;
        t->parent = nullptr;
        t->group = nullptr;
        if (w != nullptr) {
            t->next_free = w->free;
            w->free = t;
            if (++w->free_count < pool_cache_max) return;
            Task* chain = w->free;
            chain->batch_count = w->free_count;
            w->free = nullptr;
            w->free_count = 0;
            std::lock_guard lk(pool_lock);
            chain->next_batch = pool_batches;
            pool_batches = chain;
            return;
        }
        std::lock_guard lk(pool_lock);
        t->next_free = pool_free;
        pool_free = t;
    }

    // ---- waking ---------------------------------------------------------------
    // Sleepers and pushers meet on one atomic: a pusher's read-modify-write
    // of `sleepers` either sees a sleeper's increment (and wakes it) or
    // precedes it, and then the sleeper's own read-modify-write makes the
    // push visible to its final check of the queues.
    void wake_workers() {
        if (sleepers.fetch_add(0, std::memory_order_seq_cst) > 0) {
            epoch.fetch_add(1, std::memory_order_release);
            epoch.notify_all();
        }
    }
    void wake_waiters() {
        std::lock_guard lk(wait_mutex);
        wait_cv.notify_all();
    }
    bool any_queued() const {
        for (const auto& w : workers)
            if (!w->queue.empty()) return true;
        for (const auto& q : node_queues)
            if (!q->empty()) return true;
        return false;
    }

    // ---- placement (scheduler lock held) ---------------------------------------
    Placement place(Task* t) {
        for (std::size_t k = 0; k < t->deps.size(); ++k)
            t->infos[k].home = t->homes[k]->home.load(std::memory_order_relaxed);
        const TaskView view{t->id, std::span<const DepInfo>(t->infos), {}, t->hint};
        return policy->place(view);
    }
    // Returns true when the task went to a queue.
    bool route(Task* t, Placement p) {
        if (detail::TaskQueue<Task>* q = queue_for(t, p)) {
            q->push(t);
            return true;
        }
        return false;
    }
    // The queue a placement names, or nullptr after holding the task (which
    // needs the scheduler lock; pushing to the queue does not, so callers
    // push after unlocking to keep the lock short).
    detail::TaskQueue<Task>* queue_for(Task* t, Placement p) {
        switch (p.kind) {
            case Placement::Kind::worker:
                if (p.index < workers.size()) return &workers[p.index]->queue;
                break;
            case Placement::Kind::node:
                if (p.index < node_slot.size() && node_slot[p.index] >= 0)
                    return node_queues[static_cast<std::size_t>(node_slot[p.index])].get();
                break;
            case Placement::Kind::hold:
                held.emplace(t->id, t);
                held_count.fetch_add(1, std::memory_order_release);
                return nullptr;
        }
        // A placement outside the team (a policy bug): the first node's
        // queue keeps the task runnable.
        return node_queues.front().get();
    }
    bool route_released() {
        bool pushed = false;
        for (const Released& r : released_scratch) {
            auto it = held.find(r.id);
            if (it == held.end()) continue;   // not held: ignore
            Task* t = it->second;
            held.erase(it);
            held_count.fetch_sub(1, std::memory_order_release);
            pushed |= route(t, r.where);
        }
        released_scratch.clear();
        return pushed;
    }
    void take_jobs() {
        while (auto job = policy->take_job()) {
            jobs_out.fetch_add(1, std::memory_order_release);
            {
                std::lock_guard lk(job_mutex);
                jobs.push_back(std::move(job));
                if (!job_thread.joinable()) job_thread = std::thread([this] { job_main(); });
            }
            job_cv.notify_one();
        }
    }

    void job_main() {
        std::unique_lock lk(job_mutex);
        for (;;) {
            job_cv.wait(lk, [&] { return jobs_stop || !jobs.empty(); });
            if (jobs.empty()) return;
            std::unique_ptr<PartitionJob> job = std::move(jobs.front());
            jobs.pop_front();
            lk.unlock();
            const std::uint64_t t0 = Ticks::now();
            try {
                job->run();
            } catch (...) {
                record_error(nullptr, nullptr, std::current_exception());
            }
            partition_ticks.fetch_add(Ticks::now() - t0, std::memory_order_relaxed);
            bool pushed;
            {
                std::lock_guard g(sched);
                policy->finish_job(std::move(job), released_scratch);
                pushed = route_released();
                take_jobs();
                jobs_out.fetch_sub(1, std::memory_order_release);
            }
            if (pushed) wake_workers();
            if (waiters.load(std::memory_order_acquire) > 0) wake_waiters();
            lk.lock();
        }
    }

    // flush() when tasks are held and no job can release them.
    void maybe_flush() {
        if (held_count.load(std::memory_order_acquire) == 0 || jobs_out.load(std::memory_order_acquire) != 0)
            return;
        bool pushed;
        {
            std::lock_guard g(sched);
            if (held_count.load(std::memory_order_relaxed) == 0 || jobs_out.load(std::memory_order_relaxed) != 0)
                return;
            const bool job = policy->flush(released_scratch);
            pushed = route_released();
            if (job) take_jobs();
        }
        if (pushed) wake_workers();
    }

    // ---- submission ------------------------------------------------------------
    TaskId submit(detail::TaskFn&& fn, std::span<const Dep> deps, int hint, Group::State* group) {
        Worker* me = tls.rt == this ? tls.worker : nullptr;
        Task* parent = me != nullptr ? tls.current : nullptr;
        // Spawns from bodies are runtime time, not the body's useful time.
        // (Sampling one spawn in N was tried: cheaper by a clock read but
        // its estimate swung by 2x, so every spawn is timed.)
        const bool timed = parent != nullptr;
        const std::uint64_t t0 = timed ? Ticks::now() : 0;
        Task* t = alloc(me);
        TaskId id;
        bool pushed = false;
        detail::TaskQueue<Task>* target = nullptr;
        {
            std::unique_lock g(sched);
            if (!deps.empty()) {
                try {
                    tracker.prepare(deps, t->deps);
                } catch (...) {
                    g.unlock();
                    recycle(nullptr, t);
                    throw;
                }
            }
            id = next_id++;
            t->id = id;
            t->fn = std::move(fn);
            t->hint = hint;
            t->group = group;
            t->parent = parent;
            t->refs.store(1, std::memory_order_relaxed);
            if (parent != nullptr) parent->refs.fetch_add(1, std::memory_order_relaxed);
            if (group != nullptr) group->count.fetch_add(1, std::memory_order_relaxed);
            spawned.store(id + 1, std::memory_order_release);
            if (first_spawn.load(std::memory_order_relaxed) == 0)
                first_spawn.store(Ticks::now(), std::memory_order_relaxed);
            bool ready = true;
            if (!t->deps.empty()) {
                ready = tracker.add(*t);
                t->infos.resize(t->deps.size());
                t->homes.resize(t->deps.size());
                for (std::size_t k = 0; k < t->deps.size(); ++k) {
                    const detail::TrackedDep& d = t->deps[k];
                    if (d.reg->cache == nullptr) d.reg->cache = &registry.lookup(d.region, d.bytes);
                    HomeEntry* e = static_cast<HomeEntry*>(d.reg->cache);
                    t->homes[k] = e;
                    t->infos[k] = DepInfo{d.region, d.bytes, d.access, e->home.load(std::memory_order_relaxed)};
                }
            }
            policy->on_submit(TaskView{id, std::span<const DepInfo>(t->infos), std::span<const Edge>(t->preds), hint});
            if (options.record_graph) {
                RecordedTask rec;
                rec.id = id;
                rec.hint = hint;
                for (const DepInfo& d : t->infos) rec.deps.push_back(RecordedDep{d.region, d.bytes, d.access});
                rec.preds.assign(t->preds.begin(), t->preds.end());
                graph.tasks.push_back(std::move(rec));
            }
            take_jobs();
            if (ready) target = queue_for(t, place(t));
        }
        if (target != nullptr) {
            target->push(t);
            pushed = true;
        }
        if (pushed) wake_workers();
        if (timed) {
            const std::uint64_t dt = Ticks::now() - t0;
            me->excluded += dt;
            me->runtime.store(me->runtime.load(std::memory_order_relaxed) + dt, std::memory_order_relaxed);
        }
        return id;
    }

    // ---- exceptions ----------------------------------------------------------------
    // Stores `e` where a task's failure goes: its group, its parent, or the runtime.
    void record_error(Group::State* group, Task* parent, std::exception_ptr e) {
        if (group != nullptr) {
            std::lock_guard lk(group->mutex);
            if (!group->error) group->error = std::move(e);
            return;
        }
        std::lock_guard lk(error_mutex);
        std::exception_ptr& slot = parent != nullptr ? parent->error : first_error;
        if (!slot) slot = std::move(e);
    }
    std::exception_ptr take_error(std::exception_ptr& slot) {
        std::lock_guard lk(error_mutex);
        return std::exchange(slot, nullptr);
    }

    // Drops `n` references of `t`; a task whose count reaches zero is
    // recycled and drops its reference of its parent. On a worker that drop
    // is batched (defer_release): a worker running many children of one task
    // in a row, the usual fan-out, then touches the parent's counter, which
    // the spawning thread increments, once per batch instead of per child.
    // A batch is flushed before the worker runs a task of another parent,
    // when its search for work fails, and while it helps in a wait, so a
    // parent's wait never depends on work that is not its own descendant.
    // A group counts a task until it is recycled, so a group's State is
    // alive while any of its tasks may still forward an exception to it.
    void release(Worker* w, Task* t, std::uint32_t n = 1) {
        while (t != nullptr) {
            // A lone reference needs no read-modify-write: after the body
            // nobody adds references, and others drop only their own.
            if (!(n == 1 && t->refs.load(std::memory_order_acquire) == 1) &&
                t->refs.fetch_sub(n, std::memory_order_acq_rel) != n)
                return;
            Task* parent = t->parent;
            Runtime::Group::State* group = t->group;
            if (t->error) record_error(group, parent, std::exchange(t->error, nullptr));
            recycle(w, t);
            if (group != nullptr && group->count.fetch_sub(1, std::memory_order_acq_rel) == 1) wake_waiters();
            if (parent != nullptr && w != nullptr) {
                defer_release(*w, parent);
                return;
            }
            t = parent;
            n = 1;
        }
    }
    void defer_release(Worker& w, Task* parent) {
        if (w.rel_parent == parent && w.rel_count < max_batched_releases) {
            ++w.rel_count;
            return;
        }
        flush_releases(w);
        w.unsettled.store(1, std::memory_order_relaxed);   // published by the completion count
        w.rel_parent = parent;
        w.rel_count = 1;
    }
    void flush_releases(Worker& w) {
        Task* p = w.rel_parent;
        if (p == nullptr) return;
        const std::uint32_t n = w.rel_count;
        w.rel_parent = nullptr;
        w.rel_count = 0;
        release(&w, p, n);   // may start a batch for the grandparent
        if (w.rel_parent == nullptr) w.unsettled.store(0, std::memory_order_release);
    }

    // ---- running ------------------------------------------------------------------
    Task* find(Worker& w, std::uint64_t round) {
        const std::vector<QueueRef>* order = &w.order0;
        if (round != 0) {
            policy->steal_order(w.id, round, w.order);
            order = &w.order;
        }
        for (const QueueRef& q : *order) {
            Task* t = nullptr;
            if (q.kind == QueueRef::Kind::worker) {
                if (q.index >= workers.size()) continue;
                auto& queue = workers[q.index]->queue;
                t = q.index == w.id ? queue.pop_back() : queue.pop_front();
            } else {
                if (q.index >= node_slot.size() || node_slot[q.index] < 0) continue;
                t = node_queues[static_cast<std::size_t>(node_slot[q.index])]->pop_front();
            }
            if (t != nullptr) return t;
        }
        return nullptr;
    }

    static void add(std::atomic<std::uint64_t>& a, std::uint64_t v) {
        a.store(a.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
    }

    // Two clock reads per task: at the body's start and end. The runtime
    // time of a task (completion, the next search, preparation) is
    // charged from the end of one body to the start of the next.
    void run(Worker& w, Task* t) {
        if (w.rel_parent != nullptr && w.rel_parent != t->parent) flush_releases(w);
        // Deferred completions must not wait for this body: settle them if
        // the lock is free, or anyway when some worker sleeps for want of work.
        if (!w.deferred.empty()) {
            if (sched.try_lock())
                settle_locked(w);
            else if (sleepers.load(std::memory_order_relaxed) > 0)
                flush_deferred(w);
        }
        std::uint64_t bytes = 0, cross = 0;
        for (std::size_t k = 0; k < t->deps.size(); ++k) {
            const std::uint64_t n = t->deps[k].bytes;
            bytes += n;
            const int home = t->homes[k]->home.load(std::memory_order_relaxed);
            if (home == unallocated && t->deps[k].access != Access::in) continue;   // first touch here
            if (home != static_cast<int>(w.node)) cross += n;
        }
        Task* const outer = tls.current;
        tls.current = t;
        const std::uint64_t saved = w.excluded;
        w.excluded = 0;
        const std::uint64_t b1 = Ticks::now();
        add(w.runtime, b1 - w.since);
        try {
            t->fn();
        } catch (...) {
            record_error(t->group, t->parent, std::current_exception());
        }
        const std::uint64_t b2 = Ticks::now();
        const std::uint64_t body = b2 - b1;
        add(w.useful, body > w.excluded ? body - w.excluded : 0);
        w.excluded = saved;
        tls.current = outer;
        add(w.tasks, 1);
        add(w.dep_bytes, bytes);
        add(w.cross_bytes, cross);
        w.last_done.store(b2, std::memory_order_relaxed);
        w.since = b2;
        t->fn.reset();
        t->body_ticks = body;
        complete(w, t);
    }

    // Completion. A task without dependencies needs no lock. One with
    // dependencies needs the scheduler lock; when another thread holds it,
    // the completion is deferred (up to max_deferred per worker) and done
    // in a batch later: at the next completion that gets the lock, or
    // before the worker searches in vain, so the worker runs ready tasks
    // instead of spinning, and a spawning thread keeps the lock hot.
    void complete(Worker& w, Task* t) {
        if (t->deps.empty() && !options.record_graph) {
            finish(w, t);
            return;
        }
        if (!sched.try_lock()) {
            if (w.deferred.size() < max_deferred) {
                w.deferred.push_back(t);
                return;
            }
            sched.lock();
        }
        w.deferred.push_back(t);
        settle_locked(w);
    }

    // Settles every deferred completion of `w`; returns true if any.
    bool flush_deferred(Worker& w) {
        if (w.deferred.empty()) return false;
        sched.lock();
        settle_locked(w);
        return true;
    }

    // Called with the scheduler lock held; releases it.
    void settle_locked(Worker& w) {
        bool pushed = false;
        for (Task* t : w.deferred) {
            for (std::size_t k = 0; k < t->deps.size(); ++k)
                if (t->deps[k].access != Access::in && t->homes[k]->home.load(std::memory_order_relaxed) == unallocated)
                    registry.first_written(*t->homes[k], w.node);
            if (!t->deps.empty()) {
                tracker.complete(*t, ready_scratch);
                for (DepNode* n : ready_scratch) {
                    Task* s = static_cast<Task*>(n);
                    if (detail::TaskQueue<Task>* q = queue_for(s, place(s))) w.to_push.emplace_back(q, s);
                }
                ready_scratch.clear();
            }
            if (options.record_graph && t->id < graph.tasks.size()) {
                graph.tasks[t->id].seconds = static_cast<double>(t->body_ticks) * spt;
                graph.tasks[t->id].worker = w.id;
            }
        }
        sched.unlock();
        for (const auto& [q, s] : w.to_push) q->push(s);
        pushed |= !w.to_push.empty();
        w.to_push.clear();
        if (pushed) wake_workers();
        for (Task* t : w.deferred) finish(w, t);
        w.deferred.clear();
    }

    // The task is done for everyone: references, then the completion count
    // that waiters compare with the spawn count.
    void finish(Worker& w, Task* t) {
        release(&w, t);   // may recycle t
        w.completed.store(w.completed.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    }

    void worker_main(Worker& w) {
        tls = Tls{this, &w, nullptr};
        std::uint64_t round = 0;
        unsigned spins = 0;
        w.since = Ticks::now();
        for (;;) {
            if (Task* t = find(w, round)) {
                run(w, t);
                round = 0;
                spins = 0;
                continue;
            }
            if (flush_deferred(w)) continue;
            flush_releases(w);
            if (round == 0) {
                // The last completion and this search were runtime work.
                const std::uint64_t now = Ticks::now();
                add(w.runtime, now - w.since);
                w.last_done.store(std::max(w.last_done.load(std::memory_order_relaxed), now),
                                  std::memory_order_relaxed);
                if (waiters.load(std::memory_order_acquire) > 0) wake_waiters();
            }
            ++round;
            if (stopping.load(std::memory_order_acquire)) break;
            idle(spins);
            w.since = Ticks::now();
        }
        flush_deferred(w);
        flush_releases(w);
        tls = Tls{};
    }

    // Spin (a few hundred pauses-worth of searches), then sleep on the
    // futex until a push; no sched_yield loop.
    void idle(unsigned& spins) {
        if (waiters.load(std::memory_order_acquire) > 0) maybe_flush();
        ++spins;
        if (spins < 256) {
            for (int i = 0; i < 16; ++i) detail::cpu_relax();
            return;
        }
        const std::uint32_t e = epoch.load(std::memory_order_acquire);
        sleepers.fetch_add(1, std::memory_order_seq_cst);
        const bool work = any_queued() || stopping.load(std::memory_order_acquire) ||
                          (waiters.load(std::memory_order_acquire) > 0 &&
                           held_count.load(std::memory_order_acquire) > 0 &&
                           jobs_out.load(std::memory_order_acquire) == 0);
        if (!work) epoch.wait(e, std::memory_order_acquire);
        sleepers.fetch_sub(1, std::memory_order_relaxed);
        spins = 0;
    }

    // ---- waiting -------------------------------------------------------------------
    bool quiescent() const {
        std::uint64_t done = 0;
        for (const auto& w : workers) done += w->completed.load(std::memory_order_acquire);
        if (done != spawned.load(std::memory_order_acquire)) return false;
        for (const auto& w : workers)
            if (w->unsettled.load(std::memory_order_acquire) != 0) return false;
        return true;
    }

    // Blocks a thread outside the tasks until `done()` holds.
    template <class Pred>
    void block_until(Pred done) {
        waiters.fetch_add(1, std::memory_order_acq_rel);
        wake_workers();   // sleeping workers flush held tasks for us
        for (;;) {
            maybe_flush();
            std::unique_lock lk(wait_mutex);
            if (done()) break;
            wait_cv.wait_for(lk, std::chrono::milliseconds(1));
            if (done()) break;
        }
        waiters.fetch_sub(1, std::memory_order_acq_rel);
    }

    // Runs other tasks on worker `w` (inside a task) until `done()` holds.
    template <class Pred>
    void help_until(Worker& w, Pred done) {
        const std::uint64_t start = Ticks::now();
        waiters.fetch_add(1, std::memory_order_acq_rel);
        std::uint64_t round = 0;
        unsigned spins = 0;
        const std::uint64_t saved_since = w.since;
        w.since = Ticks::now();
        for (;;) {
            flush_releases(w);
            if (done()) break;
            if (Task* t = find(w, round)) {
                run(w, t);
                round = 0;
                spins = 0;
                continue;
            }
            if (flush_deferred(w)) continue;
            if (round == 0) add(w.runtime, Ticks::now() - w.since);
            ++round;
            maybe_flush();
            // Pause between checks; yield only now and then (a yield per
            // check is a syscall storm that slows the CPU's other thread).
            if ((++spins & 63) != 0)
                for (int i = 0; i < 8; ++i) detail::cpu_relax();
            else
                std::this_thread::yield();
            w.since = Ticks::now();
        }
        waiters.fetch_sub(1, std::memory_order_acq_rel);
        w.since = saved_since;
        w.excluded += Ticks::now() - start;
    }

    void wait_all() {
        block_until([&] { return quiescent(); });
    }

    void rethrow_runtime_error() {
        if (std::exception_ptr e = take_error(first_error)) std::rethrow_exception(e);
    }

    void taskwait() {
        if (tls.rt == this && tls.current != nullptr) {
            Task* cur = tls.current;
            help_until(*tls.worker, [&] { return cur->refs.load(std::memory_order_acquire) == 1; });
            if (std::exception_ptr e = take_error(cur->error)) std::rethrow_exception(e);
            return;
        }
        wait_all();
        rethrow_runtime_error();
    }

    void wait_group(Group::State& g) {
        auto done = [&] { return g.count.load(std::memory_order_acquire) == 0; };
        if (tls.rt == this && tls.current != nullptr)
            help_until(*tls.worker, done);
        else
            block_until(done);
        std::exception_ptr e;
        {
            std::lock_guard lk(g.mutex);
            e = std::exchange(g.error, nullptr);
        }
        if (e) std::rethrow_exception(e);
    }

    // ---- metrics -------------------------------------------------------------------
    RunReport report() const {
        RunReport r;
        r.policy = std::string(policy->name());
        r.nodes = ctx.nodes;
        r.tasks_per_node.assign(ctx.nodes.size(), 0);
        std::uint64_t last = 0, runtime_sum = 0;
        std::vector<double> useful;
        useful.reserve(workers.size());
        for (const auto& w : workers) {
            const std::uint64_t n = w->tasks.load(std::memory_order_acquire);
            r.tasks += n;
            r.tasks_per_node[static_cast<std::size_t>(node_slot[w->node])] += n;
            r.dep_bytes += w->dep_bytes.load(std::memory_order_relaxed);
            r.cross_node_bytes += w->cross_bytes.load(std::memory_order_relaxed);
            useful.push_back(static_cast<double>(w->useful.load(std::memory_order_relaxed)));
            runtime_sum += w->runtime.load(std::memory_order_relaxed);
            last = std::max(last, w->last_done.load(std::memory_order_relaxed));
        }
        const std::uint64_t first = first_spawn.load(std::memory_order_relaxed);
        const double nw = static_cast<double>(workers.size());
        if (first != 0 && last > first) r.makespan_s = static_cast<double>(last - first) * spt;
        r.load_balance_pct = load_balance_pct(useful);
        if (r.makespan_s > 0) {
            r.runtime_overhead_pct = static_cast<double>(runtime_sum) * spt / (nw * r.makespan_s) * 100.0;
            r.partition_overhead_pct =
                static_cast<double>(partition_ticks.load(std::memory_order_relaxed)) * spt / (nw * r.makespan_s) * 100.0;
        }
        return r;
    }

    void reset_metrics() {
        for (auto& w : workers) {
            w->tasks.store(0, std::memory_order_relaxed);
            w->useful.store(0, std::memory_order_relaxed);
            w->runtime.store(0, std::memory_order_relaxed);
            w->dep_bytes.store(0, std::memory_order_relaxed);
            w->cross_bytes.store(0, std::memory_order_relaxed);
            w->last_done.store(0, std::memory_order_relaxed);
        }
        first_spawn.store(0, std::memory_order_relaxed);
        partition_ticks.store(0, std::memory_order_relaxed);
    }
};

// ============================================================================
Runtime::Runtime(Team& team, std::unique_ptr<Policy> policy, RuntimeOptions options) {
    if (!policy) throw Error("policy", "is null; pass a policy (make_policy()) or a policy name");
    impl_ = std::make_unique<Impl>(team, std::move(policy), options, os::linux_os());
    impl_->start();
}

Runtime::Runtime(Team& team, std::string_view policy, const PolicyOptions& policy_options, RuntimeOptions options)
    : Runtime(team, make_policy(policy, policy_options), options) {}

Runtime::~Runtime() {
    if (impl_) impl_->shutdown();
}

TaskId Runtime::submit(detail::TaskFn fn, std::span<const Dep> deps, int hint, Group* group) {
    if (!fn) throw Error("fn", "is empty; a task needs a callable");
    return impl_->submit(std::move(fn), deps, hint, group != nullptr ? &group->state() : nullptr);
}

int Runtime::checked_node(unsigned node) const {
    const auto& nodes = impl_->ctx.nodes;
    if (!std::binary_search(nodes.begin(), nodes.end(), node))
        throw Error("node", "node " + std::to_string(node) + " has no workers in this runtime (nodes with workers: " +
                                node_list(nodes) + ")");
    return static_cast<int>(node);
}

void Runtime::taskwait() { impl_->taskwait(); }

void Runtime::barrier() {
    if (tls.rt == impl_.get() && tls.current != nullptr)
        throw Error("barrier", "called from inside a task; a task waits for its children with taskwait()");
    impl_->wait_all();
    impl_->rethrow_runtime_error();
}

void Runtime::register_region(const void* addr, std::size_t bytes, unsigned node) {
    if (addr == nullptr) throw Error("addr", "is null; register a non-empty range");
    if (bytes == 0) throw Error("bytes", "is 0; register a non-empty range");
    const auto start = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(addr));
    if (bytes > std::numeric_limits<std::uint64_t>::max() - start)
        throw Error("bytes", std::to_string(bytes) + " bytes from this address wrap around the address space");
    const Machine& m = impl_->machine;
    const bool known = std::any_of(m.nodes.begin(), m.nodes.end(), [&](const Node& n) { return n.os_index == node; });
    if (!known) {
        std::vector<unsigned> all;
        for (const Node& n : m.nodes) all.push_back(n.os_index);
        throw Error("node", "node " + std::to_string(node) + " is not a node of the runtime's machine (nodes: " +
                                node_list(all) + ")");
    }
    m.check_placement_target(node, "node");
    std::lock_guard g(impl_->sched);
    impl_->registry.register_range(start, bytes, node);
}

RunReport Runtime::report() const { return impl_->report(); }
void Runtime::reset_metrics() { impl_->reset_metrics(); }
const TaskGraph& Runtime::graph() const { return impl_->graph; }
std::size_t Runtime::workers() const { return impl_->workers.size(); }
const std::vector<unsigned>& Runtime::nodes() const { return impl_->ctx.nodes; }
std::string_view Runtime::policy_name() const { return impl_->policy->name(); }

int Runtime::current_worker() {
    return tls.current != nullptr && tls.worker != nullptr ? static_cast<int>(tls.worker->id) : -1;
}

// ---- groups -------------------------------------------------------------------
Runtime::Group::Group(Runtime& rt) : rt_(rt), state_(std::make_unique<State>()) {}

Runtime::Group::~Group() {
    try {
        wait();
    } catch (...) {
    }
}

void Runtime::Group::wait() { rt_.impl_->wait_group(*state_); }

}  // namespace numaware::tasks
