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

#include <cstddef>
#include <string_view>

namespace numaware::apps {

// The size of a run. The meaning of each field is documented per app;
// 0 means the app's default (its test size) for that field.
struct AppSize {
    std::size_t n = 0;           // problem size (e.g. grid side, matrix order, array length)
    std::size_t block = 0;       // block / tile size
    unsigned iterations = 0;     // sweeps, solver iterations, repetitions

    bool operator==(const AppSize&) const = default;
};

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
