// apps/catalog.hpp — the applications of the task runtime, by name.
//
// Each application lives in its own folder, apps/<name>/: its real task
// program (program.cpp), which builds its graph through the public task
// API (numaware/tasks.hpp) and checks its result against a plain serial
// implementation of the same computation; its simulator graph builder
// (graph.cpp), which emits the same tasks, regions and hints without bodies
// or memory so graphs of millions of tasks are cheap; and its sizes and
// size checks (<name>.hpp, size.cpp), written once for both. This catalog
// is how tests, benchmarks, the benchmark driver and `numaware sim tasks`
// find them. None of it is part of the installed libnumaware.
//
// Two libraries: this catalog, the sizes and the graph builders
// (numaware_app_graphs, no BLAS: the simulator tools link only it), and
// the real programs with their references (numaware_apps, with OpenBLAS
// and LAPACKE; run them through apps/programs.hpp).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "apps/common/app_size.hpp"
#include "apps/common/graph_builder.hpp"
#include "numaware/machine.hpp"
#include "numaware/sim.hpp"

namespace numaware::apps {

struct App {
    std::string_view name;         // "jacobi", "gauss-seidel", "red-black", "nstream", "cg",
                                   // "integral-histogram", "qr", "inversion"
    std::string_view description;  // one line
    AppSize test_size;             // small: unit tests and emulated machines
    AppSize bench_size;            // the original study's inputs scaled to this machine
    AppSize sim_size;              // large: the simulator's published-direction runs
    // `given` with 0 fields replaced by test_size and checked against the
    // app's size rules for pages of `page_bytes`; Error naming the field.
    AppSize (*checked_size)(const AppSize& given, std::size_t page_bytes);
    // Emits the program's graph; use build_graph() below.
    void (*emit_graph)(GraphBuilder& builder, const AppSize& size);
};

// Every application, in the order above.
std::span<const App> all_apps();
// Their names, in the same order.
std::span<const std::string_view> app_names();
// Throws Error("app", ...) listing the names for an unknown one.
const App& find_app(std::string_view name);

// The task graph of `app` at `size` for a run whose worker nodes are
// `nodes` (the hints refer to them, as Runtime::nodes() for the real
// program) on `machine`, whose page size the size checks use. Each task's
// compute time is its floating-point operations / compute.flops_per_s
// (docs/SIMULATOR.md states the assumption). Sets the graph's
// initial_tasks to sim::initial_part(graph). Throws Error("app") for an
// unknown name, Error("nodes") for none, Error("flops_per_s") for a rate
// that is not positive and finite, Error("shape") for a graph past the
// builders' limits, and the app's own size errors (the same checks and
// messages as the real program).
sim::Graph build_graph(std::string_view app, const AppSize& size, const Machine& machine,
                       std::span<const unsigned> nodes, const ComputeModel& compute = {});

// The text forms the tools share, each throwing Error(field, ...) that
// quotes the text and names what is accepted:
//   parse_app_list:    "all" or a comma list of app names (duplicates dropped);
//   parse_policy_list: "all" or a comma list of tasks::policy_names();
//   parse_app_size:    "test", "sim" or "N,BLOCK,ITERATIONS" (positive
//                      integers, at most 1000000 iterations) for `app`.
std::vector<std::string> parse_app_list(std::string_view text, std::string_view field = "app");
std::vector<std::string> parse_policy_list(std::string_view text, std::string_view field = "policy");
AppSize parse_app_size(std::string_view text, std::string_view app, std::string_view field = "size");

}  // namespace numaware::apps
