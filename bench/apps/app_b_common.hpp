// bench/apps/app_b_common.hpp — helpers shared by the linear-algebra and
// scan applications (cg, integral-histogram, qr, inversion).
//
// Tiles: a tile of b x b doubles is stored column-major and contiguous, so
// one tile is one dependency; tile slots are rounded up to whole pages so
// every tile starts on a page boundary and its home is one node.
#pragma once

#include <cblas.h>   // OpenBLAS's cblas.h also declares openblas_set_num_threads()

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "app_common.hpp"
#include "apps.hpp"
#include "numaware/error.hpp"

namespace numaware::apps::detail_b {

// The number of T that fill `count` T rounded up to whole pages: the slot
// of one block, so the next block starts on a page boundary.
template <class T>
std::size_t page_slot(std::size_t count) {
    const std::size_t bytes = count * sizeof(T);
    return (bytes + page_size() - 1) / page_size() * page_size() / sizeof(T);
}

// OpenBLAS (pthread build) would otherwise start its own threads inside a
// BLAS or LAPACK call made from a task and compete with the workers for
// the cores. Sets the process-wide OpenBLAS thread count to 1, once; every
// app that calls BLAS calls this before spawning.
// (openblas_set_num_threads is declared by OpenBLAS's cblas.h and
// exported by libopenblas; it is not part of the reference CBLAS.)
inline void single_threaded_blas() {
    static std::once_flag once;
    std::call_once(once, [] { openblas_set_num_threads(1); });
}

// A deterministic value in [-0.5, 0.5) from two indices (splitmix64), so
// tasks and the serial reference generate the same matrix without sharing
// any state.
inline double hashed_unit(std::uint64_t i, std::uint64_t j) {
    std::uint64_t z = i * 0x9E3779B97F4A7C15ULL + j * 0xC2B2AE3D27D4EB4FULL + 0x165667B19E3779F9ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53 - 0.5;
}

// A square matrix of order n cut into nt x nt tiles of b x b doubles. Tile
// (m, k) (row block m, column block k) is column-major with leading
// dimension b, contiguous, in its own page-aligned slot of `slot` doubles.
struct TileLayout {
    std::size_t n = 0, b = 0, nt = 0, slot = 0;

    TileLayout() = default;
    TileLayout(std::size_t order, std::size_t tile)
        : n(order), b(tile), nt(order / tile), slot(page_slot<double>(tile * tile)) {}

    std::size_t tiles() const { return nt * nt; }
    std::size_t total() const { return tiles() * slot; }
    std::size_t tile_bytes() const { return b * b * sizeof(double); }
    std::size_t offset(std::size_t m, std::size_t k) const { return (m * nt + k) * slot; }
    // Element (i, j) of the matrix inside the tiled storage.
    std::size_t index(std::size_t i, std::size_t j) const { return offset(i / b, j / b) + (j % b) * b + i % b; }
};

// Runs `spawn_tasks()` (which spawns the app's graph on `rt` and returns
// how many tasks it spawned), then waits for every task. If spawning
// throws half-way, waits for the tasks already spawned before rethrowing,
// so none of them outlives the buffers it uses.
template <class F>
std::size_t spawn_and_wait(tasks::Runtime& rt, F&& spawn_tasks) {
    std::size_t spawned = 0;
    try {
        spawned = spawn_tasks();
    } catch (...) {
        try {
            rt.barrier();
        } catch (...) {   // the spawn error is the one to report
        }
        throw;
    }
    rt.barrier();
    return spawned;
}

// A per-thread scratch buffer of at least `count` doubles, for the LAPACK
// kernels' workspace (reused across the tasks a worker runs).
inline double* scratch(std::size_t count) {
    thread_local std::vector<double> buffer;
    if (buffer.size() < count) buffer.resize(count);
    return buffer.data();
}

// A size for LAPACK/BLAS (32-bit ints); callers keep sizes within range.
inline int li(std::size_t v) { return static_cast<int>(v); }

}  // namespace numaware::apps::detail_b
