// src/sim/apps/registry.cpp — the list of application graph builders and
// the helpers they share (builders.hpp).
#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "numaware/error.hpp"
#include "numaware/sim.hpp"
#include "os/os.hpp"
#include "sim/apps/builders.hpp"

namespace numaware::sim {
namespace app_builders {

int Context::owner(std::size_t block, std::size_t blocks) const {
    if (blocks == 0) return static_cast<int>(nodes.front());
    const std::size_t b = std::min(block, blocks - 1);
    return static_cast<int>(nodes[b * nodes.size() / blocks]);
}

AppShape resolve(const AppShape& given, const AppShape& defaults) {
    AppShape s = given;
    if (s.n == 0) s.n = defaults.n;
    if (s.block == 0) s.block = defaults.block;
    if (s.iterations == 0) s.iterations = defaults.iterations;
    return s;
}

std::size_t page_size() { return os::linux_os().page_size(); }

void require_page_multiple(std::size_t bytes, std::string_view field, std::string_view what) {
    const std::size_t page = page_size();
    if (bytes == 0 || bytes % page != 0) {
        throw Error(std::string(field), std::string(what) + " is " + std::to_string(bytes) +
                                            " bytes, must be a positive multiple of the page size " +
                                            std::to_string(page));
    }
}

void check_tiled_size(const AppShape& size, std::size_t max_n) {
    if (size.n < 1 || size.n > max_n) {
        throw Error("n", fmt::format("matrix order must be in [1, {}], got {}", max_n, size.n));
    }
    if (size.block < 1 || size.block > size.n || size.n % size.block != 0) {
        throw Error("block", fmt::format("tile side must divide the matrix order {}, got {}", size.n, size.block));
    }
}

void reserve(Context& ctx, std::uint64_t tasks, std::uint64_t deps, std::uint64_t regions) {
    if (tasks > max_tasks || deps > max_deps) {
        throw Error("shape", fmt::format("the graph would have {} tasks and {} dependencies; the simulator's "
                                         "builders accept at most {} tasks and {} dependencies",
                                         tasks, deps, max_tasks, max_deps));
    }
    ctx.graph.reserve(static_cast<std::size_t>(tasks), static_cast<std::size_t>(deps),
                      static_cast<std::size_t>(regions));
}

std::string graph_name(std::string_view app, const AppShape& shape) {
    return fmt::format("{} n={} block={} iterations={}", app, shape.n, shape.block, shape.iterations);
}

}  // namespace app_builders

namespace {

using app_builders::Context;

struct Entry {
    std::string_view name;
    void (*build)(Context&, const AppShape&);
    const AppShape* test;
    const AppShape* sim;
};

const std::array<Entry, 8>& entries() {
    namespace ab = app_builders;
    static const std::array<Entry, 8> table{{
        {"jacobi", ab::build_jacobi, &ab::jacobi_test, &ab::jacobi_sim},
        {"gauss-seidel", ab::build_gauss_seidel, &ab::gauss_seidel_test, &ab::gauss_seidel_sim},
        {"red-black", ab::build_red_black, &ab::red_black_test, &ab::red_black_sim},
        {"nstream", ab::build_nstream, &ab::nstream_test, &ab::nstream_sim},
        {"cg", ab::build_cg, &ab::cg_test, &ab::cg_sim},
        {"integral-histogram", ab::build_integral_histogram, &ab::integral_histogram_test,
         &ab::integral_histogram_sim},
        {"qr", ab::build_qr, &ab::qr_test, &ab::qr_sim},
        {"inversion", ab::build_inversion, &ab::inversion_test, &ab::inversion_sim},
    }};
    return table;
}

const Entry& find(std::string_view app) {
    std::string known;
    for (const Entry& e : entries()) {
        if (e.name == app) return e;
        if (!known.empty()) known += ", ";
        known += e.name;
    }
    throw Error("app", "unknown application '" + std::string(app) + "'; known: " + known);
}

}  // namespace

std::span<const std::string_view> app_names() {
    static const std::array<std::string_view, 8> names = [] {
        std::array<std::string_view, 8> out{};
        for (std::size_t i = 0; i < out.size(); ++i) out[i] = entries()[i].name;
        return out;
    }();
    return names;
}

Graph build_app(std::string_view app, const AppShape& shape, std::span<const unsigned> nodes,
                const ComputeModel& compute) {
    const Entry& entry = find(app);
    if (nodes.empty()) throw Error("nodes", "the builder needs at least one worker node for the hints, got none");
    if (!(compute.flops_per_s > 0) || !std::isfinite(compute.flops_per_s)) {
        throw Error("flops_per_s", fmt::format("must be positive and finite, got {}", compute.flops_per_s));
    }
    Context ctx;
    ctx.nodes = nodes;
    ctx.flops_per_s = compute.flops_per_s;
    entry.build(ctx, shape);
    ctx.graph.initial_tasks = initial_part(ctx.graph);
    return std::move(ctx.graph);
}

AppShape app_test_shape(std::string_view app) { return *find(app).test; }

AppShape app_sim_shape(std::string_view app) { return *find(app).sim; }

}  // namespace numaware::sim
