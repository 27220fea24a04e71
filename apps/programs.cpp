// apps/programs.cpp — the catalog's applications to their real programs.
#include "apps/programs.hpp"

#include <array>
#include <string>
#include <utility>

#include "apps/cg/cg.hpp"
#include "apps/gauss_seidel/gauss_seidel.hpp"
#include "apps/integral_histogram/integral_histogram.hpp"
#include "apps/inversion/inversion.hpp"
#include "apps/jacobi/jacobi.hpp"
#include "apps/nstream/nstream.hpp"
#include "apps/qr/qr.hpp"
#include "apps/red_black/red_black.hpp"
#include "numaware/error.hpp"

namespace numaware::apps {

namespace {
using Program = AppRun (*)(tasks::Runtime& rt, const AppSize& size);

// By catalog name; every catalog entry has one (a unit test checks).
constexpr std::array<std::pair<std::string_view, Program>, 8> programs{{
    {"jacobi", jacobi::run},
    {"gauss-seidel", gauss_seidel::run},
    {"red-black", red_black::run},
    {"nstream", nstream::run},
    {"cg", cg::run},
    {"integral-histogram", integral_histogram::run},
    {"qr", qr::run},
    {"inversion", inversion::run},
}};
}  // namespace

AppRun run_app(const App& app, tasks::Runtime& rt, const AppSize& size) {
    for (const auto& [name, program] : programs)
        if (name == app.name) return program(rt, size);
    throw Error("app", "application '" + std::string(app.name) + "' has no real program in this build");
}

}  // namespace numaware::apps
