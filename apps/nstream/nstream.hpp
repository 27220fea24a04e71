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
// The simulator's large size: 7 streams x 256 blocks of 512 KiB per array,
// 1792 independent triads per repetition.
inline constexpr AppSize sim_size{std::size_t{1} << 24, 65536, 20};

// Independent streams, each with its own arrays a, b and c. A prime that
// divides neither a power of two nor the bullion model's 18 cores per
// socket, so that the streams x blocks chains of a repetition are not a
// multiple of the usual worker counts: where they are, DFIFO's round robin
// (task t on worker t mod W) runs every chain on one worker for the whole
// run, an owner-computes schedule by accident, and the locality-unaware
// baseline is local (issue 13, "an honest baseline"). With 8 streams and 8
// workers DFIFO moved no byte across nodes in the emulated 4-node guest;
// with 9 streams x 256 blocks every bullion cut (72, 144, 288 workers) was
// aligned and DFIFO ÷ DEP fell from 1.62 to 1.43 at 16 sockets, simulated.
inline constexpr std::size_t streams = 7;

// The entry points every application declares (apps/common/app_entry_points.hpp).
AppSize checked_size(const AppSize& given, std::size_t page_bytes);
AppRun run(tasks::Runtime& rt, const AppSize& size);
void build_graph(GraphBuilder& builder, const AppSize& size);

}  // namespace numaware::apps::nstream
