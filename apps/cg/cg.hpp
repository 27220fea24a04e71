// apps/cg/cg.hpp — conjugate gradient on the 3-D 7-point Poisson problem: its
// sizes and size check, written once for both its real task program
// (program.cpp) and its simulator graph (graph.cpp). The catalog
// (apps/catalog.hpp) lists it as "cg".
#pragma once

#include <cstddef>

#include "apps/common/app_entry_points.hpp"

namespace numaware::apps::cg {

// Unit tests and emulated machines.
inline constexpr AppSize test_size{16, 4, 10};
// The benchmark driver's --bench-size: the original study's inputs scaled to this machine.
inline constexpr AppSize bench_size{128, 8, 100};
// The simulator's large size: 512 row blocks of one 2 MiB plane per vector.
inline constexpr AppSize sim_size{512, 1, 50};

// Scalars and per-block partial sums are one double each, `scalar_stride`
// doubles (a cache line) apart so reductions do not false-share.
inline constexpr std::size_t scalar_stride = 8;

// The entry points every application declares (apps/common/app_entry_points.hpp).
AppSize checked_size(const AppSize& given, std::size_t page_bytes);
AppRun run(tasks::Runtime& rt, const AppSize& size);
void build_graph(GraphBuilder& builder, const AppSize& size);

}  // namespace numaware::apps::cg
