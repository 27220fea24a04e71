// tasks/worker.hpp — a worker: one of the team's ranks, running the
// executor's tasks until the runtime is destroyed.
//
// Worker w is rank w and lives on layout().ranks[w].node. Its loop finds a
// task in the queues (node_queues.hpp), runs it, and completes it: drops
// the task's references, settles its dependencies (without a lock where
// the executor allows, else under the scheduler lock or deferred, see
// complete()), and counts it done. While its searches
// fail, its IdleClock tells the policy how long it has been idle, in rounds
// of 1/rounds_per_task of the run's mean task duration (the node-queue
// policies widen their steal rings with it); after a short spin the worker
// sleeps on a futex (std::atomic::wait) until a push to its node's queues
// (or to any queue, when that node's workers are all busy) bumps its node's
// epoch, and its idle time starts again from the wake-up. While tasks are
// queued only where it may not take them yet, it pauses a round at a time
// instead, its idle time running on (pause_ticks()). Inside a
// task, taskwait() makes the worker help: run other tasks until the wait
// is over (help_until()).
//
// Everything here but `completed` and `unsettled` (read by waiters) and
// the counters (read by report()) is touched by this worker alone.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>

#include "tasks/node_queues.hpp"
#include "tasks/run_metrics.hpp"
#include "tasks/task_pool.hpp"

#pragma GCC visibility push(hidden)   // library-internal: see executor.hpp

namespace numaware::tasks::detail {

struct Executor;

// Failed searches a worker spins through (16 pauses each, or a yield of
// the CPU when the runtime has more workers than CPUs: Worker::spin_pause)
// before it sleeps or pauses, while it waits (Worker::wait_hosted()).
inline constexpr unsigned spin_searches = 255;
// The same for an idle worker (Worker::idle()): fewer searches, farther
// apart, for about the same time spun. Each search reads the queues'
// lines, and the next push to such a line then waits for this CPU to
// give it back: a worker that searched after every 16 pauses took 13% of
// the 2-thread wavefront's time from the thread that spawns (BENCHMARKS.md).
inline constexpr unsigned idle_searches = 64;
inline constexpr unsigned idle_search_pauses = 64;

// How long a worker has looked for work, in the rounds of
// Policy::steal_order().
struct IdleClock {
    std::uint64_t searches = 0;          // failed searches in a row
    std::uint64_t start = 0;             // ticks: the first failed search, or the last wake-up
    std::uint64_t ticks_per_round = 0;   // the run's mean task ticks / rounds_per_task; 0: none finished yet

    // The round for the next search.
    std::uint64_t round(const Executor& ex);
    // A search failed at `now`.
    void failed(const Executor& ex, std::uint64_t now);
};

class alignas(64) Worker {
public:
    Worker(Executor& executor, unsigned worker, unsigned worker_node) : id(worker), node(worker_node), ex_(executor) {}
    Worker(const Worker&) = delete;
    Worker& operator=(const Worker&) = delete;

    // The worker loop: on the worker's thread until the executor stops.
    void main();

    // A detached task fulfilled on this worker's thread (Runtime::fulfill()):
    // its completion, as after a body.
    void complete_fulfilled(Task* t) { complete(t); }

    // Inside a task on this worker: runs other tasks until `done()` holds.
    template <class Pred>
    void help_until(Pred done) {
        Helping h = help_begin();
        for (;;) {
            flush_releases();
            if (done()) break;
            help_step(h);
        }
        help_end(h);
    }

    // A hosted worker's wait (Runtime::run_until), inside a task or not:
    // runs tasks until done(arg) holds; with none ready, after a short spin,
    // it sleeps on its node's epoch until a push or Runtime::wake() (or,
    // without `may_sleep`, pauses and yields as help_until() does).
    void wait_hosted(bool (*done)(void*), void* arg, bool may_sleep);
    // A hosted worker runs up to `max_tasks` ready tasks, returning at the
    // first search that finds none (Runtime::help).
    // Returns how many it ran.
    std::size_t run_ready(std::size_t max_tasks);

    const unsigned id;
    const unsigned node;
    StealOrder steal;
    PoolCache cache;
    // Accounting of the task running on this worker.
    std::uint64_t since = 0;      // start of runtime-accounted time
    std::uint64_t excluded = 0;   // ticks the current body spent in spawn/taskwait
    // While it waits inside a task (help_until(), wait_hosted()), the
    // worker runs only that task's descendants: OpenMP's scheduling
    // constraint for tied tasks, so a task run there never needs what the
    // suspended task holds (a lock held across a taskwait deadlocked when
    // the waiter ran another branch's task that took it), its wait always
    // progresses, and nested waits stay as deep as the task tree (a waiter
    // that ran any task nested one wait in another without bound: fib's
    // stack overflowed). It ran every deeper task before: on the emulated
    // 4-node machine a recursive program's waiters each nested 30 other
    // branches' waits, and a shallow child waited seconds for all of them
    // (BENCHMARKS.md, 2026-12-07). That task is helping_within (below).
    std::vector<Task*> deferred;  // finished tasks whose completion waits for the lock
    std::vector<std::pair<QueueSlot*, Task*>> to_push;   // settle_locked(): after unlocking
    std::vector<std::size_t> to_wake;                      // settle_locked(): the nodes of to_push
    std::vector<TaskId> ready_ids;   // settle_locked(), complete_unlocked(): tasks made ready, for the observer
    std::vector<ReadyNode> made_ready;   // complete_unlocked(): the tracker's answer
    // References to drop from one parent, batched: consecutive children of
    // one task finishing here touch the parent's counter once per batch.
    Task* rel_parent = nullptr;
    std::uint32_t rel_count = 0;
    // 1 while a batch is pending or being flushed: quiescence waits for it,
    // so a parent's disposal (its exception forwarded, its group counted)
    // is done when barrier() or an outside taskwait() returns.
    std::atomic<std::uint32_t> unsettled{0};
    WorkerCounters counters;
    alignas(64) std::atomic<std::uint64_t> completed{0};   // never reset: quiescence
    // Ticks when the running task's body started; 0 while the worker
    // searches, sleeps or helps in a wait outside tasks; seat_helping(depth)
    // while it helps in a wait inside a task of that depth (it takes only
    // that task's descendants: helping_within),
    // seat_takes_no_task while a hosted seat's thread is outside the
    // runtime. Read by other nodes' thieves
    // (NodeQueues::occupied, NodeQueues::leaves_to_own_node).
    alignas(64) std::atomic<std::uint64_t> running_since{0};
    // The task whose wait the worker helps in, nullptr for any task (see
    // above). Written by the worker alone; other workers' thieves read it
    // (NodeQueues::leaves_to_own_node) and only compare it.
    std::atomic<const Task*> helping_within{nullptr};

private:
    struct Helping {
        const Task* saved_within;
        std::uint64_t start;
        std::uint64_t saved_since;
        std::uint64_t saved_running;
        IdleClock clock;
        unsigned spins;
    };
    Helping help_begin();
    bool help_run_one(Helping& h);  // one search; ran the task it found
    bool help_search(Helping& h);   // ran a task or settled deferred completions
    void help_step(Helping& h);
    bool take_unserved(Helping& h);
    bool take_fulfilled();   // completes tasks fulfilled by threads without a seat; true if any
    void help_end(const Helping& h);

    bool idle(unsigned& spins, IdleClock& clock);   // true: it slept until a push
    // Between two failed searches: `pauses` pause instructions, or, when
    // the runtime has more workers than CPUs (Executor::oversubscribed),
    // the CPU yielded: a worker that spins there holds the CPU that the
    // one running what it waits for needs.
    void spin_pause(unsigned pauses);
    // Work is queued only where this worker may not take it yet (a farther
    // node, before its steal delay): how long to pause before looking again
    // (one round), or 0 to go on as without such work.
    std::uint64_t pause_ticks(IdleClock& clock);
    static void sleep_ticks(std::uint64_t ticks);   // a timed sleep of `ticks` clock ticks
    // The sleep of an idle or waiting worker: it counts itself in as a
    // sleeper of its node and of the executor, fences against the pushers
    // (Executor::wake_node), asks has_work() once more and, without work,
    // calls sleep(epoch, seen) with its node's epoch and the value read
    // before it counted in; then it counts itself out. Returns
    // has_work()'s answer.
    template <class HasWork, class Sleep>
    bool sleep_unless(HasWork has_work, Sleep sleep);
    void run(const Found& f);   // f.task, found by a search
    std::uint64_t announce_start(const Task* t, bool stolen, std::uint64_t at);
    void complete(Task* t);
    void complete_unlocked(Task* t);
    void push_ready();
    bool flush_deferred();
    void settle_locked();
    void announce_ready();
    void finish(Task* t);
    void release(Task* t, std::uint64_t n);
    void defer_release(Task* parent);
    void flush_releases();

    Executor& ex_;
};

}  // namespace numaware::tasks::detail

#pragma GCC visibility pop
