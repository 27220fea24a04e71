// src/sim/task_sim.cpp — the discrete-event task simulator.
//
// One simulated core per worker of a team layout (plan_team). The real
// dependency tracker (tasks/deps.hpp) orders the tasks and the real policy
// object places them and lists the queues an idle worker searches; the
// simulator supplies time. The model (docs/SIMULATOR.md):
//   * the spawning thread submits the graph in creation order, one task
//     every spawn_s; a task marked after_barrier waits for every earlier one;
//   * queues as in the executor: one per worker (its owner takes the newest
//     task, thieves the oldest) and one per node (oldest first); a pinned
//     task waits in its worker's own list;
//   * an idle worker takes work from the queues steal_order(w, 0) lists at
//     once, and from a queue that appears only at round k after k × round_s
//     of idleness; when several idle workers could take a new task, the one
//     that lists its queue earliest wins (ties: the lower worker id);
//   * a task runs task_overhead_s + compute_s + memory time, where each
//     dependency costs latency(runner, home) + bytes / bandwidth; the
//     bandwidth is the least of the core's own limit on that path (Little's
//     law: outstanding lines / latency) and its shares of the home's memory
//     and of the link, which concurrent tasks share (Contention);
//   * homes: explicit, or first touch by the first task that writes the
//     region (the runner's node), recorded when it completes, as the
//     executor's registry does;
//   * partition jobs run for real, one at a time, on a background thread
//     that costs no simulated core.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "numaware/error.hpp"
#include "numaware/sim.hpp"
#include "tasks/deps.hpp"

namespace numaware::sim {

std::string_view to_string(Contention c) { return c == Contention::exact ? "exact" : "snapshot"; }

Contention parse_contention(std::string_view text) {
    if (text == "snapshot") return Contention::snapshot;
    if (text == "exact") return Contention::exact;
    throw Error("contention", fmt::format("unknown model '{}': choose snapshot or exact", text));
}

namespace {

using tasks::Access;
using tasks::Placement;
using tasks::QueueRef;
using tasks::TaskId;
using Clock = std::chrono::steady_clock;

constexpr std::uint32_t none = 0xffffffffu;
constexpr std::uint64_t max_rounds = 256;   // the executor's workers sleep after 256 searches

enum class EventKind : std::uint8_t { finish, job_done, submit, wake, scan };

// A double-ended queue of task indices in one growable power-of-two ring.
class Ring {
public:
    bool empty() const { return head_ == tail_; }
    void push_back(std::uint32_t v) {
        if (tail_ - head_ == buf_.size()) grow();
        buf_[tail_++ & (buf_.size() - 1)] = v;
    }
    std::uint32_t pop_back() { return buf_[--tail_ & (buf_.size() - 1)]; }
    std::uint32_t pop_front() { return buf_[head_++ & (buf_.size() - 1)]; }

private:
    void grow() {
        std::vector<std::uint32_t> bigger(buf_.empty() ? 16 : buf_.size() * 2);
        for (std::uint64_t i = head_; i != tail_; ++i) bigger[i - head_] = buf_[i & (buf_.size() - 1)];
        tail_ -= head_;
        head_ = 0;
        buf_.swap(bigger);
    }
    std::vector<std::uint32_t> buf_;
    std::uint64_t head_ = 0, tail_ = 0;
};

struct Event {
    double t;
    std::uint64_t seq;
    EventKind kind;
    std::uint32_t a;
    std::uint64_t b;
};
struct Later {
    bool operator()(const Event& x, const Event& y) const { return x.t != y.t ? x.t > y.t : x.seq > y.seq; }
};

// A queue a worker may search, flattened: worker queues first, then node
// queues by node position.
struct Taker {
    std::uint32_t worker;
    std::uint32_t position;   // where the queue is in the worker's search order
    double delay;             // idle time before the worker searches it
};

struct WorkerState {
    unsigned node = 0;        // OS index
    std::size_t pos = 0;      // node position in the machine
    bool idle = false;
    double idle_since = 0;
    std::uint64_t idle_epoch = 0;
    std::uint32_t task = none;          // running
    std::uint32_t next_dep = 0;         // exact mode: the dependency being transferred
    double busy = 0;
    std::vector<std::uint32_t> search;  // queue ids, in search order
    std::vector<double> delays;         // parallel to search
    std::vector<double> wake_delays;    // the distinct positive delays, ascending
    Ring pinned;                        // pinned tasks waiting for this worker
    double started = 0;
    double extra = 0;                   // balancing costs of the running task
    std::vector<std::size_t> dep_home;  // node position of each dependency of the running task, at its start
    std::vector<std::uint64_t> dep_weight;   // snapshot: its share of the task's bytes, in weight_unit
};

struct RegionState {
    int home = tasks::unallocated;
    std::uint32_t home_pos = 0;   // node position of `home` (when allocated)
    bool marked = false;      // balancing: a hinting fault is due
    int last_fault = -1;      // balancing: node of the last hinting fault
};

class Simulator {
public:
    Simulator(const TimedMachine& m, const Graph& g, tasks::Policy& p, const SimOptions& o)
        : m_(m), g_(g), policy_(p), o_(o) {}

    SimReport run();

private:
    // ---- set-up
    void check_inputs();
    void build_layout();
    void build_search_orders();
    std::uint32_t queue_id(const QueueRef& q) const;

    // ---- events
    void push(double t, EventKind k, std::uint32_t a = 0, std::uint64_t b = 0) {
        events_.push(Event{t, seq_++, k, a, b});
    }
    void submit_ready_tasks();
    void submit(std::uint32_t i);
    void dispatch(std::uint32_t i, Placement where);
    void enqueue(std::uint32_t q, std::uint32_t i);
    void take(std::uint32_t w, std::uint32_t q);
    bool try_start_from(std::uint32_t w);
    void start(std::uint32_t w, std::uint32_t i);
    void begin_memory(std::uint32_t w);     // snapshot: once every task starting now is counted
    void count_users(const WorkerState& ws, bool add);
    void start_flow(std::uint32_t w);
    void finish(std::uint32_t w);
    void go_idle(std::uint32_t w);
    void take_jobs();
    void start_job();
    void job_done();
    void maybe_flush();
    void route(std::vector<tasks::Released>& released);
    void scan();
    double touch(std::uint32_t w, std::uint32_t region);

    const TimedMachine& m_;
    const Graph& g_;
    tasks::Policy& policy_;
    const SimOptions& o_;

    std::size_t n_nodes_ = 0;
    std::vector<WorkerState> workers_;
    std::vector<unsigned> worker_nodes_;             // ascending OS index
    std::vector<std::size_t> node_slot_of_pos_;      // node position -> slot in worker_nodes_ (or npos)
    std::vector<Ring> queues_;  // workers_.size() worker queues, then one per node position
    std::vector<std::vector<Taker>> takers_;         // per queue
    std::vector<std::uint32_t> idle_list_, idle_index_;   // idle workers (unordered), and where each is in it
    std::vector<std::uint32_t> nonempty_, nonempty_index_;   // queues holding tasks, and where each is in it
    std::vector<std::uint32_t> rank_;                     // [worker * queues + queue]: index in its search order, or none

    std::vector<RegionState> regions_;
    tasks::detail::DepTracker tracker_;
    static constexpr std::size_t node_chunk = 4096;
    std::vector<std::unique_ptr<tasks::detail::DepNode[]>> node_pool_;   // in chunks; reused through free_nodes_
    std::size_t chunk_used_ = node_chunk;
    std::vector<tasks::detail::DepNode*> free_nodes_;
    std::vector<tasks::detail::DepNode*> live_;      // per task index, while submitted and unfinished
    std::vector<tasks::detail::DepNode*> ready_scratch_;
    std::vector<tasks::DepInfo> infos_;
    std::vector<tasks::Released> released_;

    std::priority_queue<Event, std::vector<Event>, Later> events_;
    std::uint64_t seq_ = 0;
    double now_ = 0;

    // spawning thread
    std::uint32_t next_submit_ = 0;
    std::uint64_t completed_ = 0;
    bool spawner_waiting_ = false;
    bool submit_pending_ = false;

    // policy jobs
    std::deque<std::unique_ptr<tasks::PartitionJob>> jobs_;
    bool job_running_ = false;
    std::unique_ptr<tasks::PartitionJob> running_job_;
    std::uint64_t held_ = 0;

    // memory model
    // Snapshot users, in units of 1/weight_unit of a task: a task counts on
    // each resource with the share of its dependency bytes that go through
    // it (its expected occupancy, since it transfers one region at a time).
    static constexpr std::uint64_t weight_unit = std::uint64_t{1} << 20;
    std::vector<std::uint64_t> users_mem_;    // per node position
    std::vector<std::uint64_t> users_link_;   // [reader * n + home]
    std::vector<std::vector<std::uint32_t>> shared_of_;   // [reader * n + home]: the shared links the path crosses
    std::vector<std::uint64_t> users_shared_;
    std::vector<std::size_t> shared_res_;
    std::vector<std::uint32_t> starting_;     // snapshot: workers that started at now_
    FlowNetwork net_;
    static constexpr std::size_t none_res = ~std::size_t{0};
    std::vector<std::size_t> mem_res_, link_res_, core_res_;   // core_res_: [worker * n + home], made when first used
    std::vector<std::uint32_t> flow_worker_;

    SimReport r_;
};

// -------------------------------------------------------------------------

void Simulator::check_inputs() {
    n_nodes_ = m_.machine.node_count();
    for (std::size_t i = 0; i < g_.regions().size(); ++i) {
        const int h = g_.regions()[i].home;
        if (h == tasks::unallocated) continue;
        bool found = false;
        for (const Node& nd : m_.machine.nodes) found |= static_cast<int>(nd.os_index) == h;
        if (!found)
            throw Error(fmt::format("regions[{}].home", i),
                        fmt::format("node {} is not a node of {}", h, m_.name));
    }
    if (!(o_.spawn_s >= 0) || !std::isfinite(o_.spawn_s))
        throw Error("spawn_s", fmt::format("must be finite and >= 0, got {}", o_.spawn_s));
    if (!(o_.round_s >= 0) || !std::isfinite(o_.round_s))
        throw Error("round_s", fmt::format("must be finite and >= 0, got {}", o_.round_s));
    if (!(o_.task_overhead_s >= 0) || !std::isfinite(o_.task_overhead_s))
        throw Error("task_overhead_s", fmt::format("must be finite and >= 0, got {}", o_.task_overhead_s));
    if (!(o_.partition_scale >= 0) || !std::isfinite(o_.partition_scale))
        throw Error("partition_scale", fmt::format("must be finite and >= 0, got {}", o_.partition_scale));
    if (!(o_.partition_s_per_task >= 0) || !std::isfinite(o_.partition_s_per_task))
        throw Error("partition_s_per_task", fmt::format("must be finite and >= 0, got {}", o_.partition_s_per_task));
    if (o_.balancing.enabled) {
        if (!(o_.balancing.scan_period_s > 0) || !std::isfinite(o_.balancing.scan_period_s))
            throw Error("balancing.scan_period_s",
                        fmt::format("must be finite and > 0, got {}", o_.balancing.scan_period_s));
        if (!(o_.balancing.fault_s >= 0) || !std::isfinite(o_.balancing.fault_s))
            throw Error("balancing.fault_s", fmt::format("must be finite and >= 0, got {}", o_.balancing.fault_s));
    }
}

TeamLayout full_layout(const Machine& machine, const TeamMapping& mapping) {
    TeamMapping full = mapping;
    if (full.threads == 0 && full.cpus.empty())
        for (const Node& nd : machine.nodes) full.threads += static_cast<unsigned>(nd.cpus.size());
    return plan_team(machine, full);
}

void Simulator::build_layout() {
    const TeamLayout layout = full_layout(m_.machine, o_.mapping);
    workers_.resize(layout.size());
    for (std::size_t w = 0; w < layout.size(); ++w) {
        workers_[w].node = layout.ranks[w].node;
        workers_[w].pos = m_.machine.index_of(layout.ranks[w].node);
        worker_nodes_.push_back(layout.ranks[w].node);
    }
    std::sort(worker_nodes_.begin(), worker_nodes_.end());
    worker_nodes_.erase(std::unique(worker_nodes_.begin(), worker_nodes_.end()), worker_nodes_.end());
    node_slot_of_pos_.assign(n_nodes_, worker_nodes_.size());
    for (std::size_t s = 0; s < worker_nodes_.size(); ++s) node_slot_of_pos_[m_.machine.index_of(worker_nodes_[s])] = s;
    for (std::size_t i = 0; i < g_.tasks().size(); ++i) {
        const GraphTask& t = g_.tasks()[i];
        if (t.worker >= static_cast<int>(workers_.size()))
            throw Error(fmt::format("tasks[{}].worker", i),
                        fmt::format("worker {} does not exist (the layout has {} workers)", t.worker, workers_.size()));
    }
    queues_.resize(workers_.size() + n_nodes_);
    takers_.resize(queues_.size());
    users_mem_.assign(n_nodes_, 0);
    users_link_.assign(n_nodes_ * n_nodes_, 0);
    shared_of_.assign(n_nodes_ * n_nodes_, {});
    for (std::uint32_t l = 0; l < m_.shared_links.size(); ++l)
        for (const auto& [r, h] : m_.shared_links[l].paths) shared_of_[r * n_nodes_ + h].push_back(l);
    users_shared_.assign(m_.shared_links.size(), 0);
}

std::uint32_t Simulator::queue_id(const QueueRef& q) const {
    if (q.kind == QueueRef::Kind::worker) {
        if (q.index >= workers_.size())
            throw Error("policy", fmt::format("{} listed worker queue {} of {}", policy_.name(), q.index, workers_.size()));
        return q.index;
    }
    std::size_t pos = 0;
    try {
        pos = m_.machine.index_of(q.index);
    } catch (const Error&) {
        throw Error("policy", fmt::format("{} listed the queue of node {}, not a node of the machine", policy_.name(), q.index));
    }
    return static_cast<std::uint32_t>(workers_.size() + pos);
}

// Each worker's search order: steal_order(w, 0), then queues that a later
// round adds, each with the first round that lists it (found by bisection:
// a policy widens its search as rounds go by, never narrows it).
void Simulator::build_search_orders() {
    std::vector<QueueRef> order;
    std::vector<char> seen(queues_.size(), 0);
    rank_.assign(workers_.size() * queues_.size(), none);
    idle_index_.assign(workers_.size(), none);
    nonempty_index_.assign(queues_.size(), none);
    for (std::uint32_t w = 0; w < workers_.size(); ++w) {
        WorkerState& ws = workers_[w];
        std::fill(seen.begin(), seen.end(), 0);
        policy_.steal_order(w, 0, order);
        for (const QueueRef& q : order) {
            const std::uint32_t id = queue_id(q);
            if (seen[id]) continue;
            seen[id] = 1;
            ws.search.push_back(id);
            ws.delays.push_back(0);
        }
        std::vector<QueueRef> deep;
        policy_.steal_order(w, max_rounds, deep);
        for (const QueueRef& q : deep) {
            const std::uint32_t id = queue_id(q);
            if (seen[id]) continue;
            seen[id] = 1;
            std::uint64_t lo = 1, hi = max_rounds;   // listed at hi, not at lo - 1
            while (lo < hi) {
                const std::uint64_t mid = (lo + hi) / 2;
                policy_.steal_order(w, mid, order);
                bool listed = false;
                for (const QueueRef& x : order) listed |= x == q;
                if (listed) hi = mid; else lo = mid + 1;
            }
            ws.search.push_back(id);
            ws.delays.push_back(static_cast<double>(lo) * o_.round_s);
        }
        for (double d : ws.delays)
            if (d > 0) ws.wake_delays.push_back(d);
        std::sort(ws.wake_delays.begin(), ws.wake_delays.end());
        ws.wake_delays.erase(std::unique(ws.wake_delays.begin(), ws.wake_delays.end()), ws.wake_delays.end());
        for (std::uint32_t k = 0; k < ws.search.size(); ++k) {
            takers_[ws.search[k]].push_back(Taker{w, k, ws.delays[k]});
            rank_[static_cast<std::size_t>(w) * queues_.size() + ws.search[k]] = k;
        }
    }
    for (auto& list : takers_)
        std::sort(list.begin(), list.end(), [](const Taker& a, const Taker& b) {
            if (a.delay != b.delay) return a.delay < b.delay;
            if (a.position != b.position) return a.position < b.position;
            return a.worker < b.worker;
        });
}

// -------------------------------------------------------------------------

void Simulator::submit_ready_tasks() {
    // The spawning thread: with spawn_s = 0 everything up to the next
    // barrier goes now; otherwise one task per submit event.
    while (next_submit_ < g_.size()) {
        const GraphTask& t = g_.tasks()[next_submit_];
        if (t.after_barrier && completed_ < next_submit_) {
            spawner_waiting_ = true;
            return;
        }
        spawner_waiting_ = false;
        if (o_.spawn_s > 0) {
            if (submit_pending_) return;
            submit_pending_ = true;
            push(now_ + o_.spawn_s, EventKind::submit, next_submit_);
            return;
        }
        submit(next_submit_++);
    }
    spawner_waiting_ = true;   // the final barrier
}

void Simulator::submit(std::uint32_t i) {
    const GraphTask& t = g_.tasks()[i];
    tasks::detail::DepNode* node = nullptr;
    if (!free_nodes_.empty()) {
        node = free_nodes_.back();
        free_nodes_.pop_back();
    } else {
        if (chunk_used_ == node_chunk) {
            node_pool_.push_back(std::make_unique<tasks::detail::DepNode[]>(node_chunk));
            chunk_used_ = 0;
        }
        node = &node_pool_.back()[chunk_used_++];
    }
    node->clear_deps();
    node->id = i;
    const auto deps = g_.deps_of(t);
    for (const GraphDep& d : deps) {
        const GraphRegion& reg = g_.regions()[d.region];
        node->deps.push_back(tasks::detail::TrackedDep{reg.start, reg.bytes, d.access, nullptr, tasks::detail::no_position});
    }
    live_[i] = node;
    const bool ready = deps.empty() ? true : tracker_.add(*node);
    if (t.worker >= 0) {
        if (ready) dispatch(i, Placement::to_worker(static_cast<unsigned>(t.worker)));
        return;
    }
    infos_.clear();
    for (const GraphDep& d : deps) {
        const GraphRegion& reg = g_.regions()[d.region];
        infos_.push_back(tasks::DepInfo{reg.start, reg.bytes, d.access, regions_[g_.regions()[d.region].page].home});
    }
    policy_.on_submit(tasks::TaskView{i, infos_, std::span<const tasks::Edge>(node->preds), t.hint});
    take_jobs();
    if (ready) {
        dispatch(i, policy_.place(tasks::TaskView{i, infos_, {}, t.hint}));
    }
}

void Simulator::dispatch(std::uint32_t i, Placement where) {
    const GraphTask& t = g_.tasks()[i];
    if (t.worker >= 0) {
        WorkerState& ws = workers_[static_cast<std::size_t>(t.worker)];
        if (ws.idle)
            start(static_cast<std::uint32_t>(t.worker), i);
        else
            ws.pinned.push_back(i);
        return;
    }
    switch (where.kind) {
        case Placement::Kind::hold: ++held_; return;
        case Placement::Kind::worker:
            if (where.index >= workers_.size())
                throw Error("policy", fmt::format("{} placed task {} on worker {} of {}", policy_.name(), i, where.index,
                                                  workers_.size()));
            enqueue(where.index, i);
            return;
        case Placement::Kind::node:
            enqueue(queue_id(QueueRef{QueueRef::Kind::node, where.index}), i);
            return;
    }
}

// Worker w takes a task from queue q: the owner of a worker queue takes
// the newest, everyone else the oldest.
void Simulator::take(std::uint32_t w, std::uint32_t q) {
    Ring& dq = queues_[q];
    const std::uint32_t i = q == w ? dq.pop_back() : dq.pop_front();
    if (dq.empty()) {
        const std::uint32_t at = nonempty_index_[q];
        nonempty_index_[nonempty_.back()] = at;
        nonempty_[at] = nonempty_.back();
        nonempty_.pop_back();
        nonempty_index_[q] = none;
    }
    start(w, i);
}

void Simulator::enqueue(std::uint32_t q, std::uint32_t i) {
    if (queues_[q].empty()) {
        nonempty_index_[q] = static_cast<std::uint32_t>(nonempty_.size());
        nonempty_.push_back(q);
    }
    queues_[q].push_back(i);
    if (idle_list_.empty()) return;
    const std::size_t nq = queues_.size();
    if (idle_list_.size() * 4 < takers_[q].size()) {
        // Few idle workers: rank them, rather than walking every taker.
        std::uint32_t best = none, best_k = none;
        double best_delay = 0;
        for (std::uint32_t w : idle_list_) {
            const std::uint32_t k = rank_[w * nq + q];
            if (k == none) continue;
            const WorkerState& ws = workers_[w];
            const double d = ws.delays[k];
            if (ws.idle_since + d > now_) continue;
            if (best == none || d < best_delay || (d == best_delay && (k < best_k || (k == best_k && w < best)))) {
                best = w;
                best_k = k;
                best_delay = d;
            }
        }
        if (best != none) take(best, q);
        return;
    }
    for (const Taker& tk : takers_[q]) {
        const WorkerState& ws = workers_[tk.worker];
        if (!ws.idle || ws.idle_since + tk.delay > now_) continue;
        take(tk.worker, q);
        return;
    }
}

// The worker searches its queues in order; true if it found a task.
bool Simulator::try_start_from(std::uint32_t w) {
    WorkerState& ws = workers_[w];
    if (!ws.pinned.empty()) {
        start(w, ws.pinned.pop_front());
        return true;
    }
    const double idle_for = ws.idle ? now_ - ws.idle_since : 0;
    if (nonempty_.size() * 4 < ws.search.size()) {
        // Few queues hold work: the first of them in this worker's order.
        const std::size_t nq = queues_.size();
        std::uint32_t best_k = none;
        for (std::uint32_t q : nonempty_) {
            const std::uint32_t k = rank_[w * nq + q];
            if (k != none && ws.delays[k] <= idle_for && k < best_k) best_k = k;
        }
        if (best_k == none) return false;
        take(w, ws.search[best_k]);
        return true;
    }
    for (std::size_t k = 0; k < ws.search.size(); ++k) {
        if (ws.delays[k] > idle_for || queues_[ws.search[k]].empty()) continue;
        take(w, ws.search[k]);
        return true;
    }
    return false;
}

void Simulator::go_idle(std::uint32_t w) {
    WorkerState& ws = workers_[w];
    ws.idle = true;
    ws.idle_since = now_;
    ++ws.idle_epoch;
    idle_index_[w] = static_cast<std::uint32_t>(idle_list_.size());
    idle_list_.push_back(w);
    for (double d : ws.wake_delays) push(now_ + d, EventKind::wake, w, ws.idle_epoch);
}

// The balancing model on one access by worker w: a hinting fault on a
// marked region, and a migration on the second fault in a row from the
// same remote node. Returns the time the access costs on top.
double Simulator::touch(std::uint32_t w, std::uint32_t region) {
    RegionState& rs = regions_[g_.regions()[region].page];
    if (!o_.balancing.enabled || !rs.marked || rs.home == tasks::unallocated) return 0;
    const WorkerState& ws = workers_[w];
    rs.marked = false;
    ++r_.hinting_faults;
    double extra = o_.balancing.fault_s;
    const int here = static_cast<int>(ws.node);
    if (here != rs.home && rs.last_fault == here) {
        const std::uint64_t bytes = g_.regions()[region].bytes;
        const std::size_t from = rs.home_pos;
        extra += static_cast<double>(bytes) / (m_.link_gbps[ws.pos][from] * 1e9);
        r_.migrated_bytes += bytes;
        rs.home = here;
        rs.home_pos = static_cast<std::uint32_t>(ws.pos);
        rs.last_fault = -1;
    } else {
        rs.last_fault = here;
    }
    return extra;
}

void Simulator::start(std::uint32_t w, std::uint32_t i) {
    WorkerState& ws = workers_[w];
    if (ws.idle) {
        ws.idle = false;
        const std::uint32_t at = idle_index_[w];
        idle_index_[idle_list_.back()] = at;
        idle_list_[at] = idle_list_.back();
        idle_list_.pop_back();
    }
    ws.task = i;
    ws.started = now_;
    ws.next_dep = 0;
    const GraphTask& t = g_.tasks()[i];
    std::uint64_t bytes = 0, cross = 0;
    for (const GraphDep& d : g_.deps_of(t)) {
        const std::uint64_t n = g_.regions()[d.region].bytes;
        bytes += n;
        const int home = regions_[g_.regions()[d.region].page].home;
        if (home == tasks::unallocated && d.access != Access::in) continue;   // first touch here
        if (home != static_cast<int>(ws.node)) cross += n;
    }
    r_.dep_bytes += bytes;
    r_.cross_node_bytes += cross;
    ++r_.tasks;
    ++r_.tasks_per_node[node_slot_of_pos_[ws.pos]];
    // Where each dependency's bytes are now (a region not yet touched is
    // first-touched here), then the balancing model's faults.
    ws.dep_home.clear();
    ws.extra = 0;
    for (const GraphDep& d : g_.deps_of(t)) {
        const RegionState& rs = regions_[g_.regions()[d.region].page];
        ws.dep_home.push_back(rs.home == tasks::unallocated ? ws.pos : rs.home_pos);
        ws.extra += touch(w, d.region);
    }
    if (o_.contention == Contention::snapshot) {
        // Count this task as a user of its resources now; its durations are
        // computed once every task starting at this instant is counted.
        ws.dep_weight.clear();
        const auto deps = g_.deps_of(t);
        for (std::size_t k = 0; k < deps.size(); ++k) {
            const std::uint64_t b = g_.regions()[deps[k].region].bytes;
            ws.dep_weight.push_back(bytes > 0 ? static_cast<std::uint64_t>(static_cast<double>(b) /
                                                                          static_cast<double>(bytes) * weight_unit)
                                              : 0);
        }
        count_users(ws, true);
        starting_.push_back(w);
    } else {
        start_flow(w);
    }
}

// Snapshot: adds (or removes) the running task of `ws` to the users of
// every resource its dependencies go through, weighted by their bytes.
void Simulator::count_users(const WorkerState& ws, bool add) {
    for (std::size_t k = 0; k < ws.dep_home.size(); ++k) {
        const std::size_t h = ws.dep_home[k];
        const std::uint64_t wk = ws.dep_weight[k];
        const auto apply = [&](std::uint64_t& u) { u = add ? u + wk : u - wk; };
        apply(users_mem_[h]);
        if (h != ws.pos) {
            apply(users_link_[ws.pos * n_nodes_ + h]);
            for (std::uint32_t l : shared_of_[ws.pos * n_nodes_ + h]) apply(users_shared_[l]);
        }
    }
}

void Simulator::begin_memory(std::uint32_t w) {
    // Snapshot: every share is fixed now.
    WorkerState& ws = workers_[w];
    const GraphTask& t = g_.tasks()[ws.task];
    double d_s = o_.task_overhead_s + t.compute_s + ws.extra;
    const auto deps = g_.deps_of(t);
    for (std::size_t k = 0; k < deps.size(); ++k) {
        const std::size_t h = ws.dep_home[k];
        const std::uint64_t bytes = g_.regions()[deps[k].region].bytes;
        // A resource's capacity is split between its users (at least one:
        // a task never gets more than the whole resource).
        const auto users = [](std::uint64_t u) { return std::max(1.0, static_cast<double>(u) / weight_unit); };
        double bw = std::min(m_.core_gbps(ws.pos, h), m_.memory_gbps[h] / users(users_mem_[h]));
        if (h != ws.pos) {
            bw = std::min(bw, m_.link_gbps[ws.pos][h] / users(users_link_[ws.pos * n_nodes_ + h]));
            for (std::uint32_t l : shared_of_[ws.pos * n_nodes_ + h])
                bw = std::min(bw, m_.shared_links[l].gbps / users(users_shared_[l]));
        }
        d_s += m_.latency_ns[ws.pos][h] * 1e-9 + static_cast<double>(bytes) / (bw * 1e9);
        r_.link_bytes[ws.pos][h] += bytes;
    }
    push(now_ + d_s, EventKind::finish, w);
}

void Simulator::start_flow(std::uint32_t w) {
    // Exact: the task's dependencies one after another, then its compute.
    WorkerState& ws = workers_[w];
    const GraphTask& t = g_.tasks()[ws.task];
    const auto deps = g_.deps_of(t);
    if (ws.next_dep < deps.size()) {
        if (net_.active() == 0 && now_ > net_.time()) net_.advance_to(now_);   // an idle network's clock stands still
        const std::size_t h = ws.dep_home[ws.next_dep];
        const std::uint64_t bytes = g_.regions()[deps[ws.next_dep].region].bytes;
        // The core's own limit on this path is a resource only it uses.
        std::size_t& core = core_res_[static_cast<std::size_t>(w) * n_nodes_ + h];
        if (core == none_res)
            core = net_.add_resource(m_.core_gbps(ws.pos, h) * 1e9, fmt::format("core {} from node {}", w, h));
        std::vector<std::size_t> res{core, mem_res_[h]};
        if (h != ws.pos) {
            res.push_back(link_res_[ws.pos * n_nodes_ + h]);
            for (std::uint32_t l : shared_of_[ws.pos * n_nodes_ + h]) res.push_back(shared_res_[l]);
        }
        const FlowNetwork::Id id = net_.start(static_cast<double>(bytes), std::move(res), m_.latency_ns[ws.pos][h] * 1e-9);
        if (flow_worker_.size() <= id) flow_worker_.resize(id + 1, none);
        flow_worker_[id] = w;
        r_.link_bytes[ws.pos][h] += bytes;
        ++ws.next_dep;
        return;
    }
    push(now_ + o_.task_overhead_s + t.compute_s + ws.extra, EventKind::finish, w);
}

void Simulator::finish(std::uint32_t w) {
    WorkerState& ws = workers_[w];
    const std::uint32_t i = ws.task;
    const GraphTask& t = g_.tasks()[i];
    ws.busy += now_ - ws.started;
    ws.task = none;
    ++completed_;
    if (o_.contention == Contention::snapshot) count_users(ws, false);
    // First touch: a region first written here now lives here.
    for (const GraphDep& d : g_.deps_of(t))
        if (d.access != Access::in && regions_[g_.regions()[d.region].page].home == tasks::unallocated) {
            regions_[g_.regions()[d.region].page].home = static_cast<int>(ws.node);
            regions_[g_.regions()[d.region].page].home_pos = static_cast<std::uint32_t>(ws.pos);
        }
    tasks::detail::DepNode* node = live_[i];
    live_[i] = nullptr;
    if (!g_.deps_of(t).empty()) {
        tracker_.complete(*node, ready_scratch_);
        for (tasks::detail::DepNode* n : ready_scratch_) {
            const auto s = static_cast<std::uint32_t>(n->id);
            const GraphTask& st = g_.tasks()[s];
            if (st.worker >= 0) {
                dispatch(s, Placement::to_worker(static_cast<unsigned>(st.worker)));
                continue;
            }
            infos_.clear();
            for (const GraphDep& d : g_.deps_of(st)) {
                const GraphRegion& reg = g_.regions()[d.region];
                infos_.push_back(tasks::DepInfo{reg.start, reg.bytes, d.access, regions_[g_.regions()[d.region].page].home});
            }
            dispatch(s, policy_.place(tasks::TaskView{s, infos_, {}, st.hint}));
        }
        ready_scratch_.clear();
    }
    free_nodes_.push_back(node);
    if (!try_start_from(w)) go_idle(w);
    if (spawner_waiting_ && completed_ == next_submit_) submit_ready_tasks();
}

// -------------------------------------------------------------------------

void Simulator::take_jobs() {
    while (auto job = policy_.take_job()) jobs_.push_back(std::move(job));
    if (!job_running_ && !jobs_.empty()) start_job();
}

void Simulator::start_job() {
    running_job_ = std::move(jobs_.front());
    jobs_.pop_front();
    job_running_ = true;
    const auto t0 = Clock::now();
    running_job_->run();
    const double host = std::chrono::duration<double>(Clock::now() - t0).count();
    r_.partition_host_s += host;
    ++r_.partition_jobs;
    const double d = o_.partition_s_per_task > 0 ? o_.partition_s_per_task * static_cast<double>(running_job_->tasks())
                                                 : host * o_.partition_scale;
    r_.partition_s += d;
    push(now_ + d, EventKind::job_done);
}

void Simulator::route(std::vector<tasks::Released>& released) {
    for (const tasks::Released& x : released) {
        if (x.id >= g_.size()) throw Error("policy", fmt::format("{} released task {} that does not exist", policy_.name(), x.id));
        if (x.where.kind == Placement::Kind::hold)
            throw Error("policy", fmt::format("{} released task {} to be held again", policy_.name(), x.id));
        --held_;
        dispatch(static_cast<std::uint32_t>(x.id), x.where);
    }
    released.clear();
}

void Simulator::job_done() {
    job_running_ = false;
    released_.clear();
    policy_.finish_job(std::move(running_job_), released_);
    route(released_);
    take_jobs();
}

void Simulator::maybe_flush() {
    if (!spawner_waiting_ || held_ == 0 || job_running_ || !jobs_.empty()) return;
    released_.clear();
    const bool job = policy_.flush(released_);
    route(released_);
    if (job) take_jobs();
}

void Simulator::scan() {
    for (RegionState& rs : regions_)
        if (rs.home != tasks::unallocated) rs.marked = true;
    if (completed_ < g_.size()) push(now_ + o_.balancing.scan_period_s, EventKind::scan);
}

// -------------------------------------------------------------------------

SimReport Simulator::run() {
    const auto host0 = Clock::now();
    check_inputs();
    build_layout();

    tasks::PolicyContext ctx;
    ctx.machine = &m_.machine;
    for (const WorkerState& ws : workers_) ctx.worker_node.push_back(ws.node);
    ctx.nodes = worker_nodes_;
    ctx.seed = o_.policy.seed;
    policy_.attach(ctx);
    build_search_orders();

    // One home per page group: regions sharing a page share its home.
    regions_.resize(g_.pages());
    for (const GraphRegion& reg : g_.regions()) {
        RegionState& rs = regions_[reg.page];
        rs.home = reg.home;
        if (rs.home != tasks::unallocated)
            rs.home_pos = static_cast<std::uint32_t>(m_.machine.index_of(static_cast<unsigned>(rs.home)));
    }
    live_.assign(g_.size(), nullptr);

    r_.machine = m_.name;
    r_.label = "simulated on " + m_.name;
    r_.policy = std::string(policy_.name());
    r_.graph = g_.name;
    r_.contention = std::string(to_string(o_.contention));
    r_.workers = static_cast<unsigned>(workers_.size());
    r_.nodes = worker_nodes_;
    r_.tasks_per_node.assign(worker_nodes_.size(), 0);
    r_.link_bytes.assign(n_nodes_, std::vector<std::uint64_t>(n_nodes_, 0));

    if (o_.contention == Contention::exact) {
        for (std::size_t h = 0; h < n_nodes_; ++h)
            mem_res_.push_back(net_.add_resource(m_.memory_gbps[h] * 1e9, fmt::format("memory {}", m_.machine.nodes[h].os_index)));
        link_res_.assign(n_nodes_ * n_nodes_, 0);
        core_res_.assign(workers_.size() * n_nodes_, none_res);
        for (const auto& l : m_.shared_links) shared_res_.push_back(net_.add_resource(l.gbps * 1e9, l.name));
        for (std::size_t r = 0; r < n_nodes_; ++r)
            for (std::size_t h = 0; h < n_nodes_; ++h)
                if (r != h)
                    link_res_[r * n_nodes_ + h] = net_.add_resource(
                        m_.link_gbps[r][h] * 1e9,
                        fmt::format("link {}->{}", m_.machine.nodes[h].os_index, m_.machine.nodes[r].os_index));
    }

    for (std::uint32_t w = 0; w < workers_.size(); ++w) go_idle(w);
    if (o_.balancing.enabled) push(o_.balancing.scan_period_s, EventKind::scan);
    submit_ready_tasks();
    maybe_flush();

    const double inf = std::numeric_limits<double>::infinity();
    for (;;) {
        const double t_next = events_.empty() ? inf : events_.top().t;
        if (!starting_.empty() && t_next > now_) {
            for (std::uint32_t w : starting_) begin_memory(w);
            starting_.clear();
            continue;
        }
        // The network's clock may be a rounding step past t_next (it ends
        // flows that finish within rounding together): never ask it to go back.
        if (o_.contention == Contention::exact && net_.active() > 0 &&
            (!std::isfinite(t_next) || !net_.advance_to(std::max(t_next, net_.time())))) {
            const auto c = net_.next();
            now_ = c->time;
            start_flow(flow_worker_[c->flow]);
            continue;
        }
        if (events_.empty()) break;
        const Event e = events_.top();
        events_.pop();
        // Balancing scans alone never keep the simulation going.
        if (e.kind == EventKind::scan && completed_ == g_.size()) continue;
        now_ = e.t;
        switch (e.kind) {
            case EventKind::finish: finish(e.a); break;
            case EventKind::job_done: job_done(); break;
            case EventKind::submit:
                submit_pending_ = false;
                submit(next_submit_++);
                submit_ready_tasks();
                break;
            case EventKind::wake:
                if (workers_[e.a].idle && workers_[e.a].idle_epoch == e.b) try_start_from(e.a);
                break;
            case EventKind::scan: scan(); break;
        }
        maybe_flush();
    }
    if (completed_ != g_.size())
        throw Error("graph", fmt::format("the simulation stalled with {} of {} tasks finished under {} ({} held by the policy)",
                                         completed_, g_.size(), policy_.name(), held_));

    std::vector<double> busy;
    busy.reserve(workers_.size());
    for (const WorkerState& ws : workers_) busy.push_back(ws.busy);
    const double makespan = now_;
    r_.makespan_s = makespan;
    r_.load_balance_pct = tasks::load_balance_pct(busy);
    const double capacity = makespan * static_cast<double>(workers_.size());
    r_.runtime_overhead_pct = capacity > 0 ? o_.task_overhead_s * static_cast<double>(r_.tasks) / capacity * 100 : 0;
    r_.partition_overhead_pct = capacity > 0 ? r_.partition_s / capacity * 100 : 0;
    r_.partition_busy_pct = makespan > 0 ? r_.partition_s / makespan * 100 : 0;
    r_.host_s = std::chrono::duration<double>(Clock::now() - host0).count();
    r_.tasks_per_host_s = r_.host_s > 0 ? static_cast<double>(r_.tasks) / r_.host_s : 0;
    return r_;
}

}  // namespace

SimReport simulate(const TimedMachine& machine, const Graph& graph, tasks::Policy& policy, const SimOptions& options) {
    machine.validate();
    Simulator s(machine, graph, policy, options);
    return s.run();
}

std::vector<unsigned> worker_nodes(const Machine& machine, const TeamMapping& mapping) {
    std::vector<unsigned> out;
    for (const RankPlace& r : full_layout(machine, mapping).ranks) out.push_back(r.node);
    return out;
}

std::vector<unsigned> worker_node_set(const Machine& machine, const TeamMapping& mapping) {
    std::vector<unsigned> out = worker_nodes(machine, mapping);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

SimReport simulate(const TimedMachine& machine, const Graph& graph, std::string_view policy, const SimOptions& options) {
    tasks::PolicyOptions po = options.policy;
    if (options.rip_window_from_graph && (policy == "rip-dep" || policy == "rip-mw"))
        po.window = std::max(po.window, graph.initial_tasks);
    auto p = tasks::make_policy(policy, po);
    SimReport r = simulate(machine, graph, *p, options);
    if (policy == "rip-dep" || policy == "rip-mw") r.window = po.window;
    return r;
}

}  // namespace numaware::sim
