// apps/common/graph_builder.hpp — what the applications' simulator graph
// builders (apps/<name>/graph.cpp) share.
//
// Each builder mirrors its application's spawning loop (program.cpp in the
// same folder): the same tasks in the same order, the same dependencies in
// the same order within a task (sizes in bytes and access), the same
// hints. Regions: one Graph region per distinct dependency block the
// application names, added array by array in the application's storage
// order, so two tasks naming the same block name the same region. The size
// checks are the application's own (its checked_size()), with the page
// size of the machine the graph is built for.
//
// Compute time of a task = its floating-point operations (counted per app
// in its graph.cpp) / ComputeModel::flops_per_s. Initialisation tasks count
// one operation per element they write (generating the value).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "apps/common/app_size.hpp"
#include "apps/common/owners.hpp"
#include "numaware/sim.hpp"

namespace numaware::apps {

// How fast a simulated core computes.
struct ComputeModel {
    double flops_per_s = 4e9;   // one core, double precision, the apps' scalar kernels
};

// The pieces every builder needs: the worker nodes (for the hints), the
// compute model, the machine's page size, and the graph under construction.
struct GraphBuilder {
    std::span<const unsigned> nodes;   // non-empty
    double flops_per_s = 0;            // > 0, finite
    std::size_t page_bytes = 0;        // Machine::page_bytes of the machine built for
    sim::Graph graph;

    double seconds(double flops) const { return flops / flops_per_s; }

    // The node owning block `block` of `blocks` dealt out contiguously over
    // `nodes` (the programs' owner_node(): nodes[block * K / blocks], a block
    // past the end counting as the last, blocks == 0 giving the first node).
    int owner(std::size_t block, std::size_t blocks) const;
    // Tile (row, col) of a rows x cols grid: block row * cols + col (the
    // programs' tile_owner_node()).
    int tile_owner(std::size_t row, std::size_t col, std::size_t rows, std::size_t cols) const {
        return owner(row * cols + col, rows * cols);
    }
    // Tile (row, col) under the block-cyclic rule (the programs'
    // cyclic_tile_owner_node(); apps/common/owners.hpp).
    int cyclic_tile_owner(std::size_t row, std::size_t col) const {
        return static_cast<int>(nodes[block_cyclic_owner_index(row, col, nodes.size())]);
    }
    int first_node() const { return static_cast<int>(nodes.front()); }

    // Graphs past these sizes are refused (Error("shape", ...)) before
    // anything is built: task ids and dependency offsets are 32-bit, and a
    // graph this large would not fit in memory anyway.
    static constexpr std::uint64_t max_tasks = std::uint64_t{1} << 28;
    static constexpr std::uint64_t max_deps = std::uint64_t{1} << 30;
    // Throws Error("shape", ...) when `tasks` or `deps` pass the limits
    // above; otherwise reserves room in `graph`.
    void reserve(std::uint64_t tasks, std::uint64_t deps, std::uint64_t regions);
};

// Dependencies on region r.
inline sim::GraphDep in(std::uint32_t r) { return {r, tasks::AccessMode::in}; }
inline sim::GraphDep out(std::uint32_t r) { return {r, tasks::AccessMode::out}; }
inline sim::GraphDep inout(std::uint32_t r) { return {r, tasks::AccessMode::inout}; }

// "jacobi n=4096 block=128 iterations=20"
std::string graph_name(std::string_view app, const AppSize& size);

}  // namespace numaware::apps
