// src/sim/apps/builders.hpp — shared pieces of the application graph
// builders (one builder per app_<name>.cpp of bench/apps, one file each
// here). Internal to the library.
//
// Each builder mirrors its application's spawning loop: the same tasks in
// the same order, the same dependencies in the same order within a task
// (sizes in bytes and access), the same hints. Regions: one Graph region
// per distinct dependency block the application names, added array by
// array in the application's storage order, so two tasks naming the same
// block name the same region. The size checks are the application's, with
// the same Error fields and messages (the numbers are duplicated here: the
// library does not depend on bench/).
//
// Compute time of a task = its floating-point operations (counted per app
// in its file) / ComputeModel::flops_per_s. Initialisation tasks count one
// operation per element they write (generating the value).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "numaware/sim.hpp"

namespace numaware::sim::app_builders {

// The pieces every builder needs: the worker nodes (for the hints), the
// compute model, and the graph under construction.
struct Context {
    std::span<const unsigned> nodes;   // non-empty
    double flops_per_s = 0;            // > 0, finite
    Graph graph;

    double seconds(double flops) const { return flops / flops_per_s; }

    // The node owning block `block` of `blocks` dealt out contiguously over
    // `nodes` (apps' owner_node(): nodes[block * K / blocks], a block past
    // the end counting as the last, blocks == 0 giving the first node).
    int owner(std::size_t block, std::size_t blocks) const;
    // Tile (row, col) of a rows x cols grid: block row * cols + col (apps'
    // tile_owner_node()).
    int tile_owner(std::size_t row, std::size_t col, std::size_t rows, std::size_t cols) const {
        return owner(row * cols + col, rows * cols);
    }
    int first_node() const { return static_cast<int>(nodes.front()); }
};

// Dependencies on region r.
inline GraphDep in(std::uint32_t r) { return {r, tasks::Access::in}; }
inline GraphDep out(std::uint32_t r) { return {r, tasks::Access::out}; }
inline GraphDep inout(std::uint32_t r) { return {r, tasks::Access::inout}; }

// `given` with each 0 field replaced by the field of `defaults` (the apps'
// resolve()).
AppShape resolve(const AppShape& given, const AppShape& defaults);

// The host's page size, as the applications see it.
std::size_t page_size();
// The apps' require_page_multiple(): Error(field, ...) unless `bytes` is a
// positive whole number of pages.
void require_page_multiple(std::size_t bytes, std::string_view field, std::string_view what);

// The tiled matrix apps' check_tiled_size(): 1 <= n <= max_n and block
// divides n, else Error("n"|"block", ...).
void check_tiled_size(const AppShape& size, std::size_t max_n);

// Graphs past these sizes are refused (Error("shape", ...)) before
// anything is built: task ids and dependency offsets are 32-bit, and a
// graph this large would not fit in memory anyway.
inline constexpr std::uint64_t max_tasks = std::uint64_t{1} << 28;
inline constexpr std::uint64_t max_deps = std::uint64_t{1} << 30;
// Throws Error("shape", ...) when `tasks` or `deps` pass the limits above;
// otherwise reserves room in ctx.graph.
void reserve(Context& ctx, std::uint64_t tasks, std::uint64_t deps, std::uint64_t regions);

// "jacobi n=4096 block=128 iterations=20"
std::string graph_name(std::string_view app, const AppShape& shape);

// One builder per application. Each resolves `shape` against the app's
// test defaults, runs the app's checks, and fills ctx.graph.
void build_jacobi(Context& ctx, const AppShape& shape);
void build_gauss_seidel(Context& ctx, const AppShape& shape);
void build_red_black(Context& ctx, const AppShape& shape);
void build_nstream(Context& ctx, const AppShape& shape);
void build_cg(Context& ctx, const AppShape& shape);
void build_integral_histogram(Context& ctx, const AppShape& shape);
void build_qr(Context& ctx, const AppShape& shape);
void build_inversion(Context& ctx, const AppShape& shape);

// The applications' size checks, one per app: `given` resolved against the
// app's test shape, then the app's own checks (the same fields and messages
// as bench/apps, which calls them through sim::check_app_shape).
AppShape check_jacobi(const AppShape& given);
AppShape check_gauss_seidel(const AppShape& given);
AppShape check_red_black(const AppShape& given);
AppShape check_nstream(const AppShape& given);
AppShape check_cg(const AppShape& given);
AppShape check_integral_histogram(const AppShape& given);
AppShape check_qr(const AppShape& given);
AppShape check_inversion(const AppShape& given);

// The apps' test sizes (bench/apps test_size; a unit test checks they are
// equal) and the simulation sizes.
extern const AppShape jacobi_test, jacobi_sim;
extern const AppShape gauss_seidel_test, gauss_seidel_sim;
extern const AppShape red_black_test, red_black_sim;
extern const AppShape nstream_test, nstream_sim;
extern const AppShape cg_test, cg_sim;
extern const AppShape integral_histogram_test, integral_histogram_sim;
extern const AppShape qr_test, qr_sim;
extern const AppShape inversion_test, inversion_sim;

}  // namespace numaware::sim::app_builders
