// apps/catalog.cpp — the applications by name, their graphs for the
// simulator, and the text forms the tools use to pick them.
#include "apps/catalog.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <string>
#include <system_error>

#include <fmt/format.h>

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

const std::array<App, 8>& catalog() {
    static const std::array<App, 8> list{{
        {"jacobi", "2-D 5-point Jacobi, double-buffered, row blocks of whole pages", jacobi::test_size,
         jacobi::bench_size, jacobi::sim_size, jacobi::checked_size, jacobi::build_graph},
        {"gauss-seidel", "2-D 5-point Gauss-Seidel in place, tile-major tiled wavefront", gauss_seidel::test_size,
         gauss_seidel::bench_size, gauss_seidel::sim_size, gauss_seidel::checked_size,
         gauss_seidel::build_graph},
        {"red-black", "2-D 5-point red-black Gauss-Seidel, colours stored apart, row blocks", red_black::test_size,
         red_black::bench_size, red_black::sim_size, red_black::checked_size, red_black::build_graph},
        {"nstream", "7 independent streams of a += b + 3*c triads over page-aligned blocks", nstream::test_size,
         nstream::bench_size, nstream::sim_size, nstream::checked_size, nstream::build_graph},
        {"cg", "conjugate gradient, 3-D 7-point Poisson, row blocks of z-planes", cg::test_size, cg::bench_size,
         cg::sim_size, cg::checked_size, cg::build_graph},
        {"integral-histogram", "integral histogram, cross-weave scan: row-prefix then column-prefix tasks per tile",
         integral_histogram::test_size, integral_histogram::bench_size, integral_histogram::sim_size,
         integral_histogram::checked_size, integral_histogram::build_graph},
        {"qr", "tiled QR factorisation (geqrt, tsqrt, unmqr, tsmqr tasks per tile)", qr::test_size, qr::bench_size,
         qr::sim_size, qr::checked_size, qr::build_graph},
        {"inversion", "SPD matrix inversion: tiled Cholesky, triangular inverse and product (potri)",
         inversion::test_size, inversion::bench_size, inversion::sim_size, inversion::checked_size,
         inversion::build_graph},
    }};
    return list;
}

}  // namespace

std::span<const App> all_apps() { return catalog(); }

std::span<const std::string_view> app_names() {
    static const std::array<std::string_view, 8> names = [] {
        std::array<std::string_view, 8> out{};
        for (std::size_t i = 0; i < out.size(); ++i) out[i] = catalog()[i].name;
        return out;
    }();
    return names;
}

const App& find_app(std::string_view name) {
    std::string known;
    for (const App& app : catalog()) {
        if (app.name == name) return app;
        if (!known.empty()) known += ", ";
        known += app.name;
    }
    throw Error("app", "unknown application '" + std::string(name) + "'; known: " + known);
}

sim::Graph build_graph(std::string_view app, const AppSize& size, const Machine& machine,
                       std::span<const unsigned> nodes, const ComputeModel& compute) {
    const App& entry = find_app(app);
    if (nodes.empty()) throw Error("nodes", "the builder needs at least one worker node for the hints, got none");
    if (!(compute.flops_per_s > 0) || !std::isfinite(compute.flops_per_s)) {
        throw Error("flops_per_s", fmt::format("must be positive and finite, got {}", compute.flops_per_s));
    }
    GraphBuilder builder;
    builder.nodes = nodes;
    builder.flops_per_s = compute.flops_per_s;
    builder.page_bytes = machine.page_bytes;
    entry.emit_graph(builder, size);
    builder.graph.initial_tasks = sim::initial_part(builder.graph);
    return std::move(builder.graph);
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

AppSize parse_app_size(std::string_view text, std::string_view app, std::string_view field) {
    if (text == "test") return find_app(app).test_size;
    if (text == "sim") return find_app(app).sim_size;
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
    (void)find_app(app);   // Error("app") for an unknown one
    return AppSize{static_cast<std::size_t>(v[0]), static_cast<std::size_t>(v[1]), static_cast<unsigned>(v[2])};
}

}  // namespace numaware::apps
