// Stencil geometry: neighbourhoods, the padded layout, partitions, the
// NUMA-aware weights and the traffic accounting — pure functions, checked
// against hand-computed cases and a brute-force per-cell counter.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "numaware/error.hpp"
#include "numaware/machine.hpp"
#include "numaware/stencil.hpp"
#include "support.hpp"

namespace numaware::stencil {
namespace {

using test::contains;
using test::expect_error;

// ---------------------------------------------------------------------
// Brute force: mark every cell each update reads, one cell at a time.
// ---------------------------------------------------------------------
Traffic brute_account(const Layout& L, const Neighbourhood& nb, Block work, Block owned, unsigned node,
                      const std::vector<int>& rd, const std::vector<int>& wr) {
    const std::size_t elems = L.bytes / sizeof(double);
    std::vector<char> read(elems, 0);
    std::vector<char> written(elems, 0);
    const std::size_t rx = nb.radius_x(), ry = nb.radius_y(), rz = nb.radius_z();
    const std::size_t nx = L.shape.nx, ny = L.shape.ny, nz = L.shape.nz;
    const bool d3 = L.shape.dims == 3;
    for (std::size_t s = work.lo; s < work.hi; ++s) {
        if (d3) {
            if (s < rz || s + rz >= nz) continue;
            for (std::size_t y = ry; y + ry < ny; ++y)
                for (std::size_t x = rx; x + rx < nx; ++x) {
                    written[L.index(x, y, s)] = 1;
                    for (const Offset& o : nb.offsets())
                        read[L.index(static_cast<std::size_t>(static_cast<long>(x) + o.dx),
                                     static_cast<std::size_t>(static_cast<long>(y) + o.dy),
                                     static_cast<std::size_t>(static_cast<long>(s) + o.dz))] = 1;
                }
        } else {
            if (s < ry || s + ry >= ny) continue;
            for (std::size_t x = rx; x + rx < nx; ++x) {
                written[L.index(x, s)] = 1;
                for (const Offset& o : nb.offsets())
                    read[L.index(static_cast<std::size_t>(static_cast<long>(x) + o.dx),
                                 static_cast<std::size_t>(static_cast<long>(s) + o.dy))] = 1;
            }
        }
    }
    const int me = static_cast<int>(node);
    const std::size_t ps = L.page_size;
    const std::size_t o0 = owned.lo * L.slab_stride * 8;
    const std::size_t o1 = std::min(owned.hi * L.slab_stride * 8, L.bytes);
    const auto in_owned = [&](std::size_t p) { return p * ps < o1 && (p + 1) * ps > o0; };
    Traffic t;
    std::set<std::size_t> pages_read;
    for (std::size_t e = 0; e < elems; ++e) {
        const std::size_t p = e * 8 / ps;
        if (read[e]) {
            t.read_bytes += 8;
            if (rd[p] < 0)
                t.unknown_read_bytes += 8;
            else if (rd[p] != me)
                t.remote_read_bytes += 8;
            pages_read.insert(p);
        }
        if (written[e]) {
            t.write_bytes += 8;
            if (wr[p] >= 0 && wr[p] != me) t.remote_write_bytes += 8;
        }
    }
    for (std::size_t p : pages_read)
        if (!in_owned(p)) {
            ++t.halo_pages;
            if (rd[p] >= 0 && rd[p] != me) ++t.remote_halo_pages;
        }
    for (std::size_t p = 0; p < L.pages(); ++p)
        if (in_owned(p)) {
            ++t.block_pages;
            if (rd[p] == me) ++t.block_pages_on_node;
        }
    return t;
}

// Each owned block's pages on its rank's node (by the page's first byte).
std::vector<int> stencil_map(const Layout& L, const Partition& p, const std::vector<int>& nodes) {
    std::vector<int> map(L.pages());
    for (std::size_t page = 0; page < map.size(); ++page) {
        const std::size_t slab = page * L.page_size / (L.slab_stride * 8);
        std::size_t r = 0;
        while (r + 1 < p.owned.size() && slab >= p.owned[r].hi) ++r;
        map[page] = nodes[r];
    }
    return map;
}

void expect_traffic_eq(const Traffic& got, const Traffic& want, const std::string& what) {
    EXPECT_EQ(got.read_bytes, want.read_bytes) << what;
    EXPECT_EQ(got.remote_read_bytes, want.remote_read_bytes) << what;
    EXPECT_EQ(got.unknown_read_bytes, want.unknown_read_bytes) << what;
    EXPECT_EQ(got.write_bytes, want.write_bytes) << what;
    EXPECT_EQ(got.remote_write_bytes, want.remote_write_bytes) << what;
    EXPECT_EQ(got.halo_pages, want.halo_pages) << what;
    EXPECT_EQ(got.remote_halo_pages, want.remote_halo_pages) << what;
    EXPECT_EQ(got.block_pages, want.block_pages) << what;
    EXPECT_EQ(got.block_pages_on_node, want.block_pages_on_node) << what;
    EXPECT_TRUE(got == want) << what;
}

// ---------------------------------------------------------------------
// Neighbourhoods
// ---------------------------------------------------------------------

TEST(StencilGeometry, NamedNeighbourhoods) {
    const Neighbourhood s2 = Neighbourhood::star(2);
    EXPECT_EQ(s2.name(), "5-point");
    EXPECT_EQ(s2.offsets().size(), 5u);
    EXPECT_EQ(s2.radius(), 1u);
    EXPECT_EQ(s2.radius_slab(), 1u);
    EXPECT_EQ(s2.radius_z(), 0u);
    EXPECT_NE(std::find(s2.offsets().begin(), s2.offsets().end(), Offset{0, 0, 0}), s2.offsets().end());
    EXPECT_NE(std::find(s2.offsets().begin(), s2.offsets().end(), Offset{0, -1, 0}), s2.offsets().end());
    EXPECT_EQ(std::find(s2.offsets().begin(), s2.offsets().end(), Offset{1, 1, 0}), s2.offsets().end());

    EXPECT_EQ(Neighbourhood::star(3).name(), "7-point");
    EXPECT_EQ(Neighbourhood::star(3).offsets().size(), 7u);
    EXPECT_EQ(Neighbourhood::box(2).name(), "9-point");
    EXPECT_EQ(Neighbourhood::box(2).offsets().size(), 9u);
    EXPECT_EQ(Neighbourhood::box(3).name(), "27-point");
    EXPECT_EQ(Neighbourhood::box(3).offsets().size(), 27u);
    EXPECT_EQ(Neighbourhood::box(3).radius_slab(), 1u);

    const Neighbourhood s32 = Neighbourhood::star(3, 2);
    EXPECT_EQ(s32.name(), "star:3:2");
    EXPECT_EQ(s32.offsets().size(), 13u);
    EXPECT_EQ(s32.radius(), 2u);
    const Neighbourhood b23 = Neighbourhood::box(2, 3);
    EXPECT_EQ(b23.name(), "box:2:3");
    EXPECT_EQ(b23.offsets().size(), 49u);
    EXPECT_EQ(b23.radius_y(), 3u);

    for (const char* text : {"5-point", "9-point", "7-point", "27-point", "star:2:3", "box:3:2", "star:3:8"})
        EXPECT_EQ(Neighbourhood::parse(text).name(), text);
    EXPECT_EQ(Neighbourhood::parse("box:3:2").offsets().size(), 125u);
    // radius 1 by the long name gets the short name
    EXPECT_EQ(Neighbourhood::parse("star:2:1").name(), "5-point");
}

TEST(StencilGeometry, NeighbourhoodErrors) {
    for (const char* text :
         {"", "6-point", "star", "star:4:1", "box:2:0", "box:2:9", "star:2", "star:2:1x", "cross:2:1"}) {
        const Error e = expect_error([&] { Neighbourhood::parse(text, "--points"); });
        EXPECT_EQ(e.field(), "--points") << text;
        EXPECT_TRUE(contains(e.what(), std::string("'") + text + "'")) << e.what();
        EXPECT_TRUE(contains(e.what(), "27-point")) << e.what();
    }
    EXPECT_EQ(expect_error([] { Neighbourhood(4, {{0, 0, 0}}); }).field(), "neighbourhood");
    EXPECT_TRUE(contains(expect_error([] { Neighbourhood(2, {}); }).what(), "at least one offset"));
    EXPECT_TRUE(contains(expect_error([] { Neighbourhood(3, {{9, 0, 0}}); }).what(), "(9,0,0)"));
    EXPECT_TRUE(contains(expect_error([] { Neighbourhood(2, {{0, 0, 1}}); }).what(), "dz != 0"));
    EXPECT_TRUE(contains(expect_error([] { Neighbourhood(2, {{1, 0, 0}, {0, 1, 0}, {1, 0, 0}}); }).what(),
                         "(1,0) is listed twice"));
    EXPECT_EQ(expect_error([] { Neighbourhood::star(2, 0); }).field(), "neighbourhood");
    EXPECT_EQ(expect_error([] { Neighbourhood::box(1); }).field(), "neighbourhood");

    // The centre is not required; radii follow the offsets per axis.
    const Neighbourhood c(3, {{-2, 0, 0}, {0, 1, 0}, {0, 0, -3}, {8, 0, 0}}, "odd");
    EXPECT_EQ(c.name(), "odd");
    EXPECT_EQ(c.radius_x(), 8u);
    EXPECT_EQ(c.radius_y(), 1u);
    EXPECT_EQ(c.radius_z(), 3u);
    EXPECT_EQ(c.radius_slab(), 3u);
    EXPECT_EQ(c.radius(), 8u);
    EXPECT_EQ(Neighbourhood(2, {{0, -2, 0}}).radius_slab(), 2u);
}

// ---------------------------------------------------------------------
// Layout and grid checks
// ---------------------------------------------------------------------

TEST(StencilGeometry, ShapeToString) {
    EXPECT_EQ(Shape::d2(1026, 1026).to_string(), "1026x1026");
    EXPECT_EQ(Shape::d3(258, 258, 258).to_string(), "258x258x258");
    EXPECT_EQ(Shape::d3(3, 4, 5).cells(), 60u);
}

TEST(StencilGeometry, LayoutSmallRows2D) {
    // 10 doubles -> 16 (128 B): a power of two, 32 rows per page.
    Layout a = Layout::make(Shape::d2(10, 20));
    EXPECT_EQ(a.row_stride, 16u);
    EXPECT_EQ(a.slab_stride, 16u);
    EXPECT_EQ(a.granule, 32u);
    EXPECT_EQ(a.slabs, 20u);
    EXPECT_EQ(a.bytes, 4096u);
    EXPECT_EQ(a.pages(), 1u);
    EXPECT_EQ(a.padding_bytes(), 4096u - 200u * 8u);
    // 20 doubles -> 24 (192 B) -> 256 B: 16 rows per page; 20 rows = 5120 B -> 2 pages.
    Layout b = Layout::make(Shape::d2(20, 20));
    EXPECT_EQ(b.row_stride, 32u);
    EXPECT_EQ(b.slab_stride, 32u);
    EXPECT_EQ(b.granule, 16u);
    EXPECT_EQ(b.bytes, 8192u);
    EXPECT_EQ(b.index(3, 2), 2u * 32u + 3u);
    // With a 256 B page, 20 doubles (192 B -> 256 B) are exactly a page.
    Layout c = Layout::make(Shape::d2(20, 5), 256);
    EXPECT_EQ(c.slab_stride, 32u);
    EXPECT_EQ(c.granule, 1u);
    EXPECT_EQ(c.bytes, 5u * 256u);
}

TEST(StencilGeometry, LayoutLargeRows2D) {
    // 1000 doubles = 8000 B -> two pages per row.
    Layout a = Layout::make(Shape::d2(1000, 7));
    EXPECT_EQ(a.row_stride, 1024u);
    EXPECT_EQ(a.slab_stride, 1024u);
    EXPECT_EQ(a.granule, 1u);
    EXPECT_EQ(a.bytes, 7u * 8192u);
    EXPECT_EQ(a.index(5, 3), 3u * 1024u + 5u);
    // Exactly a page.
    Layout b = Layout::make(Shape::d2(512, 3));
    EXPECT_EQ(b.slab_stride, 512u);
    EXPECT_EQ(b.granule, 1u);
    EXPECT_EQ(b.padding_bytes(), 0u);
    // 600 doubles -> 4800 B -> 8192 B.
    Layout c = Layout::make(Shape::d2(600, 3));
    EXPECT_EQ(c.row_stride, 1024u);
    EXPECT_EQ(c.granule, 1u);
}

TEST(StencilGeometry, LayoutPlanes3D) {
    // Rows of 10 -> 16; plane 16*10 = 160 doubles = 1280 B -> 2048 B: 2 planes per page.
    Layout a = Layout::make(Shape::d3(10, 10, 12));
    EXPECT_EQ(a.row_stride, 16u);
    EXPECT_EQ(a.slab_stride, 256u);
    EXPECT_EQ(a.granule, 2u);
    EXPECT_EQ(a.slabs, 12u);
    EXPECT_EQ(a.bytes, 12u * 2048u);
    EXPECT_EQ(a.index(1, 2, 3), 3u * 256u + 2u * 16u + 1u);
    // 66^3: rows 72, plane 72*66*8 = 38016 B -> 10 pages.
    Layout b = Layout::make(Shape::d3(66, 66, 66));
    EXPECT_EQ(b.row_stride, 72u);
    EXPECT_EQ(b.slab_stride, 40960u / 8u);
    EXPECT_EQ(b.granule, 1u);
    EXPECT_EQ(b.pages(), 66u * 10u);
    EXPECT_EQ(b.index(65, 65, 65), 65u * 5120u + 65u * 72u + 65u);
    // Odd plane size: 3 planes of 24 B rows -> 8 doubles * 3 = 192 B -> 256 B, 16 per page.
    Layout c = Layout::make(Shape::d3(3, 3, 40));
    EXPECT_EQ(c.row_stride, 8u);
    EXPECT_EQ(c.slab_stride, 32u);
    EXPECT_EQ(c.granule, 16u);
    EXPECT_EQ(c.bytes, 3u * 4096u);
}

TEST(StencilGeometry, LayoutErrors) {
    EXPECT_EQ(expect_error([] { Layout::make(Shape{4, 3, 3, 3}); }).field(), "grid");
    EXPECT_TRUE(contains(expect_error([] { Layout::make(Shape::d2(0, 5)); }).what(), "nx=0"));
    EXPECT_TRUE(contains(expect_error([] { Layout::make(Shape{2, 5, 5, 2}); }).what(), "nz=2"));
    EXPECT_TRUE(contains(expect_error([] { Layout::make(Shape::d2(5, 5), 100); }).what(), "page size 100"));
    EXPECT_TRUE(contains(expect_error([] { Layout::make(Shape::d2(5, 5), 32); }).what(), "power of two >= 64"));
    EXPECT_EQ(expect_error([] { Layout::make(Shape::d3(1u << 30, 1u << 30, 1u << 30)); }).field(), "grid");
}

TEST(StencilGeometry, CheckGrid) {
    const Error a = expect_error([] { check_grid(Shape::d2(2, 10), Neighbourhood::star(2)); });
    EXPECT_EQ(a.field(), "grid");
    EXPECT_TRUE(contains(a.what(), "nx=2 is smaller than the 5-point stencil needs (at least 3)")) << a.what();
    const Error b = expect_error([] { check_grid(Shape::d2(10, 4), Neighbourhood::box(2, 2)); });
    EXPECT_TRUE(contains(b.what(), "ny=4 is smaller than the box:2:2 stencil needs (at least 5)")) << b.what();
    const Error c = expect_error([] { check_grid(Shape::d3(5, 5, 2), Neighbourhood::star(3)); });
    EXPECT_TRUE(contains(c.what(), "nz=2")) << c.what();
    const Error d = expect_error([] { check_grid(Shape::d3(5, 5, 5), Neighbourhood::star(2)); });
    EXPECT_TRUE(contains(d.what(), "2-D")) << d.what();
    // The x-radius alone matters along x.
    EXPECT_NO_THROW(check_grid(Shape::d2(17, 1), Neighbourhood(2, {{-8, 0, 0}, {8, 0, 0}})));
    EXPECT_THROW(check_grid(Shape::d2(16, 1), Neighbourhood(2, {{-8, 0, 0}, {8, 0, 0}})), Error);
    EXPECT_NO_THROW(check_grid(Shape::d3(3, 3, 3), Neighbourhood::box(3)));
}

// ---------------------------------------------------------------------
// Partitions
// ---------------------------------------------------------------------

void expect_valid_partition(const Layout& L, unsigned halo, const Partition& p, const std::string& what) {
    ASSERT_FALSE(p.work.empty()) << what;
    ASSERT_EQ(p.work.size(), p.owned.size()) << what;
    ASSERT_EQ(p.weights.size(), p.work.size()) << what;
    EXPECT_EQ(p.work.front().lo, halo) << what;
    EXPECT_EQ(p.work.back().hi, L.slabs - halo) << what;
    EXPECT_EQ(p.owned.front().lo, 0u) << what;
    EXPECT_EQ(p.owned.back().hi, L.slabs) << what;
    for (std::size_t r = 0; r < p.work.size(); ++r) {
        EXPECT_LE(p.work[r].lo, p.work[r].hi) << what;
        if (r > 0) {
            EXPECT_EQ(p.work[r].lo, p.work[r - 1].hi) << what << " gap before rank " << r;
            EXPECT_EQ(p.owned[r].lo, p.owned[r - 1].hi) << what;
            EXPECT_EQ(p.owned[r].lo, p.work[r].lo) << what;
            const bool empty_side = p.work[r].size() == 0 || p.work[r - 1].size() == 0;
            if (!empty_side) {
                EXPECT_EQ(p.work[r].lo % L.granule, 0u) << what << " cut " << r;
            }
        }
    }
}

TEST(StencilGeometry, PartitionEqual) {
    struct Case {
        Shape shape;
        std::size_t page;
        unsigned halo;
    };
    const std::vector<Case> cases{{Shape::d2(10, 200), 4096, 1},  {Shape::d2(1000, 37), 4096, 1},
                                  {Shape::d2(20, 301), 4096, 2},  {Shape::d3(10, 10, 100), 4096, 1},
                                  {Shape::d3(3, 3, 130), 4096, 3}, {Shape::d2(9, 1000), 65536, 1}};
    for (const Case& c : cases) {
        const Layout L = Layout::make(c.shape, c.page);
        const std::size_t interior = L.slabs - 2 * c.halo;
        for (unsigned threads = 1; threads <= 9; ++threads) {
            const std::string what = c.shape.to_string() + " g=" + std::to_string(L.granule) + " T=" +
                                     std::to_string(threads);
            const Partition p = partition_equal(L, c.halo, threads);
            expect_valid_partition(L, c.halo, p, what);
            const double ideal = static_cast<double>(interior) / threads;
            for (const Block& b : p.work) {
                EXPECT_LE(std::abs(static_cast<double>(b.size()) - ideal), static_cast<double>(L.granule) + 1e-9)
                    << what;
            }
            for (double w : p.weights) EXPECT_EQ(w, 1.0);
            // The same weights give the same cut.
            const std::vector<double> ones(threads, 2.5);
            const Partition q = partition_weighted(L, c.halo, ones);
            EXPECT_EQ(q.work, p.work) << what;
            EXPECT_EQ(q.weights, ones);
        }
    }
    // A concrete case: 2 ranks, 16 rows per page, interior [1, 33): cut at 16.
    const Layout L = Layout::make(Shape::d2(20, 34));
    const Partition p = partition_equal(L, 1, 2);
    EXPECT_EQ(p.work, (std::vector<Block>{{1, 16}, {16, 33}}));
    EXPECT_EQ(p.owned, (std::vector<Block>{{0, 16}, {16, 34}}));
}

TEST(StencilGeometry, PartitionErrors) {
    const Layout L = Layout::make(Shape::d2(16, 10));   // 8 interior rows with halo 1
    const Error a = expect_error([&] { partition_equal(L, 1, 9); });
    EXPECT_EQ(a.field(), "threads");
    EXPECT_TRUE(contains(a.what(), "9 threads but the grid has only 8 interior rows")) << a.what();
    EXPECT_NO_THROW(partition_equal(L, 1, 8));
    EXPECT_EQ(expect_error([&] { partition_equal(L, 1, 0); }).field(), "threads");
    EXPECT_EQ(expect_error([&] { partition_weighted(L, 1, std::vector<double>{}); }).field(), "threads");
    EXPECT_TRUE(contains(expect_error([&] { partition_weighted(L, 1, std::vector<double>(9, 1.0)); }).what(),
                         "9 threads"));
    const Layout L3 = Layout::make(Shape::d3(8, 8, 6));
    EXPECT_TRUE(contains(expect_error([&] { partition_equal(L3, 1, 5); }).what(), "only 4 interior"));

    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    for (double bad : {0.0, -1.0, nan, inf}) {
        const std::vector<double> w{1.0, bad, 1.0};
        const Error e = expect_error([&] { partition_weighted(L, 1, w); });
        EXPECT_EQ(e.field(), "weights[1]") << bad;
        EXPECT_TRUE(contains(e.what(), "must be positive and finite, got")) << e.what();
    }
    EXPECT_TRUE(contains(expect_error([&] { partition_weighted(L, 1, std::vector<double>{1, 1, -2.5}); }).what(),
                         "got -2.5"));
}

TEST(StencilGeometry, PartitionWeighted) {
    const Layout L = Layout::make(Shape::d2(1000, 402));   // granule 1, 400 interior rows
    const std::vector<double> w{1.0, 3.0};
    const Partition p = partition_weighted(L, 1, w);
    expect_valid_partition(L, 1, p, "1:3");
    EXPECT_EQ(p.work[0], (Block{1, 101}));
    EXPECT_EQ(p.work[1], (Block{101, 401}));
    EXPECT_EQ(p.weights, w);

    // Granule 16 (small rows): cuts on multiples of 16.
    const Layout G = Layout::make(Shape::d2(20, 402));
    const std::vector<double> w4{0.9, 1.1, 1.1, 0.9};
    const Partition q = partition_weighted(G, 1, w4);
    expect_valid_partition(G, 1, q, "granule 16");
    for (std::size_t r = 1; r < 4; ++r) EXPECT_EQ(q.work[r].lo % 16, 0u);
    EXPECT_LT(q.work[0].size(), q.work[1].size());

    // Very uneven weights may leave a rank empty, never a gap.
    const Partition e = partition_weighted(G, 1, std::vector<double>{1e-6, 1.0, 1.0});
    expect_valid_partition(G, 1, e, "tiny weight");
    EXPECT_EQ(e.work[0].size(), 0u);
}

// ---------------------------------------------------------------------
// Traffic accounting
// ---------------------------------------------------------------------

TEST(StencilGeometry, TrafficSum) {
    Traffic a{1, 2, 3, 4, 5, 6, 7, 8, 9};
    const Traffic b{10, 20, 30, 40, 50, 60, 70, 80, 90};
    a += b;
    EXPECT_EQ(a, (Traffic{11, 22, 33, 44, 55, 66, 77, 88, 99}));
}

TEST(StencilGeometry, AccountMatchesBruteForce) {
    struct Case {
        Shape shape;
        std::size_t page;
        Neighbourhood nb;
    };
    const std::vector<Case> cases{
        {Shape::d2(13, 17), 256, Neighbourhood::star(2)},
        {Shape::d2(13, 17), 256, Neighbourhood::box(2)},
        {Shape::d2(40, 12), 128, Neighbourhood::box(2)},   // rows of 3 pages, stride not a power of two
        {Shape::d2(11, 23), 512, Neighbourhood::star(2, 2)},
        {Shape::d2(19, 15), 256, Neighbourhood::box(2, 2)},
        {Shape::d2(12, 14), 64, Neighbourhood(2, {{3, 0, 0}, {0, -2, 0}, {-1, 1, 0}}, "no-centre")},
        {Shape::d3(7, 6, 9), 512, Neighbourhood::star(3)},
        {Shape::d3(7, 6, 9), 512, Neighbourhood::box(3)},
        {Shape::d3(9, 5, 11), 256, Neighbourhood::box(3)},
        {Shape::d3(5, 5, 12), 1024, Neighbourhood::star(3)},   // granule 2
        {Shape::d3(9, 8, 13), 256, Neighbourhood::star(3, 2)},
        {Shape::d3(6, 7, 10), 128, Neighbourhood(3, {{0, 0, 2}, {1, -1, 0}, {-2, 0, -1}}, "no-centre")},
    };
    std::mt19937 rng(12345);
    std::uniform_int_distribution<int> pick(-1, 2);
    for (const Case& c : cases) {
        const Layout L = Layout::make(c.shape, c.page);
        const unsigned halo = c.nb.radius_slab();
        std::vector<std::pair<Block, Block>> blocks;
        for (unsigned threads = 1; threads <= 4; ++threads) {
            const Partition p = partition_equal(L, halo, threads);
            for (std::size_t r = 0; r < threads; ++r) blocks.emplace_back(p.work[r], p.owned[r]);
        }
        blocks.push_back({{0, L.slabs}, {0, L.slabs}});        // boundary slabs are skipped
        blocks.push_back({{halo + 1, halo + 2}, {1, 3}});       // one slab, odd owned range
        blocks.push_back({{halo, halo}, {0, 0}});               // empty
        for (int trial = 0; trial < 3; ++trial) {
            std::vector<int> rd(L.pages()), wr(L.pages());
            for (int& v : rd) v = pick(rng);
            for (int& v : wr) v = pick(rng);
            const std::vector<int>& wmap = trial == 0 ? rd : wr;   // in-place: one map
            for (const auto& [work, owned] : blocks)
                for (unsigned node : {0u, 1u}) {
                    const std::string what = c.shape.to_string() + " " + c.nb.name() + " page " +
                                             std::to_string(c.page) + " work [" + std::to_string(work.lo) + "," +
                                             std::to_string(work.hi) + ") node " + std::to_string(node);
                    expect_traffic_eq(account(L, c.nb, work, owned, node, rd, wmap),
                                      brute_account(L, c.nb, work, owned, node, rd, wmap), what);
                }
        }
    }
}

TEST(StencilGeometry, AccountErrors) {
    const Layout L = Layout::make(Shape::d2(20, 20));
    const Neighbourhood nb = Neighbourhood::star(2);
    const std::vector<int> ok(L.pages(), 0), bad(L.pages() + 1, 0);
    EXPECT_EQ(expect_error([&] { account(L, nb, {1, 5}, {0, 5}, 0, bad, ok); }).field(), "page_nodes_read");
    EXPECT_EQ(expect_error([&] { account(L, nb, {1, 5}, {0, 5}, 0, ok, bad); }).field(), "page_nodes_written");
    EXPECT_EQ(expect_error([&] { account(L, nb, {1, 25}, {0, 5}, 0, ok, ok); }).field(), "work");
    EXPECT_EQ(expect_error([&] { account(L, nb, {1, 5}, {6, 5}, 0, ok, ok); }).field(), "owned");
    EXPECT_EQ(expect_error([&] { account(L, Neighbourhood::star(3), {1, 5}, {0, 5}, 0, ok, ok); }).field(), "grid");
}

// Two blocks on two nodes, stencil-aware: the remote bytes are exactly the halo.
Traffic two_block_traffic(const Layout& L, const Neighbourhood& nb, unsigned rank, Partition* out = nullptr) {
    const Partition p = partition_equal(L, nb.radius_slab(), 2);
    const std::vector<int> map = stencil_map(L, p, {0, 1});
    const Traffic t = account(L, nb, p.work[rank], p.owned[rank], rank, map, map);
    expect_traffic_eq(t, brute_account(L, nb, p.work[rank], p.owned[rank], rank, map, map), nb.name());
    if (out) *out = p;
    return t;
}

TEST(StencilGeometry, HaloArithmetic) {
    {   // 2-D 5-point: the row beyond the cut, interior x only.
        const Layout L = Layout::make(Shape::d2(20, 34));   // granule 16, cut at 16
        for (unsigned rank : {0u, 1u}) {
            const Traffic t = two_block_traffic(L, Neighbourhood::star(2), rank);
            EXPECT_EQ(t.remote_read_bytes, 18u * 8u) << rank;
            EXPECT_EQ(t.remote_halo_pages, 1u);
            EXPECT_EQ(t.remote_write_bytes, 0u);
            EXPECT_EQ(t.unknown_read_bytes, 0u);
            EXPECT_EQ(t.block_pages, t.block_pages_on_node);
        }
        const Traffic t1 = two_block_traffic(L, Neighbourhood::star(2), 1);
        EXPECT_EQ(t1.write_bytes, 17u * 18u * 8u);   // rows [16, 33), x in [1, 19)
        EXPECT_EQ(t1.block_pages, 2u);
    }
    {   // 2-D 9-point: the diagonal neighbours add the two edge cells.
        const Layout L = Layout::make(Shape::d2(20, 34));
        for (unsigned rank : {0u, 1u})
            EXPECT_EQ(two_block_traffic(L, Neighbourhood::box(2), rank).remote_read_bytes, 20u * 8u);
    }
    {   // 2-D, rows of two pages.
        const Layout L = Layout::make(Shape::d2(1000, 50));
        const Traffic t = two_block_traffic(L, Neighbourhood::star(2), 0);
        EXPECT_EQ(t.remote_read_bytes, 998u * 8u);
        EXPECT_EQ(t.remote_halo_pages, 2u);
        EXPECT_EQ(two_block_traffic(L, Neighbourhood::star(2, 2), 1).remote_read_bytes, 2u * 996u * 8u);
    }
    {   // 3-D 7-point: one plane, interior x and y.
        const Layout L = Layout::make(Shape::d3(12, 10, 20));   // planes of 2048 B, granule 2
        Partition p;
        const Traffic t = two_block_traffic(L, Neighbourhood::star(3), 0, &p);
        EXPECT_EQ(p.work[0], (Block{1, 10}));
        EXPECT_EQ(t.remote_read_bytes, 10u * 8u * 8u);
        EXPECT_EQ(two_block_traffic(L, Neighbourhood::star(3), 1).remote_read_bytes, 10u * 8u * 8u);
        // 27-point: the whole plane, boundary included.
        EXPECT_EQ(two_block_traffic(L, Neighbourhood::box(3), 0).remote_read_bytes, 12u * 10u * 8u);
    }
    {   // 3-D 7-point with planes of several pages.
        const Layout L = Layout::make(Shape::d3(66, 66, 34));
        EXPECT_EQ(two_block_traffic(L, Neighbourhood::star(3), 1).remote_read_bytes, 64u * 64u * 8u);
    }
}

TEST(StencilGeometry, AccountLargeGridIsFast) {
    // 512 MiB: 8192 x 8192 doubles, 131072 pages, 4 ranks.
    const Layout L = Layout::make(Shape::d2(8192, 8192));
    ASSERT_EQ(L.pages(), 131072u);
    const Partition p = partition_equal(L, 1, 4);
    const std::vector<int> map = stencil_map(L, p, {0, 1, 2, 3});
    const auto start = std::chrono::steady_clock::now();
    Traffic total;
    for (unsigned r = 0; r < 4; ++r) total += account(L, Neighbourhood::box(2), p.work[r], p.owned[r], r, map, map);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(total.remote_read_bytes, 6u * 8192u * 8u);
    EXPECT_EQ(total.write_bytes, 8190u * 8190u * 8u);
    EXPECT_EQ(total.block_pages, 131072u);
    EXPECT_EQ(total.block_pages_on_node, 131072u);
    EXPECT_LT(seconds, 1.5);
}

// ---------------------------------------------------------------------
// Cost ratios and NUMA weights
// ---------------------------------------------------------------------

TEST(StencilGeometry, RemoteCost) {
    const Machine slit = Machine::from_spec("nodes=2 cpus-per-node=1 mem-per-node=512M distances=10,21/21,10");
    const CostRatio a = remote_cost(slit, 0, 1);
    EXPECT_DOUBLE_EQ(a.ratio, 2.1);
    EXPECT_EQ(a.source, "SLIT 21/10");
    EXPECT_DOUBLE_EQ(remote_cost(slit, 1, 1).ratio, 1.0);

    const Machine lat =
        Machine::from_spec("nodes=2 cpus-per-node=1 distances=10,21/21,10 latency=80,160/160,80");
    const CostRatio b = remote_cost(lat, 1, 0);
    EXPECT_DOUBLE_EQ(b.ratio, 2.0);
    EXPECT_EQ(b.source, "latency 160/80 ns");

    const Machine bw = Machine::from_spec(
        "nodes=2 cpus-per-node=1 distances=10,21/21,10 latency=80,160/160,80 bandwidth=25,12.5/10,20");
    const CostRatio c = remote_cost(bw, 0, 1);   // bw[1][1] / bw[0][1] = 20 / 12.5
    EXPECT_DOUBLE_EQ(c.ratio, 1.6);
    EXPECT_EQ(c.source, "bandwidth 20.0/12.5 GB/s");
    EXPECT_DOUBLE_EQ(remote_cost(bw, 1, 0).ratio, 2.5);

    // An unknown (0) bandwidth entry falls back to latency.
    const Machine gap = Machine::from_spec(
        "nodes=2 cpus-per-node=1 distances=10,21/21,10 latency=80,120/120,80 bandwidth=25,0/0,25");
    EXPECT_DOUBLE_EQ(remote_cost(gap, 0, 1).ratio, 1.5);
    EXPECT_TRUE(contains(remote_cost(gap, 0, 1).source, "latency"));

    EXPECT_EQ(expect_error([&] { remote_cost(slit, 0, 7); }).field(), "node");
}

TEST(StencilGeometry, NumaWeights) {
    const Machine m = Machine::from_spec("nodes=2 cpus-per-node=2 mem-per-node=512M distances=10,21/21,10");
    const Layout L = Layout::make(Shape::d2(1000, 402));   // 400 interior rows, granule 1
    const Neighbourhood nb = Neighbourhood::star(2);
    const WeightPlan w = numa_weights(L, nb, {0, 0, 1, 1}, m);
    ASSERT_EQ(w.weights.size(), 4u);
    EXPECT_GT(w.weights[0], 1.0);
    EXPECT_LT(w.weights[1], 1.0);
    EXPECT_LT(w.weights[2], 1.0);
    EXPECT_GT(w.weights[3], 1.0);
    EXPECT_NEAR(w.weights[0] + w.weights[1] + w.weights[2] + w.weights[3], 4.0, 1e-9);
    EXPECT_EQ(w.halo_bytes, (std::vector<std::size_t>{0, 998 * 8, 998 * 8, 0}));
    EXPECT_EQ(w.cost_ratio, (std::vector<double>{1.0, 2.1, 2.1, 1.0}));
    // The documented formula, by hand: S = 2 * 998 * 8, X = 1.1 * 998 * 8 for ranks 1 and 2.
    const double S = 2.0 * 998 * 8, X = (2.1 - 1.0) * 998 * 8, N = 400, T = 4;
    const double n_local = (N * S + 2 * X) / (T * S), n_remote = n_local - X / S;
    EXPECT_NEAR(w.weights[0], n_local / (N / T), 1e-9);
    EXPECT_NEAR(w.weights[1], n_remote / (N / T), 1e-9);
    EXPECT_TRUE(contains(w.rule, "SLIT 21/10")) << w.rule;
    EXPECT_TRUE(contains(w.rule, "2 of 4 ranks")) << w.rule;


    // All on one node: equal.
    const WeightPlan same = numa_weights(L, nb, {0, 0, 0, 0}, m);
    for (double x : same.weights) EXPECT_EQ(x, 1.0);
    for (std::size_t h : same.halo_bytes) EXPECT_EQ(h, 0u);
    EXPECT_FALSE(same.rule.empty());

    // Override: a larger ratio shrinks the remote ranks further.
    const WeightPlan big = numa_weights(L, nb, {0, 0, 1, 1}, m, 5.0);
    EXPECT_LT(big.weights[1], w.weights[1]);
    EXPECT_EQ(big.cost_ratio[1], 5.0);
    EXPECT_NEAR(big.weights[0] + big.weights[1] + big.weights[2] + big.weights[3], 4.0, 1e-9);
    EXPECT_TRUE(contains(big.rule, "given")) << big.rule;
    // The weights feed partition_weighted: with rho = 5 the halo costs 2 rows per
    // sweep, so the remote ranks lose one row each to the local ones.
    const Partition p = partition_weighted(L, 1, big.weights);
    EXPECT_EQ(p.work[0].size(), 101u);
    EXPECT_EQ(p.work[1].size(), 99u);
    EXPECT_EQ(p.work[2].size(), 99u);
    EXPECT_EQ(p.work[3].size(), 101u);
    const WeightPlan one = numa_weights(L, nb, {0, 1}, m, 1.0);   // no penalty: equal
    EXPECT_EQ(one.weights, (std::vector<double>{1.0, 1.0}));

    EXPECT_EQ(expect_error([&] { numa_weights(L, nb, {0, 1}, m, -1.0); }).field(), "remote_cost");
    EXPECT_EQ(expect_error([&] { numa_weights(L, nb, {0, 1}, m, std::nan("")); }).field(), "remote_cost");
    EXPECT_EQ(expect_error([&] { numa_weights(L, nb, {}, m); }).field(), "threads");

    // An extreme ratio is clamped at one granule and renormalised.
    const WeightPlan huge = numa_weights(L, nb, {0, 1, 0, 1}, m, 1e9);
    double sum = 0;
    for (double x : huge.weights) {
        EXPECT_GT(x, 0.0);
        sum += x;
    }
    EXPECT_NEAR(sum, 4.0, 1e-9);
}

TEST(StencilGeometry, NumaWeights3DBandwidth) {
    const Machine m = Machine::from_spec(
        "nodes=2 cpus-per-node=2 distances=10,21/21,10 bandwidth=30,15/15,30");
    const Layout L = Layout::make(Shape::d3(34, 34, 66));
    const WeightPlan w = numa_weights(L, Neighbourhood::star(3), {0, 1, 0, 1}, m);
    // Ranks 1 and 2 have remote neighbours on both sides.
    EXPECT_EQ(w.halo_bytes, (std::vector<std::size_t>{32 * 32 * 8, 2 * 32 * 32 * 8, 2 * 32 * 32 * 8, 32 * 32 * 8}));
    EXPECT_EQ(w.cost_ratio[0], 2.0);
    EXPECT_TRUE(contains(w.rule, "bandwidth 30.0/15.0 GB/s")) << w.rule;
    EXPECT_GT(w.weights[0], w.weights[1]);
}

// ---------------------------------------------------------------------
// Names and calibration
// ---------------------------------------------------------------------

TEST(StencilGeometry, Names) {
    for (Kind k : {Kind::jacobi, Kind::gauss_seidel, Kind::red_black, Kind::variable, Kind::multigrid, Kind::butterfly})
        EXPECT_EQ(parse_kind(to_string(k)), k);
    for (PagePlacement p : {PagePlacement::serial_first_touch, PagePlacement::parallel_first_touch, PagePlacement::interleave,
                        PagePlacement::stencil_aware, PagePlacement::explicit_plan})
        EXPECT_EQ(parse_placement(to_string(p)), p);
    for (Distribution d :
         {Distribution::static_equal, Distribution::dynamic, Distribution::guided, Distribution::numa_weighted})
        EXPECT_EQ(parse_distribution(to_string(d)), d);
    EXPECT_EQ(to_string(Kind::gauss_seidel), "gauss-seidel");
    EXPECT_EQ(to_string(PagePlacement::explicit_plan), "explicit");
    EXPECT_EQ(to_string(PagePlacement::stencil_aware), "stencil-aware");
    EXPECT_EQ(to_string(Distribution::static_equal), "static");
    EXPECT_EQ(to_string(Distribution::numa_weighted), "numa-weighted");

    const Error a = expect_error([] { parse_kind("gauss_seidel", "--kind"); });
    EXPECT_EQ(a.field(), "--kind");
    EXPECT_TRUE(contains(a.what(), "'gauss_seidel'")) << a.what();
    EXPECT_TRUE(contains(a.what(), "jacobi, gauss-seidel, red-black, variable, multigrid, butterfly")) << a.what();
    const Error b = expect_error([] { parse_placement("first-touch"); });
    EXPECT_EQ(b.field(), "placement");
    EXPECT_TRUE(contains(b.what(), "serial-first-touch, parallel-first-touch, interleave, stencil-aware, explicit"));
    const Error c = expect_error([] { parse_distribution("Static"); });
    EXPECT_EQ(c.field(), "distribution");
    EXPECT_TRUE(contains(c.what(), "static, dynamic, guided, numa-weighted"));
}

TEST(StencilGeometry, CalibrateWeights) {
    Report r;
    r.ranks.resize(3);
    for (unsigned i = 0; i < 3; ++i) r.ranks[i].rank = i;
    r.ranks[0].slabs_updated = 100;
    r.ranks[0].busy_seconds = 1.0;
    r.ranks[1].slabs_updated = 100;
    r.ranks[1].busy_seconds = 2.0;
    r.ranks[2].slabs_updated = 50;
    r.ranks[2].busy_seconds = 0.5;
    const std::vector<double> w = calibrate_weights(r);   // rates 100, 50, 100
    ASSERT_EQ(w.size(), 3u);
    EXPECT_NEAR(w[0], 1.2, 1e-12);
    EXPECT_NEAR(w[1], 0.6, 1e-12);
    EXPECT_NEAR(w[2], 1.2, 1e-12);

    Report none = r;
    none.ranks[1].slabs_updated = 0;
    const Error e = expect_error([&] { calibrate_weights(none); });
    EXPECT_EQ(e.field(), "report");
    EXPECT_TRUE(contains(e.what(), "rank 1")) << e.what();
    Report idle = r;
    idle.ranks[2].busy_seconds = 0;
    EXPECT_TRUE(contains(expect_error([&] { calibrate_weights(idle); }).what(), "rank 2"));
    EXPECT_EQ(expect_error([] { calibrate_weights(Report{}); }).field(), "report");
}

}  // namespace
}  // namespace numaware::stencil
