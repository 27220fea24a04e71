// sim/memory/page_plans.cpp — locality and balance page plans.
#include "sim/memory/page_plans.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/core.h>

#include "numaware/error.hpp"

namespace numaware::sim::memory::detail {

namespace {

unsigned dominant(const PageProfile& p, std::size_t i) {
    unsigned best = 0;
    for (unsigned n = 1; n < p.nodes; ++n)
        if (p.count(i, n) > p.count(i, best)) best = n;
    return best;
}

void check(const PageProfile& p) {
    if (p.nodes == 0 || p.counts.size() != p.pages.size() * p.nodes)
        throw Error("profile", fmt::format("{} counts for {} pages on {} nodes", p.counts.size(), p.pages.size(),
                                           p.nodes));
}

}  // namespace

PagePlan plan_locality(const PageProfile& profile) {
    check(profile);
    PagePlan plan;
    plan.reserve(profile.pages.size());
    for (std::size_t i = 0; i < profile.pages.size(); ++i) plan.emplace_back(profile.pages[i], dominant(profile, i));
    return plan;
}

PagePlan plan_balance(const PageProfile& profile, const std::vector<unsigned>& team) {
    check(profile);
    if (team.empty()) throw Error("team", "a balance plan needs at least one node");
    for (unsigned n : team)
        if (n >= profile.nodes) throw Error("team", fmt::format("node {}: the profile has nodes 0..{}", n, profile.nodes - 1));
    const std::size_t pages = profile.pages.size();
    std::vector<std::uint64_t> total(pages, 0);
    for (std::size_t i = 0; i < pages; ++i)
        for (unsigned n = 0; n < profile.nodes; ++n) total[i] += profile.count(i, n);
    const std::uint64_t all = std::accumulate(total.begin(), total.end(), std::uint64_t{0});
    const double share = static_cast<double>(all) / static_cast<double>(team.size());
    std::vector<std::size_t> order(pages);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return total[a] > total[b]; });
    std::vector<std::uint64_t> load(profile.nodes, 0);
    PagePlan plan;
    plan.reserve(pages);
    for (std::size_t i : order) {
        unsigned node = dominant(profile, i);
        const bool in_team = std::find(team.begin(), team.end(), node) != team.end();
        if (!in_team || static_cast<double>(load[node] + total[i]) > share) {
            node = team.front();
            for (unsigned n : team)
                if (load[n] < load[node]) node = n;
        }
        load[node] += total[i];
        plan.emplace_back(profile.pages[i], node);
    }
    return plan;
}

}  // namespace numaware::sim::memory::detail
