// apps/integral_histogram/integral_histogram.hpp — integral histogram,
// cross-weave scan: its sizes and size check, written once for both its real
// task program (program.cpp) and its simulator graph (graph.cpp). The catalog
// (apps/catalog.hpp) lists it as "integral-histogram".
#pragma once

#include <cstddef>

#include "apps/common/app_entry_points.hpp"

namespace numaware::apps::integral_histogram {

// Unit tests and emulated machines.
inline constexpr AppSize test_size{128, 32, 8};
// The benchmark driver's --bench-size: the original study's inputs scaled to this machine.
inline constexpr AppSize bench_size{2048, 64, 16};
// The simulator's large size: 256 x 256 tiles of 32 x 32 pixels, 16 bins (64 KiB per histogram tile):
// the row and column scans are chains of 256 tiles, so the tile count must
// be large for the weave to keep hundreds of cores busy.
inline constexpr AppSize sim_size{8192, 32, 16};

// The entry points every application declares (apps/common/app_entry_points.hpp).
AppSize checked_size(const AppSize& given, std::size_t page_bytes);
AppRun run(tasks::Runtime& rt, const AppSize& size);
void build_graph(GraphBuilder& builder, const AppSize& size);

}  // namespace numaware::apps::integral_histogram
