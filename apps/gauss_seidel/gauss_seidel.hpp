// apps/gauss_seidel/gauss_seidel.hpp — 2-D 5-point Gauss-Seidel in place,
// tiled wavefront: its sizes and size check, written once for both its real
// task program (program.cpp) and its simulator graph (graph.cpp). The catalog
// (apps/catalog.hpp) lists it as "gauss-seidel".
#pragma once

#include <cstddef>

#include "apps/common/app_entry_points.hpp"

namespace numaware::apps::gauss_seidel {

// Unit tests and emulated machines.
inline constexpr AppSize test_size{256, 32, 3};
// The benchmark driver's --bench-size: the original study's inputs scaled to this machine.
inline constexpr AppSize bench_size{4096, 128, 10};
// The simulator's large size: 128 x 128 tiles of 128 KiB; consecutive
// sweeps overlap in the wavefront.
inline constexpr AppSize sim_size{16384, 128, 10};

// The entry points every application declares (apps/common/app_entry_points.hpp).
AppSize checked_size(const AppSize& given, std::size_t page_bytes);
AppRun run(tasks::Runtime& rt, const AppSize& size);
void build_graph(GraphBuilder& builder, const AppSize& size);

}  // namespace numaware::apps::gauss_seidel
