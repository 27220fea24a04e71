// apps/common/app_entry_points.hpp — what every application's header
// declares, in the application's own namespace (apps::jacobi, apps::cg, ...):
//
//   AppSize checked_size(const AppSize& given, std::size_t page_bytes);
//       `given` with 0 fields replaced by test_size, checked against the
//       app's size rules with blocks of whole `page_bytes` pages; Error
//       naming the field (n, block, iterations) otherwise (size.cpp).
//   AppRun run(tasks::Runtime& rt, const AppSize& size);
//       Runs the task program on `rt` (ends with rt.barrier()) and the
//       serial reference, and compares them (program.cpp).
//   void build_graph(GraphBuilder& builder, const AppSize& size);
//       Emits the program's task graph into `builder` (graph.cpp).
//
// The catalog (apps/catalog.hpp) lists each application by these three.
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
