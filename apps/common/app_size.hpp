// apps/common/app_size.hpp — the size of an application run, and the size
// rules several applications share.
//
// One AppSize type serves the real task program and the simulator's graph
// builder of every application, so each application writes its sizes and
// its size checks once (apps/<name>/<name>.hpp and size.cpp). A check takes
// the page size as an argument: the real program passes the host's (its
// memory is the host's), the graph builder the page size of the machine it
// builds for (Machine::page_bytes), never the host's.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace numaware::apps {

// How the stencil applications (Jacobi, Gauss-Seidel, Red-Black) declare
// what a task reads of its neighbours' blocks:
//   rows:          the halo rows it reads. Each row block (or tile) is three
//                  disjoint regions: its first row, the rows between, its
//                  last row; a neighbour's edge row is one dependency. Gauss-
//                  Seidel's east and west halos are columns, strided through
//                  the tile, so they stay whole tiles (all three regions).
//   whole_blocks:  whole neighbour blocks, one region per block (the
//                  published setting, where a halo weighs a whole block).
// The task graph (which task waits for which) is the same; the bytes named,
// and so DEP's votes, RIP's edge weights and cross-node bytes, differ.
enum class Halos : std::uint8_t { rows, whole_blocks };

// "rows" / "whole-blocks", and back (Error(field, ...) naming both).
std::string_view halos_name(Halos halos);
Halos parse_halos(std::string_view text, std::string_view field = "halos");

// The size of a run. The meaning of each field is documented per app;
// 0 means the app's default (its test size) for that field. `halos` is the
// stencil applications' dependency declaration (above); the others ignore it.
struct AppSize {
    std::size_t n = 0;           // problem size (e.g. grid side, matrix order, array length)
    std::size_t block = 0;       // block / tile size
    unsigned iterations = 0;     // sweeps, solver iterations, repetitions
    Halos halos = Halos::rows;

    bool operator==(const AppSize&) const = default;
};

// The dependency regions of one block of `rows` rows of `row_elems`
// elements each, stored row-major and contiguously: with Halos::rows the
// first row, the rows between and the last row (as many of the three as
// exist: one region for a 1-row block, two for 2 rows); with
// Halos::whole_blocks the whole block. Offsets and sizes in elements from
// the block's start; part[top] holds the first row, part[bottom] the last.
struct RowBlockParts {
    struct Part {
        std::size_t offset = 0;
        std::size_t elems = 0;
    };
    std::array<Part, 3> part{};
    unsigned count = 0;
    unsigned top = 0;
    unsigned bottom = 0;
};
RowBlockParts row_block_parts(std::size_t rows, std::size_t row_elems, Halos halos);

// `given` with each 0 field replaced by the field of `defaults`.
AppSize resolve(const AppSize& given, const AppSize& defaults);

// Throws Error(field, ...) unless `bytes` (the size of one dependency block,
// described by `what`) is a positive whole number of `page_bytes` pages:
// every block then has one home node.
void require_page_multiple(std::size_t bytes, std::size_t page_bytes, std::string_view field,
                           std::string_view what);

// The tiled matrix applications' rule: 1 <= n <= max_n and the tile side
// `block` divides n, else Error("n"|"block", ...).
void check_tiled_size(const AppSize& size, std::size_t max_n);

}  // namespace numaware::apps
