// Unit tests of the stencil Skeleton: every single-grid kind against a
// plain serial loop (bit-exact), under every placement and distribution,
// on a 2-rank team over a synthetic 2-node machine whose kernel is the
// recording fake; bad input; placement and traffic; NUMA balancing.
#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "numaware/error.hpp"
#include "numaware/machine.hpp"
#include "numaware/placement.hpp"
#include "numaware/stencil.hpp"
#include "numaware/team.hpp"
#include "os/recording_os.hpp"
#include "support.hpp"

namespace numaware::stencil {
namespace {

using test::contains;
using test::expect_error;

Machine two_nodes(unsigned cpus_per_node = 1) {
    return Machine::from_spec("nodes=2 cpus-per-node=" + std::to_string(cpus_per_node) +
                              " mem-per-node=512M distances=10,21/21,10");
}

// A team on the synthetic machine whose kernel is the fake: first touches
// and populates land on the calling rank's node as the fake simulates.
struct Rig {
    explicit Rig(unsigned threads = 2, unsigned cpus_per_node = 1)
        : machine(two_nodes(cpus_per_node)), fake(machine),
          team(machine, {.threads = threads, .kind = MappingKind::scatter}, fake) {}
    Options options(PagePlacement p, Distribution d = Distribution::static_equal) {
        Options o;
        o.placement = p;
        o.distribution = d;
        o.os = &fake;
        return o;
    }
    Machine machine;
    os::RecordingOs fake;
    Team team;
};

// Deterministic values in [0, 1) that differ from cell to cell.
double hash_value(std::size_t x, std::size_t y, std::size_t z) {
    std::uint64_t h = x * 0x9E3779B97F4A7C15ULL ^ (y + 1) * 0xC2B2AE3D27D4EB4FULL ^ (z + 7) * 0x165667B19E3779F9ULL;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 32;
    return static_cast<double>(h >> 11) / 9007199254740992.0;
}

// ---- the plain serial reference --------------------------------------------

struct Grid {
    Shape shape;
    std::vector<double> v;
    explicit Grid(const Shape& s) : shape(s), v(s.cells()) {
        for (std::size_t z = 0; z < s.nz; ++z)
            for (std::size_t y = 0; y < s.ny; ++y)
                for (std::size_t x = 0; x < s.nx; ++x) v[idx(x, y, z)] = hash_value(x, y, z);
    }
    std::size_t idx(std::size_t x, std::size_t y, std::size_t z) const { return (z * shape.ny + y) * shape.nx + x; }
};

// The same interface as stencil::Access, over the plain grid.
class RefAccess {
public:
    RefAccess(const Grid& g, std::size_t x, std::size_t y, std::size_t z) : g_(g), x_(x), y_(y), z_(z) {}
    double operator()(int dx, int dy, int dz = 0) const {
        return g_.v[g_.idx(static_cast<std::size_t>(static_cast<long>(x_) + dx),
                           static_cast<std::size_t>(static_cast<long>(y_) + dy),
                           static_cast<std::size_t>(static_cast<long>(z_) + dz))];
    }
    double centre() const { return (*this)(0, 0, 0); }
    std::size_t x() const { return x_; }
    std::size_t y() const { return y_; }
    std::size_t z() const { return z_; }

private:
    const Grid& g_;
    std::size_t x_, y_, z_;
};

enum class RefKind { jacobi, gauss_seidel, red_black };

template <class F>
Grid reference(const Shape& shape, const Neighbourhood& nb, RefKind kind, std::size_t sweeps, const F& f) {
    Grid a(shape);
    const std::size_t rx = nb.radius_x(), ry = nb.radius_y(), rz = shape.dims == 3 ? nb.radius_z() : 0;
    const std::size_t z_lo = shape.dims == 3 ? rz : 0, z_hi = shape.dims == 3 ? shape.nz - rz : 1;
    for (std::size_t s = 0; s < sweeps; ++s) {
        if (kind == RefKind::jacobi) {
            Grid b = a;
            for (std::size_t z = z_lo; z < z_hi; ++z)
                for (std::size_t y = ry; y < shape.ny - ry; ++y)
                    for (std::size_t x = rx; x < shape.nx - rx; ++x) b.v[a.idx(x, y, z)] = f(RefAccess(a, x, y, z));
            a = b;
            continue;
        }
        for (int colour = 0; colour < (kind == RefKind::red_black ? 2 : 1); ++colour)
            for (std::size_t z = z_lo; z < z_hi; ++z)
                for (std::size_t y = ry; y < shape.ny - ry; ++y)
                    for (std::size_t x = rx; x < shape.nx - rx; ++x) {
                        if (kind == RefKind::red_black && static_cast<int>((x + y + z) & 1U) != colour) continue;
                        a.v[a.idx(x, y, z)] = f(RefAccess(a, x, y, z));
                    }
    }
    return a;
}

// Every cell of the skeleton equals the reference, bit for bit.
void expect_same(const Skeleton& sk, const Grid& ref, const std::string& what) {
    std::size_t bad = 0;
    for (std::size_t z = 0; z < ref.shape.nz; ++z)
        for (std::size_t y = 0; y < ref.shape.ny; ++y)
            for (std::size_t x = 0; x < ref.shape.nx; ++x) {
                const double got = sk.at(x, y, z);
                const double want = ref.v[ref.idx(x, y, z)];
                if (got != want && ++bad <= 3)
                    ADD_FAILURE() << what << ": cell (" << x << "," << y << "," << z << ") = " << got << ", serial "
                                  << want;
            }
    EXPECT_EQ(bad, 0u) << what;
}

// ---- the updates (generic: the same code runs in the skeleton and the reference)

const auto five_point = [](const auto& a) { return 0.25 * (a(-1, 0) + a(1, 0) + a(0, -1) + a(0, 1)); };
const auto nine_point = [](const auto& a) {
    return 0.5 * a.centre() + 0.1 * (a(-1, 0) + a(1, 0) + a(0, -1) + 0.5 * a(0, 1)) +
           0.0625 * (a(-1, -1) + 0.75 * a(1, -1) + a(-1, 1) + 1.25 * a(1, 1));
};
const auto seven_point = [](const auto& a) {
    return (a(-1, 0, 0) + 0.9 * a(1, 0, 0) + a(0, -1, 0) + 1.1 * a(0, 1, 0) + 0.8 * a(0, 0, -1) + 1.2 * a(0, 0, 1)) /
           6.0;
};
const auto twenty_seven_point = [](const auto& a) {
    double s = 0;
    for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) s += (1.0 + 0.125 * dx + 0.25 * dy - 0.0625 * dz) * a(dx, dy, dz);
    return s / 27.0;
};
// Reads a cell chosen by the data, anywhere within the box of radius 2.
const auto data_dependent = [](const auto& a) {
    const int k = static_cast<int>(a.centre() * 1000.0) % 3;   // 0..2, from the value
    const int j = static_cast<int>(a.centre() * 7919.0) % 5 - 2;   // -2..2
    return 0.5 * a(-k, j) + 0.25 * a(k, -k) + 0.25 * a.centre();
};

const PagePlacement kModes[] = {PagePlacement::serial_first_touch, PagePlacement::parallel_first_touch, PagePlacement::interleave,
                            PagePlacement::stencil_aware};
const Distribution kAllDistributions[] = {Distribution::static_equal, Distribution::dynamic, Distribution::guided,
                                          Distribution::numa_weighted};
const Distribution kStaticDistributions[] = {Distribution::static_equal, Distribution::numa_weighted};

std::string label(PagePlacement p, Distribution d) {
    return std::string(to_string(p)) + "/" + std::string(to_string(d));
}

InitFn hash_init() { return [](std::size_t x, std::size_t y, std::size_t z) { return hash_value(x, y, z); }; }

// Runs `kind` under every placement mode and the given distributions and
// compares with the serial reference.
template <class F, class Distributions>
void check_every_mode(const Shape& shape, const Neighbourhood& nb, Kind kind, std::size_t sweeps, const F& f,
                      const Distributions& dists, std::size_t tile = 0) {
    const RefKind rk = kind == Kind::gauss_seidel ? RefKind::gauss_seidel
                       : kind == Kind::red_black  ? RefKind::red_black
                                                  : RefKind::jacobi;
    const Grid ref = reference(shape, nb, rk, sweeps, f);
    for (PagePlacement p : kModes)
        for (Distribution d : dists) {
            Rig rig;
            Options o = rig.options(p, d);
            o.tile = tile;
            Skeleton sk(rig.team, shape, nb, hash_init(), o);
            Report r;
            switch (kind) {
            case Kind::jacobi: r = sk.jacobi(sweeps, f); break;
            case Kind::variable: r = sk.variable(sweeps, f); break;
            case Kind::gauss_seidel: r = sk.gauss_seidel(sweeps, f); break;
            case Kind::red_black: r = sk.red_black(sweeps, f); break;
            default: FAIL();
            }
            EXPECT_EQ(r.kind, to_string(kind));
            EXPECT_EQ(r.sweeps, sweeps);
            EXPECT_EQ(r.placement, to_string(p));
            EXPECT_EQ(r.distribution, to_string(d));
            EXPECT_EQ(r.placement_report.pages_as_intended, r.placement_report.pages) << label(p, d);
            expect_same(sk, ref, std::string(to_string(kind)) + " " + nb.name() + " " + label(p, d));
        }
}

// ---- bit-exact against the serial loops -------------------------------------

TEST(StencilSkeleton, Jacobi2dFivePointEveryModeMatchesSerial) {
    check_every_mode(Shape::d2(34, 34), Neighbourhood::star(2), Kind::jacobi, 5, five_point, kAllDistributions);
}

TEST(StencilSkeleton, Jacobi2dNinePointEveryModeMatchesSerial) {
    check_every_mode(Shape::d2(37, 29), Neighbourhood::box(2), Kind::jacobi, 4, nine_point, kAllDistributions);
}

TEST(StencilSkeleton, Jacobi3dSevenPointEveryModeMatchesSerial) {
    check_every_mode(Shape::d3(18, 18, 18), Neighbourhood::star(3), Kind::jacobi, 3, seven_point, kAllDistributions);
}

TEST(StencilSkeleton, Jacobi3dTwentySevenPointEveryModeMatchesSerial) {
    check_every_mode(Shape::d3(17, 18, 19), Neighbourhood::box(3), Kind::jacobi, 3, twenty_seven_point,
                     kAllDistributions);
}

TEST(StencilSkeleton, VariableDataDependentReadsWithinBoxMatchSerial) {
    check_every_mode(Shape::d2(34, 34), Neighbourhood::box(2, 2), Kind::variable, 4, data_dependent,
                     kAllDistributions);
}

TEST(StencilSkeleton, GaussSeidel2dMatchesSerialLexicographicLoop) {
    check_every_mode(Shape::d2(34, 34), Neighbourhood::star(2), Kind::gauss_seidel, 4, five_point,
                     kStaticDistributions);
    // Narrow tiles: a long pipeline, and a box stencil reading the slab
    // below on both sides.
    check_every_mode(Shape::d2(37, 34), Neighbourhood::box(2), Kind::gauss_seidel, 3, nine_point,
                     kStaticDistributions, 3);
}

TEST(StencilSkeleton, GaussSeidel3dMatchesSerialLexicographicLoop) {
    check_every_mode(Shape::d3(18, 18, 18), Neighbourhood::star(3), Kind::gauss_seidel, 3, seven_point,
                     kStaticDistributions, 4);
    check_every_mode(Shape::d3(17, 18, 19), Neighbourhood::box(3), Kind::gauss_seidel, 2, twenty_seven_point,
                     kStaticDistributions, 1);
}

TEST(StencilSkeleton, GaussSeidelCustomSkewedNeighbourhoodMatchesSerial) {
    // Reads two cells ahead on the row below and one behind on the row
    // above: the tiles must lean by two cells per row.
    const Neighbourhood nb(2, {{0, 0}, {2, -1}, {-1, 1}, {-1, 0}, {1, 0}, {0, -1}}, "lean");
    const auto f = [](const auto& a) {
        return 0.3 * a(2, -1) + 0.2 * a(-1, 1) + 0.1 * a(-1, 0) + 0.15 * a(1, 0) + 0.05 * a(0, -1) + 0.2 * a.centre();
    };
    for (std::size_t tile : {std::size_t{0}, std::size_t{2}, std::size_t{3}})
        check_every_mode(Shape::d2(35, 34), nb, Kind::gauss_seidel, 3, f, kStaticDistributions, tile);
}

TEST(StencilSkeleton, GaussSeidelWavefrontWithFourRanksAndRadiusTwo) {
    // Four ranks (two per node), blocks thinner than a page, a radius-2
    // neighbourhood: rank t must wait for every rank below it.
    const Shape shape = Shape::d2(40, 40);
    const Neighbourhood nb = Neighbourhood::box(2, 2);
    const auto f = [](const auto& a) {
        double s = 0;
        for (int dy = -2; dy <= 2; ++dy)
            for (int dx = -2; dx <= 2; ++dx) s += (1.0 + 0.01 * (dx + 3 * dy)) * a(dx, dy);
        return s / 25.0;
    };
    const Grid ref = reference(shape, nb, RefKind::gauss_seidel, 3, f);
    for (std::size_t tile : {std::size_t{0}, std::size_t{2}, std::size_t{5}}) {
        Rig rig(4, 2);
        Options o = rig.options(PagePlacement::stencil_aware);
        o.tile = tile;
        Skeleton sk(rig.team, shape, nb, hash_init(), o);
        sk.gauss_seidel(3, f);
        expect_same(sk, ref, "gauss-seidel 4 ranks tile " + std::to_string(tile));
    }
}

TEST(StencilSkeleton, RedBlackMatchesSerialColourLoops) {
    check_every_mode(Shape::d2(34, 34), Neighbourhood::star(2), Kind::red_black, 4, five_point, kAllDistributions);
    check_every_mode(Shape::d3(18, 18, 18), Neighbourhood::star(3), Kind::red_black, 3, seven_point,
                     kAllDistributions);
}

TEST(StencilSkeleton, ExplicitInterleavePolicyMatchesSerialAndPlacesAlternately) {
    Rig rig;
    Options o = rig.options(PagePlacement::explicit_plan);
    o.explicit_policy = PlacementPolicy::interleave(NodeSet{0, 1});
    const Shape shape = Shape::d3(18, 18, 18);
    Skeleton sk(rig.team, shape, Neighbourhood::star(3), hash_init(), o);
    EXPECT_TRUE(sk.placement().verified);
    EXPECT_EQ(sk.placement().pages, 2 * sk.layout().pages());
    EXPECT_EQ(sk.placement().pages_as_intended, sk.placement().pages) << sk.placement().summary;
    const auto pn = sk.page_nodes();
    ASSERT_EQ(pn.size(), sk.layout().pages());
    for (std::size_t p = 1; p < pn.size(); ++p) EXPECT_NE(pn[p], pn[p - 1]) << "page " << p;
    sk.jacobi(3, seven_point);
    expect_same(sk, reference(shape, Neighbourhood::star(3), RefKind::jacobi, 3, seven_point), "explicit");
}

TEST(StencilSkeleton, NonStreamingJacobiMatchesAndCountsThreeArrays) {
    Rig rig;
    Options o = rig.options(PagePlacement::stencil_aware);
    o.streaming_stores = false;
    Skeleton sk(rig.team, Shape::d2(34, 34), Neighbourhood::star(2), hash_init(), o);
    const Report r = sk.jacobi(3, five_point);
    expect_same(sk, reference(Shape::d2(34, 34), Neighbourhood::star(2), RefKind::jacobi, 3, five_point), "no-stream");
    EXPECT_EQ(r.arrays_counted, 3u);
    EXPECT_EQ(r.updates_per_sweep, 32u * 32u);
    EXPECT_EQ(r.bytes_per_sweep, 3u * 32u * 32u * 8u);
}

// Streaming stores write whole padded rows (boundary cells and padding
// copied from the other array): results and fixed cells stay exact, in 2-D
// and 3-D, with rows longer than the 256-cell buffer.
TEST(StencilSkeleton, StreamingJacobiMatchesAndCountsTwoArrays) {
    Rig rig;
    Options o = rig.options(PagePlacement::stencil_aware);
    o.streaming_stores = true;
    {
        const Shape shape = Shape::d2(301, 34);
        Skeleton sk(rig.team, shape, Neighbourhood::star(2), hash_init(), o);
        const Report r = sk.jacobi(3, five_point);
        expect_same(sk, reference(shape, Neighbourhood::star(2), RefKind::jacobi, 3, five_point), "stream 2-D");
        EXPECT_EQ(r.arrays_counted, 2u);
    }
    {
        const Shape shape = Shape::d3(263, 9, 12);
        Skeleton sk(rig.team, shape, Neighbourhood::star(3), hash_init(), o);
        sk.jacobi(2, seven_point);
        expect_same(sk, reference(shape, Neighbourhood::star(3), RefKind::jacobi, 2, seven_point), "stream 3-D");
    }
}

TEST(StencilSkeleton, SweepsAccumulateAcrossRunsAndOnSweepSeesEachSweep) {
    Rig rig;
    Options o = rig.options(PagePlacement::parallel_first_touch);
    std::vector<double> seen;
    const Skeleton* self = nullptr;
    o.on_sweep = [&](std::size_t) { seen.push_back(self->at(5, 7)); };
    const Shape shape = Shape::d2(34, 34);
    Skeleton sk(rig.team, shape, Neighbourhood::star(2), hash_init(), o);
    self = &sk;
    sk.jacobi(2, five_point);
    sk.jacobi(3, five_point);
    ASSERT_EQ(seen.size(), 5u);
    for (std::size_t s = 0; s < 5; ++s) {
        const Grid ref = reference(shape, Neighbourhood::star(2), RefKind::jacobi, s + 1, five_point);
        EXPECT_EQ(seen[s], ref.v[ref.idx(5, 7, 0)]) << "after sweep " << s + 1;
    }
    expect_same(sk, reference(shape, Neighbourhood::star(2), RefKind::jacobi, 5, five_point), "2+3 sweeps");
}

TEST(StencilSkeleton, AThrowingUpdateStopsEveryRankWithoutHanging) {
    Rig rig;
    Options o = rig.options(PagePlacement::stencil_aware);
    o.tile = 2;
    const Shape shape = Shape::d2(34, 34);
    Skeleton sk(rig.team, shape, Neighbourhood::star(2), hash_init(), o);
    for (std::size_t bad_row : {std::size_t{3}, std::size_t{30}}) {   // in rank 0's block, in rank 1's
        const auto f = [bad_row](const auto& a) {
            if (a.y() == bad_row && a.x() == 20) throw std::runtime_error("bad cell");
            return a.centre();
        };
        try {
            sk.gauss_seidel(2, f);
            ADD_FAILURE() << "no exception";
        } catch (const std::runtime_error& e) {
            EXPECT_STREQ(e.what(), "bad cell");
        }
        EXPECT_THROW(sk.jacobi(1, f), std::runtime_error);
        EXPECT_THROW(sk.red_black(1, f), std::runtime_error);
    }
    // The team and the skeleton still work.
    sk.gauss_seidel(1, [](const auto& a) { return a.centre(); });
}

// ---- bad input ------------------------------------------------------------

TEST(StencilSkeleton, RejectsBadInputNamingIt) {
    Rig rig;
    Error e = expect_error([&] {
        Skeleton sk(rig.team, Shape::d2(4, 34), Neighbourhood::star(2, 2), hash_init(),
                    rig.options(PagePlacement::stencil_aware));
    });
    EXPECT_EQ(e.field(), "grid");
    EXPECT_TRUE(contains(e.what(), "nx=4")) << e.what();

    e = expect_error([&] {
        Skeleton sk(rig.team, Shape::d2(34, 3), Neighbourhood::star(2), hash_init(),
                    rig.options(PagePlacement::stencil_aware));
    });
    EXPECT_EQ(e.field(), "threads");
    EXPECT_TRUE(contains(e.what(), "2 threads")) << e.what();

    Options o = rig.options(PagePlacement::stencil_aware, Distribution::numa_weighted);
    o.weights = {1.0, 0.0};
    e = expect_error([&] { Skeleton sk(rig.team, Shape::d2(34, 34), Neighbourhood::star(2), hash_init(), o); });
    EXPECT_EQ(e.field(), "weights[1]");
    EXPECT_TRUE(contains(e.what(), "must be positive and finite, got 0")) << e.what();

    o.weights = {1.0};
    e = expect_error([&] { Skeleton sk(rig.team, Shape::d2(34, 34), Neighbourhood::star(2), hash_init(), o); });
    EXPECT_EQ(e.field(), "weights");

    o = rig.options(PagePlacement::explicit_plan);
    e = expect_error([&] { Skeleton sk(rig.team, Shape::d2(34, 34), Neighbourhood::star(2), hash_init(), o); });
    EXPECT_EQ(e.field(), "explicit_policy");

    o = rig.options(PagePlacement::interleave);
    o.explicit_policy = PlacementPolicy::interleave(NodeSet{0, 1});
    e = expect_error([&] { Skeleton sk(rig.team, Shape::d2(34, 34), Neighbourhood::star(2), hash_init(), o); });
    EXPECT_EQ(e.field(), "explicit_policy");

    o = rig.options(PagePlacement::stencil_aware);
    o.remote_cost = -1;
    e = expect_error([&] { Skeleton sk(rig.team, Shape::d2(34, 34), Neighbourhood::star(2), hash_init(), o); });
    EXPECT_EQ(e.field(), "remote_cost");

    o = rig.options(PagePlacement::stencil_aware, Distribution::dynamic);
    o.chunk = 33;
    e = expect_error([&] { Skeleton sk(rig.team, Shape::d2(34, 34), Neighbourhood::star(2), hash_init(), o); });
    EXPECT_EQ(e.field(), "chunk");
    EXPECT_TRUE(contains(e.what(), "only 32 interior slabs")) << e.what();

    // A page map of the wrong length, through the placement layer.
    o = rig.options(PagePlacement::explicit_plan);
    o.explicit_policy = PlacementPolicy::page_map({0, 1});
    e = expect_error([&] { Skeleton sk(rig.team, Shape::d2(34, 34), Neighbourhood::star(2), hash_init(), o); });
    EXPECT_EQ(e.field(), "explicit_policy");

    // Kind / distribution / neighbourhood combinations refused by run().
    Skeleton gs(rig.team, Shape::d2(34, 34), Neighbourhood::star(2), hash_init(),
                rig.options(PagePlacement::stencil_aware, Distribution::dynamic));
    e = expect_error([&] { gs.gauss_seidel(1, five_point); });
    EXPECT_EQ(e.field(), "distribution");
    EXPECT_TRUE(contains(e.what(), "dynamic")) << e.what();
    Skeleton rb(rig.team, Shape::d2(34, 34), Neighbourhood::box(2), hash_init(),
                rig.options(PagePlacement::stencil_aware));
    e = expect_error([&] { rb.red_black(1, nine_point); });
    EXPECT_EQ(e.field(), "neighbourhood");
    e = expect_error([&] { (void)rb.at(34, 0); });
    EXPECT_EQ(e.field(), "x");
}

// ---- placement and traffic through the fake kernel ------------------------

TEST(StencilSkeleton, StencilAwarePutsEachOwnedBlockOnItsRanksNodeAndCountsTheHalo) {
    Rig rig;
    const Shape shape = Shape::d2(34, 34);
    Skeleton sk(rig.team, shape, Neighbourhood::star(2), hash_init(), rig.options(PagePlacement::stencil_aware));
    const Layout& L = sk.layout();
    const Partition& part = sk.partition();
    ASSERT_EQ(part.owned.size(), 2u);
    // Each owned block's pages are on its rank's node, as the fake kernel says.
    const auto pn = sk.page_nodes();
    ASSERT_EQ(pn.size(), L.pages());
    const std::size_t slab_bytes = L.slab_stride * 8;
    for (unsigned r = 0; r < 2; ++r) {
        const std::size_t p0 = part.owned[r].lo * slab_bytes / L.page_size;
        const std::size_t p1 = r == 1 ? L.pages() : part.owned[r].hi * slab_bytes / L.page_size;
        ASSERT_LT(p0, p1);
        for (std::size_t p = p0; p < p1; ++p) EXPECT_EQ(pn[p], static_cast<int>(r)) << "page " << p;
    }
    EXPECT_EQ(sk.placement().pages_as_intended, 2 * L.pages());
    EXPECT_EQ(sk.placement().pages_per_node.at(0) + sk.placement().pages_per_node.at(1), 2 * L.pages());
    // The mapping was bound through the placement layer (mbind), not touched.
    EXPECT_FALSE(rig.fake.calls(os::CallKind::mbind).empty());

    const Report r = sk.jacobi(2, five_point);
    // Halo arithmetic: a 5-point update reads one row across the cut, the
    // 32 interior cells of it; each rank reads the other's row.
    EXPECT_EQ(r.remote_read_bytes_per_sweep, 2u * 32u * 8u);
    EXPECT_EQ(r.remote_write_bytes_per_sweep, 0u);
    EXPECT_EQ(r.ranks[0].traffic.remote_read_bytes, 32u * 8u);
    EXPECT_EQ(r.ranks[1].traffic.remote_read_bytes, 32u * 8u);
    EXPECT_EQ(r.remote_halo_pages, 2u);
    EXPECT_EQ(r.ranks[0].traffic.block_pages_on_node, r.ranks[0].traffic.block_pages);
    EXPECT_EQ(r.ranks[0].work, part.work[0]);
    EXPECT_EQ(r.ranks[1].node, 1u);
    EXPECT_EQ(r.arrays_counted, 3u) << "ordinary stores by default";
    EXPECT_EQ(r.ranks[0].slabs_updated + r.ranks[1].slabs_updated, 2u * 32u);
}

TEST(StencilSkeleton, SerialFirstTouchPutsEverythingOnRankZerosNode) {
    Rig rig;
    Skeleton sk(rig.team, Shape::d3(18, 18, 18), Neighbourhood::star(3), hash_init(),
                rig.options(PagePlacement::serial_first_touch));
    for (int n : sk.page_nodes()) EXPECT_EQ(n, 0);
    EXPECT_EQ(sk.placement().pages_as_intended, sk.placement().pages);
    // First touch by populate, not by mbind.
    EXPECT_TRUE(rig.fake.calls(os::CallKind::mbind).empty());
    const Report r = sk.jacobi(1, seven_point);
    // Rank 1 (node 1) reads everything remotely; rank 0 nothing.
    EXPECT_EQ(r.ranks[0].traffic.remote_read_bytes, 0u);
    EXPECT_EQ(r.ranks[1].traffic.remote_read_bytes, r.ranks[1].traffic.read_bytes);
    EXPECT_EQ(r.ranks[1].traffic.remote_write_bytes, r.ranks[1].traffic.write_bytes);
    EXPECT_GT(r.ranks[1].traffic.write_bytes, 0u);
}

TEST(StencilSkeleton, ParallelFirstTouchPutsBlocksWhereTheirRanksTouchedThem) {
    Rig rig;
    Skeleton sk(rig.team, Shape::d3(18, 18, 18), Neighbourhood::star(3), hash_init(),
                rig.options(PagePlacement::parallel_first_touch));
    EXPECT_EQ(sk.placement().pages_as_intended, sk.placement().pages) << sk.placement().summary;
    EXPECT_EQ(sk.placement().pages_per_node.size(), 2u);
    const Report r = sk.jacobi(2, seven_point);
    // 7-point: one plane of 16x16 interior cells across the cut, each way.
    EXPECT_EQ(r.remote_read_bytes_per_sweep, 2u * 16u * 16u * 8u);
}

TEST(StencilSkeleton, DynamicDistributionRecordsChunksPerRank) {
    Rig rig;
    Options o = rig.options(PagePlacement::stencil_aware, Distribution::dynamic);
    o.chunk = 1;
    Skeleton sk(rig.team, Shape::d3(18, 18, 18), Neighbourhood::star(3), hash_init(), o);
    const Report r = sk.jacobi(4, seven_point);
    EXPECT_EQ(r.ranks[0].slabs_updated + r.ranks[1].slabs_updated, 4u * 16u);
    EXPECT_EQ(r.ranks[0].work, Block{});
    std::size_t writes = 0;
    for (const auto& rr : r.ranks) writes += rr.traffic.write_bytes;
    EXPECT_EQ(writes, 16u * 16u * 16u * 8u) << "every interior cell written once per sweep";
}

TEST(StencilSkeleton, NumaWeightedPlacesPagesByTheWeightedCut) {
    Rig rig;
    Options o = rig.options(PagePlacement::stencil_aware, Distribution::numa_weighted);
    o.weights = {3.0, 1.0};
    Skeleton sk(rig.team, Shape::d3(18, 18, 34), Neighbourhood::star(3), hash_init(), o);
    const Report r = sk.jacobi(1, seven_point);
    EXPECT_EQ(r.weight_rule, "given");
    EXPECT_GT(r.ranks[0].work.size(), r.ranks[1].work.size());
    EXPECT_EQ(r.ranks[0].owned, sk.partition().owned[0]);
    EXPECT_EQ(r.ranks[0].work.hi, r.ranks[1].work.lo);
    EXPECT_EQ(sk.partition().owned[0].hi, r.ranks[0].work.hi) << "the pages follow the weighted cut";
    for (const auto& rr : r.ranks) {
        EXPECT_EQ(rr.traffic.block_pages_on_node, rr.traffic.block_pages);
        EXPECT_EQ(rr.traffic.remote_write_bytes, 0u);
    }
    // Only the halo crosses: one plane of 16x16 interior cells, each way.
    EXPECT_EQ(r.remote_read_bytes_per_sweep, 2u * 16u * 16u * 8u);
}

// ---- NUMA balancing ----------------------------------------------------------

TEST(StencilSkeleton, BalancingIsOffDuringTheRunAndRestoredAfter) {
    Rig rig;
    rig.fake.set_numa_balancing(1);
    Options o = rig.options(PagePlacement::stencil_aware);
    std::vector<int> during;
    o.on_sweep = [&](std::size_t) { during.push_back(rig.fake.numa_balancing().value_or(-1)); };
    Skeleton sk(rig.team, Shape::d2(34, 34), Neighbourhood::star(2), hash_init(), o);
    const Report r = sk.jacobi(3, five_point);
    EXPECT_EQ(during, (std::vector<int>{0, 0, 0}));
    EXPECT_EQ(rig.fake.numa_balancing(), 1);
    EXPECT_TRUE(r.balancing.available);
    EXPECT_EQ(r.balancing.before, "normal");
    EXPECT_TRUE(r.balancing.switched_off);
    EXPECT_TRUE(r.balancing.restored);
    EXPECT_TRUE(r.balancing.note.empty()) << r.balancing.note;
}

TEST(StencilSkeleton, BalancingRefusalIsANoteAndTheRunCompletes) {
    Rig rig;
    rig.fake.set_numa_balancing(1);
    rig.fake.set_balancing_write_error(EPERM);
    Options o = rig.options(PagePlacement::stencil_aware);
    std::vector<int> during;
    o.on_sweep = [&](std::size_t) { during.push_back(rig.fake.numa_balancing().value_or(-1)); };
    const Shape shape = Shape::d2(34, 34);
    Skeleton sk(rig.team, shape, Neighbourhood::star(2), hash_init(), o);
    const Report r = sk.jacobi(2, five_point);
    EXPECT_EQ(during, (std::vector<int>{1, 1}));
    EXPECT_FALSE(r.balancing.switched_off);
    EXPECT_EQ(r.balancing.note,
              "automatic NUMA balancing is normal and cannot be switched off here (EPERM): run as root for a "
              "placement that stays put");
    expect_same(sk, reference(shape, Neighbourhood::star(2), RefKind::jacobi, 2, five_point), "after EPERM");

    // No balancing in the kernel at all.
    rig.fake.set_numa_balancing(std::nullopt);
    const Report r2 = sk.jacobi(1, five_point);
    EXPECT_FALSE(r2.balancing.available);
    EXPECT_EQ(r2.balancing.note, "the kernel has no automatic NUMA balancing");

    // Already off: nothing written.
    rig.fake.set_numa_balancing(0);
    rig.fake.set_balancing_write_error(0);
    rig.fake.clear_calls();
    const Report r3 = sk.jacobi(1, five_point);
    EXPECT_EQ(r3.balancing.before, "off");
    EXPECT_FALSE(r3.balancing.switched_off);
    EXPECT_TRUE(rig.fake.calls(os::CallKind::write_numa_balancing).empty());

    // Not wanted: left alone.
    Options keep = rig.options(PagePlacement::stencil_aware);
    keep.balancing_off = false;
    rig.fake.set_numa_balancing(1);
    Skeleton sk2(rig.team, shape, Neighbourhood::star(2), hash_init(), keep);
    const Report r4 = sk2.jacobi(1, five_point);
    EXPECT_FALSE(r4.balancing.switched_off);
    EXPECT_EQ(r4.balancing.before, "normal");
}

// ---- the report ------------------------------------------------------------

TEST(StencilSkeleton, ReportJsonHasTheDocumentedMembers) {
    Rig rig;
    Skeleton sk(rig.team, Shape::d2(34, 34), Neighbourhood::star(2), hash_init(),
                rig.options(PagePlacement::stencil_aware));
    const Report r = sk.jacobi(2, five_point);
    const auto j = nlohmann::json::parse(r.to_json());
    for (const char* k :
         {"kind", "neighbourhood", "placement", "distribution", "shape", "threads", "sweeps", "seconds",
          "seconds_per_sweep", "updates_per_sweep", "updates_per_second", "arrays_counted", "bytes_per_sweep",
          "bandwidth_gbs", "read_bytes_per_sweep", "remote_read_bytes_per_sweep", "remote_write_bytes_per_sweep",
          "halo_pages", "remote_halo_pages", "weight_rule", "ranks", "placement_report", "balancing"})
        EXPECT_TRUE(j.contains(k)) << k;
    EXPECT_EQ(j.size(), 23u);
    EXPECT_EQ(j["kind"], "jacobi");
    EXPECT_EQ(j["neighbourhood"], "5-point");
    EXPECT_EQ(j["shape"]["nx"], 34);
    EXPECT_EQ(j["shape"]["dims"], 2);
    ASSERT_EQ(j["ranks"].size(), 2u);
    EXPECT_EQ(j["ranks"][1]["work"][0], r.ranks[1].work.lo);
    EXPECT_EQ(j["ranks"][1]["owned"][1], r.ranks[1].owned.hi);
    EXPECT_EQ(j["ranks"][0]["traffic"]["remote_read_bytes"], 256);
    EXPECT_EQ(j["remote_read_bytes_per_sweep"], 512);
    EXPECT_EQ(j["placement_report"]["pages_per_node"]["1"], r.placement_report.pages_per_node.at(1));
    EXPECT_EQ(j["placement_report"]["verified"], true);
    EXPECT_TRUE(j["balancing"].contains("switched_off"));
    const std::string s = r.summary();
    EXPECT_TRUE(contains(s, "jacobi 5-point 34x34, stencil-aware, static, 2 threads")) << s;
    EXPECT_TRUE(contains(s, "placement: ")) << s;
}

// ---- the real kernel (first-touch modes only: the host has one node) -------

TEST(StencilSkeleton, RealKernelFirstTouchRunsAndVerifies) {
    const Machine m = two_nodes();
    Team team(m, {.threads = 2, .kind = MappingKind::scatter});
    Options o;
    o.placement = PagePlacement::parallel_first_touch;
    o.balancing_off = false;   // never change this host's sysctl from a unit test
    const Shape shape = Shape::d2(66, 66);
    Skeleton sk(team, shape, Neighbourhood::star(2), hash_init(), o);
    EXPECT_TRUE(sk.placement().verified);
    EXPECT_EQ(sk.placement().pages, 2 * sk.layout().pages());
    EXPECT_EQ(sk.placement().pages_unknown, 0u) << "every page was touched";
    sk.jacobi(3, five_point);
    expect_same(sk, reference(shape, Neighbourhood::star(2), RefKind::jacobi, 3, five_point), "real kernel");
}

}  // namespace
}  // namespace numaware::stencil
