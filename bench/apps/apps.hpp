// bench/apps/apps.hpp — applications of the task runtime.
//
// Each application builds its task graph through the public API
// (numaware/tasks.hpp) and checks its result against a plain serial
// implementation of the same computation. They are the inputs of the
// locality proof (emulated machines), of the overhead benchmarks and,
// later, of the task-level simulator.
//
// Memory: an application allocates its arrays page-aligned and untouched
// (anonymous mappings), and initialises them in tasks with `out`
// dependencies, so the policy under test decides where pages land by first
// touch. Every block that is a dependency is page-aligned and a whole
// number of pages long, so its home is one node.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "numaware/tasks.hpp"

namespace numaware::apps {

// The size of a run. The meaning of each field is documented per app;
// 0 means the app's default for that field.
struct AppSize {
    std::size_t n = 0;           // problem size (e.g. grid side, matrix order, array length)
    std::size_t block = 0;       // block / tile size
    unsigned iterations = 0;     // sweeps, solver iterations, repetitions
};

struct AppRun {
    double seconds = 0;          // wall time of the tasked computation (init to last taskwait)
    double max_error = 0;        // largest |tasked - serial| (or relative residual, documented per app)
    bool matches = false;        // max_error within the app's documented tolerance
    std::size_t tasks = 0;       // tasks spawned
    std::string detail;          // one line: sizes, tolerance
};

struct App {
    std::string_view name;         // "jacobi", "gauss-seidel", "red-black", "nstream", "cg",
                                   // "integral-histogram", "qr", "inversion"
    std::string_view description;  // one line
    AppSize test_size;             // small: unit tests and emulated machines
    AppSize bench_size;            // the original study's inputs scaled to this machine
    // Runs the app on `rt` (ends with rt.barrier()) and the serial
    // reference, and compares. Throws Error naming the field for a bad size.
    std::function<AppRun(tasks::Runtime& rt, const AppSize& size)> run;
};

// One factory per application (one app_<name>.cpp each); registry.cpp
// collects them.
App make_jacobi_app();
App make_gauss_seidel_app();
App make_red_black_app();
App make_nstream_app();
App make_cg_app();
App make_integral_histogram_app();
App make_qr_app();
App make_inversion_app();

// Every application, in the order above.
std::span<const App> all_apps();
// Throws Error("app", ...) listing the names for an unknown one.
const App& find_app(std::string_view name);

}  // namespace numaware::apps
