// skeletons/names.cpp — the names of the skeleton's kinds, placement modes
// and work distributions, both ways, with errors that list what is accepted.
#include <array>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "numaware/error.hpp"
#include "numaware/stencil.hpp"

namespace numaware::stencil {

// =====================================================================
// Names
// =====================================================================

namespace {
constexpr std::array<std::pair<Kind, std::string_view>, 6> kKinds{{{Kind::jacobi, "jacobi"},
                                                                   {Kind::gauss_seidel, "gauss-seidel"},
                                                                   {Kind::red_black, "red-black"},
                                                                   {Kind::variable, "variable"},
                                                                   {Kind::multigrid, "multigrid"},
                                                                   {Kind::butterfly, "butterfly"}}};
constexpr std::array<std::pair<PagePlacement, std::string_view>, 5> kPlacements{
    {{PagePlacement::serial_first_touch, "serial-first-touch"},
     {PagePlacement::parallel_first_touch, "parallel-first-touch"},
     {PagePlacement::interleave, "interleave"},
     {PagePlacement::stencil_aware, "stencil-aware"},
     {PagePlacement::explicit_plan, "explicit"}}};
constexpr std::array<std::pair<Distribution, std::string_view>, 4> kDistributions{
    {{Distribution::static_equal, "static"},
     {Distribution::dynamic, "dynamic"},
     {Distribution::guided, "guided"},
     {Distribution::numa_weighted, "numa-weighted"}}};

template <class E, std::size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& table, E value) {
    for (const auto& [v, name] : table)
        if (v == value) return name;
    return "unknown";
}

template <class E, std::size_t N>
E parse_name(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view text,
             std::string_view field, std::string_view what) {
    std::string accepted;
    for (const auto& [v, name] : table) {
        if (name == text) return v;
        accepted += (accepted.empty() ? "" : ", ") + std::string(name);
    }
    throw Error(std::string(field), fmt::format("'{}' is not a {}; accepted: {}", text, what, accepted));
}
}  // namespace

std::string_view to_string(Kind kind) { return name_of(kKinds, kind); }
std::string_view to_string(PagePlacement placement) { return name_of(kPlacements, placement); }
std::string_view to_string(Distribution distribution) { return name_of(kDistributions, distribution); }

Kind parse_kind(std::string_view text, std::string_view field) {
    return parse_name(kKinds, text, field, "stencil kind");
}
PagePlacement parse_placement(std::string_view text, std::string_view field) {
    return parse_name(kPlacements, text, field, "placement mode");
}
Distribution parse_distribution(std::string_view text, std::string_view field) {
    return parse_name(kDistributions, text, field, "work distribution");
}
}  // namespace numaware::stencil
