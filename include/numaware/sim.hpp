// numaware/sim.hpp — the task-level NUMA machine simulator (the `sim`
// layer): time, latency and bandwidth, which the emulated machines lack.
//
// Built so far: the timed machine model (a Machine plus per-node memory
// bandwidth, per-link bandwidth and a full latency matrix, derived by
// documented rules), the named machine models of the published studies,
// and the bandwidth-sharing core (FlowNetwork) that the task simulator's
// memory model runs on. Every figure the simulator produces is labelled
// "simulated" with its model's name. The model and its assumptions are
// written down in docs/SIMULATOR.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "numaware/machine.hpp"
#include "numaware/metrics.hpp"
#include "numaware/observer.hpp"
#include "numaware/task_policy.hpp"
#include "numaware/tasks.hpp"
#include "numaware/team.hpp"

namespace numaware::sim {

// =====================================================================
// The timed machine
// =====================================================================

// Figures a machine description may lack, used by the rules below.
struct TimingDefaults {
    double local_latency_ns = 80.0;   // a load from the reader's own node
    double memory_gbps = 20.0;        // one node's memory controller(s)
    // One core's memory-level parallelism: cache-line misses it keeps in
    // flight (Intel documents 10 L1D fill buffers per core from Nehalem to
    // Skylake) and the line size. A core streams at most
    // outstanding_lines × line_bytes per latency (Little's law).
    double outstanding_lines = 10.0;
    double line_bytes = 64.0;
};

// A Machine with everything the simulator times. Matrices are indexed by
// node *position* in machine.nodes, row = reader (where the task runs),
// column = home (whose memory is read or written).
struct TimedMachine {
    Machine machine;
    NodeMatrix<double> latency_ns;     // every entry > 0
    std::vector<double> memory_gbps;   // per node, > 0
    // Bandwidth of the path from home h to reader r (r != h), > 0; the
    // diagonal is 0 (a local access uses only the node's memory).
    NodeMatrix<double> link_gbps;
    // One core's bandwidth limit: outstanding_lines × line_bytes /
    // latency_ns[r][h] (bytes per ns = GB/s), see TimingDefaults.
    double outstanding_lines = 10.0;
    double line_bytes = 64.0;
    double core_gbps(std::size_t reader, std::size_t home) const {
        return outstanding_lines * line_bytes / latency_ns[reader][home];
    }
    // Physical links that several node pairs share (e.g. the one XQPI link
    // between two bullion modules): every remote access whose (reader,
    // home) pair, by node position, is listed crosses it as well as its
    // own path (link_gbps). Empty for machines described by SLIT alone.
    struct SharedLink {
        std::string name;
        double gbps = 0;                                        // per direction, > 0
        std::vector<std::pair<std::size_t, std::size_t>> paths;   // (reader, home)
    };
    std::vector<SharedLink> shared_links;
    std::string name;                  // "bullion-s16 (8 sockets)", "live", the spec
    std::string source;                // where the figures come from, one paragraph
    std::vector<std::string> rules;    // every derivation applied, one line each

    // Throws Error naming the field when a matrix is not node_count square,
    // an entry that must be positive is not, or memory_gbps has the wrong size.
    void validate() const;
};

// The derivation rules (each use is recorded in `rules`):
//   latency[r][h]  = machine.latency_ns[r][h] if present and > 0;
//                    else local_latency_ns × SLIT[r][h] / SLIT[h][h]
//                    (SLIT 10 = local; 21 means 2.1× the local latency).
//   memory[h]      = machine.bandwidth_gbps[h][h] if present and > 0;
//                    else defaults.memory_gbps.
//   link[r][h]     = machine.bandwidth_gbps[r][h] if present and > 0;
//                    else memory[h] × SLIT[h][h] / SLIT[r][h]
//                    (bandwidth falls as distance grows).
// Memory-only nodes have no readers but are homes; their rows are filled
// by the same rules.
TimedMachine timed(const Machine& machine, const TimingDefaults& defaults = {});

// ---- named models of the published studies ----
//
// Each is built from a synthetic description whose distances, latencies
// and bandwidths come from public figures; `source` cites them and says
// which figures are assumptions. Names:
//   "bullion-s16"     Bull bullion S16: 16 sockets × 18 cores, 4 modules
//                     of 4 sockets; QPI hop +79% latency, inter-module
//                     (BCS2) hop +260%. `sockets` may be 4, 8 or 16.
//   "altix-uv100"     SGI Altix UV100: 12 sockets × 8 cores, 2 per blade;
//                     same blade +17%, other rack unit +200%, farthest +240%.
//   "sim-4socket"     the 4-socket "simulated" system: 80 ns local, 160 ns
//                     near, 240 ns far.
//   "skylake-sp-2s"   2-socket Skylake-SP: remote ≈ local + 60 ns.
//   "epyc-nps4-2s"    2-socket AMD EPYC in NPS4 mode: 8 nodes.
// sockets = 0 means the model's full size; otherwise the first `sockets`
// sockets (Error("sockets", ...) naming the accepted sizes when the model
// cannot be cut there). Unknown names: Error("machine", ...) listing them.
std::vector<std::string> model_names();
TimedMachine model(std::string_view name, unsigned sockets = 0);

// "bullion-s16", "bullion-s16:8" (8 sockets), a named model; otherwise any
// Machine::from_spec SPEC (live, XML, JSON, synthetic), timed by the rules.
TimedMachine timed_from_spec(std::string_view spec, const TimingDefaults& defaults = {});

// =====================================================================
// Bandwidth sharing
// =====================================================================

// Resources of fixed capacity (bytes per second: a node's memory, a link)
// shared by flows (a task moving some bytes through some resources). At
// every moment each flow gets its max-min fair share: rates are raised
// together until a resource is full, the flows through it are frozen, and
// the rest continue (progressive filling). A flow first waits its latency,
// then transfers; it takes no bandwidth while it waits. Rates change only
// when a flow starts transferring or ends, so the network jumps from
// event to event: exact, no time steps.
class FlowNetwork {
public:
    using Id = std::size_t;

    // capacity > 0 and finite, else Error("capacity", ...).
    std::size_t add_resource(double bytes_per_second, std::string name = {});

    // Starts a flow at the current time(). bytes >= 0, latency_s >= 0,
    // every resource index valid (Error("resources", ...) otherwise); a flow
    // with no resources or 0 bytes ends after its latency alone.
    Id start(double bytes, std::vector<std::size_t> resources, double latency_s = 0);

    struct Completion {
        double time = 0;   // seconds since the network's start
        Id flow = 0;
    };
    // Advances time to the next flow completion and returns it (ties: the
    // lower id first); nullopt when no flow is active.
    std::optional<Completion> next();
    // Advances time to `t` (>= time(), Error("t", ...) otherwise) without
    // passing a completion: returns false, and does not move, if a flow
    // would end before t (call next() first).
    bool advance_to(double t);

    double time() const;
    std::size_t active() const;
    double rate(Id flow) const;                       // bytes/s now (0 while waiting its latency)
    double carried(std::size_t resource) const;       // bytes moved through it so far
    const std::string& resource_name(std::size_t resource) const;
    std::size_t resources() const;

private:
    struct Flow {
        double remaining = 0;
        double start_transfer = 0;   // time the latency ends
        std::vector<std::size_t> resources;
        double rate = 0;
        bool done = false;
    };
    struct Resource {
        double capacity = 0;
        double carried = 0;
        std::string name;
    };
    void reshare();
    void move_to(double t);
    std::vector<Flow> flows_;
    std::vector<Id> active_;         // ids of the flows not yet ended, in no order
    std::vector<Resource> resources_;
    double now_ = 0;
};

// =====================================================================
// Task graphs
// =====================================================================

// A region of memory that tasks name: a synthetic address range (regions
// never overlap) and its home. `home` is a node OS index from an explicit
// plan, or tasks::unallocated: the first task that writes it places it by
// first touch on the node of the core that runs it.
struct GraphRegion {
    std::uint64_t start = 0;
    std::uint64_t bytes = 0;
    int home = tasks::unallocated;
    // Regions with the same page share one home, as the kernel places
    // pages, not ranges: the index of the page group (add_strided_regions).
    std::uint32_t page = 0;
};

struct GraphDep {
    std::uint32_t region = 0;   // index into Graph::regions()
    tasks::AccessMode access = tasks::AccessMode::in;
};

struct GraphTask {
    double compute_s = 0;         // compute time on one simulated core (memory time comes on top)
    int hint = -1;                // node OS index, as spawn_on() gives it (SA), or -1
    int worker = -1;              // fork-join: this worker runs it, bypassing the policy; -1: the policy decides
    bool after_barrier = false;   // submitted only once every earlier task has finished (taskwait)
    std::uint32_t first_dep = 0;  // its dependencies: deps()[first_dep, first_dep + dep_count)
    std::uint32_t dep_count = 0;
    std::uint32_t first_pred = 0; // its predecessors: preds()[first_pred, first_pred + pred_count)
    std::uint32_t pred_count = 0;
};

// A task graph in creation order: what the spawning thread of the real
// runtime would submit. Build it with add_region()/add_task(), or convert
// a graph recorded by the runtime (RuntimeOptions::record_graph).
class Graph {
public:
    // A new region of `bytes` (> 0) at the next free page-aligned synthetic
    // address. `home` is unallocated or a node OS index (checked against the
    // machine by simulate()). Returns its index. Error("bytes", ...) for 0.
    std::uint32_t add_region(std::uint64_t bytes, int home = tasks::unallocated);
    // `count` regions of `bytes` each, `stride` bytes apart from the start of
    // one new page-aligned array (a small array of per-block scalars, say):
    // regions on the same page share its home, placed by the first write to
    // any of them. Returns the index of the first; the others follow.
    // Error("stride", ...) when stride < bytes; the rules of add_region.
    std::uint32_t add_strided_regions(std::size_t count, std::uint64_t stride, std::uint64_t bytes,
                                      int home = tasks::unallocated);
    std::uint32_t pages() const { return pages_; }   // page groups so far

    // Appends a task. Exact duplicate dependencies (same region and access)
    // are merged; Error("deps[i]", ...) for a region index out of range or
    // the same region named twice with different access;
    // Error("compute_s", ...) for a negative or non-finite time. Returns
    // the task's id (its index).
    tasks::TaskId add_task(double compute_s, std::span<const GraphDep> deps, int hint = -1, int worker = -1);
    tasks::TaskId add_task(double compute_s, std::initializer_list<GraphDep> deps, int hint = -1, int worker = -1) {
        return add_task(compute_s, std::span<const GraphDep>(deps.begin(), deps.size()), hint, worker);
    }
    // The next task added waits for every earlier task (a taskwait or a
    // barrier of the spawning thread).
    void barrier();

    // Every region first written by a task is first-touched; this sets the
    // home of a region explicitly (a placement plan). Error("region", ...)
    // out of range.
    void set_home(std::uint32_t region, int home);

    // A graph recorded by the real runtime: regions by address (homes
    // unallocated), measured seconds as compute time, hints kept. Throws
    // Error("tasks[i].deps[j]", ...) for ranges that partially overlap.
    static Graph from_recorded(const tasks::TaskGraph& recorded);

    std::span<const GraphRegion> regions() const { return regions_; }
    std::span<const GraphTask> tasks() const { return tasks_; }
    std::span<const GraphDep> deps() const { return deps_; }
    std::span<const GraphDep> deps_of(const GraphTask& t) const { return {deps_.data() + t.first_dep, t.dep_count}; }
    // A task's predecessors: each earlier task that it waits for, once, with
    // the bytes of the dependencies that link them, in the order in which the
    // runtime's dependency tracker (tasks/deps.hpp) links them when none has
    // finished yet. A read waits for the region's last writer; a write waits
    // for every reader since that writer, or for the writer when none read
    // it. Kept by add_task(). A task whose predecessors have partly finished
    // waits for the unfinished ones, the same ones and in the same order as
    // the tracker's (a reader finishes after the writer it waited for, so
    // "every reader has finished" implies "the writer has").
    std::span<const tasks::Edge> preds() const { return preds_; }
    std::span<const tasks::Edge> preds_of(const GraphTask& t) const { return {preds_.data() + t.first_pred, t.pred_count}; }
    // Per task, how many later tasks list it in preds(): the lengths of the
    // successor lists a simulation builds, kept by add_task() so that it
    // need not count them over every edge first.
    std::span<const std::uint32_t> successor_counts() const { return successor_counts_; }
    std::size_t size() const { return tasks_.size(); }
    void reserve(std::size_t tasks, std::size_t deps, std::size_t regions);
    // Totals kept by add_task(), so that a simulation of a graph too large
    // for the caches need not read it all before it starts: the sum of the
    // tasks' compute_s (in creation order), of their dependencies' bytes,
    // and the largest `worker` (-1: no task is bound to a worker).
    double compute_s() const { return compute_s_; }
    std::uint64_t dep_bytes() const { return dep_bytes_; }
    int max_worker() const { return max_worker_; }

    std::string name;   // e.g. "jacobi n=4096 block=128 iterations=20"
    // The graph's initial part (0: not known): what RIP-DEP's initial
    // partition must see to place the data well. build_app() sets it to
    // initial_part(graph); `numaware sim tasks` sizes the RIP window from it.
    std::size_t initial_tasks = 0;

private:
    std::vector<GraphRegion> regions_;
    std::vector<GraphTask> tasks_;
    std::vector<GraphDep> deps_;
    std::vector<tasks::Edge> preds_;
    static constexpr std::uint32_t no_task = 0xffffffffu;
    // Per region, for the next task's predecessors: its last writer and
    // the readers since.
    struct RegionUse {
        std::uint32_t writer = no_task;
        std::vector<std::uint32_t> readers;
    };
    std::vector<RegionUse> uses_;
    // Per task: where in preds_ the last edge from it is, so that a task
    // merges a predecessor named again in O(1), whatever its count of
    // predecessors (a write after 10^5 reads has 10^5).
    std::vector<std::uint32_t> last_edge_from_;
    std::vector<std::uint32_t> successor_counts_;
    void link_preds(std::size_t first);
    std::uint64_t next_start_ = std::uint64_t{1} << 30;
    std::uint32_t pages_ = 0;
    bool pending_barrier_ = false;
    double compute_s_ = 0;
    std::uint64_t dep_bytes_ = 0;
    int max_worker_ = -1;
};

// The graph's initial part, what RIP's first window partitions: its
// initialisation and its first step (a sweep, a wavefront, a panel), at
// most `cap` tasks. A step is a maximal run of tasks, in creation order, in
// which no region is written twice; the initial part is the first
// initial_part_steps of them. For a double-buffered sweep the first run
// holds the initialisation and the first sweep (which writes the second
// buffer for the first time), the second run the next two sweeps.
inline constexpr unsigned initial_part_steps = tasks::window_initial_steps;
// RIP's window is capped so that its partitioning stays bounded
// (tasks::window_step_cap).
inline constexpr std::size_t initial_part_cap = tasks::window_step_cap;
std::size_t initial_part(const Graph& graph, std::size_t cap = initial_part_cap);

// =====================================================================
// The task simulator
// =====================================================================

// How concurrent tasks share memory and link bandwidth.
enum class Contention : std::uint8_t {
    // A task's share of each resource is fixed when it starts: the
    // resource's capacity divided by the number of running tasks that use
    // it at that moment (tasks starting at the same instant all count).
    // Fast: O(dependencies) per task. The default.
    snapshot,
    // Exact max-min fair sharing (FlowNetwork), revised at every start and
    // end of a transfer. For validation and small graphs.
    exact,
};
std::string_view to_string(Contention c);
Contention parse_contention(std::string_view text);   // Error("contention", ...) naming the choices

// Linux automatic NUMA balancing, modelled (see docs/SIMULATOR.md):
// every `scan_period_s` of simulated time every homed region is marked; the
// next task that touches a marked region takes a hinting fault
// (`fault_s`) and unmarks it; a region faulted twice in a row from the
// same remote node migrates there (its bytes are copied over the link,
// charged to the faulting task).
struct BalancingModel {
    bool enabled = false;
    double scan_period_s = 1e-3;
    double fault_s = 1e-6;
};

// The simulated time of a partitioning job (SimOptions::partition_cost).
struct PartitionCostModel {
    // Least squares over the host time of 438 windows (RIP-DEP and RIP-MW,
    // the eight applications at their simulation sizes, 4, 8 and 16 parts)
    // on the build host, 2026-11-25 (docs/SIMULATOR.md, "Partitioning cost").
    double s_per_vertex = 6.538e-8;
    double s_per_edge = 9.944e-8;
    // Simulated seconds for a problem of this size (0 parts or 1 part: 0).
    double seconds(const tasks::PartitionSize& size) const;
};

// One partitioning job as simulated: its size, its modelled (simulated)
// time and the host time it really took.
struct PartitionRecord {
    tasks::PartitionSize size;
    double simulated_s = 0;
    double host_s = 0;
    double start_s = 0;   // simulated time it started
};

struct SimOptions {
    // The workers: plan_team(machine, mapping). threads = 0: one worker per
    // CPU of every node with CPUs.
    TeamMapping mapping{};
    tasks::PolicyOptions policy{};
    Contention contention = Contention::snapshot;
    // The spawning thread submits one task every spawn_s (0: the whole
    // graph at time 0). Default: what this runtime's spawning thread costs
    // per task with dependencies, measured (BENCHMARKS.md, task runtime:
    // about 0.37 us for tracking and home lookup).
    double spawn_s = 0.37e-6;
    // One round of an idle worker's search (Policy::steal_order): a queue
    // that a policy lists only from round k on is searched after k × round_s
    // of idleness. 0 (default): the graph's mean uncontended task time /
    // tasks::rounds_per_task, as the executor's rounds are its measured mean
    // task time / rounds_per_task. The uncontended time of a task is its
    // compute time plus its dependency bytes at one core's local bandwidth
    // (TimedMachine::core_gbps, averaged over the nodes): the model knows it
    // before the run, where the executor learns its mean as tasks finish.
    double round_s = 0;
    // Runtime cost charged to a worker per task it runs (queue, completion).
    double task_overhead_s = 0;
    // Partitioning jobs (RIP-DEP, RIP-MW) run for real on the host (their
    // result places the tasks), but their simulated duration is modelled
    // from the problem's size, so that a simulated result depends only on
    // its inputs and seed, never on the host's load:
    //   seconds = (s_per_vertex * vertices + s_per_edge * edges) * log2(parts)
    // The constants are Scotch's cost measured on the build host
    // (docs/SIMULATOR.md, "Partitioning cost", with the command). When
    // partition_s_per_task > 0, that many seconds per task of the window
    // replace the model. The host time is reported either way
    // (SimReport::partition_host_s, SimReport::partitions).
    PartitionCostModel partition_cost{};
    double partition_s_per_task = 0;
    // simulate(..., name, ...): RIP's window (policy.window) is raised to
    // the graph's initial_tasks, so its first partition sees the
    // initialisation and the first step of the application.
    bool rip_window_from_graph = true;
    BalancingModel balancing{};
    // Told of every task's creation, readiness, start, end and steal, and
    // of every partition job, in simulated seconds (numaware/observer.hpp);
    // on_setup gets each worker's node and SimReport::label. Not owned.
    tasks::Observer* observer = nullptr;
};

// Everything is simulated: `label` says so and names the model. to_json()
// writes `run` and the simulation's own fields as one flat object.
struct SimReport {
    // What a real run reports too (numaware/metrics.hpp, defined there
    // once). Here makespan_s runs from the first submission to the last
    // completion, simulated; runtime_overhead_pct is task_overhead_s *
    // tasks / (workers * makespan) * 100.
    tasks::RunReport run;
    std::string label;                     // "simulated on bullion-s16 (8 sockets)"
    std::string machine;                   // TimedMachine::name
    std::string graph;                     // Graph::name
    std::string contention;                // the memory model: "snapshot" or "exact"
    unsigned workers = 0;
    // Bytes moved from home (column) to reader (row), by node position;
    // the diagonal is local traffic. link_bytes[r][h], r != h, is the
    // traffic of link h -> r.
    NodeMatrix<std::uint64_t> link_bytes;
    double partition_s = 0;                // simulated partitioning time (background thread)
    double partition_busy_pct = 0;         // partition_s / makespan * 100: how much of the run the partitioner works
    std::size_t window = 0;                // the policy's window (RIP), after rip_window_from_graph
    double partition_host_s = 0;           // host time spent in PartitionJob::run()
    std::uint64_t partition_jobs = 0;
    std::vector<PartitionRecord> partitions;   // every job, in order
    std::uint64_t migrated_bytes = 0;      // balancing model
    std::uint64_t hinting_faults = 0;
    double host_s = 0;                     // host time of the whole simulation
    double tasks_per_host_s = 0;

    std::string to_json() const;
};

// The node (OS index) of each worker simulate() runs for `mapping`:
// plan_team(machine, mapping), where threads = 0 means one per CPU of every
// node with CPUs.
std::vector<unsigned> worker_nodes(const Machine& machine, const TeamMapping& mapping);
// The distinct nodes of those workers, ascending: the `nodes` a graph
// builder's hints refer to (what Runtime::nodes() gives the real apps).
std::vector<unsigned> worker_node_set(const Machine& machine, const TeamMapping& mapping);

// Runs `graph` on `machine` under `policy` (attached here, so pass a fresh
// object). Throws Error naming the field for: a mapping the machine cannot
// host, a region home or hint that is not a node of the machine, a pinned
// worker out of range, a graph without tasks is fine (makespan 0).
SimReport simulate(const TimedMachine& machine, const Graph& graph, tasks::Policy& policy,
                   const SimOptions& options = {});
// The same with a built-in policy by name (tasks::make_policy with options.policy).
SimReport simulate(const TimedMachine& machine, const Graph& graph, std::string_view policy,
                   const SimOptions& options = {});

}  // namespace numaware::sim
