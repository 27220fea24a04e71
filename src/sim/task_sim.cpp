// src/sim/task_sim.cpp — the discrete-event task simulator: simulate().
//
// One simulated core per worker of a team layout (plan_team). The graph's
// dependency edges (Graph::preds_of(): the rule of the runtime's tracker,
// tasks/deps.hpp, applied once as the graph was built) order the tasks, and
// the real policy object places them and lists the queues an idle worker searches; the
// simulator supplies time. The model (docs/SIMULATOR.md) is split by
// object, each behind a fixed interface:
//   * the event engine (event_engine.hpp): the clock and the event queue;
//   * the worker model (worker_model.hpp): the simulated cores, their
//     queues and how an idle one searches them;
//   * the memory model (memory_model.hpp, chosen by name): how long a
//     running task's dependencies take to move, given what else runs;
//   * the balancing model (balancing_model.hpp): pages moving while tasks
//     run (automatic NUMA balancing), when enabled.
// This file is what ties them: the spawning thread, which submits the graph
// in creation order, one task every spawn_s (a task marked after_barrier
// waits for every earlier one); each task's count of unfinished
// predecessors, and its successors, found from the graph's edges; the policy's
// decisions; homes (explicit, or first touch by the first task that writes
// the region, recorded when it completes, as the executor's region homes do);
// and partition jobs, which run for real, one at a time, on a background
// thread that costs no simulated core, for a simulated time modelled from
// their size (PartitionCostModel), not for the host time they took.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "numaware/error.hpp"
#include "numaware/sim.hpp"
#include "sim/balancing_model.hpp"
#include "sim/event_engine.hpp"
#include "sim/memory_model.hpp"
#include "sim/worker_model.hpp"

namespace numaware::sim {

namespace {

using tasks::AccessMode;
using tasks::Destination;
using tasks::QueueRef;
using Clock = std::chrono::steady_clock;

TeamLayout full_layout(const Machine& machine, const TeamMapping& mapping) {
    TeamMapping full = mapping;
    if (full.threads == 0 && full.cpus.empty())
        for (const Node& nd : machine.nodes) full.threads += static_cast<unsigned>(nd.cpus.size());
    return plan_team(machine, full);
}

class Simulator {
public:
    Simulator(const TimedMachine& m, const Graph& g, tasks::Policy& p, const SimOptions& o)
        : m_(m), g_(g), policy_(p), o_(o), obs_(o.observer), workers_(engine_) {}

    SimReport run();

private:
    void check_inputs();
    double mean_task_s() const;
    void build_layout();
    void build_successors();

    // ---- the spawning thread and the dependencies
    void submit_ready_tasks();
    void submit(std::uint32_t i);
    std::span<const tasks::DepInfo> dep_infos(const GraphTask& t);
    // ---- tasks to workers
    void dispatch(std::uint32_t i, Destination where);
    void launch(const Take& take) {
        if (!take) return;
        const bool stolen = take.queue != no_index && !workers_.owns(take.worker, take.queue);
        if (obs_ && stolen) obs_->on_task_stolen(take.task, take.worker, engine_.now());
        start(take.worker, take.task, stolen && workers_.across(take.worker, take.queue), take.rule);
    }
    // `across`: w took i from a queue of another node's workers, by `rule`.
    void start(std::uint32_t w, std::uint32_t i, bool across, tasks::TakeRule rule);
    void finish(std::uint32_t w);
    // ---- partition jobs
    void take_jobs();
    void start_job();
    void job_done();
    void maybe_flush();
    void route(std::vector<tasks::Released>& released);

    const TimedMachine& m_;
    const Graph& g_;
    tasks::Policy& policy_;
    const SimOptions& o_;
    tasks::Observer* const obs_;

    EventEngine engine_;
    WorkerModel workers_;
    std::unique_ptr<MemoryModel> memory_;
    std::unique_ptr<Balancer> balancer_;   // null: no balancing
    std::vector<std::vector<MemoryAccess>> accesses_;   // per worker: its running task's (a prefix), for the memory model

    std::vector<PageHome> pages_;   // per page group
    std::size_t unhomed_pages_ = 0;  // pages_ still unallocated
    // Dependencies: the graph's edges (Graph::preds_of()), less those from
    // predecessors that finished before the task was submitted, which the
    // runtime's tracker does not link either. Successors in task order, so
    // that a finishing task stops at the first one not yet submitted.
    static constexpr std::uint32_t done = 0xffffffffu;
    std::vector<std::uint32_t> waiting_;      // per task: its unfinished predecessors once submitted; `done` once finished
    std::vector<std::uint32_t> succ_begin_;   // per task + 1: its successors are succs_[succ_begin_[i], succ_begin_[i + 1])
    std::vector<std::uint32_t> succs_;
    std::vector<tasks::Edge> live_preds_;     // scratch: a submitted task's unfinished predecessors, for the policy
    std::vector<tasks::DepInfo> infos_;
    std::vector<tasks::Released> released_;

    bool uses_submissions_ = true;   // Policy::uses_submissions()

    // spawning thread
    std::uint32_t next_submit_ = 0;
    std::uint64_t completed_ = 0;
    bool spawner_waiting_ = false;
    bool submit_pending_ = false;

    // policy jobs
    std::deque<std::unique_ptr<tasks::PartitionJob>> jobs_;
    bool job_running_ = false;
    std::unique_ptr<tasks::PartitionJob> running_job_;
    double job_started_ = 0;
    std::uint64_t held_ = 0;

    SimReport r_;
};

// -------------------------------------------------------------------------

void Simulator::check_inputs() {
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
    for (const auto& [field, v] : {std::pair{"partition_cost.s_per_vertex", o_.partition_cost.s_per_vertex},
                                   std::pair{"partition_cost.s_per_edge", o_.partition_cost.s_per_edge}})
        if (!(v >= 0) || !std::isfinite(v)) throw Error(field, fmt::format("must be finite and >= 0, got {}", v));
    if (!(o_.partition_s_per_task >= 0) || !std::isfinite(o_.partition_s_per_task))
        throw Error("partition_s_per_task", fmt::format("must be finite and >= 0, got {}", o_.partition_s_per_task));
    balancer_ = make_balancer(o_.balancing);
    memory_ = make_memory_model(to_string(o_.contention));
}

void Simulator::build_layout() {
    workers_.build(m_.machine, full_layout(m_.machine, o_.mapping));
    if (g_.max_worker() < static_cast<int>(workers_.size())) return;
    for (std::size_t i = 0; i < g_.tasks().size(); ++i) {
        const GraphTask& t = g_.tasks()[i];
        if (t.worker >= static_cast<int>(workers_.size()))
            throw Error(fmt::format("tasks[{}].worker", i),
                        fmt::format("worker {} does not exist (the layout has {} workers)", t.worker, workers_.size()));
    }
}

// Every task's successors, from the graph's predecessor lists (their
// lengths, Graph::successor_counts(), kept as the graph was built).
void Simulator::build_successors() {
    const std::size_t n = g_.size();
    waiting_.assign(n, 0);
    succ_begin_.resize(n + 1);
    succ_begin_[0] = 0;
    const auto counts = g_.successor_counts();
    for (std::size_t i = 0; i < n; ++i) succ_begin_[i + 1] = succ_begin_[i] + counts[i];
    succs_.resize(g_.preds().size());
    // Filled in task order, each list from its start; then succ_begin_[i]
    // holds where list i ends, which is where list i + 1 starts.
    for (std::uint32_t i = 0; i < n; ++i)
        for (const tasks::Edge& e : g_.preds_of(g_.tasks()[i])) succs_[succ_begin_[e.from]++] = i;
    for (std::size_t i = n; i > 0; --i) succ_begin_[i] = succ_begin_[i - 1];
    succ_begin_[0] = 0;
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
            engine_.push(engine_.now() + o_.spawn_s, EventKind::submit, next_submit_);
            return;
        }
        submit(next_submit_++);
    }
    spawner_waiting_ = true;   // the final barrier
}

// The policy's view of t's dependencies, with each region's current home.
std::span<const tasks::DepInfo> Simulator::dep_infos(const GraphTask& t) {
    const auto deps = g_.deps_of(t);
    if (infos_.size() < deps.size()) infos_.resize(deps.size());   // grows only: no clearing per task
    for (std::size_t k = 0; k < deps.size(); ++k) {
        const GraphRegion& reg = g_.regions()[deps[k].region];
        infos_[k] = tasks::DepInfo{reg.start, reg.bytes, deps[k].access, pages_[reg.page].home};
    }
    return std::span<const tasks::DepInfo>(infos_.data(), deps.size());
}

void Simulator::submit(std::uint32_t i) {
    const GraphTask& t = g_.tasks()[i];
    if (obs_) obs_->on_task_created(i, engine_.now());
    const auto preds = g_.preds_of(t);
    std::uint32_t waiting = 0;
    for (const tasks::Edge& e : preds) waiting += waiting_[e.from] != done ? 1u : 0u;
    waiting_[i] = waiting;
    const bool ready = waiting == 0;
    if (ready && obs_) obs_->on_task_ready(i, engine_.now());
    if (t.worker >= 0) {
        if (ready) dispatch(i, Destination::to_worker(static_cast<unsigned>(t.worker)));
        return;
    }
    if (!uses_submissions_ && !ready) return;
    const auto infos = dep_infos(t);
    if (uses_submissions_) {
        std::span<const tasks::Edge> live = preds;
        if (waiting != preds.size()) {
            live_preds_.clear();
            for (const tasks::Edge& e : preds)
                if (waiting_[e.from] != done) live_preds_.push_back(e);
            live = live_preds_;
        }
        policy_.on_submit(tasks::TaskView{i, infos, live, t.hint});
        take_jobs();
    }
    if (ready) dispatch(i, policy_.place(tasks::TaskView{i, infos, {}, t.hint}));
}

void Simulator::dispatch(std::uint32_t i, Destination where) {
    const GraphTask& t = g_.tasks()[i];
    if (t.worker >= 0) {
        const auto w = static_cast<std::uint32_t>(t.worker);
        if (workers_.idle(w))
            start(w, i, false, tasks::TakeRule::in_order);
        else
            workers_.pin(w, i);
        return;
    }
    switch (where.kind) {
        case Destination::Kind::hold: ++held_; return;
        case Destination::Kind::worker:
            if (where.index >= workers_.size())
                throw Error("policy", fmt::format("{} placed task {} on worker {} of {}", policy_.name(), i, where.index,
                                                  workers_.size()));
            launch(workers_.enqueue(where.index, i));
            return;
        case Destination::Kind::node:
            launch(workers_.enqueue(workers_.queue_id(QueueRef{QueueRef::Kind::node, where.index}, policy_), i));
            return;
    }
}

void Simulator::start(std::uint32_t w, std::uint32_t i, bool across, tasks::TakeRule rule) {
    // What its end will read first, asked of memory now: where its
    // successor list starts, and the list.
    __builtin_prefetch(&succ_begin_[i]);
    __builtin_prefetch(&succs_[succ_begin_[i]]);
    workers_.begin(w, i);
    const unsigned node = workers_.node(w);
    const std::size_t pos = workers_.pos(w);
    if (obs_) obs_->on_task_started(i, w, node, engine_.now());
    const GraphTask& t = g_.tasks()[i];
    // The runtime's cross-node rule on the homes at the task's start, and
    // where each dependency's bytes are (a region not yet touched is
    // first-touched here).
    const auto deps = g_.deps_of(t);
    std::vector<MemoryAccess>& room = accesses_[w];
    if (room.size() < deps.size()) room.resize(deps.size());   // grows only: the task's are a prefix
    const std::span<MemoryAccess> accesses(room.data(), deps.size());
    std::uint64_t bytes = 0, cross = 0;
    for (std::size_t k = 0; k < deps.size(); ++k) {
        const GraphDep& d = deps[k];
        const GraphRegion& reg = g_.regions()[d.region];
        const PageHome& ph = pages_[reg.page];
        bytes += reg.bytes;
        const bool first_touch = ph.home == tasks::unallocated && d.access != AccessMode::in;
        if (!first_touch && ph.home != static_cast<int>(node)) cross += reg.bytes;
        accesses[k] = MemoryAccess{reg.start, reg.bytes,
                                   ph.home == tasks::unallocated ? static_cast<std::uint32_t>(pos) : ph.home_pos, d.access};
    }
    r_.run.dep_bytes += bytes;
    r_.run.cross_node_bytes += cross;
    if (across) {
        ++r_.run.cross_node_steals;
        r_.run.cross_node_steal_bytes += cross;
        if (rule == tasks::TakeRule::backlog) ++r_.run.cross_node_steals_backlog;
        if (rule == tasks::TakeRule::occupied) ++r_.run.cross_node_steals_occupied;
    }
    ++r_.run.tasks;
    ++r_.run.tasks_per_node[workers_.slot_of_pos(pos)];
    // The balancing model's faults, in order: one may move a page before a
    // later dependency on the same page is read, which then comes from the
    // page's new home.
    double extra = 0;
    if (balancer_) {
        for (std::size_t k = 0; k < deps.size(); ++k) {
            const PageHome& ph = pages_[g_.regions()[deps[k].region].page];
            accesses[k].home = ph.home == tasks::unallocated ? static_cast<std::uint32_t>(pos) : ph.home_pos;
            extra += balancer_->touch(node, pos, deps[k].region);
        }
    }
    memory_->task_start(w, accesses, TaskCost{o_.task_overhead_s, t.compute_s, extra});
}

void Simulator::finish(std::uint32_t w) {
    const std::uint32_t i = workers_.task(w);
    const GraphTask& t = g_.tasks()[i];
    workers_.end(w);
    ++completed_;
    memory_->task_end(w);
    if (obs_) obs_->on_task_finished(i, w, workers_.node(w), engine_.now());
    // First touch: a region first written here now lives here (once every
    // page has a home, there is nothing to look for: homes move, but none
    // is ever unset).
    if (unhomed_pages_ != 0)
        for (const GraphDep& d : g_.deps_of(t)) {
            PageHome& ph = pages_[g_.regions()[d.region].page];
            if (d.access != AccessMode::in && ph.home == tasks::unallocated) {
                ph.home = static_cast<int>(workers_.node(w));
                ph.home_pos = static_cast<std::uint32_t>(workers_.pos(w));
                --unhomed_pages_;
            }
        }
    // Its submitted successors that waited for it last are ready.
    waiting_[i] = done;
    // The submitted successors' counts and graph records, asked of memory
    // together rather than one miss after another.
    for (std::uint32_t k = succ_begin_[i], end = succ_begin_[i + 1]; k < end && succs_[k] < next_submit_; ++k) {
        __builtin_prefetch(&waiting_[succs_[k]]);
        __builtin_prefetch(&g_.tasks()[succs_[k]]);
    }
    for (std::uint32_t k = succ_begin_[i], end = succ_begin_[i + 1]; k < end; ++k) {
        const std::uint32_t s = succs_[k];
        if (s >= next_submit_) break;   // not submitted yet: it will not wait for i
        if (--waiting_[s] != 0) continue;
        const GraphTask& st = g_.tasks()[s];
        if (obs_) obs_->on_task_ready(s, engine_.now());
        if (st.worker >= 0) {
            dispatch(s, Destination::to_worker(static_cast<unsigned>(st.worker)));
            continue;
        }
        dispatch(s, policy_.place(tasks::TaskView{s, dep_infos(st), {}, st.hint}));
    }
    if (const Take next = workers_.next_task(w))
        launch(next);
    else
        workers_.go_idle(w);
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
    job_started_ = engine_.now();
    const auto t0 = Clock::now();
    running_job_->run();
    const double host = std::chrono::duration<double>(Clock::now() - t0).count();
    r_.partition_host_s += host;
    ++r_.partition_jobs;
    const tasks::PartitionSize size = running_job_->size();
    const double d = o_.partition_s_per_task > 0 ? o_.partition_s_per_task * static_cast<double>(running_job_->tasks())
                                                 : o_.partition_cost.seconds(size);
    r_.partition_s += d;
    r_.partitions.push_back(PartitionRecord{size, d, host, engine_.now()});
    engine_.push(engine_.now() + d, EventKind::job_done);
}

void Simulator::route(std::vector<tasks::Released>& released) {
    for (const tasks::Released& x : released) {
        if (x.id >= g_.size()) throw Error("policy", fmt::format("{} released task {} that does not exist", policy_.name(), x.id));
        const auto i = static_cast<std::uint32_t>(x.id);
        const GraphTask& t = g_.tasks()[i];
        const Destination where = x.place_again ? policy_.place(tasks::TaskView{i, dep_infos(t), {}, t.hint}) : x.where;
        if (where.kind == Destination::Kind::hold)
            throw Error("policy", fmt::format("{} released task {} to be held again", policy_.name(), x.id));
        --held_;
        dispatch(i, where);
    }
    released.clear();
}

void Simulator::job_done() {
    job_running_ = false;
    if (obs_) obs_->on_partition_done(running_job_->tasks(), job_started_, engine_.now());
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

// -------------------------------------------------------------------------

// The graph's mean uncontended task time: compute plus dependency bytes
// at one core's local bandwidth (SimOptions::round_s).
double Simulator::mean_task_s() const {
    if (g_.size() == 0) return 0;
    double local_gbps = 0;
    const std::size_t nodes = m_.machine.node_count();
    for (std::size_t i = 0; i < nodes; ++i) local_gbps += m_.core_gbps(i, i);
    local_gbps /= static_cast<double>(nodes);
    const double memory = static_cast<double>(g_.dep_bytes()) / (local_gbps * 1e9);
    return (g_.compute_s() + memory) / static_cast<double>(g_.size());
}

SimReport Simulator::run() {
    const auto host0 = Clock::now();
    check_inputs();
    build_layout();

    tasks::PolicyContext ctx;
    ctx.machine = &m_.machine;
    ctx.worker_node = workers_.node_of_each();
    ctx.nodes = workers_.nodes();
    ctx.seed = o_.policy.seed;
    policy_.attach(ctx);
    uses_submissions_ = policy_.uses_submissions();
    workers_.build_search_orders(policy_, o_.round_s > 0 ? o_.round_s : mean_task_s() / tasks::rounds_per_task);

    // One home per page group: regions sharing a page share its home.
    pages_.resize(g_.pages());
    for (const GraphRegion& reg : g_.regions()) {
        PageHome& ph = pages_[reg.page];
        ph.home = reg.home;
        if (ph.home != tasks::unallocated)
            ph.home_pos = static_cast<std::uint32_t>(m_.machine.index_of(static_cast<unsigned>(ph.home)));
    }
    unhomed_pages_ = static_cast<std::size_t>(
        std::count_if(pages_.begin(), pages_.end(), [](const PageHome& ph) { return ph.home == tasks::unallocated; }));
    build_successors();

    r_.machine = m_.name;
    r_.label = "simulated on " + m_.name;
    r_.run.policy = std::string(policy_.name());
    r_.graph = g_.name;
    r_.contention = std::string(to_string(o_.contention));
    r_.workers = workers_.size();
    r_.run.nodes = workers_.nodes();
    r_.run.tasks_per_node.assign(workers_.nodes().size(), 0);

    MemorySetup setup;
    setup.machine = &m_;
    setup.engine = &engine_;
    for (std::uint32_t w = 0; w < workers_.size(); ++w) setup.worker_pos.push_back(workers_.pos(w));
    memory_->attach(setup);
    if (balancer_) balancer_->attach(m_, g_, pages_);
    accesses_.resize(workers_.size());
    if (obs_) obs_->on_setup(ctx.worker_node, r_.label);

    for (std::uint32_t w = 0; w < workers_.size(); ++w) workers_.go_idle(w);
    if (balancer_) engine_.push(balancer_->period_s(), EventKind::scan);
    submit_ready_tasks();
    maybe_flush();

    for (;;) {
        // The memory model's own events come first when they are due
        // before the next of the simulation's.
        if (memory_->pending() && memory_->step(engine_.next_time())) continue;
        if (engine_.empty()) break;
        const Event e = engine_.pop();
        // Balancing scans and idle workers' wake-ups never keep the
        // simulation going: once every task has finished, they are dropped
        // (a wake-up there used to advance the clock past the last
        // completion, by up to the policy's longest steal delay).
        if ((e.kind == EventKind::scan || e.kind == EventKind::wake) && completed_ == g_.size()) continue;
        engine_.set_now(e.t);
        switch (e.kind) {
            case EventKind::finish: finish(e.a); break;
            case EventKind::job_done: job_done(); break;
            case EventKind::submit:
                submit_pending_ = false;
                submit(next_submit_++);
                submit_ready_tasks();
                break;
            case EventKind::wake: launch(workers_.wake(e)); break;
            case EventKind::scan:
                balancer_->scan();
                if (completed_ < g_.size()) engine_.push(e.t + balancer_->period_s(), EventKind::scan);
                break;
        }
        maybe_flush();
    }
    if (completed_ != g_.size())
        throw Error("graph", fmt::format("the simulation stalled with {} of {} tasks finished under {} ({} held by the policy)",
                                         completed_, g_.size(), policy_.name(), held_));

    memory_->final_stats(r_);
    if (balancer_) balancer_->final_stats(r_);
    const double makespan = engine_.now();
    r_.run.makespan_s = makespan;
    r_.run.load_balance_pct = tasks::load_balance_pct(workers_.busy());
    const double capacity = makespan * static_cast<double>(workers_.size());
    r_.run.runtime_overhead_pct = capacity > 0 ? o_.task_overhead_s * static_cast<double>(r_.run.tasks) / capacity * 100 : 0;
    r_.run.partition_overhead_pct = capacity > 0 ? r_.partition_s / capacity * 100 : 0;
    r_.partition_busy_pct = makespan > 0 ? r_.partition_s / makespan * 100 : 0;
    r_.host_s = std::chrono::duration<double>(Clock::now() - host0).count();
    r_.tasks_per_host_s = r_.host_s > 0 ? static_cast<double>(r_.run.tasks) / r_.host_s : 0;
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
