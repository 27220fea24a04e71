// src/sim/partition_cost.cpp — the simulated time of a partitioning job.
//
// Scotch maps a window by recursive bipartitioning of the target (one level
// per halving of the parts), each level a multilevel bipartition linear in
// the graph's vertices and edges; our refinement pass (partition.cpp) is
// linear per pass too. Hence the form
//   seconds = (s_per_vertex * vertices + s_per_edge * edges) * log2(parts),
// whose two constants were measured on the build host (docs/SIMULATOR.md,
// "Partitioning cost": `numaware_bench_sim partition-cost`, least squares
// over every window of the eight applications at 4, 8 and 16 sockets).
#include <cmath>

#include "numaware/sim.hpp"

namespace numaware::sim {

double PartitionCostModel::seconds(const tasks::PartitionSize& size) const {
    if (size.parts <= 1) return 0;
    return (s_per_vertex * static_cast<double>(size.vertices) + s_per_edge * static_cast<double>(size.edges)) *
           std::log2(static_cast<double>(size.parts));
}

}  // namespace numaware::sim
