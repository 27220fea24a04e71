// Guest test: the stencil skeleton puts each rank's block of the grid on
// the node whose memory serves the rank, in every emulated machine the
// guest tests boot, including one with a node that has CPUs and no memory
// (a rank there gets the nearest node with memory, where the kernel puts
// that CPU's own first touches). The page nodes are the kernel's
// (move_pages through the skeleton's own query and, independently, through
// the os layer on each rank's block); the expected node comes from the
// machine model (Machine::memory_node_near).
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "numaware/machine.hpp"
#include "numaware/stencil.hpp"
#include "numaware/team.hpp"

namespace numaware {
namespace {

class StencilGuest : public ::testing::TestWithParam<stencil::PagePlacement> {};

TEST_P(StencilGuest, EveryRanksBlockIsOnTheNodeServingTheRank) {
    const Machine machine = Machine::from_live();
    const unsigned k = static_cast<unsigned>(machine.nodes_with_cpus().size());
    ASSERT_GE(k, 2u);
    Team team{machine, {.threads = k, .kind = MappingKind::scatter}};
    // 512 rows of 4 KiB: every rank's block is many whole pages.
    const stencil::Shape shape = stencil::Shape::d2(512, 512);
    stencil::Options options;
    options.placement = GetParam();
    stencil::Skeleton sk(team, shape, stencil::Neighbourhood::star(2), [](std::size_t x, std::size_t y, std::size_t) {
        return static_cast<double>(x + y);
    }, options);

    const stencil::PlacementReport& placed = sk.placement();
    ASSERT_TRUE(placed.verified);
    EXPECT_EQ(placed.pages_as_intended + placed.pages_unknown, placed.pages) << placed.summary;

    const std::vector<int> nodes = sk.page_nodes();
    const stencil::Layout& layout = sk.layout();
    const std::size_t slab_bytes = layout.slab_stride * sizeof(double);
    for (unsigned r = 0; r < team.size(); ++r) {
        const unsigned cpu_node = team.layout().ranks[r].node;
        const unsigned want = machine.memory_node_near(cpu_node);
        const stencil::Block owned = sk.partition().owned[r];
        std::size_t on = 0, total = 0;
        for (std::size_t p = owned.lo * slab_bytes / layout.page_size; p < owned.hi * slab_bytes / layout.page_size;
             ++p) {
            ++total;
            if (nodes[p] == static_cast<int>(want)) ++on;
        }
        EXPECT_GT(total, 0u) << "rank " << r;
        EXPECT_EQ(on, total) << "rank " << r << " on node " << cpu_node << ": " << on << " of " << total
                             << " block pages on node " << want;
    }

    // The sweeps run and leave the grid as a serial run would (Jacobi of a
    // linear field keeps it linear in the interior).
    const stencil::Report rep = sk.jacobi(2, [](const stencil::Access& a) {
        return 0.25 * (a(-1, 0) + a(1, 0) + a(0, -1) + a(0, 1));
    });
    EXPECT_EQ(rep.sweeps, 2u);
    EXPECT_DOUBLE_EQ(sk.at(100, 200), 300.0);
}

INSTANTIATE_TEST_SUITE_P(Placements, StencilGuest,
                         ::testing::Values(stencil::PagePlacement::stencil_aware,
                                           stencil::PagePlacement::parallel_first_touch),
                         [](const ::testing::TestParamInfo<stencil::PagePlacement>& p) {
                             std::string name(stencil::to_string(p.param));
                             for (char& c : name)
                                 if (c == '-') c = '_';
                             return name;
                         });

}  // namespace
}  // namespace numaware
