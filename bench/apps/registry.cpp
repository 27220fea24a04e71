// bench/apps/registry.cpp — the list of applications.
#include <array>
#include <string>

#include "apps.hpp"
#include "numaware/error.hpp"

namespace numaware::apps {

std::span<const App> all_apps() {
    static const std::array<App, 8> apps{make_jacobi_app(),   make_gauss_seidel_app(),
                                         make_red_black_app(), make_nstream_app(),
                                         make_cg_app(),       make_integral_histogram_app(),
                                         make_qr_app(),       make_inversion_app()};
    return apps;
}

const App& find_app(std::string_view name) {
    std::string known;
    for (const App& app : all_apps()) {
        if (app.name == name) return app;
        if (!known.empty()) known += ", ";
        known += app.name;
    }
    throw Error("app", "unknown application '" + std::string(name) + "'; known: " + known);
}

}  // namespace numaware::apps
