// src/tasks/policies/partition.hpp — task-graph partitioning with Scotch (and METIS).
//
// A pure function from a weighted graph and a target (the distances among
// the worker nodes) to a part per vertex. Each call owns every Scotch
// object it uses, including a private Scotch context with its own random
// state and a single thread, so calls from different threads never share
// anything and the result depends only on the problem and its seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace numaware::tasks::policy_detail {

struct PartitionProblem {
    // One weight per vertex (>= 1 after scaling; 0 is treated as 1).
    std::vector<std::uint64_t> vertex_weight;
    // Optional second balance constraint, one value per vertex (0 allowed),
    // e.g. the bytes a task touches first. Non-empty and with nothing fixed:
    // the parts are balanced on both (METIS multi-constraint k-way), then
    // refined for the distance-weighted cut keeping both within the
    // imbalance. With fixed vertices it is ignored (METIS has none) and
    // Scotch balances the first weight alone.
    std::vector<std::uint64_t> second_weight;
    // Undirected edges between distinct vertices; both directions of a pair
    // and repeated pairs are summed. Self loops are dropped.
    struct Edge {
        std::uint32_t a = 0, b = 0;
        std::uint64_t bytes = 0;
    };
    std::vector<Edge> edges;
    // Per vertex: the part it must keep, or -1. Empty: nothing fixed.
    std::vector<int> fixed;
    // parts x parts distances between the target parts (the SLIT among the
    // worker nodes, in ascending OS index order).
    std::vector<std::vector<unsigned>> distance;
    double imbalance = 0.05;
    std::uint64_t seed = 1;
};

// A part in [0, parts) per vertex. Throws Error("partition", ...) when
// Scotch fails or the problem is malformed.
std::vector<unsigned> partition_graph(const PartitionProblem& problem);

}  // namespace numaware::tasks::policy_detail
