// apps/integral_histogram/integral_histogram.hpp — integral histogram,
// cross-weave scan: its sizes and size check, written once for both its real
// task program (program.cpp) and its simulator graph (graph.cpp). The catalog
// (apps/catalog.hpp) lists it as "integral-histogram".
#pragma once

#include <cstddef>

#include "apps/common/app_size.hpp"

namespace numaware::tasks {
class Runtime;
}

namespace numaware::apps {
struct AppRun;
struct GraphBuilder;
}

namespace numaware::apps::integral_histogram {

// Unit tests and emulated machines.
inline constexpr AppSize test_size{128, 32, 8};
// The benchmark driver's --bench-size: the original study's inputs scaled to this machine.
inline constexpr AppSize bench_size{2048, 64, 16};
// The simulator's large size: 256 x 256 tiles of 32 x 32 pixels, 16 bins (64 KiB per histogram tile):
// the row and column scans are chains of 256 tiles, so the tile count must
// be large for the weave to keep hundreds of cores busy.
inline constexpr AppSize sim_size{8192, 32, 16};

// `given` with 0 fields replaced by test_size, checked against the app's
// size rules with blocks of whole `page_bytes` pages; Error naming the
// field (n, block, iterations) otherwise.
AppSize checked_size(const AppSize& given, std::size_t page_bytes);

// Runs the task program on `rt` (ends with rt.barrier()) and the serial
// reference, and compares them (program.cpp).
AppRun run(tasks::Runtime& rt, const AppSize& size);

// Emits the program's task graph into `builder` (graph.cpp).
void build_graph(GraphBuilder& builder, const AppSize& size);

}  // namespace numaware::apps::integral_histogram
