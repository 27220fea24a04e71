// sim/worker_model.hpp — the simulated cores: one per worker of a team
// layout, with the executor's queues and each worker's search of them.
//
// The model (docs/SIMULATOR.md, "Queues"):
//   * one queue per worker (its owner takes the newest task, thieves the
//     oldest) and one per node (oldest first); a pinned task waits in its
//     worker's own list;
//   * an idle worker takes work at once from the queues steal_order(w, 0)
//     lists, and from a queue that appears only at round k after k × round_s
//     of idleness, or earlier when the node's workers will not start its
//     tasks within that delay: the queue holds more than they start in it
//     (backlog rule) or every one of them has run its task that long
//     already (occupied rule; evaluated when a task is queued and when a
//     worker searches, at a task's end or a wake-up, where the executor
//     polls); when several idle workers could take a new task, the one
//     that lists its queue earliest wins (ties: the lower worker id).
// The model only chooses who runs what; starting the task (its memory time,
// its end) is the simulator's.
#pragma once

#include <cstdint>
#include <deque>
#include <string_view>
#include <utility>
#include <vector>

#include "numaware/machine.hpp"
#include "numaware/task_policy.hpp"
#include "numaware/team.hpp"
#include "sim/event_engine.hpp"
#include "sim/ring.hpp"

namespace numaware::sim {

inline constexpr std::uint32_t no_index = 0xffffffffu;

// A worker's choice: the task it takes and the queue it took it from
// (no_index: its pinned list). task == no_index: nothing to take.
struct Take {
    std::uint32_t worker = no_index;
    std::uint32_t task = no_index;
    std::uint32_t queue = no_index;
    tasks::TakeRule rule = tasks::TakeRule::in_order;   // set for a take across nodes
    explicit operator bool() const { return task != no_index; }
};

class WorkerModel {
public:
    explicit WorkerModel(EventEngine& engine) : engine_(engine) {}

    // The workers of `layout` on `machine`. Queues: one per worker, then one
    // per node position.
    void build(const Machine& machine, const TeamLayout& layout);
    // Each worker's search order from the attached policy (Error("policy",
    // ...) when it lists a queue that does not exist).
    void build_search_orders(tasks::Policy& policy, double round_s);

    std::uint32_t size() const { return static_cast<std::uint32_t>(cores_.size()); }
    unsigned node(std::uint32_t w) const { return cores_[w].node; }     // OS index
    std::size_t pos(std::uint32_t w) const { return cores_[w].pos; }    // node position in the machine
    bool idle(std::uint32_t w) const { return idle_[w].idle; }
    std::uint32_t task(std::uint32_t w) const { return cores_[w].task; }
    // Nodes with workers, ascending OS index, and a node position's slot in it.
    const std::vector<unsigned>& nodes() const { return worker_nodes_; }
    std::size_t slot_of_pos(std::size_t pos) const { return node_slot_of_pos_[pos]; }
    std::vector<unsigned> node_of_each() const;

    // The queue a policy names (Error("policy", ...) naming the policy for
    // one that does not exist). Inline: every task placed on a node asks.
    std::uint32_t queue_id(const tasks::QueueRef& q, const tasks::Policy& policy) const {
        if (q.kind == tasks::QueueRef::Kind::worker ? q.index < cores_.size()
                                                    : q.index < pos_of_os_.size() && pos_of_os_[q.index] != no_index)
            return q.kind == tasks::QueueRef::Kind::worker ? q.index : node_queue(pos_of_os_[q.index]);
        bad_queue(q, policy.name());
    }
    std::uint32_t node_queue(std::size_t pos) const { return size() + static_cast<std::uint32_t>(pos); }
    // Whether queue q is w's own or its node's: taking from any other is a steal.
    bool owns(std::uint32_t w, std::uint32_t q) const { return q == w || q == node_queue(cores_[w].pos); }
    // Whether queue q belongs to the workers of another node than w's.
    bool across(std::uint32_t w, std::uint32_t q) const {
        const std::size_t at = q < size() ? cores_[q].pos : static_cast<std::size_t>(q - size());
        return at != cores_[w].pos;
    }

    // Task i joins queue q; an idle worker that may search q now takes a
    // task from it at once (returned; the simulator starts it).
    Take enqueue(std::uint32_t q, std::uint32_t i);
    // A pinned task waits for its busy worker.
    void pin(std::uint32_t w, std::uint32_t i) { cores_[w].pinned.push_back(i); }
    // What w runs next: its pinned list first, then its queues in search
    // order, those it may search after idling this long.
    Take next_task(std::uint32_t w);

    // w starts task i now; w stops now and searches on (wake events).
    void begin(std::uint32_t w, std::uint32_t i);
    void end(std::uint32_t w);
    void go_idle(std::uint32_t w);
    // A wake event came (`e.a` the worker, `e.b` its idle epoch): what the
    // worker takes, if it is still in that idle period; when it takes
    // nothing, its next wake event is scheduled (a worker has one pending at
    // a time, not one per delay, so the event queues stay as short as the
    // number of workers).
    Take wake(const Event& e);
    // Time each worker spent running tasks.
    std::vector<double> busy() const;

private:
    // A worker that may search a queue, flattened for the queue.
    struct Taker {
        std::uint32_t worker;
        std::uint32_t position;   // where the queue is in the worker's search order
        double delay;             // idle time before the worker searches it
    };
    // One queue of a worker's search order, in one place (a search reads
    // the three together).
    struct Listed {
        std::uint32_t queue;
        std::uint32_t backlog;    // searched at once above this many tasks (saturated at 2^32 - 1: never)
        double delay;             // idle time before the worker searches it
    };
    struct Core {
        unsigned node = 0;        // OS index
        std::size_t pos = 0;      // node position in the machine
        std::uint64_t idle_epoch = 0;
        std::uint32_t task = no_index;      // running
        double started = 0;
        double busy = 0;
        std::vector<Listed> search;         // its queues, in search order
        std::vector<double> wake_delays;    // the distinct positive delays, ascending
        std::vector<std::uint32_t> at_once_bits;   // its bit in idle_at_once_ for each queue it searches without delay
        std::uint32_t wakes = 0;            // wake events of this idle period so far
        std::uint32_t first_lane = 0;       // first_wakes_ lane of its first wake (wake_delays[0])
        Ring<std::uint32_t> pinned;         // pinned tasks waiting for this worker
    };
    Take take(std::uint32_t w, std::uint32_t q);
    // The rule that lets w take from queue q, which holds `queued` tasks
    // (searchable()'s order: the delay, then the backlog, then occupied).
    tasks::TakeRule rule_of(std::uint32_t w, std::uint32_t q, std::size_t queued);
    void next_wake(std::uint32_t w);
    void publish_first_wake();
    [[noreturn]] void bad_queue(const tasks::QueueRef& q, std::string_view policy_name) const;
    double oldest_idle_since();
    // Whether w, idle for `idle_for`, may take from the k-th queue of its
    // order (which holds work): its delay has passed, or the backlog or the
    // occupied rule applies. Inline: a search calls it per queue holding work.
    bool searchable(const Core& ws, std::size_t k, double idle_for) const {
        const Listed& l = ws.search[k];
        if (l.delay <= idle_for) return true;
        return queues_[l.queue].size() > l.backlog || engine_.now() - occupied_since_[l.queue] >= l.delay;
    }

    EventEngine& engine_;
    std::vector<Core> cores_;
    // Per worker, dense (an enqueue reads it for many workers): whether it
    // is idle and since when.
    struct Idle {
        double since = 0;
        bool idle = false;
    };
    std::vector<Idle> idle_;
    std::vector<unsigned> worker_nodes_;              // ascending OS index
    std::vector<std::size_t> node_slot_of_pos_;       // node position -> slot in worker_nodes_
    std::vector<std::uint32_t> pos_of_os_;            // node OS index -> node position, or no_index
    std::vector<Ring<std::uint32_t>> queues_;         // size() worker queues, then one per node position
    std::vector<std::vector<Taker>> takers_;          // per queue
    std::vector<std::uint32_t> idle_list_, idle_index_;       // idle workers (unordered), and where each is in it
    // The first wake-up of each idle period, in one lane per first delay:
    // a worker goes idle at the current time, so each lane is in time
    // order and a new one goes at its back. Most idle periods end before
    // their first wake-up; such an entry is dropped when it reaches the
    // front. Only the earliest live front is published to the engine; later
    // wake-ups of a period go to the engine's wake heap.
    struct FirstWake {
        double t;
        std::uint64_t seq;     // the engine's, taken when the worker went idle
        std::uint32_t worker;
        std::uint64_t epoch;   // the idle period's
    };
    struct WakeLane {
        double delay;
        Ring<FirstWake> ring;
    };
    std::vector<WakeLane> first_wakes_;
    std::uint32_t published_lane_ = no_index;   // the lane whose front the engine holds, or no_index
    std::uint64_t published_seq_ = 0;
    // Idle workers in the order they went idle, as (worker, idle epoch);
    // entries of workers that have started a task since are dropped when
    // met at the front, or all at once when they outnumber the idle.
    std::deque<std::pair<std::uint32_t, std::uint64_t>> idle_fifo_;
    // Per queue, what lets an enqueue that no idle worker may take return
    // at once (most enqueues, when every worker near the queue is busy):
    //   the idle workers that search it without delay, one bit per such
    //   taker in the order of takers_[q] (the first set bit wins), in the
    //   words [idle_at_once_first_[q], idle_at_once_first_[q + 1]);
    std::vector<std::uint64_t> idle_at_once_;
    std::vector<std::uint32_t> idle_at_once_first_;
    std::vector<double> first_delay_;           // the smallest positive delay of its takers (inf: none)
    std::vector<std::uint32_t> least_backlog_;  // the smallest Rank::backlog of those with a positive delay
    std::vector<std::uint64_t> nonempty_bits_;   // the queues holding tasks, one bit per queue
    std::size_t nonempty_count_ = 0;             // how many
    std::vector<std::vector<std::uint32_t>> workers_at_;   // by node position: its workers
    std::vector<std::size_t> free_at_;                     // by node position: its workers not running a task
    // Per queue: for a node's queue while every worker of the node runs a
    // task, when the youngest of those tasks started (the occupied rule);
    // +infinity otherwise, and always for a worker's queue.
    std::vector<double> occupied_since_;
    // What a worker's search order says of one queue, in one place: an
    // enqueue that ranks the idle workers reads one entry per worker, from
    // the queue's row.
    struct Rank {
        std::uint32_t k = no_index;       // index in the worker's search order, or no_index
        std::uint32_t backlog = 0;        // Listed::backlog
        double delay = 0;                 // Listed::delay
    };
    std::vector<Rank> rank_;                          // [queue * workers + worker]
    // Rank::k again, by worker: a search over the queues holding work reads
    // the worker's row.
    std::vector<std::uint32_t> position_;             // [worker * queues + queue]
};

}  // namespace numaware::sim
