// tasks/worker.cpp — the worker loop: search, run, complete, sleep.
#include "tasks/worker.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "tasks/executor.hpp"
#include "util/debug_assert.hpp"

namespace numaware::tasks::detail {

namespace {
constexpr std::size_t max_deferred = 16;
constexpr std::uint32_t max_batched_releases = 1024;
}  // namespace

std::uint64_t IdleClock::round(const Executor& ex) {
    if (searches == 0) return 0;
    // Until a task has finished the mean is unknown: look again now and then.
    if (ticks_per_round == 0 && (searches & 63) == 0) ticks_per_round = ex.ticks_per_round();
    if (ticks_per_round == 0) return 0;
    const std::uint64_t now = Ticks::now();
    return now > start ? (now - start) / ticks_per_round : 0;
}

void IdleClock::failed(const Executor& ex, std::uint64_t now) {
    if (searches++ != 0) return;
    start = now;
    ticks_per_round = ex.ticks_per_round();
}

void Worker::main() {
    tls = Tls{&ex_, this, nullptr};
    IdleClock clock;
    unsigned spins = 0;
    since = Ticks::now();
    for (;;) {
        if (Found f = ex_.queues.find(id, node, clock.round(ex_), clock.ticks_per_round, *ex_.policy, steal)) {
            run(f);
            clock.searches = 0;
            spins = 0;
            continue;
        }
        if (flush_deferred() || take_fulfilled()) continue;
        flush_releases();
        const std::uint64_t now = Ticks::now();
        if (clock.searches == 0) {
            // The last completion and this search were runtime work.
            WorkerCounters::add(counters.runtime, now - since);
            counters.last_done.store(std::max(counters.last_done.load(std::memory_order_relaxed), now),
                                     std::memory_order_relaxed);
            // A thread waiting outside the tasks waits for quiescence (a
            // group's last task wakes it in release()): wake it only then,
            // not every time a worker runs dry, which on a machine with no
            // spare CPU took the CPU from the thread that spawns.
            if (ex_.waiters.load(std::memory_order_acquire) > 0 && ex_.quiescent()) ex_.wake_waiters();
        }
        clock.failed(ex_, now);
        if (ex_.stopping.load(std::memory_order_acquire)) break;
        // Asleep, it looked at nothing: its idle time starts again, so a
        // push does not find it ready to steal across nodes at once.
        if (idle(spins, clock)) clock.start = Ticks::now();
        since = Ticks::now();
    }
    flush_deferred();
    flush_releases();
    tls = Tls{};
}

// Spin (a few hundred pauses-worth of searches), then sleep on the
// futex until a push; no sched_yield loop. While work is queued where this
// worker may not take it yet, it pauses a round at a time (pause_ticks()).
bool Worker::idle(unsigned& spins, IdleClock& clock) {
    if (ex_.waiters.load(std::memory_order_acquire) > 0) ex_.maybe_flush();
    if (spins < idle_searches) {
        ++spins;
        spin_pause(idle_search_pauses);
        return false;
    }
    if (const std::uint64_t pause = pause_ticks(clock)) {
        // The idle clock runs on: the steal delay counts this pause.
        sleep_ticks(pause);
        return false;
    }
    const bool work = sleep_unless(
        [&] {
            return ex_.queues.any_queued() || ex_.stopping.load(std::memory_order_acquire) ||
                   ex_.fulfilled_count.load(std::memory_order_acquire) != 0 ||
                   (ex_.waiters.load(std::memory_order_acquire) > 0 &&
                    ex_.held_count.load(std::memory_order_acquire) > 0 && ex_.partitions.outstanding() == 0);
        },
        [](std::atomic<std::uint32_t>& epoch, std::uint32_t seen) { epoch.wait(seen, std::memory_order_acquire); });
    spins = 0;
    return !work;
}

void Worker::sleep_ticks(std::uint64_t ticks) {
    std::this_thread::sleep_for(std::chrono::duration<double>(static_cast<double>(ticks) * Ticks::seconds_per_tick()));
}

template <class HasWork, class Sleep>
bool Worker::sleep_unless(HasWork has_work, Sleep sleep) {
    Executor::NodeWake& mine = *ex_.node_wake[static_cast<std::size_t>(ex_.queues.slot_of(node))];
    const std::uint32_t seen = mine.epoch.load(std::memory_order_acquire);
    mine.sleepers.fetch_add(1, std::memory_order_seq_cst);
    ex_.sleepers.fetch_add(1, std::memory_order_seq_cst);
    full_fence();   // against the pushers' (Executor::wake_node)
    const bool work = has_work();
    if (!work) sleep(mine.epoch, seen);
    ex_.sleepers.fetch_sub(1, std::memory_order_relaxed);
    mine.sleepers.fetch_sub(1, std::memory_order_relaxed);
    return work;
}

// A worker whose node has run dry spun until its steal delay let it take
// a farther node's queued tasks. Where workers outnumber the CPUs (a
// container's CPU quota, a guest whose vCPUs share the host's cores) that
// spinning took the CPU from the workers running those very tasks: their
// node fell behind until it was stolen from (the emulated 4- and 8-node
// machines, BENCHMARKS.md). It pauses instead, a round (1/rounds_per_task
// of the mean task) at a time, each followed by a search, so that it still
// steals within a round of its delay and sees its own node's pushes within
// a round. Rounds shorter than the kernel's default timer slack (50 us,
// prctl(2) PR_SET_TIMERSLACK), which a sleep cannot time, keep the spin.
std::uint64_t Worker::pause_ticks(IdleClock& clock) {
    constexpr double timer_slack_seconds = 50e-6;
    if (clock.ticks_per_round == 0 ||
        static_cast<double>(clock.ticks_per_round) * Ticks::seconds_per_tick() < timer_slack_seconds)
        return 0;
    if (!deferred.empty() || ex_.stopping.load(std::memory_order_acquire) ||
        ex_.fulfilled_count.load(std::memory_order_acquire) != 0 ||
        ex_.held_count.load(std::memory_order_acquire) != 0 || !ex_.queues.any_queued())
        return 0;
    return ex_.queues.any_queued(steal.at(*ex_.policy, id, clock.round(ex_))) ? 0 : clock.ticks_per_round;
}

// Two clock reads per task: at the body's start and end. The runtime
// time of a task (completion, the next search, preparation) is
// charged from the end of one body to the start of the next.
void Worker::run(const Found& f) {
    Task* const t = f.task;
    // Only the worker's own thread runs its tasks, one body at a time (a
    // body waiting in taskwait runs others nested, as its own callee).
    NW_DEBUG_ASSERT(tls.worker == this && t != nullptr && t != tls.current);
    if (rel_parent != nullptr && rel_parent != t->parent) flush_releases();
    // Deferred completions must not wait for this body: settle them if
    // the lock is free, or anyway when some worker sleeps for want of work.
    if (!deferred.empty()) {
        if (ex_.sched.try_lock())
            settle_locked();
        else if (ex_.sleepers.load(std::memory_order_relaxed) > 0)
            flush_deferred();
    }
    std::uint64_t bytes = 0, cross = 0;
    for (std::size_t k = 0; k < t->deps.size(); ++k) {
        const std::uint64_t n = t->deps[k].bytes;
        bytes += n;
        cross += cross_node_bytes(*t->homes[k], n, t->deps[k].access, node);
    }
    Task* const outer = tls.current;
    tls.current = t;
    const std::uint64_t saved = excluded;
    excluded = 0;
    std::uint64_t b1 = Ticks::now();
    if (ex_.observer != nullptr) b1 = announce_start(t, f.stolen, b1);
    const std::uint64_t outer_running = running_since.load(std::memory_order_relaxed);
    running_since.store(b1, std::memory_order_relaxed);
    WorkerCounters::add(counters.runtime, b1 - since);
    try {
        t->fn();
    } catch (...) {
        ex_.record_error(t->group, t->parent, std::current_exception());
    }
    const std::uint64_t b2 = Ticks::now();
    running_since.store(outer_running, std::memory_order_relaxed);
    const std::uint64_t body = b2 - b1;
    WorkerCounters::add(counters.useful, body > excluded ? body - excluded : 0);
    excluded = saved;
    tls.current = outer;
    WorkerCounters::add(counters.tasks, 1);
    WorkerCounters::add(counters.dep_bytes, bytes);
    WorkerCounters::add(counters.cross_bytes, cross);
    if (f.across) {
        WorkerCounters::add(counters.steals, 1);
        WorkerCounters::add(counters.steal_cross_bytes, cross);
        if (f.rule == TakeRule::backlog) WorkerCounters::add(counters.steals_backlog, 1);
        if (f.rule == TakeRule::occupied) WorkerCounters::add(counters.steals_occupied, 1);
    }
    counters.last_done.store(b2, std::memory_order_relaxed);
    since = b2;
    // The hook's own time falls after `since`: runtime time, not the body's.
    if (ex_.observer != nullptr) ex_.observer->on_task_finished(t->id, id, node, ex_.metrics.seconds(b2));
    t->fn.reset();
    t->body_ticks = body;
    // A detached task completes with the later of its body and fulfill().
    if (t->detach_pending.load(std::memory_order_acquire) != 0 &&
        t->detach_pending.fetch_sub(1, std::memory_order_acq_rel) != 1)
        return;
    complete(t);
}

// Completions that fulfill() handed over from threads without a seat.
bool Worker::take_fulfilled() {
    if (ex_.fulfilled_count.load(std::memory_order_acquire) == 0) return false;
    std::vector<Task*> mine;
    {
        std::lock_guard g(ex_.fulfilled_mutex);
        mine.swap(ex_.fulfilled);
        ex_.fulfilled_count.store(0, std::memory_order_release);
    }
    for (Task* t : mine) complete(t);
    return !mine.empty();
}

// Tells the observer at `at`, the body's clock read; returns a fresh one
// so that the hooks' time counts as runtime time, not as the body's.
std::uint64_t Worker::announce_start(const Task* t, bool stolen, std::uint64_t at) {
    const double s = ex_.metrics.seconds(at);
    if (stolen) ex_.observer->on_task_stolen(t->id, id, s);
    ex_.observer->on_task_started(t->id, id, node, s);
    return Ticks::now();
}

// Completion. A task without dependencies needs no lock. One with
// dependencies needs the scheduler lock; when another thread holds it,
// the completion is deferred (up to max_deferred per worker) and done
// in a batch later: at the next completion that gets the lock, or
// before the worker searches in vain, so the worker runs ready tasks
// instead of spinning, and a spawning thread keeps the lock hot.
void Worker::complete(Task* t) {
    if (t->deps.empty() && !ex_.options.record_graph) {
        finish(t);
        return;
    }
    if (ex_.unlocked_completion) {
        bool settled = true;
        for (std::size_t k = 0; k < t->deps.size() && settled; ++k)
            settled = t->deps[k].access == AccessMode::in || ex_.region_homes.written_settled(*t->homes[k]);
        if (settled) {
            complete_unlocked(t);
            return;
        }
    }
    if (!ex_.sched.try_lock()) {
        if (deferred.size() < max_deferred) {
            deferred.push_back(t);
            return;
        }
        ex_.sched.lock();
    }
    deferred.push_back(t);
    settle_locked();
}

// A completion without the lock (Executor::unlocked_completion): the
// regions it wrote get their homes, the tracker names the tasks it made
// ready, and this worker places and pushes them.
void Worker::complete_unlocked(Task* t) {
    for (std::size_t k = 0; k < t->deps.size(); ++k)
        if (t->deps[k].access != AccessMode::in) ex_.region_homes.first_written(*t->homes[k], node);
    ex_.tracker.complete(*t, made_ready);
    for (const ReadyNode& n : made_ready) {
        Task* s = static_cast<Task*>(n.node);
        prefetch_for_run(s);
        if (ex_.observer != nullptr) ready_ids.push_back(s->id);
        to_push.emplace_back(&ex_.queues.queue_for(ex_.place(s, n.id)), s);
    }
    made_ready.clear();
    push_ready();
    finish(t);
}

// Tells the observer, then pushes to_push and wakes one node per queue's node.
void Worker::push_ready() {
    // Before the pushes: a pushed task may start at once.
    if (!ready_ids.empty()) announce_ready();
    for (const auto& [q, s] : to_push) {
        q->queue.push(s);
        if (std::find(to_wake.begin(), to_wake.end(), q->node) == to_wake.end()) to_wake.push_back(q->node);
    }
    to_push.clear();
    for (std::size_t n : to_wake) ex_.wake_node(n);
    to_wake.clear();
}

// Settles every deferred completion; returns true if any.
bool Worker::flush_deferred() {
    if (deferred.empty()) return false;
    ex_.sched.lock();
    settle_locked();
    return true;
}

// Called with the scheduler lock held; releases it.
void Worker::settle_locked() {
    for (Task* t : deferred) {
        for (std::size_t k = 0; k < t->deps.size(); ++k)
            if (t->deps[k].access != AccessMode::in) ex_.region_homes.first_written(*t->homes[k], node);
        if (!t->deps.empty()) {
            ex_.tracker.complete(*t, ex_.ready_scratch);
            for (const ReadyNode& n : ex_.ready_scratch) {
                Task* s = static_cast<Task*>(n.node);
                prefetch_for_run(s);
                if (ex_.observer != nullptr) ready_ids.push_back(s->id);
                if (QueueSlot* q = ex_.queue_for(s, ex_.place(s, n.id))) to_push.emplace_back(q, s);
            }
            ex_.ready_scratch.clear();
        }
        if (ex_.options.record_graph && t->id < ex_.graph.tasks.size()) {
            ex_.graph.tasks[t->id].seconds = static_cast<double>(t->body_ticks) * ex_.metrics.seconds_per_tick();
            ex_.graph.tasks[t->id].worker = id;
        }
    }
    ex_.sched.unlock();
    push_ready();
    for (Task* t : deferred) finish(t);
    deferred.clear();
}

void Worker::announce_ready() {
    const double now = ex_.metrics.seconds(Ticks::now());
    for (TaskId r : ready_ids) ex_.observer->on_task_ready(r, now);
    ready_ids.clear();
}

// The task is done for everyone: references, then the completion count
// that waiters compare with the spawn count.
void Worker::finish(Task* t) {
    release(t, body_refs - t->children);   // the body's share; may recycle t
    completed.store(completed.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

// Drops `n` references of `t`; a task whose count reaches zero is
// recycled and drops its reference of its parent. That drop is batched
// (defer_release): a worker running many children of one task in a row,
// the usual fan-out, then touches the parent's counter once per batch
// instead of per child. A batch is flushed before the worker runs a task
// of another parent, when its search for work fails, and while it helps
// in a wait, so a parent's wait
// never depends on work that is not its own descendant. A group counts a
// task until it is recycled, so a group's State is alive while any of its
// tasks may still forward an exception to it.
void Worker::release(Task* t, std::uint64_t n) {
    // The last references need no read-modify-write: once the body has
    // given back its share nobody adds references, and others drop only
    // their own; before that, the count stays above any children's share.
    if (t->refs.load(std::memory_order_acquire) != n &&
        t->refs.fetch_sub(n, std::memory_order_acq_rel) != n)
        return;
    Task* parent = t->parent;
    Runtime::Group::State* group = t->group;
    if (t->error) ex_.record_error(group, parent, std::exchange(t->error, nullptr));
    ex_.pool.recycle(&cache, t);
    if (group != nullptr && group->count.fetch_sub(1, std::memory_order_acq_rel) == 1) ex_.wake_waiters();
    if (parent != nullptr) defer_release(parent);
}

void Worker::defer_release(Task* parent) {
    if (rel_parent == parent && rel_count < max_batched_releases) {
        ++rel_count;
        return;
    }
    flush_releases();
    unsettled.store(1, std::memory_order_relaxed);   // published by the completion count
    rel_parent = parent;
    rel_count = 1;
}

void Worker::flush_releases() {
    Task* p = rel_parent;
    if (p == nullptr) return;
    const std::uint32_t n = rel_count;
    rel_parent = nullptr;
    rel_count = 0;
    release(p, n);   // may start a batch for the grandparent
    if (rel_parent == nullptr) unsettled.store(0, std::memory_order_release);
}

void Worker::spin_pause(unsigned pauses) {
    if (ex_.oversubscribed) {
        std::this_thread::yield();
        return;
    }
    for (unsigned i = 0; i < pauses; ++i) cpu_relax();
}

// ---- helping in a wait ------------------------------------------------------------
Worker::Helping Worker::help_begin() {
    const std::uint64_t start = Ticks::now();
    // Counted for the flush of held tasks only: otherwise the count's line
    // moved between the CPUs twice a taskwait (19% of wait_hosted in the
    // shim's fib), and workers that ran dry checked for quiescence for it.
    if (ex_.policy_may_hold) ex_.waiters.fetch_add(1, std::memory_order_acq_rel);
    const Task* const saved = helping_within.load(std::memory_order_relaxed);
    const Helping h{saved, start, since, running_since.load(std::memory_order_relaxed), IdleClock{}, 0};
    const Task* const within = tls.current != nullptr ? tls.current : saved;
    // Helping outside tasks it takes any work (idle); inside one, only that
    // task's descendants: thieves leave it only those (NodeQueues::leaves_to_own_node).
    helping_within.store(within, std::memory_order_relaxed);
    running_since.store(within == nullptr ? 0 : seat_helping(within->depth), std::memory_order_relaxed);
    since = Ticks::now();
    return h;
}

// One search of the queues while helping, and the task it found run: true
// if there was one.
bool Worker::help_run_one(Helping& h) {
    Found f = ex_.queues.find(id, node, h.clock.round(ex_), h.clock.ticks_per_round, *ex_.policy, steal,
                              helping_within.load(std::memory_order_relaxed));
    if (!f) return false;
    run(f);
    h.clock.searches = 0;
    h.spins = 0;
    return true;
}

// A search while helping: true when it ran a task or settled deferred
// completions, false (the idle time counted) when there was nothing.
bool Worker::help_search(Helping& h) {
    if (help_run_one(h) || flush_deferred() || take_fulfilled()) return true;
    const std::uint64_t now = Ticks::now();
    if (h.clock.searches == 0) WorkerCounters::add(counters.runtime, now - since);
    h.clock.failed(ex_, now);
    ex_.maybe_flush(ex_.team != nullptr ? Executor::any_waiter : static_cast<int>(id));
    return false;
}

// Queued tasks that help_search() could not take. A hosted runtime's
// seats may be empty (their threads run other code, or sleep outside the
// runtime), so their queues are not sure to be served: until a task has
// finished, the steal rounds have no length and never advance, so take
// from any queue now. A waiter inside a task takes only its descendants: a
// push may have woken it instead of a worker that can take the task, so
// wake the others. True when it ran a task. (A team's seats are always
// taken, and its idle workers take any task: nothing to do there.)
bool Worker::take_unserved(Helping& h) {
    if (ex_.team != nullptr || !ex_.queues.any_queued()) return false;
    if (h.clock.ticks_per_round == 0 && ex_.ticks_per_round() == 0)
        if (Found f = ex_.queues.find(id, node, max_search_round, 0, *ex_.policy, steal,
                                           helping_within.load(std::memory_order_relaxed))) {
            run(f);
            h.clock.searches = 0;
            h.spins = 0;
            return true;
        }
    if (helping_within.load(std::memory_order_relaxed) != nullptr) ex_.wake_workers();
    return false;
}

// One step of help_until() once its condition was found false.
void Worker::help_step(Helping& h) {
    if (help_search(h)) return;
    // Pause between checks; yield only now and then (a yield per
    // check is a syscall storm that slows the CPU's other thread).
    if ((++h.spins & 63) != 0) {
        for (int i = 0; i < 8; ++i) cpu_relax();
    } else {
        if (take_unserved(h)) return;
        std::this_thread::yield();
    }
    since = Ticks::now();
}

void Worker::wait_hosted(bool (*done)(void*), void* arg, bool may_sleep) {
    Helping h = help_begin();
    for (;;) {
        flush_releases();
        if (done(arg)) break;
        if (!may_sleep) {
            help_step(h);
            continue;
        }
        if (help_search(h)) continue;
        if (h.spins < spin_searches) {
            ++h.spins;
            spin_pause(16);
            since = Ticks::now();
            continue;
        }
        if (take_unserved(h)) continue;
        if (const std::uint64_t pause = pause_ticks(h.clock)) {   // as in idle()
            sleep_ticks(pause);
            since = Ticks::now();
            continue;
        }
        // Asleep as in idle(); the condition is checked once more after
        // counting in, and whoever makes it true calls Runtime::wake(),
        // whose fence and read of the sleepers' count either see this
        // sleeper or precede its count and fence, and then this check sees
        // the condition.
        bool held = false;
        std::uint64_t now = 0;
        sleep_unless(
            [&] {
                held = ex_.held_count.load(std::memory_order_acquire) > 0 && ex_.partitions.outstanding() == 0;
                now = Ticks::now();
                return done(arg) || !deferred.empty() || ex_.queues.any_queued() ||
                       ex_.fulfilled_count.load(std::memory_order_acquire) != 0 ||
                       (held && ex_.may_cut(static_cast<int>(id), now));
            },
            [&](std::atomic<std::uint32_t>& epoch, std::uint32_t seen) {
                // Held tasks that another thread may still be adding to:
                // look again when they would have waited long enough (a
                // timed sleep, which a push does not cut short).
                if (held) sleep_ticks(ex_.stall_left(now));
                else epoch.wait(seen, std::memory_order_acquire);
            });
        h.spins = 0;
        h.clock.start = Ticks::now();
        since = Ticks::now();
    }
    // The thread may leave its seat empty for as long as it likes (an
    // OpenMP thread past its barrier): no completion of a task it ran stays
    // deferred, or a wait elsewhere for quiescence would wait for its return.
    flush_deferred();
    flush_releases();
    help_end(h);
}

std::size_t Worker::run_ready(std::size_t max_tasks) {
    Helping h = help_begin();
    std::size_t ran = 0;
    while (ran < max_tasks) {
        flush_releases();
        if (help_run_one(h)) ++ran;
        else if (!flush_deferred() && !take_fulfilled()) break;
    }
    // As wait_hosted() leaves: nothing this thread ran stays deferred.
    flush_deferred();
    flush_releases();
    help_end(h);
    return ran;
}

void Worker::help_end(const Helping& h) {
    helping_within.store(h.saved_within, std::memory_order_relaxed);
    if (ex_.policy_may_hold) ex_.waiters.fetch_sub(1, std::memory_order_acq_rel);
    running_since.store(h.saved_running, std::memory_order_relaxed);
    since = h.saved_since;
    excluded += Ticks::now() - h.start;
}

}  // namespace numaware::tasks::detail
