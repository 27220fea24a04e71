// apps/stencil/stencil_graph.hpp — fork-join stencil sweeps as simulator
// task graphs.
//
// A parallel loop or a stencil sweep is, to the simulator, one task per
// thread plus a barrier. build_stencil() turns a double-buffered (Jacobi)
// stencil problem into such a Graph: the same geometry as the stencil
// skeleton (Layout, partition_equal / partition_weighted, numa_weights),
// the pages of both arrays homed as a placement mode says, and every task
// pinned to the worker its thread runs on in that sweep. The builder is
// pure: it allocates nothing and runs nothing; simulate() times the graph.
//
//     auto m = numaware::sim::model("sim-4socket");
//     numaware::TeamMapping mapping{.threads = 8, .kind = numaware::MappingKind::scatter};
//     numaware::apps::StencilSim s;
//     s.shape = numaware::stencil::Shape::d2(1024, 1026);
//     s.threads = 8;
//     s.sweeps = 20;
//     auto g = numaware::apps::build_stencil(m, numaware::sim::worker_nodes(m.machine, mapping), s);
//     auto r = numaware::sim::simulate(m, g, "dfifo", {.mapping = mapping});
//
// Pages are the simulated machine's (m.machine.page_bytes).
//
// Regions. Each thread's owned block of each array (Partition::owned; a
// page belongs to the thread owning its first byte, the last block runs to
// the end of the array) is cut at the pages the other
// threads read, so a neighbour names only the halo pages it needs: for a
// 1-D cut of slabs that is a low halo part, an interior part and a high
// halo part. Cut points are rounded out to whole pages (the unit the
// kernel places and migrates), so when a slab is smaller than a page the
// halo part is the whole pages holding the halo slabs.
//
// Tasks. Sweep s, thread t reads (in) every part of the source array
// (s even: array 0, odd: array 1) that meets slabs [work.lo - halo,
// work.hi + halo) and writes (out) every part of the destination array
// that meets its work slabs. Compute time = interior cells of its work
// block × the neighbourhood's point count (flops per cell) / flops_per_s.
// One task per thread per sweep, pinned to its worker (hint = that
// worker's node; a thread with an empty block gets a task with no
// dependencies and no compute); Graph::barrier() between sweeps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "apps/common/graph_builder.hpp"
#include "numaware/sim.hpp"
#include "numaware/stencil.hpp"
#include "numaware/team.hpp"

namespace numaware::apps {

struct StencilSim {
    // Where the pages of both arrays live.
    enum class PagePlacement : std::uint8_t {
        stencil_aware,        // each owned block on the node of the thread that owns it
        serial_first_touch,   // everything on the node of thread 0 (it initialised the arrays)
        interleave,           // pages round robin over the nodes with memory, page i on the (i mod n)-th
    };

    stencil::Shape shape{};
    stencil::Neighbourhood neighbourhood = stencil::Neighbourhood::star(2);   // 5-point
    unsigned sweeps = 1;                  // >= 1
    unsigned threads = 1;                 // >= 1, at most one per worker
    PagePlacement placement = PagePlacement::stencil_aware;
    // false: thread t runs on worker t in every sweep. true: in every sweep
    // the threads run on a fresh permutation of the workers, drawn from
    // `seed` (the scheduler moving threads between cores and nodes); the
    // pages stay where thread t's nominal worker (worker t) placed them.
    bool migrating = false;
    // false: partition_equal. true: partition_weighted(numa_weights(...))
    // for the nominal nodes of the threads, on m.machine; the pages follow
    // the weighted cut.
    bool numa_chunks = false;
    std::uint64_t seed = 1;
    ComputeModel compute{};
};

std::string_view to_string(StencilSim::PagePlacement placement);
// "stencil-aware", "serial-first-touch", "interleave"; Error(field, ...) listing them.
StencilSim::PagePlacement parse_stencil_placement(std::string_view text, std::string_view field = "placement");

// One region of a stencil graph: a part of one thread's owned block of one
// array (for interleave: that part's pages on one node).
struct StencilRegion {
    unsigned array = 0;           // 0 or 1
    unsigned owner = 0;           // the thread whose owned block holds it
    std::uint64_t offset = 0;     // byte offset of the part in the array
    std::uint64_t part_bytes = 0; // bytes of the whole part (all nodes)
    std::uint64_t bytes = 0;      // bytes of this region (== part_bytes except for interleave)
    unsigned home = 0;            // node OS index
};

// The graph and the decisions behind it, for reports and tests.
struct StencilBuild {
    sim::Graph graph;
    stencil::Layout layout;
    stencil::Partition partition;
    std::string weight_rule;                   // numa_chunks: WeightPlan::rule; else "equal"
    std::vector<unsigned> thread_nodes;        // the nominal node of each thread (worker t's node)
    std::vector<StencilRegion> regions;        // parallel to graph.regions()
    // workers[s][t]: the worker thread t runs on in sweep s.
    std::vector<std::vector<unsigned>> workers;
};

// worker_node: the node (OS index) of each worker of the simulation, in
// worker order, as plan_team gives it for SimOptions::mapping (see
// worker_nodes()). Throws Error naming the input: "threads" (0, or more
// than the workers, or more than the interior slabs), "sweeps" (0),
// "worker_node" (empty) / "worker_node[i]" (not a node with CPUs of
// m.machine), "grid" / "neighbourhood" (check_grid), "page_bytes" (the
// machine's page size is not a power of two >= 64),
// "placement" (interleave on a machine without memory), "flops_per_s".
StencilBuild build_stencil_plan(const sim::TimedMachine& m, const std::vector<unsigned>& worker_node,
                                const StencilSim& s);
sim::Graph build_stencil(const sim::TimedMachine& m, const std::vector<unsigned>& worker_node, const StencilSim& s);

}  // namespace numaware::apps
