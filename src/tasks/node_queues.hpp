// tasks/node_queues.hpp — where ready tasks wait: one queue per worker and
// one per node that has workers, and a worker's search through them.
//
// The policy's place() chooses the queue of a ready task; a worker searches
// the queues its policy's steal_order() lists (each round's list drawn
// once, round 0's at the start), its own queue newest first, every
// other queue oldest first. The search is the per-task path, so it is
// inline here.
//
// Children kept with their spawner: a task that a running task spawns,
// placed on the spawner's own node's queue, waits instead in the spawner's
// kept queue (near_spawner()). Its worker searches that first, newest
// first, whatever its policy lists; whoever searches a node's queue
// (its own workers, and other nodes' thieves under the same rules) looks
// at that node's kept queues next, oldest first. So the child runs on the
// node the policy chose either way, and on the CPU whose cache holds what
// its parent just wrote unless another worker is idle. Through the node's
// queue every child moved the queue's line and its record to the other
// CPU and back: fib(30) ran 2.7x slower under DEP on the 2-vCPU host.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "numaware/task_policy.hpp"
#include "tasks/sync.hpp"
#include "tasks/task_pool.hpp"

#pragma GCC visibility push(hidden)   // library-internal: see executor.hpp

namespace numaware::tasks::detail {

using ReadyQueue = TaskQueue<Task>;

// Worker::running_since besides 0 (idle: searching or asleep, takes any
// task) and a task's start time: a worker helping in a wait inside a task
// of depth `depth` takes only that task's descendants (seat_helping(depth),
// the task in Worker::helping_within), and a
// hosted runtime's seat whose thread runs other code (an OpenMP thread in
// its implicit task) takes none (seat_takes_no_task). Both lie above every
// time the tick clock reaches, so occupied() counts them as not running.
inline constexpr std::uint64_t seat_helping_base = ~std::uint64_t{0} << 32;
inline constexpr std::uint64_t seat_takes_no_task = ~std::uint64_t{0};
constexpr std::uint64_t seat_helping(std::uint32_t depth) {
    return depth >= 0xffffffffu ? seat_takes_no_task : seat_helping_base + depth;
}

// One queue per 128 bytes: the CPU fetches cache lines in adjacent pairs,
// so two queues on neighbouring lines would contend as if they shared one
// (each worker's queue used to sit inside its own Worker, far apart).
struct alignas(128) QueueSlot {
    ReadyQueue queue;
    std::size_t node = 0;   // position (in `nodes`) of the node whose workers own it: they are woken for it
};

// A node queue that a worker's search lists only from round `first_round`
// on, and the backlog above which it is searched at once (queue_listings).
struct LaterQueue {
    unsigned node = 0;
    std::uint64_t first_round = 0;
    std::size_t backlog = 0;
};

// A worker's steal orders, touched only by that worker. steal_order() is
// a function of (worker, round) (task_policy.hpp), so a round's list is
// drawn once, not at every search of that round: an idle DFIFO worker of
// a team of 1,024 drew a list of 1,024 queues at every search, and a
// RIP worker rebuilt its node's list of worker queues.
struct StealOrder {
    std::vector<QueueRef> round0;    // steal_order(worker, 0), cached
    std::vector<QueueRef> scratch;   // the round scratch_round's
    std::uint64_t scratch_round = 0;   // 0: scratch holds no round yet
    std::vector<LaterQueue> later;   // node queues of later rounds, nearest first

    const std::vector<QueueRef>& at(const Policy& policy, unsigned worker, std::uint64_t round) {
        if (round == 0) return round0;
        if (round != scratch_round) {
            policy.steal_order(worker, round, scratch);
            scratch_round = round;
        }
        return scratch;
    }
};

// A task a search found; `stolen` when it came from a queue the searching
// worker does not own (another worker's, or another node's), `across` when
// that queue belongs to another node's workers.
struct Found {
    Task* task = nullptr;
    bool stolen = false;
    bool across = false;
    TakeRule rule = TakeRule::in_order;
    explicit operator bool() const { return task != nullptr; }
};

class NodeQueues {
public:
    // `nodes`: the nodes with workers, ascending OS index; `worker_node`:
    // each worker's node. (Inline: the unit tests call it, and the class is
    // hidden in the library.)
    void init(const std::vector<unsigned>& nodes, const std::vector<unsigned>& worker_node) {
        node_slot_.assign(nodes.empty() ? 0 : nodes.back() + 1, -1);
        running_.assign(nodes.size(), {});
        within_.assign(nodes.size(), {});
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            node_slot_[nodes[i]] = static_cast<int>(i);
            node_queues_.push_back(std::make_unique<QueueSlot>());
            node_queues_.back()->node = i;
        }
        node_workers_.assign(nodes.size(), {});
        for (unsigned n : worker_node) {
            const auto slot = static_cast<std::size_t>(slot_of(n));
            node_workers_[slot].push_back(worker_queues_.size());
            worker_queues_.push_back(std::make_unique<QueueSlot>());
            worker_queues_.back()->node = slot;
            kept_queues_.push_back(std::make_unique<QueueSlot>());
            kept_queues_.back()->node = slot;
        }
    }

    // Where a child that a task running on worker `worker` spawns waits,
    // when its placement names `q`: the worker's kept queue if `q` is its
    // node's queue, else `q` (see the top of this file).
    QueueSlot* near_spawner(QueueSlot& q, unsigned worker) {
        if (worker >= kept_queues_.size() || &q != node_queues_[q.node].get()) return &q;
        QueueSlot& kept = *kept_queues_[worker];
        return kept.node == q.node ? &kept : &q;
    }

    // Position of `node` in `nodes`, or -1 for a node without workers.
    int slot_of(unsigned node) const {
        return node < node_slot_.size() ? node_slot_[node] : -1;
    }

    // The queue a worker or node placement names. A placement outside the
    // team (a policy bug) gets the first node's queue, which keeps the task
    // runnable. Not for Destination::Kind::hold.
    QueueSlot& queue_for(const Destination& p) {
        switch (p.kind) {
            case Destination::Kind::worker:
                if (p.index < worker_queues_.size()) return *worker_queues_[p.index];
                break;
            case Destination::Kind::node:
                if (p.index < node_slot_.size() && node_slot_[p.index] >= 0)
                    return *node_queues_[static_cast<std::size_t>(node_slot_[p.index])];
                break;
            case Destination::Kind::hold:
                break;
        }
        return *node_queues_.front();
    }

    // Node position `slot`'s workers publish here when their running task
    // started (Worker::running_since; 0 while they search or sleep).
    void watch(std::size_t slot, const std::atomic<std::uint64_t>* running_since,
               const std::atomic<const Task*>* helping_within) {
        running_[slot].push_back(running_since);
        within_[slot].push_back(helping_within);
    }

    // Worker `worker` (on `node`) searches on its `round`-th try in a row;
    // a round lasts `ticks_per_round` (0: not known yet).
    // `within` not null: only its descendants (Worker::helping_within),
    // searched for past the others.
    Found find(unsigned worker, unsigned node, std::uint64_t round, std::uint64_t ticks_per_round, Policy& policy,
               StealOrder& order, const Task* within = nullptr) {
        const auto mine = descendants_of(within);
        if (worker < kept_queues_.size()) {
            ReadyQueue& kept = kept_queues_[worker]->queue;
            if (Task* t = within != nullptr ? kept.pop_first_if(true, mine) : kept.pop_back()) return Found{t};
        }
        std::uint64_t searched = 0;   // node positions below 64 searched already
        const auto mark = [&searched](std::size_t slot) {
            if (slot < 64) searched |= std::uint64_t{1} << slot;
        };
        for (const QueueRef& q : order.at(policy, worker, round)) {
            Task* t = nullptr;
            bool own = true;
            QueueSlot* from = nullptr;
            if (q.kind == QueueRef::Kind::worker) {
                if (q.index >= worker_queues_.size()) continue;
                from = worker_queues_[q.index].get();
                own = q.index == worker;
                if (within != nullptr) t = from->queue.pop_first_if(own, mine);
                else t = own ? from->queue.pop_back() : from->queue.pop_front();
            } else {
                if (q.index >= node_slot_.size() || node_slot_[q.index] < 0) continue;
                const auto slot = static_cast<std::size_t>(node_slot_[q.index]);
                mark(slot);
                from = node_queues_[slot].get();
                own = q.index == node;
                // Another node's idle workers take its tasks first: a thief
                // leaves it as many as they are (leaves_to_own_node).
                if (!from->queue.empty() && (own || !leaves_to_own_node(slot, from->queue)))
                    t = within != nullptr ? from->queue.pop_first_if(false, mine) : from->queue.pop_front();
                if (t == nullptr) {
                    if (Found f = take_kept(slot, worker, node, !own, within)) return f;
                    continue;
                }
            }
            if (t != nullptr) return Found{t, !own, !own && static_cast<int>(from->node) != slot_of(node)};
        }
        // A farther node's queue is searched before its delay when its own
        // workers will not start its tasks within that delay: it holds more
        // tasks than they start in the delay (the backlog rule), or every
        // one of them has been running its task for longer than the delay
        // already (the occupied rule: a spawning task, a long task). A
        // waiter inside a task searches them at once for that task's
        // descendants, unless the node's idle workers are there to take
        // them: nobody else may (a worker running a task or waiting inside
        // another branch's does not), so the delay only held the waiter
        // back (a recursive sort on the emulated 4-node machine, whose
        // policy spread each task's children over the nodes: 16 ms from
        // ready to start at the median, 21 s against libgomp's 0.1 s).
        for (const LaterQueue& l : order.later) {
            if (l.first_round <= round || l.node >= node_slot_.size() || node_slot_[l.node] < 0) continue;
            const auto slot = static_cast<std::size_t>(node_slot_[l.node]);
            mark(slot);
            ReadyQueue& queue = node_queues_[slot]->queue;
            const std::size_t queued = queue.size();
            if (queued == 0) {
                // Children kept by that node's workers, while every one
                // of them is occupied (a spawner that goes on running).
                if (!any_kept(slot)) continue;
                const bool busy = occupied(slot, l.first_round * ticks_per_round);
                if (!busy && within == nullptr) continue;
                if (Found f = take_kept(slot, worker, node, !busy, within)) {
                    f.rule = busy ? TakeRule::occupied : TakeRule::descendant;
                    return f;
                }
                continue;
            }
            const bool backlog = queued > l.backlog;
            const bool busy = backlog || occupied(slot, l.first_round * ticks_per_round);
            if (!busy && (within == nullptr || leaves_to_own_node(slot, queue))) continue;
            if (Task* t = within != nullptr ? queue.pop_first_if(false, mine) : queue.pop_front())
                return Found{t, true, static_cast<int>(slot) != slot_of(node),
                             backlog  ? TakeRule::backlog
                             : busy   ? TakeRule::occupied
                                      : TakeRule::descendant};
        }
        // A waiter's descendants on a node that the policy never lists for
        // it (SA steals across no node): taken by the waiter unless that
        // node's idle workers are there, since its busy or waiting workers
        // do not take them and the wait would never end (two nodes' workers
        // each waiting for a child queued on the other's node).
        if (within != nullptr)
            for (std::size_t slot = 0; slot < node_queues_.size(); ++slot) {
                if (slot < 64 && (searched >> slot & 1) != 0) continue;
                ReadyQueue& queue = node_queues_[slot]->queue;
                Found f;
                if (!queue.empty() && !leaves_to_own_node(slot, queue)) {
                    if (Task* t = queue.pop_first_if(false, mine))
                        f = Found{t, true, static_cast<int>(slot) != slot_of(node)};
                }
                if (!f) f = take_kept(slot, worker, node, true, within);
                if (f) {
                    f.rule = TakeRule::descendant;
                    return f;
                }
            }
        return Found{};
    }

    // The oldest task (a descendant of `within`, when not null) in the kept queues
    // of node position `slot`'s workers other than `worker` (on `node`).
    // `leave`: for a thief from another node, which leaves a queue's tasks
    // to the node's idle workers as it does a node queue's.
    Found take_kept(std::size_t slot, unsigned worker, unsigned node, bool leave, const Task* within) {
        const auto mine = descendants_of(within);
        for (std::size_t w : node_workers_[slot]) {
            if (w == worker) continue;
            ReadyQueue& kept = kept_queues_[w]->queue;
            if (kept.empty() || (leave && leaves_to_own_node(slot, kept))) continue;
            if (Task* t = within != nullptr ? kept.pop_first_if(false, mine) : kept.pop_front())
                return Found{t, true, static_cast<int>(slot) != slot_of(node)};
        }
        return Found{};
    }
    bool any_kept(std::size_t slot) const {
        for (std::size_t w : node_workers_[slot])
            if (!kept_queues_[w]->queue.empty()) return true;
        return false;
    }

    bool any_queued() const;
    // Whether one of the queues in `refs` (a steal_order() answer) holds a
    // task: what find() with those refs could take.
    bool any_queued(const std::vector<QueueRef>& refs) const {
        for (const QueueRef& q : refs) {
            if (q.kind == QueueRef::Kind::worker) {
                if (q.index < worker_queues_.size() && !worker_queues_[q.index]->queue.empty()) return true;
            } else if (q.index < node_slot_.size() && node_slot_[q.index] >= 0) {
                const auto slot = static_cast<std::size_t>(node_slot_[q.index]);
                if (!node_queues_[slot]->queue.empty() || any_kept(slot)) return true;
            }
        }
        return false;
    }

    // Whether a worker of another node leaves the tasks in `queue`, node
    // position `slot`'s, to that node's own workers: at least as many of
    // them are idle (searching or asleep) or helping in a wait inside an
    // ancestor of the queue's oldest task, and a pushed task woke them. (A
    // worker helping inside a task counted as busy left the spawner's node
    // one worker short for the whole run: its node's second queued task
    // was stolen.) In the emulated 8-node machine, whose 14 vCPUs share 2
    // host cores, a thief whose delay had long passed (idle through a
    // wavefront's fill) polled every round and took a task pushed to a node
    // whose idle workers were still waking up. The simulator gives a
    // queue's task to its idle takers without delay first, which is this
    // rule (sim/worker_model.cpp, enqueue). A node's workers that are all
    // running tasks, or fewer idle than its tasks, are stolen from as
    // before.
    bool leaves_to_own_node(std::size_t slot, ReadyQueue& queue) const {
        const std::size_t queued = queue.size();
        bool leave = true;   // empty (emptied meanwhile)
        // Under the queue's lock: the oldest task stays queued, so its
        // chain of ancestors stays alive while it is compared.
        queue.front_is([&](const Task* oldest) {
            std::size_t takers = 0;
            for (std::size_t k = 0; k < running_[slot].size(); ++k)
                if (takes(running_[slot][k]->load(std::memory_order_relaxed), *within_[slot][k], oldest) &&
                    ++takers >= queued)
                    return true;
            leave = false;
            return true;
        });
        return leave;
    }
    // Whether a worker whose running_since is `running_since` would take
    // `task` now: idle, or helping in a wait inside one of its ancestors
    // (`within`, that wait's task); not while it runs a task or is outside
    // the runtime.
    static bool takes(std::uint64_t running_since, const std::atomic<const Task*>& within, const Task* task) {
        if (running_since == 0) return true;
        if (running_since < seat_helping_base || running_since == seat_takes_no_task) return false;
        const Task* w = within.load(std::memory_order_relaxed);
        return w != nullptr && descends(task, w, static_cast<std::uint32_t>(running_since - seat_helping_base));
    }

    // Whether every worker of node position `slot` has been running its
    // task for at least `ticks` (false for ticks == 0: no mean yet).
    bool occupied(std::size_t slot, std::uint64_t ticks) const {
        if (ticks == 0 || running_[slot].empty()) return false;
        const std::uint64_t now = Ticks::now();
        for (const std::atomic<std::uint64_t>* since : running_[slot]) {
            const std::uint64_t s = since->load(std::memory_order_relaxed);
            if (s == 0 || now < s || now - s < ticks) return false;
        }
        return true;
    }

private:
    std::vector<std::unique_ptr<QueueSlot>> worker_queues_;   // by worker
    std::vector<std::unique_ptr<QueueSlot>> kept_queues_;     // by worker: children kept with their spawner
    std::vector<std::vector<std::size_t>> node_workers_;       // by node position: its workers
    std::vector<std::unique_ptr<QueueSlot>> node_queues_;     // by position in nodes
    std::vector<int> node_slot_;                               // OS index -> position, -1
    std::vector<std::vector<const std::atomic<const Task*>*>> within_;   // by node position: parallel to running_
    std::vector<std::vector<const std::atomic<std::uint64_t>*>> running_;   // by node position: its workers'
};

}  // namespace numaware::tasks::detail

#pragma GCC visibility pop
