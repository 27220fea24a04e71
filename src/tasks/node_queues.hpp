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
// of depth `floor` takes only deeper tasks (seat_helping(floor)), and a
// hosted runtime's seat whose thread runs other code (an OpenMP thread in
// its implicit task) takes none (seat_takes_no_task). Both lie above every
// time the tick clock reaches, so occupied() counts them as not running.
inline constexpr std::uint64_t seat_helping_base = ~std::uint64_t{0} << 32;
inline constexpr std::uint64_t seat_takes_no_task = ~std::uint64_t{0};
constexpr std::uint64_t seat_helping(std::uint32_t floor) {
    return floor >= 0xffffffffu ? seat_takes_no_task : seat_helping_base + floor;
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
    void watch(std::size_t slot, const std::atomic<std::uint64_t>* running_since) {
        running_[slot].push_back(running_since);
    }

    // Worker `worker` (on `node`) searches on its `round`-th try in a row;
    // a round lasts `ticks_per_round` (0: not known yet).
    // `floor` > 0: only tasks deeper than that in the task tree
    // (Worker::help_floor), searched for past the others.
    Found find(unsigned worker, unsigned node, std::uint64_t round, std::uint64_t ticks_per_round, Policy& policy,
               StealOrder& order, std::uint32_t floor = 0) {
        const auto deeper = [floor](const Task* c) { return c->depth > floor; };
        if (worker < kept_queues_.size()) {
            ReadyQueue& kept = kept_queues_[worker]->queue;
            if (Task* t = floor != 0 ? kept.pop_first_if(true, deeper) : kept.pop_back()) return Found{t};
        }
        for (const QueueRef& q : order.at(policy, worker, round)) {
            Task* t = nullptr;
            bool own = true;
            QueueSlot* from = nullptr;
            if (q.kind == QueueRef::Kind::worker) {
                if (q.index >= worker_queues_.size()) continue;
                from = worker_queues_[q.index].get();
                own = q.index == worker;
                if (floor != 0) t = from->queue.pop_first_if(own, deeper);
                else t = own ? from->queue.pop_back() : from->queue.pop_front();
            } else {
                if (q.index >= node_slot_.size() || node_slot_[q.index] < 0) continue;
                const auto slot = static_cast<std::size_t>(node_slot_[q.index]);
                from = node_queues_[slot].get();
                own = q.index == node;
                // Another node's idle workers take its tasks first: a thief
                // leaves it as many as they are (leaves_to_own_node).
                if (!from->queue.empty() && (own || !leaves_to_own_node(slot, from->queue)))
                    t = floor != 0 ? from->queue.pop_first_if(false, deeper) : from->queue.pop_front();
                if (t == nullptr) {
                    if (Found f = take_kept(slot, worker, node, !own, floor)) return f;
                    continue;
                }
            }
            if (t != nullptr) return Found{t, !own, !own && static_cast<int>(from->node) != slot_of(node)};
        }
        // A farther node's queue is searched before its delay when its own
        // workers will not start its tasks within that delay: it holds more
        // tasks than they start in the delay (the backlog rule), or every
        // one of them has been running its task for longer than the delay
        // already (the occupied rule: a spawning task, a long task).
        for (const LaterQueue& l : order.later) {
            if (l.first_round <= round || l.node >= node_slot_.size() || node_slot_[l.node] < 0) continue;
            const auto slot = static_cast<std::size_t>(node_slot_[l.node]);
            ReadyQueue& queue = node_queues_[slot]->queue;
            const std::size_t queued = queue.size();
            if (queued == 0) {
                // Children kept by that node's workers, while every one
                // of them is occupied (a spawner that goes on running).
                if (!any_kept(slot) || !occupied(slot, l.first_round * ticks_per_round)) continue;
                if (Found f = take_kept(slot, worker, node, false, floor)) {
                    f.rule = TakeRule::occupied;
                    return f;
                }
                continue;
            }
            const bool backlog = queued > l.backlog;
            if (!backlog && !occupied(slot, l.first_round * ticks_per_round)) continue;
            if (Task* t = floor != 0 ? queue.pop_first_if(false, deeper) : queue.pop_front())
                return Found{t, true, static_cast<int>(slot) != slot_of(node),
                             backlog ? TakeRule::backlog : TakeRule::occupied};
        }
        return Found{};
    }

    // The oldest task (deeper than `floor`, when not 0) in the kept queues
    // of node position `slot`'s workers other than `worker` (on `node`).
    // `leave`: for a thief from another node, which leaves a queue's tasks
    // to the node's idle workers as it does a node queue's.
    Found take_kept(std::size_t slot, unsigned worker, unsigned node, bool leave, std::uint32_t floor) {
        const auto deeper = [floor](const Task* c) { return c->depth > floor; };
        for (std::size_t w : node_workers_[slot]) {
            if (w == worker) continue;
            ReadyQueue& kept = kept_queues_[w]->queue;
            if (kept.empty() || (leave && leaves_to_own_node(slot, kept))) continue;
            if (Task* t = floor != 0 ? kept.pop_first_if(false, deeper) : kept.pop_front())
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
    // them are idle (searching or asleep) or helping in a wait below the
    // depth of the queue's oldest task, and a pushed task woke them. (A
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
        std::uint32_t depth = 0;
        if (!queue.front_is([&depth](const Task* t) {
                depth = t->depth;
                return true;
            }))
            return true;   // empty (emptied meanwhile)
        std::size_t takers = 0;
        for (const std::atomic<std::uint64_t>* since : running_[slot])
            if (floor_of(since->load(std::memory_order_relaxed)) < depth && ++takers >= queued) return true;
        return false;
    }
    // The depth a worker's tasks must exceed for it to take them now, from
    // its running_since: 0 when idle, its wait's floor when helping, none
    // (the largest) when running a task or outside the runtime.
    static std::uint32_t floor_of(std::uint64_t running_since) {
        if (running_since == 0) return 0;
        return running_since >= seat_helping_base ? static_cast<std::uint32_t>(running_since - seat_helping_base)
                                                  : 0xffffffffu;
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
    std::vector<std::vector<const std::atomic<std::uint64_t>*>> running_;   // by node position: its workers'
};

}  // namespace numaware::tasks::detail

#pragma GCC visibility pop
