// src/sim/apps/registry.cpp — the list of application graph builders and
// the helpers they share (builders.hpp).
#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include <charconv>
#include <system_error>
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
    AppShape (*check)(const AppShape&);
    const AppShape* test;
    const AppShape* sim;
};

const std::array<Entry, 8>& entries() {
    namespace ab = app_builders;
    static const std::array<Entry, 8> table{{
        {"jacobi", ab::build_jacobi, ab::check_jacobi, &ab::jacobi_test, &ab::jacobi_sim},
        {"gauss-seidel", ab::build_gauss_seidel, ab::check_gauss_seidel, &ab::gauss_seidel_test, &ab::gauss_seidel_sim},
        {"red-black", ab::build_red_black, ab::check_red_black, &ab::red_black_test, &ab::red_black_sim},
        {"nstream", ab::build_nstream, ab::check_nstream, &ab::nstream_test, &ab::nstream_sim},
        {"cg", ab::build_cg, ab::check_cg, &ab::cg_test, &ab::cg_sim},
        {"integral-histogram", ab::build_integral_histogram, ab::check_integral_histogram, &ab::integral_histogram_test,
         &ab::integral_histogram_sim},
        {"qr", ab::build_qr, ab::check_qr, &ab::qr_test, &ab::qr_sim},
        {"inversion", ab::build_inversion, ab::check_inversion, &ab::inversion_test, &ab::inversion_sim},
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

namespace {

std::vector<std::string> split_list(std::string_view text, std::string_view field) {
    std::vector<std::string> out;
    std::size_t begin = 0;
    for (;;) {
        const std::size_t comma = text.find(',', begin);
        const std::string_view item = text.substr(begin, comma == std::string_view::npos ? std::string_view::npos : comma - begin);
        if (item.empty()) throw Error(std::string(field), fmt::format("empty item in the list '{}'", text));
        out.emplace_back(item);
        if (comma == std::string_view::npos) return out;
        begin = comma + 1;
    }
}

template <class Names>
std::vector<std::string> pick(std::string_view text, const Names& names, std::string_view field, std::string_view what) {
    std::vector<std::string> out;
    std::string known;
    for (std::string_view n : names) known += (known.empty() ? "" : ", ") + std::string(n);
    if (text == "all") {
        for (std::string_view n : names) out.emplace_back(n);
        return out;
    }
    for (const std::string& item : split_list(text, field)) {
        if (std::find(names.begin(), names.end(), item) == names.end())
            throw Error(std::string(field), fmt::format("unknown {} '{}'; one of {} or all", what, item, known));
        if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
    }
    return out;
}

}  // namespace

std::vector<std::string> parse_app_list(std::string_view text, std::string_view field) {
    return pick(text, app_names(), field, "application");
}

std::vector<std::string> parse_policy_list(std::string_view text, std::string_view field) {
    return pick(text, tasks::policy_names(), field, "policy");
}

AppShape parse_app_shape(std::string_view text, std::string_view app, std::string_view field) {
    if (text == "test") return app_test_shape(app);
    if (text == "sim") return app_sim_shape(app);
    const std::string expected =
        fmt::format("expected test, sim or N,BLOCK,ITERATIONS (positive integers), got '{}'", text);
    const std::vector<std::string> parts = split_list(text, field);
    if (parts.size() != 3) throw Error(std::string(field), expected);
    std::uint64_t v[3] = {0, 0, 0};
    for (std::size_t i = 0; i < 3; ++i) {
        const std::string& p = parts[i];
        const auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), v[i]);
        if (ec != std::errc() || end != p.data() + p.size() || v[i] == 0) throw Error(std::string(field), expected);
    }
    if (v[2] > 1000000) throw Error(std::string(field), fmt::format("at most 1000000 iterations, got {}", v[2]));
    (void)find(app);   // Error("app") for an unknown one
    return AppShape{static_cast<std::size_t>(v[0]), static_cast<std::size_t>(v[1]), static_cast<unsigned>(v[2])};
}

AppShape check_app_shape(std::string_view app, const AppShape& shape) { return find(app).check(shape); }

AppShape app_test_shape(std::string_view app) { return *find(app).test; }

AppShape app_sim_shape(std::string_view app) { return *find(app).sim; }

}  // namespace numaware::sim
