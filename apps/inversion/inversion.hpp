// apps/inversion/inversion.hpp — SPD matrix inversion through tiled Cholesky:
// its sizes and size check, written once for both its real task program
// (program.cpp) and its simulator graph (graph.cpp). The catalog
// (apps/catalog.hpp) lists it as "inversion".
#pragma once

#include <cstddef>

#include "apps/common/app_entry_points.hpp"

namespace numaware::apps::inversion {

// Unit tests and emulated machines.
inline constexpr AppSize test_size{128, 32, 1};
// The benchmark driver's --bench-size: the original study's inputs scaled to this machine.
inline constexpr AppSize bench_size{2048, 128, 1};
// The simulator's large size: 64 x 64 tiles of 128 x 128 (2080 lower tiles).
inline constexpr AppSize sim_size{8192, 128, 1};

// The entry points every application declares (apps/common/app_entry_points.hpp).
AppSize checked_size(const AppSize& given, std::size_t page_bytes);
AppRun run(tasks::Runtime& rt, const AppSize& size);
void build_graph(GraphBuilder& builder, const AppSize& size);

}  // namespace numaware::apps::inversion
