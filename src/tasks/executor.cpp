// tasks/executor.cpp — the executor's set-up and shutdown, submission, the
// scheduler lock's work (placement, held tasks, partition results),
// exceptions and waiting. The design is in executor.hpp.
#include "tasks/executor.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "numaware/placement.hpp"

namespace numaware::tasks::detail {

constinit thread_local Tls tls;

Executor::Executor(Team* t, const Machine& m, const TeamLayout& l, std::unique_ptr<Policy> p, RuntimeOptions o,
                   os::Os& os)
    : team(t), layout(l), policy(std::move(p)), options(o), observer(o.observer), machine(m),
      region_homes(os, o.kernel_homes, o.home_sample_pages),
      partitions([this](std::unique_ptr<PartitionJob> job, std::exception_ptr error, std::uint64_t start,
                        std::uint64_t end) { job_done(std::move(job), std::move(error), start, end); }) {}

void Executor::start() {
    metrics.start();
    stall_ticks = static_cast<std::uint64_t>(std::chrono::duration<double>(options.held_stall).count() /
                                             Ticks::seconds_per_tick());
    ctx.machine = &machine;
    ctx.seed = 1;
    for (const RankPlace& r : layout.ranks) ctx.worker_node.push_back(r.node);
    ctx.nodes = ctx.worker_node;
    std::sort(ctx.nodes.begin(), ctx.nodes.end());
    ctx.nodes.erase(std::unique(ctx.nodes.begin(), ctx.nodes.end()), ctx.nodes.end());
    policy->attach(ctx);
    unlocked_completion = policy->concurrent_place() && !options.record_graph;
    policy_uses_submissions = policy->uses_submissions();
    policy_reads_homes = policy->reads_homes();
    policy_places_by_id = policy->places_by_id();
    policy_may_hold = !policy->concurrent_place();
    const std::size_t online = std::thread::hardware_concurrency();
    const std::size_t cpus = online == 0 ? machine.cpu_count() : std::min(machine.cpu_count(), online);
    oversubscribed = cpus != 0 && layout.size() > cpus;
    fixed_destination = policy->fixed_destination();
    queues.init(ctx.nodes, ctx.worker_node);
    for (std::size_t i = 0; i < ctx.nodes.size(); ++i) node_wake.push_back(std::make_unique<NodeWake>());
    for (std::size_t w = 0; w < layout.size(); ++w) {
        auto wk = std::make_unique<Worker>(*this, static_cast<unsigned>(w), layout.ranks[w].node);
        // A hosted seat's thread is elsewhere until it waits in the runtime.
        if (team == nullptr) wk->running_since.store(seat_takes_no_task, std::memory_order_relaxed);
        queues.watch(static_cast<std::size_t>(queues.slot_of(wk->node)), &wk->running_since, &wk->helping_within);
        policy->steal_order(wk->id, 0, wk->steal.round0);
        for (const QueueListing& l : queue_listings(*policy, wk->id)) {
            if (l.first_round == 0 || l.queue.kind != QueueRef::Kind::node) continue;
            const auto workers_there = static_cast<std::size_t>(
                std::count(ctx.worker_node.begin(), ctx.worker_node.end(), l.queue.index));
            wk->steal.later.push_back({l.queue.index, l.first_round, backlog_limit(workers_there, l.first_round)});
        }
        workers.push_back(std::move(wk));
    }
    if (observer != nullptr)
        observer->on_setup(ctx.worker_node,
                           std::string(policy->name()) + " on " + (machine.name.empty() ? "live" : machine.name));
    if (team != nullptr)
        team_thread = std::thread([this] {
            team->run([this](TeamContext& c) { workers[c.rank()]->main(); });
        });
}

void Executor::shutdown() noexcept {
    // Hosted workers wait for their tasks themselves (Runtime::run_until);
    // nobody would run what is left.
    if (team != nullptr) try {
            wait_all();
        } catch (...) {
        }
    stopping.store(true, std::memory_order_release);
    for (auto& n : node_wake) {
        n->epoch.fetch_add(1, std::memory_order_release);
        n->epoch.notify_all();
    }
    if (team_thread.joinable()) team_thread.join();
    partitions.stop();
    pool.destroy_all();
}

void Executor::wake_waiters() {
    std::lock_guard lk(wait_mutex);
    wait_cv.notify_all();
}

// ---- held tasks and partition jobs (scheduler lock held) ------------------------
// Returns true when a released task went to a queue.
bool Executor::route_released() {
    bool pushed = false;
    for (const Released& r : released_scratch) {
        auto it = held.find(r.id);
        if (it == held.end()) continue;   // not held: ignore
        Task* t = it->second;
        held.erase(it);
        held_count.fetch_sub(1, std::memory_order_release);
        // Asked to place it now: with the homes as they are (a policy that
        // holds it again keeps it, as queue_for() does for any hold).
        const Destination where = r.place_again ? place(t, t->id) : r.where;
        if (QueueSlot* q = queue_for(t, where)) {
            q->queue.push(t);
            pushed = true;
        }
    }
    released_scratch.clear();
    return pushed;
}

void Executor::take_jobs() {
    while (auto job = policy->take_job()) partitions.submit(std::move(job));
}

// On the partition service's thread.
void Executor::job_done(std::unique_ptr<PartitionJob> job, std::exception_ptr error, std::uint64_t start,
                        std::uint64_t end) {
    if (error) record_error(nullptr, nullptr, std::move(error));
    metrics.add_partition(end - start);
    if (observer != nullptr) observer->on_partition_done(job->tasks(), metrics.seconds(start), metrics.seconds(end));
    bool pushed;
    {
        std::lock_guard g(sched);
        policy->finish_job(std::move(job), released_scratch);
        pushed = route_released();
        take_jobs();
        partitions.settled();
    }
    // Held tasks left with no job outstanding are work for a hosted waiter
    // to flush (Worker::wait_hosted checks for them before it sleeps, and
    // sleeps while a job is outstanding): wake the sleepers for them too,
    // or a hosted runtime whose threads all sleep never flushes them. (A
    // team's held tasks are flushed by the waiter outside the tasks, which
    // polls: block_until.)
    const bool hosted_held =
        team == nullptr && held_count.load(std::memory_order_acquire) > 0 && partitions.outstanding() == 0;
    if (pushed || hosted_held) wake_workers();
    if (waiters.load(std::memory_order_acquire) > 0) wake_waiters();
}

void Executor::flush_held(int waiter) {
    // A waiter that may not cut yet asks without the lock first: a hosted
    // team's waiters search hundreds of times before they sleep, and would
    // each take the scheduler lock here that the producer's submissions
    // need. Under the lock it asks again: a submission may have ended
    // while it waited for the lock (submit() stamps submitted_at last).
    if (waiter != any_waiter && !may_cut(waiter, Ticks::now())) return;
    bool pushed;
    {
        std::lock_guard g(sched);
        if (held_count.load(std::memory_order_relaxed) == 0 || partitions.outstanding(std::memory_order_relaxed) != 0)
            return;
        // Under the lock, as the submission that may_cut() looks at.
        if (waiter != any_waiter && !may_cut(waiter, Ticks::now())) return;
        const bool job = policy->flush(released_scratch);
        pushed = route_released();
        if (job) take_jobs();
    }
    if (pushed) wake_workers();
}

std::uint64_t Executor::ticks_per_round() const {
    std::uint64_t tasks = 0, useful = 0;
    for (const auto& w : workers) {
        tasks += w->counters.tasks.load(std::memory_order_relaxed);
        useful += w->counters.useful.load(std::memory_order_relaxed);
    }
    if (tasks == 0) return 0;
    return std::max<std::uint64_t>(1, useful / tasks / rounds_per_task);
}

// ---- submission ------------------------------------------------------------
void Executor::init_task(Task& t, TaskId id, TaskFn&& fn, int hint, Runtime::Group::State* group, Task* parent) {
    t.id = id;
    t.fn = std::move(fn);
    t.hint = hint;
    t.group = group;
    t.parent = parent;
    t.depth = parent != nullptr ? parent->depth + 1 : 1;
    t.refs.store(body_refs, std::memory_order_relaxed);
    t.children = 0;
    t.detach_pending.store(0, std::memory_order_relaxed);
    if (parent != nullptr) ++parent->children;   // the parent's body runs on this thread
    if (group != nullptr) group->count.fetch_add(1, std::memory_order_relaxed);
}

TaskId Executor::submit(TaskFn&& fn, std::span<const Dep> deps, int hint, Runtime::Group::State* group) {
    Worker* me = tls.rt == this ? tls.worker : nullptr;
    Task* parent = me != nullptr ? tls.current : nullptr;
    // Spawns from bodies are runtime time, not the body's useful time.
    // (Sampling one spawn in N was tried: cheaper by a clock read but
    // its estimate swung by 2x, so every spawn is timed.)
    // An observer gets the same read as the task's creation time: taken
    // before the task is known to the tracker, it precedes the readiness
    // that any completion can announce.
    const bool timed = parent != nullptr;
    const std::uint64_t t0 = timed || observer != nullptr ? Ticks::now() : 0;
    Task* t = pool.alloc(me != nullptr ? &me->cache : nullptr);
    const int spawner_node = me != nullptr ? static_cast<int>(me->node) : -1;
    TaskId id;
    bool ready = true;
    QueueSlot* target = nullptr;
    bool first_held = false;   // hosted: sleeping waiters must watch the window (may_cut())
    if (deps.empty() && unlocked_completion && !policy_uses_submissions) {
        // Nothing of the lock's to do: the task is numbered by the count
        // every spawn adds to, and placed by a policy that places
        // concurrently and holds nothing.
        id = spawned.fetch_add(1, std::memory_order_acq_rel);
        init_task(*t, id, std::move(fn), hint, group, parent);
        metrics.note_spawn();
        target = &queues.queue_for(place(t, id, spawner_node));
    } else {
        std::unique_lock g(sched);
        if (!deps.empty()) {
            try {
                tracker.prepare(deps, t->deps);
            } catch (...) {
                g.unlock();
                pool.recycle(nullptr, t);
                throw;
            }
        }
        id = spawned.fetch_add(1, std::memory_order_acq_rel);
        init_task(*t, id, std::move(fn), hint, group, parent);
        metrics.note_spawn();
        std::span<const Edge> preds;
        if (!t->deps.empty()) {
            tracker.add(*t);
            preds = tracker.preds();
            t->homes.resize(t->deps.size());
            for (std::size_t k = 0; k < t->deps.size(); ++k) {
                const TrackedDep& d = t->deps[k];
                if (d.reg->cache == nullptr) d.reg->cache = &region_homes.add(d.address(), d.bytes);
                t->homes[k] = static_cast<HomeEntry*>(d.reg->cache);
            }
        }
        // The policy's view, with the homes as they are now, only where
        // someone looks: a worker on another CPU writes a home when the
        // region's first writer finishes, and reading it waits for that CPU.
        std::span<const DepInfo> infos;
        if (policy_uses_submissions || options.record_graph) {
            submit_infos.resize(t->deps.size());
            infos = dep_infos(*t, submit_infos.data());
        }
        if (policy_uses_submissions) policy->on_submit(TaskView{id, infos, preds, hint});
        if (options.record_graph) {
            RecordedTask rec;
            rec.id = id;
            rec.hint = hint;
            for (const DepInfo& d : infos) rec.deps.push_back(RecordedDep{d.region, d.bytes, d.access});
            rec.preds.assign(preds.begin(), preds.end());
            graph.tasks.push_back(std::move(rec));
        }
        if (policy_uses_submissions) take_jobs();
        if (tracker.has_forgotten()) {
            tracker.take_forgotten(forgotten_scratch);
            region_homes.forget(forgotten_scratch);
        }
        // From here a finishing predecessor may make the task ready.
        if (!t->deps.empty()) ready = tracker.commit(*t);
        if (ready) {
            target = queue_for(t, place(t, t->id, spawner_node));
            first_held = target == nullptr && team == nullptr && held_count.load(std::memory_order_relaxed) == 1;
        }
        // Only a policy that holds tasks (RIP's windows) needs it: the line
        // is written by every spawning thread. Stamped as the submission
        // ends, so that a slow one does not count as the producer's stall:
        // a waiter that asked may_cut() during it waits for this lock and
        // then sees the new stamp (flush_held()). The first submission of a
        // runtime maps and faults in the tracker's and the homes' first
        // chunks: 0.6 ms on the 2-core host, 18-140 ms in the emulated guest,
        // whose window was then cut after its first task.
        if (team == nullptr && policy_uses_submissions) {
            submitted_at.store(Ticks::now(), std::memory_order_relaxed);
            submitted_by.store(me != nullptr ? static_cast<int>(me->id) : -1, std::memory_order_relaxed);
        }
    }
    // A running task's child placed on its node waits in its worker's kept
    // queue (NodeQueues::near_spawner).
    if (target != nullptr && parent != nullptr) target = queues.near_spawner(*target, me->id);
    // Before the push: once queued, the task may start.
    if (observer != nullptr) announce_created(id, ready, t0);
    if (target != nullptr) {
        target->queue.push(t);
        wake_node(target->node);
    }
    if (first_held) wake_workers();
    if (timed) {
        const std::uint64_t dt = Ticks::now() - t0;
        me->excluded += dt;
        WorkerCounters::add(me->counters.runtime, dt);
    }
    return id;
}

void Executor::announce_created(TaskId id, bool ready, std::uint64_t at) {
    const double t = metrics.seconds(at);
    observer->on_task_created(id, t);
    if (ready) observer->on_task_ready(id, t);
}

// ---- exceptions ----------------------------------------------------------------
// Stores `e` where a task's failure goes: its group, its parent, or the runtime.
void Executor::record_error(Runtime::Group::State* group, Task* parent, std::exception_ptr e) {
    if (group != nullptr) {
        std::lock_guard lk(group->mutex);
        if (!group->error) group->error = std::move(e);
        return;
    }
    std::lock_guard lk(error_mutex);
    std::exception_ptr& slot = parent != nullptr ? parent->error : first_error;
    if (!slot) slot = std::move(e);
}

std::exception_ptr Executor::take_error(std::exception_ptr& slot) {
    std::lock_guard lk(error_mutex);
    return std::exchange(slot, nullptr);
}

void Executor::rethrow_runtime_error() {
    if (std::exception_ptr e = take_error(first_error)) std::rethrow_exception(e);
}

// ---- waiting -------------------------------------------------------------------
std::uint64_t Executor::completed_count() const {
    std::uint64_t done = 0;
    for (const auto& w : workers) done += w->completed.load(std::memory_order_acquire);
    return done;
}

bool Executor::quiescent() const {
    if (completed_count() != spawned.load(std::memory_order_acquire)) return false;
    for (const auto& w : workers)
        if (w->unsettled.load(std::memory_order_acquire) != 0) return false;
    return true;
}

std::uint64_t Executor::unfinished() const {
    const std::uint64_t done = completed_count();
    const std::uint64_t made = spawned.load(std::memory_order_acquire);
    return made > done ? made - done : 0;
}

// Blocks a thread outside the tasks until `done()` holds.
template <class Pred>
void Executor::block_until(Pred done) {
    waiters.fetch_add(1, std::memory_order_acq_rel);
    wake_workers();   // sleeping workers flush held tasks for us
    for (;;) {
        maybe_flush();
        std::unique_lock lk(wait_mutex);
        if (done()) break;
        wait_cv.wait_for(lk, outside_poll);
        if (done()) break;
    }
    waiters.fetch_sub(1, std::memory_order_acq_rel);
}

void Executor::wait_all() {
    block_until([&] { return quiescent(); });
}

void Executor::taskwait() {
    if (tls.rt == this && tls.current != nullptr) {
        Task* cur = tls.current;
        // Every child finished: only the body's share is left.
        const std::uint64_t body_only = body_refs - cur->children;
        tls.worker->help_until([&] { return cur->refs.load(std::memory_order_acquire) == body_only; });
        if (std::exception_ptr e = take_error(cur->error)) std::rethrow_exception(e);
        return;
    }
    wait_all();
    rethrow_runtime_error();
}

void Executor::wait_group(Runtime::Group::State& g) {
    auto done = [&] { return g.count.load(std::memory_order_acquire) == 0; };
    if (tls.rt == this && tls.current != nullptr)
        tls.worker->help_until(done);
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
RunReport Executor::report() const {
    std::vector<RunMetrics::WorkerView> views;
    views.reserve(workers.size());
    for (const auto& w : workers)
        views.push_back({&w->counters, static_cast<std::size_t>(queues.slot_of(w->node))});
    RunReport r = metrics.report(std::string(policy->name()), ctx.nodes, views);
    if (region_homes.kernel_homes())
        r.homes = region_homes.sample_pages() == 0
                      ? "kernel"
                      : "kernel, " + std::to_string(region_homes.sample_pages()) + " pages sampled a region";
    else
        r.homes = "first writers";
    if (const int err = region_homes.kernel_refusal())
        r.homes += " (the kernel refused move_pages: " + errno_name(err) + ")";
    return r;
}

void Executor::reset_metrics() {
    for (auto& w : workers) w->counters.reset();
    metrics.reset();
}

}  // namespace numaware::tasks::detail
