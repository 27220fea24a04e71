// apps/common/owners.hpp — the static data distributions behind the
// applications' SA hints, as pure index arithmetic over K nodes. The real
// programs (task_program.hpp: owner_node(), tile_owner_node(),
// cyclic_tile_owner_node()) and the simulator's graph builders
// (graph_builder.hpp: GraphBuilder::owner(), tile_owner(),
// cyclic_tile_owner()) both map these indices onto their node lists, so
// the two cannot disagree.
//
// Two rules, chosen by the algorithm's shape, as a programmer who
// distributes the data by hand would:
//   band          block b of `blocks` dealt out contiguously: index
//                 b * K / blocks. Stencils, scans and streams (Jacobi,
//                 Red-Black, Gauss-Seidel, NStream, CG, integral
//                 histogram): each node's work stays about equal through
//                 the run, and only band edges cross nodes.
//   block-cyclic  tile (row, col) on a P x Q grid of the nodes: index
//                 (row mod P) * Q + (col mod Q), P the largest divisor of
//                 K with P * P <= K, Q = K / P. Tiled dense linear algebra
//                 (QR, the Cholesky-based inversion): the trailing matrix
//                 shrinks step by step, so a band of tile rows leaves its
//                 node idle once the factorisation has passed it; the
//                 two-dimensional block-cyclic distribution keeps every
//                 node's share of each step near 1/K. It is the
//                 distribution of ScaLAPACK (its users' guide, "The
//                 Two-dimensional Block-Cyclic Distribution", which also
//                 recommends grids near square with P <= Q) and of
//                 DPLASMA's tiled factorisations.
#pragma once

#include <algorithm>
#include <cstddef>

namespace numaware::apps {

// Index in [0, k) of the node owning block `block` of `blocks` under the
// band rule. A block past the end counts as the last; blocks == 0 gives 0.
// k > 0.
inline std::size_t band_owner_index(std::size_t block, std::size_t blocks, std::size_t k) {
    if (blocks == 0) return 0;
    return std::min(block, blocks - 1) * k / blocks;
}

// The P x Q grid of k > 0 nodes for the block-cyclic rule.
struct NodeGrid {
    std::size_t rows = 1;   // P
    std::size_t cols = 1;   // Q
};
inline NodeGrid node_grid(std::size_t k) {
    NodeGrid g;
    for (std::size_t d = 1; d * d <= k; ++d)
        if (k % d == 0) g.rows = d;
    g.cols = k / g.rows;
    return g;
}

// Index in [0, k) of the node owning tile (row, col) under the block-cyclic
// rule. k > 0.
inline std::size_t block_cyclic_owner_index(std::size_t row, std::size_t col, std::size_t k) {
    const NodeGrid g = node_grid(k);
    return (row % g.rows) * g.cols + col % g.cols;
}

}  // namespace numaware::apps
