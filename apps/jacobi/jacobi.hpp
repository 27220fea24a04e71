// apps/jacobi/jacobi.hpp — 2-D 5-point Jacobi, double-buffered, row blocks:
// its sizes and size check, written once for both its real task program
// (program.cpp) and its simulator graph (graph.cpp). The catalog
// (apps/catalog.hpp) lists it as "jacobi".
#pragma once

#include <cstddef>

#include "apps/common/app_entry_points.hpp"

namespace numaware::apps::jacobi {

// Unit tests and emulated machines.
inline constexpr AppSize test_size{256, 32, 4};
// The benchmark driver's --bench-size: the original study's inputs scaled to this machine.
inline constexpr AppSize bench_size{4096, 128, 20};
// The simulator's large size: 512 row blocks of 4 MiB per sweep.
inline constexpr AppSize sim_size{16384, 32, 20};

// The entry points every application declares (apps/common/app_entry_points.hpp).
AppSize checked_size(const AppSize& given, std::size_t page_bytes);
AppRun run(tasks::Runtime& rt, const AppSize& size);
void build_graph(GraphBuilder& builder, const AppSize& size);

}  // namespace numaware::apps::jacobi
