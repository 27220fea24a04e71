// sim/memory/page_plans.hpp — the profile-based page mappings of the
// memory-hierarchy simulator ("locality" and "balance"), as pure
// decisions: a profile of accesses per page and node in, a home per page
// out. run_workload collects the profile and places the pages.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace numaware::sim::memory::detail {

// Accesses to each page by the threads of each node position.
struct PageProfile {
    unsigned nodes = 0;
    std::vector<std::uint64_t> pages;    // page numbers, in first-seen order
    std::vector<std::uint64_t> counts;   // [i × nodes + n]: accesses to pages[i] from node n
    std::uint64_t count(std::size_t i, unsigned n) const { return counts[i * nodes + n]; }
};

using PagePlan = std::vector<std::pair<std::uint64_t, unsigned>>;   // (page, node position)

// Each page on the node whose threads access it most (the lowest node
// position on a tie).
PagePlan plan_locality(const PageProfile& profile);

// Each page on its locality node unless that node would then hold more
// than its share of the accesses (the total over the nodes in `team`,
// divided evenly); then on the team node with the fewest accesses so far
// (the lowest position on a tie). Pages go in descending order of their
// accesses (ties: first seen first), so the hottest keep their locality
// node. Our rule: the published "balance" mapping is profile-based too,
// but its exact rule is not stated in the sources we used.
PagePlan plan_balance(const PageProfile& profile, const std::vector<unsigned>& team);

}  // namespace numaware::sim::memory::detail
