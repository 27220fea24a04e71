// apps/common/stencil_kernels.hpp — the per-block compute kernels of the
// stencil applications, shared by their task programs (apps/jacobi,
// apps/gauss_seidel) and the overhead benchmarks (bench/tasks), which run the very same
// kernels under OpenMP tasks with `depend` and under oneTBB.
//
// All kernels are header-only, plain serial loops over doubles, and touch
// exactly the memory their documentation names, so a caller can express
// that memory as task dependencies. Boundary conditions are Dirichlet: the
// outermost rows and columns of the grid never change.
//
// Floating point: every update is written as 0.25 * (((north + south) + west) + east),
// in that order, so any implementation that follows it (the serial
// references do) gets bit-identical results.
#pragma once

#include <cstddef>
#include <cstdint>

namespace numaware::apps::kernels {

// The initial value of grid point (row, col) of a `side` x `side` grid:
// boundary points get a smooth profile, interior points a deterministic
// pseudo-random value in [0, 1). Same for every app and every run.
inline double initial_value(std::size_t row, std::size_t col, std::size_t side) {
    if (row == 0 || col == 0 || row + 1 == side || col + 1 == side) {
        return 1.0 + static_cast<double>((row * 3 + col * 5) % 11) / 11.0;
    }
    std::uint64_t h = (static_cast<std::uint64_t>(row) << 32) ^ static_cast<std::uint64_t>(col);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return static_cast<double>(h >> 11) * 0x1.0p-53;
}

// ---------------------------------------------------------------- Jacobi --
// Grid layout: row-major, `rows` x `cols` doubles, row r at grid + r * cols.
// Blocks are ranges of whole rows, so a block is one contiguous region.

// Writes initial_value() into rows [row_begin, row_end) of a square grid
// (rows == cols == side). Touches only those rows.
inline void jacobi_init_rows(double* grid, std::size_t side, std::size_t row_begin, std::size_t row_end) {
    for (std::size_t r = row_begin; r < row_end; ++r) {
        for (std::size_t c = 0; c < side; ++c) grid[r * side + c] = initial_value(r, c, side);
    }
}

// One Jacobi sweep over rows [row_begin, row_end) of dst, from src:
// interior points get 0.25 * (((N + S) + W) + E) of src, boundary points
// (first/last row, first/last column) are copied from src so the two
// buffers of a double-buffered solver always agree on the boundary.
// Reads src rows [row_begin - 1, row_end + 1) clipped to the grid; writes
// only dst rows [row_begin, row_end). Requires rows >= 1, cols >= 1,
// row_begin <= row_end <= rows.
inline void jacobi_rows(const double* src, double* dst, std::size_t rows, std::size_t cols,
                        std::size_t row_begin, std::size_t row_end) {
    for (std::size_t r = row_begin; r < row_end; ++r) {
        const double* s = src + r * cols;
        double* d = dst + r * cols;
        if (r == 0 || r + 1 == rows || cols < 3) {
            for (std::size_t c = 0; c < cols; ++c) d[c] = s[c];
            continue;
        }
        const double* n = s - cols;
        const double* so = s + cols;
        d[0] = s[0];
        for (std::size_t c = 1; c + 1 < cols; ++c) {
            d[c] = 0.25 * (((n[c] + so[c]) + s[c - 1]) + s[c + 1]);
        }
        d[cols - 1] = s[cols - 1];
    }
}

// ---------------------------------------------------------- Gauss-Seidel --
// Grid layout: tile-major. A `side` x `side` grid is cut into
// tiles_per_side x tiles_per_side square tiles of `tile` x `tile` points
// (side == tiles_per_side * tile); tile (ti, tj) is stored contiguously,
// row-major inside, at tiles + gs_tile_offset(...). Tiles are stored in
// row-major tile order. With tile * tile * 8 a multiple of the page size,
// every tile is a whole number of pages.

inline std::size_t gs_tile_offset(std::size_t tiles_per_side, std::size_t tile, std::size_t ti, std::size_t tj) {
    return (ti * tiles_per_side + tj) * tile * tile;
}

// The element index of global point (row, col) in the tile-major layout.
inline std::size_t gs_index(std::size_t tiles_per_side, std::size_t tile, std::size_t row, std::size_t col) {
    return gs_tile_offset(tiles_per_side, tile, row / tile, col / tile) + (row % tile) * tile + col % tile;
}

// Writes initial_value() into tile (ti, tj). Touches only that tile.
inline void gs_init_tile(double* tiles, std::size_t tiles_per_side, std::size_t tile, std::size_t ti,
                         std::size_t tj) {
    const std::size_t side = tiles_per_side * tile;
    double* t = tiles + gs_tile_offset(tiles_per_side, tile, ti, tj);
    for (std::size_t r = 0; r < tile; ++r) {
        for (std::size_t c = 0; c < tile; ++c) t[r * tile + c] = initial_value(ti * tile + r, tj * tile + c, side);
    }
}

// One in-place Gauss-Seidel sweep over tile (ti, tj), points in row-major
// order inside the tile, u = 0.25 * (((N + S) + W) + E) using the newest
// values. Global boundary points are left alone. Writes only tile (ti, tj);
// reads it and the edge rows/columns of its north, south, west and east
// neighbour tiles (those that exist).
//
// Calling it for every tile in row-major tile order (ti outer, tj inner) is
// exactly one natural row-major Gauss-Seidel sweep of the whole grid, bit
// for bit: each point sees its north and west neighbours already updated and
// its south and east neighbours not yet, in both orders. As task
// dependencies: inout(tile) and in() of each existing neighbour tile; the
// tile order then gives each tile the north/west tiles of this sweep and the
// south/east tiles of the previous one.
inline void gs_tile(double* tiles, std::size_t tiles_per_side, std::size_t tile, std::size_t ti, std::size_t tj) {
    const std::size_t side = tiles_per_side * tile;
    const std::size_t tt = tile * tile;
    double* t = tiles + gs_tile_offset(tiles_per_side, tile, ti, tj);
    const double* north = ti > 0 ? t - tiles_per_side * tt : nullptr;
    const double* south = ti + 1 < tiles_per_side ? t + tiles_per_side * tt : nullptr;
    const double* west = tj > 0 ? t - tt : nullptr;
    const double* east = tj + 1 < tiles_per_side ? t + tt : nullptr;
    // Local rows/cols that are not on the global boundary.
    const std::size_t r0 = ti == 0 ? 1 : 0;
    const std::size_t r1 = ti + 1 == tiles_per_side ? tile - 1 : tile;
    const std::size_t c0 = tj == 0 ? 1 : 0;
    const std::size_t c1 = tj + 1 == tiles_per_side ? tile - 1 : tile;
    if (side < 3) return;
    for (std::size_t r = r0; r < r1; ++r) {
        double* row = t + r * tile;
        const double* up = r > 0 ? row - tile : north + (tile - 1) * tile;
        const double* down = r + 1 < tile ? row + tile : south;
        for (std::size_t c = c0; c < c1; ++c) {
            const double w = c > 0 ? row[c - 1] : west[r * tile + tile - 1];
            const double e = c + 1 < tile ? row[c + 1] : east[r * tile];
            row[c] = 0.25 * (((up[c] + down[c]) + w) + e);
        }
    }
}

}  // namespace numaware::apps::kernels
