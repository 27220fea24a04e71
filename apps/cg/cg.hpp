// apps/cg/cg.hpp — conjugate gradient on the 3-D 7-point Poisson problem: its
// sizes and size check, written once for both its real task program
// (program.cpp) and its simulator graph (graph.cpp). The catalog
// (apps/catalog.hpp) lists it as "cg".
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

// `given` with 0 fields replaced by test_size, checked against the app's
// size rules with blocks of whole `page_bytes` pages; Error naming the
// field (n, block, iterations) otherwise.
AppSize checked_size(const AppSize& given, std::size_t page_bytes);

// Runs the task program on `rt` (ends with rt.barrier()) and the serial
// reference, and compares them (program.cpp).
AppRun run(tasks::Runtime& rt, const AppSize& size);

// Emits the program's task graph into `builder` (graph.cpp).
void build_graph(GraphBuilder& builder, const AppSize& size);

}  // namespace numaware::apps::cg
