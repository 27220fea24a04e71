// apps/common/tiled_matrix.hpp — tiled dense matrices and the LAPACK/BLAS
// calls on them, shared by the tiled applications (qr, inversion).
//
// Tiles: a tile of b x b doubles is stored column-major and contiguous, so
// one tile is one dependency; tile slots are rounded up to whole pages so
// every tile starts on a page boundary and its home is one node.
#pragma once

#include <cblas.h>   // OpenBLAS's cblas.h also declares openblas_set_num_threads()

#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "apps/common/task_program.hpp"
#include "numaware/error.hpp"

namespace numaware::apps {

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

// A per-thread scratch buffer of at least `count` doubles, for the LAPACK
// kernels' workspace (reused across the tasks a worker runs).
inline double* scratch(std::size_t count) {
    thread_local std::vector<double> buffer;
    if (buffer.size() < count) buffer.resize(count);
    return buffer.data();
}

// Throws Error(app, ...) naming the routine when a LAPACKE call returned a
// non-zero info.
inline void check_lapack(int info, const char* routine, std::string_view app) {
    if (info != 0) throw Error(std::string(app), fmt::format("LAPACKE_{} failed with info {}", routine, info));
}

// A size for LAPACK/BLAS (32-bit ints); callers keep sizes within range.
inline int li(std::size_t v) { return static_cast<int>(v); }

}  // namespace numaware::apps
