// src/tasks/policies/catalog.cpp — the built-in policies by name: make_policy() and policy_names().
#include <array>
#include <cmath>
#include <string>

#include "common.hpp"
#include "numaware/error.hpp"

namespace numaware::tasks {

namespace {
constexpr std::array<std::string_view, 6> names{"dfifo", "lq", "dep", "sa", "rip-dep", "rip-mw"};

// Scotch numbers vertices with a 32-bit SCOTCH_Num; keep windows well inside.
constexpr std::size_t max_window = std::size_t{1} << 24;

void check_options(std::string_view name, const PolicyOptions& o) {
    if (o.window == 0) throw Error("window", "must be at least 1, got 0");
    if (o.window > max_window)
        throw Error("window", "must be at most " + std::to_string(max_window) + ", got " + std::to_string(o.window));
    if (o.initial_extra > max_window)
        throw Error("initial_extra",
                    "must be at most " + std::to_string(max_window) + ", got " + std::to_string(o.initial_extra));
    if (name == "rip-mw" && o.intersection >= o.window)
        throw Error("intersection", "must be less than the window (" + std::to_string(o.window) + "), got " +
                                        std::to_string(o.intersection));
    if (o.steal_delay_tasks && !(*o.steal_delay_tasks >= 0.0 && *o.steal_delay_tasks <= 1e6))
        throw Error("steal_delay_tasks", "must be in [0, 1e6] mean task durations, got " +
                                             std::to_string(*o.steal_delay_tasks));
    if (!(o.imbalance >= 0.0 && o.imbalance < 1.0))
        throw Error("imbalance", "must be in [0, 1), got " + std::to_string(o.imbalance));
}
}  // namespace

std::unique_ptr<Policy> make_policy(std::string_view name, const PolicyOptions& options) {
    using namespace policy_detail;
    check_policy_name(name);
    check_options(name, options);
    if (name == "dfifo") return make_dfifo(options);
    if (name == "lq") return make_lq(options);
    if (name == "dep") return make_dep(options);
    if (name == "sa") return make_sa(options);
    return make_rip(name == "rip-mw", options);
}

std::span<const std::string_view> policy_names() { return names; }

void check_policy_name(std::string_view name, std::string_view field) {
    std::string list;
    for (auto n : names) {
        if (n == name) return;
        list += (list.empty() ? "" : ", ") + std::string(n);
    }
    throw Error(std::string(field), "unknown policy '" + std::string(name) + "'; expected one of " + list);
}

}  // namespace numaware::tasks
