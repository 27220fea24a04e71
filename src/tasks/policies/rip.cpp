// src/tasks/policies/rip.cpp — RIP-DEP and RIP-MW: task-graph partitioning
// in windows of submitted tasks (Sánchez Barrera, ch. 6).
//
// Both collect the submitted tasks (on_submit, creation order) into
// windows: window 0 holds the first steps of the graph, or at least
// `window + initial_extra` tasks if those come first, and ends at a step
// boundary (below); every later one holds `window`.
// Steps: runs of consecutive tasks in which no region is written twice (an
// initialisation, one sweep of an in-place or double-buffered stencil); a
// task that writes a region the current run wrote starts the next one.
// Window 0 closes at the first step boundary at or after its size, or at
// twice its size (tasks::window_step_cap at most), or at the end of the
// first PolicyOptions::first_window_steps steps (tasks::window_initial_steps
// by default: the published window, the initialisation and the first
// iteration) once it holds a task per part, whichever comes first;
// at its size if its current step has written nothing (no data to
// balance). Cut mid-step, a window balanced on task count is not balanced
// on data: with 10x10 Gauss-Seidel tiles on 4 nodes a 256-task window held
// the initialisation, one sweep and 56 tiles of the next, every part got
// 64 tasks but not 25 tiles, later sweeps followed the homes (159 against
// 109 tasks per node, simulated) and RIP-DEP moved 3.7x SA's cross-node
// bytes.
// A full window becomes a PartitionJob (take_job(), one at a time): the window's task graph is partitioned by Scotch (partition.hpp)
// into one part per worker node, part i being the i-th worker node in
// ascending OS index. Graph: a vertex per task, weight 1, so that parts are
// balanced on task count, |V_i| <= (1 + imbalance) * ceil(|V| / k), as
// published (until issue 13 the weight was the task's dependency bytes);
// with PolicyOptions::rip_balance_first_touch, the bytes each task writes
// first are a second balance constraint (METIS; partition.hpp);
// and two kinds of edges, weighted by the bytes shared
// (both directions and repeats summed):
//   * dependency edges: the predecessor edges inside the graph;
//   * data edges: every task that names a region links to the window's
//     first task naming it (its anchor), with the bytes of its access.
// The data edges are what make the partition a data placement. Homes
// follow the first writer, so a task whose region's anchor is in another
// part reads or writes it remotely: the data edges cut are the cross-node
// bytes of the window. Dependency edges alone do not say this: the
// executor gives an edge only to the last writer or the readers since it
// (a task writing a region its neighbours read has edges to those readers,
// not to its own previous version), and a dependency DAG is cheapest to
// cut across time. With dependency edges only, Scotch split windows into
// an early part and a late part (Cholesky then inversion; sweeps of a
// wavefront drifting column by column), so one node ran the first phase
// alone while the other's tasks read every tile remotely.
// Data already placed is not re-partitioned: a region whose home is known
// when its task is submitted, or else (RIP-MW) whose anchor an earlier
// window placed, links the task to a fixed vertex of that part instead of
// to an anchor (one fixed vertex per part, weight 1, added only when some
// task needs it), so later windows follow the data. partition_graph's
// refinement pass makes Scotch's mapping honour those vertices.
//
// RIP-DEP  partitions window 0 only; every later task is placed by DEP, so
//          the partition propagates through the homes of the data the first
//          window's tasks wrote.
// RIP-MW   partitions every window. The last `intersection` tasks of the
//          previous window are added to the next window's graph as fixed
//          vertices with their parts preset (SCOTCH_graphMapFixed), so
//          chains crossing a window boundary stay where they were. A fixed
//          vertex weighs 1: it anchors its edges, while its load was
//          balanced with its own window (with its full weight, Scotch 7.0
//          misplaced free vertices to meet the balance of the fixed ones).
//
// steal_order(): the worker's own queue, its node's queue, the queues of
// the other workers of its node, then the other nodes' queues late and
// nearest first, one ring more every PolicyOptions::steal_delay_tasks mean
// task durations (default tasks::default_steal_delay_tasks).
//
// place(): a task whose window is partitioned goes to its part's node
// queue, unless it touches data first (it writes a region that had no home
// at its submission, and no earlier task of its window, nor, for RIP-MW,
// of an earlier window, writes it): such a task goes to the queue of one
// worker of its part's node (task id modulo that node's workers), which
// only the workers of that node search. Where it runs is where its data
// lives for the rest of the run, and the partition placed the window's
// later tasks on that assumption: a stolen first touch made every later
// task of the window on that data remote. In the emulated 8-node guest,
// whose 14 vCPUs share 2 host cores, a node whose vCPUs were descheduled
// had 3-9 tasks stolen per Gauss-Seidel run, of 0.00-2.26 MiB of their
// own, and RIP-DEP moved 3.2-6.8 MiB across nodes against SA's 0.33 (stop
// 62's CI). Simulated on that machine with a steal delay of 4 tasks:
// 17.11 MB across nodes (17 tasks stolen) before, 1.91 MB (5) after.
// A task in a window not partitioned yet is held until finish_job()
// releases it. flush() (the program waits) closes a partially filled
// window 0 so that it gets a job of its own; it returns true while a job is
// queued or in flight (the executor must then call take_job() again, after
// finish_job() too). A later window (RIP-MW) cut short by a wait is not
// partitioned: its held tasks are released to be placed again, by DEP on
// the homes of that moment, and the next window starts without fixed
// vertices. The program needs those tasks now, and a job would hold them
// for as long as Scotch takes: a recursive program waits at every level
// (fib(20) with a dependency on each result, 2 one-CPU nodes: 2.6 s with a
// job per taskwait, against 0.01 s with DEP). Window 0 still places the
// data, and DEP follows the homes it gave.
// Tasks that name no dependency never join a window, nor does any task on
// a machine of one worker node: a partition places data, and there is none
// to place, or one part to place it in. place() gives them DEP's answer at
// once (a recursive program without dependencies under RIP-MW took 51 s
// for fib(27) under the OpenMP shim, its tasks held for a job at every
// taskwait, against 0.2 s with RIP-DEP).
//
// If Scotch fails, finish_job() places the window's tasks with DEP (held
// tasks are appended to `released` as usual) and then throws
// Error("partition", ...): nothing stays held.
#include <algorithm>
#include <deque>
#include <exception>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "common.hpp"
#include "numaware/error.hpp"
#include "partition.hpp"

namespace numaware::tasks::policy_detail {
namespace {

struct WindowTask {
    TaskId id = 0;
    std::uint64_t first_touch = 0;   // bytes of the regions it writes first (see rip_balance_first_touch)
    std::vector<Edge> preds;
    struct Named {
        std::uint64_t region = 0, bytes = 0;
        int part = -1;   // part serving the region's home at submission, or -1
    };
    std::vector<Named> named;   // every region it names: its data edges (see the top)
};

struct Window {
    std::size_t index = 0;
    std::vector<WindowTask> tasks;
};

// A fixed vertex carried from the previous window (RIP-MW).
struct TailTask {
    TaskId id = 0;
    unsigned part = 0;
};
constexpr std::uint64_t fixed_vertex_weight = 1;

class RipJob final : public PartitionJob {
public:
    std::size_t window = 0;
    std::vector<TaskId> ids;         // the window's tasks, vertex tail.size() + i
    std::vector<TailTask> tail;      // fixed vertices 0 .. tail.size()-1
    PartitionProblem problem;
    std::size_t part_anchors = 0;    // fixed vertices tail.size() + ids.size() + p, p < part_anchors
    std::vector<std::pair<std::uint64_t, std::uint32_t>> anchored;   // region, vertex of its window anchor
    std::vector<unsigned> parts;     // set by run()
    std::string error;               // set by run() on failure

    void run() override {
        try {
            parts = partition_graph(problem);
        } catch (const std::exception& e) {
            error = e.what();
        }
    }
    std::size_t tasks() const override { return ids.size(); }
    PartitionSize size() const override {
        return PartitionSize{problem.vertex_weight.size(), problem.edges.size(), problem.distance.size()};
    }
};

class Rip final : public Policy {
public:
    Rip(bool moving, const PolicyOptions& o) : moving_(moving), options_(o) {}

    std::string_view name() const override { return moving_ ? "rip-mw" : "rip-dep"; }

    void attach(const PolicyContext& ctx) override {
        Topology topo = make_topology(ctx, options_.seed);
        std::vector<std::vector<unsigned>> distance(topo.nodes.size(), std::vector<unsigned>(topo.nodes.size()));
        for (std::size_t i = 0; i < topo.nodes.size(); ++i)
            for (std::size_t j = 0; j < topo.nodes.size(); ++j)
                distance[i][j] = topo.machine->distance(topo.nodes[i], topo.nodes[j]);
        std::vector<std::vector<unsigned>> workers_at(topo.nodes.size());
        for (unsigned w = 0; w < topo.worker_node.size(); ++w)
            workers_at[topo.node_slot(topo.worker_node[w])].push_back(w);
        topo_ = std::move(topo);
        distance_ = std::move(distance);
        workers_at_ = std::move(workers_at);
    }

    void on_submit(const TaskView& task) override {
        if (!moving_ && windows_closed_ > 0) return;   // RIP-DEP: DEP from here on
        // Nothing for a partition to place (see the top of this file).
        if (task.deps.empty() || topo_.nodes.size() == 1) return;
        if (windows_closed_ == 0 && starts_step(task) &&
            (filling_.tasks.size() >= capacity(0) ||
             (options_.first_window_steps != 0 && steps_ended_ >= options_.first_window_steps &&
              filling_.tasks.size() >= topo_.nodes.size()))) {
            close_window();
            if (!moving_) return;
        }
        WindowTask t;
        t.id = task.id;
        t.preds.assign(task.preds.begin(), task.preds.end());
        bool touches_first = false;   // what an earlier window wrote (RIP-MW) is not a first touch
        for (const DepInfo& d : task.deps) {
            if (d.access != AccessMode::in && d.home == unallocated && written_in_window_.insert(d.region).second) {
                t.first_touch += d.bytes;
                touches_first = touches_first || region_part_.count(d.region) == 0;
            }
            t.named.push_back({d.region, d.bytes, topo_.serving_slot(d.home)});
        }
        if (touches_first) touches_first_.insert(task.id);
        filling_.index = windows_closed_;
        filling_.tasks.push_back(std::move(t));
        window_of_[task.id] = windows_closed_;
        if (filling_.tasks.size() >= (windows_closed_ == 0 ? first_window_limit() : capacity(windows_closed_)))
            close_window();
    }

    Destination place(const TaskView& task) override {
        if (auto it = node_of_.find(task.id); it != node_of_.end()) {
            const unsigned node = it->second;
            node_of_.erase(it);
            return partitioned(task.id, node);
        }
        if (window_of_.count(task.id) != 0) {
            held_.insert(task.id);
            return Destination::held();
        }
        return dep_place(topo_, task);
    }

    // Stealing at once undid the partition: on the 2-node driver an idle
    // worker took the other node's queued tasks as soon as its own queue
    // ran dry, so RIP's cross-node bytes came out at 2-3x its placement's
    // and the tasks-per-node counts swung from 128:128 to 225:31 run to run.
    void steal_order(unsigned worker, std::uint64_t round, std::vector<QueueRef>& order) const override {
        node_steal_order(topo_, worker, round, steal_delay_rounds(options_), order);
        if (worker >= topo_.worker_node.size()) return;
        // Own queue first, then the node's (order[0] so far), then the
        // node's other workers' queues: the first touches only they may
        // take. `mates` holds this worker too: one insert makes room.
        const auto& mates = workers_at_[topo_.node_slot(topo_.worker_node[worker])];
        order.insert(order.begin(), mates.size(), QueueRef{});
        order[0] = QueueRef{QueueRef::Kind::worker, worker};
        order[1] = order[mates.size()];
        std::size_t at = 2;
        for (unsigned w : mates)
            if (w != worker) order[at++] = QueueRef{QueueRef::Kind::worker, w};
    }

    std::unique_ptr<PartitionJob> take_job() override {
        if (in_flight_ || queued_.empty()) return nullptr;
        Window w = std::move(queued_.front());
        queued_.pop_front();
        auto job = std::make_unique<RipJob>();
        job->window = w.index;
        job->tail = moving_ ? tail_ : std::vector<TailTask>{};

        std::unordered_map<TaskId, std::uint32_t> vertex;
        auto& prob = job->problem;
        for (const TailTask& t : job->tail) {
            vertex.emplace(t.id, static_cast<std::uint32_t>(prob.vertex_weight.size()));
            prob.vertex_weight.push_back(fixed_vertex_weight);
            prob.second_weight.push_back(0);
            prob.fixed.push_back(static_cast<int>(t.part));
        }
        for (const WindowTask& t : w.tasks) {
            vertex.emplace(t.id, static_cast<std::uint32_t>(prob.vertex_weight.size()));
            prob.vertex_weight.push_back(1);
            prob.second_weight.push_back(t.first_touch);
            prob.fixed.push_back(-1);
            job->ids.push_back(t.id);
        }
        for (const WindowTask& t : w.tasks) {
            const std::uint32_t to = vertex.at(t.id);
            for (const Edge& e : t.preds)
                if (auto it = vertex.find(e.from); it != vertex.end() && it->second != to)
                    prob.edges.push_back({it->second, to, e.bytes});
        }
        // Data edges. A region with a known place (its home at submission,
        // or, RIP-MW, the part an earlier window gave its anchor) ties its
        // tasks to a fixed vertex of that part; any other region ties them
        // to its anchor, the window's first task naming it.
        const std::size_t parts = topo_.nodes.size();
        const auto first_part_anchor = static_cast<std::uint32_t>(prob.vertex_weight.size());
        std::unordered_map<std::uint64_t, std::uint32_t> anchor;
        for (const WindowTask& t : w.tasks) {
            const std::uint32_t to = vertex.at(t.id);
            for (const WindowTask::Named& r : t.named) {
                int part = r.part;
                if (part < 0)
                    if (auto it = region_part_.find(r.region); it != region_part_.end())
                        part = static_cast<int>(it->second);
                if (part >= 0 && static_cast<std::size_t>(part) < parts) {
                    if (job->part_anchors == 0) {
                        job->part_anchors = parts;
                        for (std::size_t q = 0; q < parts; ++q) {
                            prob.vertex_weight.push_back(fixed_vertex_weight);
                            prob.second_weight.push_back(0);
                            prob.fixed.push_back(static_cast<int>(q));
                        }
                    }
                    prob.edges.push_back({first_part_anchor + static_cast<std::uint32_t>(part), to, r.bytes});
                    continue;
                }
                const auto [it, first] = anchor.try_emplace(r.region, to);
                if (!first && it->second != to) prob.edges.push_back({it->second, to, r.bytes});
            }
        }
        if (job->tail.empty() && job->part_anchors == 0) prob.fixed.clear();
        if (!options_.rip_balance_first_touch) prob.second_weight.clear();
        if (moving_)
            for (const auto& [region, v] : anchor) job->anchored.emplace_back(region, v);
        prob.distance = distance_;
        prob.imbalance = options_.imbalance;
        prob.seed = hash_words({topo_.seed, w.index, 0x919u});
        in_flight_ = true;
        return job;
    }

    void finish_job(std::unique_ptr<PartitionJob> job, std::vector<Released>& released) override {
        auto* rip = dynamic_cast<RipJob*>(job.get());
        if (rip == nullptr) throw Error("job", "is not a job of this policy");
        const std::size_t tail = rip->tail.size();
        std::string error = rip->error;
        const std::size_t vertices = tail + rip->ids.size() + rip->part_anchors;
        if (error.empty() && rip->parts.size() != vertices)
            error = "partition returned " + std::to_string(rip->parts.size()) + " parts for " +
                    std::to_string(vertices) + " vertices";
        for (std::size_t j = 0; error.empty() && j < tail; ++j)
            if (rip->parts[j] != rip->tail[j].part)
                error = "Scotch moved fixed vertex " + std::to_string(j) + " (task " +
                        std::to_string(rip->tail[j].id) + ")";
        in_flight_ = false;

        std::vector<TailTask> new_tail;
        for (std::size_t i = 0; i < rip->ids.size(); ++i) {
            const TaskId id = rip->ids[i];
            window_of_.erase(id);
            const bool held = held_.erase(id) != 0;
            unsigned part = 0;
            Destination where;
            if (error.empty()) {
                part = rip->parts[tail + i];
                // A held task is placed now; any other when it is ready (place()).
                where = held ? partitioned(id, topo_.nodes[part]) : Destination::to_node(topo_.nodes[part]);
            } else {
                touches_first_.erase(id);
                // DEP on what the policy knows of the task: no homes yet (unallocated).
                where = dep_place(topo_, TaskView{id, {}, {}, -1});
                part = static_cast<unsigned>(topo_.node_slot(where.index));
            }
            if (held)
                released.push_back(Released{id, where});
            else
                node_of_[id] = where.index;
            if (moving_ && i + options_.intersection >= rip->ids.size())
                new_tail.push_back(TailTask{id, part});
        }
        if (moving_) tail_ = std::move(new_tail);
        if (moving_ && error.empty())
            for (const auto& [region, v] : rip->anchored) region_part_.try_emplace(region, rip->parts[v]);
        if (!error.empty())
            throw Error("partition", "window " + std::to_string(rip->window) + ": " + error +
                                         "; its tasks were placed with DEP instead");
    }

    bool flush(std::vector<Released>& released) override {
        if (!filling_.tasks.empty()) {
            if (windows_closed_ == 0) {
                close_window();
            } else {
                // RIP-MW, a later window cut short by a wait: placed again
                // now, by DEP (see the top of this file).
                for (const WindowTask& t : filling_.tasks) {
                    window_of_.erase(t.id);
                    touches_first_.erase(t.id);
                    if (held_.erase(t.id) != 0) released.push_back(Released::to_place(t.id));
                }
                filling_ = Window{};
                written_in_window_.clear();
                tail_.clear();
            }
        }
        return in_flight_ || !queued_.empty();
    }

private:
    // Where a task of a partitioned window goes: its part's node queue, or,
    // if it touches data first, the queue of one of that node's workers.
    Destination partitioned(TaskId id, unsigned node) {
        if (touches_first_.erase(id) == 0) return Destination::to_node(node);
        const auto& workers = workers_at_[topo_.node_slot(node)];
        return Destination::to_worker(workers[id % workers.size()]);
    }
    std::size_t capacity(std::size_t window) const {
        return window == 0 ? options_.window + options_.initial_extra : options_.window;
    }
    // Window 0 closes at a step boundary at or after capacity(0), or at
    // twice capacity(0) (a graph without steps: independent tasks) but not
    // beyond window_step_cap unless capacity(0) is larger.
    // Tasks that write nothing have no data to balance: then at capacity(0).
    std::size_t first_window_limit() const {
        const std::size_t c = capacity(0);
        return written_in_step_.empty() ? c : std::max(c, std::min(2 * c, window_step_cap));
    }
    // Window 0: whether `task` starts a new step (writes a region the
    // current step wrote); records its writes in the current step.
    bool starts_step(const TaskView& task) {
        bool starts = false;
        for (const DepInfo& d : task.deps)
            if (d.access != AccessMode::in && written_in_step_.count(d.region) != 0) starts = true;
        if (starts) {
            written_in_step_.clear();
            ++steps_ended_;
        }
        for (const DepInfo& d : task.deps)
            if (d.access != AccessMode::in) written_in_step_.insert(d.region);
        return starts;
    }
    void close_window() {
        if (windows_closed_ == 0) written_in_step_ = {};
        written_in_window_.clear();
        queued_.push_back(std::move(filling_));
        filling_ = Window{};
        ++windows_closed_;
    }

    bool moving_;
    PolicyOptions options_;
    Topology topo_;
    std::vector<std::vector<unsigned>> distance_;   // among topo_.nodes
    std::vector<std::vector<unsigned>> workers_at_;  // by position in topo_.nodes: its workers, ascending
    Window filling_;                                // the window being filled
    std::deque<Window> queued_;                     // closed, waiting for a job
    std::size_t windows_closed_ = 0;
    bool in_flight_ = false;
    std::unordered_map<TaskId, std::size_t> window_of_;   // tasks of windows not partitioned yet
    std::unordered_map<TaskId, unsigned> node_of_;        // partitioned, not placed yet
    std::unordered_set<TaskId> held_;
    std::unordered_set<TaskId> touches_first_;   // tasks of windows that first touch a region, until placed
    std::vector<TailTask> tail_;                          // RIP-MW: fixed vertices for the next window
    std::unordered_map<std::uint64_t, unsigned> region_part_;   // RIP-MW: region -> part of its first anchor (its first writer's, as homes follow the first writer)
    std::unordered_set<std::uint64_t> written_in_window_;   // regions a task of the filling window writes
    std::unordered_set<std::uint64_t> written_in_step_;     // window 0: regions the current step writes
    unsigned steps_ended_ = 0;                              // window 0: steps it holds whole
};

}  // namespace

std::unique_ptr<Policy> make_rip(bool moving_window, const PolicyOptions& options) {
    return std::make_unique<Rip>(moving_window, options);
}

}  // namespace numaware::tasks::policy_detail
