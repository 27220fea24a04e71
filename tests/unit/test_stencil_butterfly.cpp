// Butterfly phases: a Walsh–Hadamard transform against a serial reference
// (bit-exact) under every placement mode on a synthetic two-node team with
// the recording fake kernel, the per-phase traffic rule, the remote bytes
// the report derives from real page locations, and the input errors.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "numaware/error.hpp"
#include "numaware/machine.hpp"
#include "numaware/placement.hpp"
#include "numaware/stencil.hpp"
#include "numaware/team.hpp"
#include "os/recording_os.hpp"
#include "support.hpp"

namespace numaware::stencil::detail {
// Defined in src/skeletons/butterfly.cpp: one rank's traffic in one phase.
Traffic butterfly_phase_traffic(std::size_t page_elems, Block block, unsigned node, unsigned phase,
                                std::span<const int> in_nodes, std::span<const int> out_nodes);
}  // namespace numaware::stencil::detail

namespace numaware::stencil {
namespace {

using test::expect_error;

constexpr const char* kTwoNodes = "nodes=2 cpus-per-node=1 mem-per-node=512M distances=10,21/21,10";

// Options for the fake kernel (built field by field: designated
// initializers would leave members without default initializers).
Options faked(os::RecordingOs& fake, PagePlacement mode = PagePlacement::stencil_aware) {
    Options o;
    o.placement = mode;
    o.os = &fake;
    return o;
}

double walsh(double self, double partner, std::size_t i, unsigned phase) {
    return ((i >> phase) & 1U) == 0 ? self + partner : partner - self;
}

double small_int(std::size_t i) { return static_cast<double>(static_cast<int>((i * 7 + 3) % 13) - 6); }

// The transform written as plain serial loops, the same operation per element.
std::vector<double> serial_walsh(std::vector<double> v) {
    std::vector<double> out(v.size());
    for (unsigned p = 0; (std::size_t{1} << p) < v.size(); ++p) {
        for (std::size_t i = 0; i < v.size(); ++i) out[i] = walsh(v[i], v[i ^ (std::size_t{1} << p)], i, p);
        v.swap(out);
    }
    return v;
}

struct TwoNodeTeam {
    Machine machine = Machine::from_spec(kTwoNodes);
    os::RecordingOs fake{machine};
    Team team{machine, {.threads = 2, .kind = MappingKind::scatter}, fake};
};

TEST(StencilButterfly, WalshHadamardMatchesSerialReferenceUnderEveryPlacement) {
    const std::size_t n = 2048;   // 4 pages per array, 2 per rank
    std::vector<double> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = small_int(i);
    const std::vector<double> expected = serial_walsh(x);

    const PagePlacement modes[] = {PagePlacement::serial_first_touch, PagePlacement::parallel_first_touch, PagePlacement::interleave,
                               PagePlacement::stencil_aware, PagePlacement::explicit_plan};
    for (const PagePlacement mode : modes) {
        for (const bool streaming : {true, false}) {
            SCOPED_TRACE(std::string(to_string(mode)) + (streaming ? " streaming" : " cached"));
            // A fresh fake per run: it cannot see munmap, and a new mapping
            // at a reused address would inherit the old pages' nodes.
            TwoNodeTeam t;
            Options o = faked(t.fake, mode);
            o.streaming_stores = streaming;
            if (mode == PagePlacement::explicit_plan) o.explicit_policy = PlacementPolicy::interleave(NodeSet{0, 1});
            Butterfly b(t.team, n, small_int, o);
            ASSERT_EQ(b.size(), n);
            const Report r = b.run(walsh);
            for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(b.at(i), expected[i]) << "element " << i;

            EXPECT_EQ(r.kind, "butterfly");
            EXPECT_EQ(r.placement, to_string(mode));
            EXPECT_EQ(r.sweeps, 11u);
            EXPECT_EQ(r.updates_per_sweep, n);
            EXPECT_EQ(r.arrays_counted, streaming ? 2u : 3u);
            EXPECT_EQ(r.bytes_per_sweep, r.arrays_counted * n * 8);
            ASSERT_EQ(r.ranks.size(), 2u);
            EXPECT_EQ(r.ranks[0].work, (Block{0, 1024}));
            EXPECT_EQ(r.ranks[1].work, (Block{1024, 2048}));
            EXPECT_EQ(r.ranks[1].node, 1u);
            EXPECT_EQ(r.ranks[1].slabs_updated, 1024u * 11);
            EXPECT_EQ(r.placement_report.pages, 8u) << "two arrays of 4 pages";
            EXPECT_TRUE(r.placement_report.verified);
            EXPECT_EQ(r.placement_report.pages_as_intended, 8u) << r.placement_report.summary;
            // Every page is known to the fake kernel, so nothing is "unknown".
            EXPECT_EQ(r.ranks[0].traffic.unknown_read_bytes, 0u);
            EXPECT_EQ(r.ranks[0].traffic.block_pages, 2u);

            // Applying the transform again gives n times the input (and
            // exercises the buffer parity: 11 phases is odd).
            (void)b.run(walsh);
            for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(b.at(i), static_cast<double>(n) * x[i]) << "element " << i;
        }
    }
}

TEST(StencilButterfly, StencilAwareRemoteBytesAreZeroUntilThePartnerBlockIsAnotherRanks) {
    TwoNodeTeam t;
    const std::size_t n = 4096;   // 12 phases; block = 2048 elements = 4 pages
    Butterfly b(t.team, n, small_int, faked(t.fake));
    const Report r = b.run(walsh);
    EXPECT_EQ(r.placement_report.pages_per_node, (std::map<unsigned, std::size_t>{{0, 8}, {1, 8}}));
    // Phases 0..10 have distance < 2048: the partner is in the own block.
    // Phase 11 reads the other rank's whole block: n/2 × 8 bytes per rank.
    const std::size_t far_bytes = n / 2 * 8;
    for (const RankReport& rr : r.ranks) {
        SCOPED_TRACE("rank " + std::to_string(rr.rank));
        EXPECT_EQ(rr.traffic.remote_read_bytes, far_bytes / 12) << "one far phase out of 12, averaged";
        EXPECT_EQ(rr.traffic.read_bytes, (11 * far_bytes + 2 * far_bytes) / 12);
        EXPECT_EQ(rr.traffic.remote_write_bytes, 0u);
        EXPECT_EQ(rr.traffic.block_pages_on_node, 4u);
        EXPECT_EQ(rr.traffic.halo_pages, 4u / 12);
    }
    EXPECT_EQ(r.remote_read_bytes_per_sweep, 2 * (far_bytes / 12));

    // Phase by phase, from the same page nodes.
    const std::vector<int> nodes = {0, 0, 0, 0, 1, 1, 1, 1};
    for (unsigned p = 0; p < 12; ++p) {
        SCOPED_TRACE("phase " + std::to_string(p));
        const Traffic t0 = detail::butterfly_phase_traffic(512, {0, 2048}, 0, p, nodes, nodes);
        const Traffic t1 = detail::butterfly_phase_traffic(512, {2048, 4096}, 1, p, nodes, nodes);
        const std::size_t expect_remote = (std::size_t{1} << p) >= 2048 ? far_bytes : 0;
        EXPECT_EQ(t0.remote_read_bytes, expect_remote);
        EXPECT_EQ(t1.remote_read_bytes, expect_remote);
        EXPECT_EQ(t1.remote_halo_pages, expect_remote / 4096);
        EXPECT_EQ(t1.write_bytes, far_bytes);
    }
}

TEST(StencilButterfly, PhaseTrafficFollowsThePartnerBlockAcrossFourRanks) {
    // 16 pages, page q on node q / 4 (rank r's block on node r).
    std::vector<int> nodes(16);
    for (std::size_t q = 0; q < 16; ++q) nodes[q] = static_cast<int>(q / 4);
    const Block rank1{2048, 4096};
    const auto traffic = [&](unsigned p) { return detail::butterfly_phase_traffic(512, rank1, 1, p, nodes, nodes); };
    for (unsigned p = 0; p <= 10; ++p) {   // distance up to 2 pages: inside the 4-page block
        EXPECT_EQ(traffic(p).remote_read_bytes, 0u) << "phase " << p;
        EXPECT_EQ(traffic(p).read_bytes, 4u * 4096) << "phase " << p;
        EXPECT_EQ(traffic(p).halo_pages, 0u) << "phase " << p;
    }
    // Distance 4 pages: rank 1 pairs with rank 0's block; 8 pages: rank 3's.
    for (const unsigned p : {11U, 12U}) {
        const Traffic t = traffic(p);
        EXPECT_EQ(t.read_bytes, 8u * 4096) << "phase " << p;
        EXPECT_EQ(t.remote_read_bytes, 4u * 4096) << "phase " << p;
        EXPECT_EQ(t.halo_pages, 4u) << "phase " << p;
        EXPECT_EQ(t.remote_halo_pages, 4u) << "phase " << p;
    }
    // Absent pages are unknown, not remote; a block on the wrong node is remote to read and write.
    std::vector<int> absent(16, -1);
    const Traffic u = detail::butterfly_phase_traffic(512, rank1, 1, 11, absent, nodes);
    EXPECT_EQ(u.unknown_read_bytes, 8u * 4096);
    EXPECT_EQ(u.remote_read_bytes, 0u);
    const std::vector<int> all_zero(16, 0);
    const Traffic z = detail::butterfly_phase_traffic(512, rank1, 1, 3, all_zero, all_zero);
    EXPECT_EQ(z.remote_read_bytes, 4u * 4096);
    EXPECT_EQ(z.remote_write_bytes, 4u * 4096);
    EXPECT_EQ(z.block_pages_on_node, 0u);
}

TEST(StencilButterfly, SerialFirstTouchPutsTheSecondRanksBlockOnTheFirstNode) {
    TwoNodeTeam t;
    const std::size_t n = 2048;
    Butterfly b(t.team, n, small_int, faked(t.fake, PagePlacement::serial_first_touch));
    const Report r = b.run(walsh);
    EXPECT_EQ(r.placement_report.pages_per_node, (std::map<unsigned, std::size_t>{{0, 8}}));
    // Rank 1 (node 1) reads and writes only remote pages: its block every
    // phase (8 KiB), and rank 0's block in the last phase.
    EXPECT_EQ(r.ranks[1].traffic.remote_read_bytes, (11 * 8192 + 8192) / 11);
    EXPECT_EQ(r.ranks[1].traffic.remote_write_bytes, 8192u);
    EXPECT_EQ(r.ranks[0].traffic.remote_read_bytes, 0u);
}

TEST(StencilButterfly, RunsOnTheRealKernelWithTheLiveMachine) {
    const Machine live = Machine::from_live();
    std::size_t cpus = 0;
    for (const Node& node : live.nodes) cpus += node.cpus.size();
    Team team(live, {.threads = cpus >= 2 ? 2U : 1U});
    const std::size_t n = 4096;
    std::vector<double> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = small_int(i);
    const std::vector<double> expected = serial_walsh(x);
    Options real;
    real.placement = PagePlacement::parallel_first_touch;
    real.balancing_off = false;
    Butterfly b(team, n, small_int, real);
    const Report r = b.run(walsh);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(b.at(i), expected[i]) << "element " << i;
    EXPECT_TRUE(r.placement_report.verified);
    EXPECT_EQ(r.placement_report.pages, 16u);
    EXPECT_EQ(r.placement_report.pages_unknown, 0u);
    EXPECT_GT(r.seconds, 0.0);
}

TEST(StencilButterfly, RefusesBadSizesAndOptions) {
    TwoNodeTeam t;
    const Options o = faked(t.fake);
    Error e = expect_error([&] { Butterfly b(t.team, 3000, small_int, o); });
    EXPECT_EQ(e.field(), "n");
    EXPECT_TRUE(test::contains(e.what(), "power of two")) << e.what();
    e = expect_error([&] { Butterfly b(t.team, 0, small_int, o); });
    EXPECT_EQ(e.field(), "n");
    e = expect_error([&] { Butterfly b(t.team, 512, small_int, o); });
    EXPECT_EQ(e.field(), "n");
    EXPECT_TRUE(test::contains(e.what(), "1024")) << e.what();
    e = expect_error([&] { Butterfly b(t.team, 1024, small_int, faked(t.fake, PagePlacement::explicit_plan)); });
    EXPECT_EQ(e.field(), "explicit_policy");
    e = expect_error([&] {
        Options d = faked(t.fake);
        d.distribution = Distribution::dynamic;
        Butterfly b(t.team, 1024, small_int, d);
    });
    EXPECT_EQ(e.field(), "distribution");
    e = expect_error([&] {
        Options x = faked(t.fake, PagePlacement::explicit_plan);
        x.explicit_policy = PlacementPolicy::bind(NodeSet{7});
        Butterfly b(t.team, 1024, small_int, x);
    });
    EXPECT_FALSE(e.field().empty());
    // The smallest valid size works.
    Butterfly ok(t.team, 1024, small_int, o);
    EXPECT_THROW((void)ok.at(1024), Error);
}

}  // namespace
}  // namespace numaware::stencil
