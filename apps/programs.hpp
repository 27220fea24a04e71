// apps/programs.hpp — the real task programs of the catalog's applications.
//
// Each one runs on a task runtime through the public API
// (numaware/tasks.hpp) and is checked against its serial reference. They
// live in numaware_apps, with OpenBLAS and LAPACKE (the tiled QR and
// inversion kernels); the catalog and the graph builders do not, so a tool
// that only simulates loads no BLAS.
#pragma once

#include "apps/catalog.hpp"
#include "apps/common/task_program.hpp"
#include "numaware/tasks.hpp"

namespace numaware::apps {

// Runs `app`'s real program on `rt` at `size` (ends with rt.barrier()) and
// its serial reference, and compares them. Throws Error naming the field
// for a bad size, as the app's checked_size() does.
AppRun run_app(const App& app, tasks::Runtime& rt, const AppSize& size);

}  // namespace numaware::apps
