// apps/nstream/nstream.hpp — independent streams of a += b + 3*c triads: its
// sizes and size check, written once for both its real task program
// (program.cpp) and its simulator graph (graph.cpp). The catalog
// (apps/catalog.hpp) lists it as "nstream".
#pragma once

#include <cstddef>

#include "apps/common/app_entry_points.hpp"

namespace numaware::apps::nstream {

// Unit tests and emulated machines.
inline constexpr AppSize test_size{16384, 2048, 4};
// The benchmark driver's --bench-size: the original study's inputs scaled to this machine.
inline constexpr AppSize bench_size{std::size_t{1} << 20, 65536, 20};
// The simulator's large size: 8 streams x 256 blocks of 512 KiB per array,
// 2048 independent triads per repetition.
inline constexpr AppSize sim_size{std::size_t{1} << 24, 65536, 20};

// Independent streams, each with its own arrays a, b and c.
inline constexpr std::size_t streams = 8;

// The entry points every application declares (apps/common/app_entry_points.hpp).
AppSize checked_size(const AppSize& given, std::size_t page_bytes);
AppRun run(tasks::Runtime& rt, const AppSize& size);
void build_graph(GraphBuilder& builder, const AppSize& size);

}  // namespace numaware::apps::nstream
