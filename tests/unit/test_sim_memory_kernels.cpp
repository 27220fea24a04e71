// Tests for the NAS kernels of the memory-hierarchy simulator
// (sim/memory/nas_kernels.hpp): at class S on thesis-4s with 16 threads,
// each kernel's access count against the count its loop structure gives,
// the page homes first touch leaves (every page homed on a socket of a
// thread that works on it; the remote share each kernel's partition
// implies), the strides its loops show, the size specs, and what the
// patterns imply across prefetchers. No published figure is asserted.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim_memory_census.hpp"
#include "support.hpp"
#include "numaware/error.hpp"
#include "numaware/memory_sim.hpp"
#include "numaware/team.hpp"
#include "sim/memory/arrays.hpp"
#include "sim/memory/loop_kernel.hpp"
#include "sim/memory/nas_kernels.hpp"

namespace mem = numaware::sim::memory;
namespace nas = numaware::sim::memory::nas;
using numaware::test::expect_error;

using namespace numaware::test::memsim;   // census, run, share, threads, page (sim_memory_census.hpp)

// ---- the loop kernel's pieces ----------------------------------------------------

TEST(SimMemoryKernels, StaticBlockIsOpenMpStatic) {
    // 10 iterations on 4 threads: 3 3 2 2, contiguous.
    const std::uint64_t want[][2] = {{0, 3}, {3, 6}, {6, 8}, {8, 10}};
    for (unsigned r = 0; r < 4; ++r) {
        const mem::detail::Range b = mem::detail::static_block(10, 4, r);
        EXPECT_EQ(b.begin, want[r][0]) << r;
        EXPECT_EQ(b.end, want[r][1]) << r;
    }
    // Fewer iterations than threads: the last threads get none.
    EXPECT_EQ(mem::detail::static_block(3, 8, 2).size(), 1u);
    EXPECT_TRUE(mem::detail::static_block(3, 8, 3).empty());
    // Owner blocks: the boundary planes go with their neighbours; every plane once.
    std::vector<int> owner(12, -1);
    for (unsigned r = 0; r < 5; ++r) {
        const mem::detail::Range b = mem::detail::owner_block(12, 5, r);
        const mem::detail::Range in = mem::detail::interior_block(12, 5, r);
        EXPECT_LE(b.begin, in.begin);
        EXPECT_GE(b.end, in.end);
        for (std::uint64_t k = b.begin; k < b.end; ++k) {
            EXPECT_EQ(owner[k], -1);
            owner[k] = static_cast<int>(r);
        }
    }
    EXPECT_EQ(std::count(owner.begin(), owner.end(), -1), 0);
    EXPECT_EQ(owner.front(), 0);
    EXPECT_EQ(owner.back(), 4);
}

// ---- size specs ----------------------------------------------------------------------

TEST(SimMemoryKernels, SpecsNameTheClass) {
    for (const char* k : {"cg", "mg", "ft", "is", "lu", "bt", "sp", "ep"}) {
        EXPECT_EQ(mem::make_workload(std::string(k) + ":S")->name(), std::string(k) + ":S");
        EXPECT_EQ(mem::make_workload(std::string(k) + ":W")->name(), std::string(k) + ":W");
        EXPECT_EQ(nas::make_nas_kernel(k)->name(), std::string(k) + ":A") << "A is the default";
    }
    EXPECT_EQ(nas::make_nas_kernel("stream"), nullptr);
    EXPECT_EQ(nas::make_nas_kernel("cgx"), nullptr);
}

// Class W is NPB's class W where a kernel takes NPB's parameters (NPB 3.3's
// setparams), with NPB's iterations cut as class A cuts them.
TEST(SimMemoryKernels, ClassWHasNpbClassWSizes) {
    const nas::CgSize cg = nas::cg_size('W');
    EXPECT_EQ(cg.rows, 7000u);                      // na
    EXPECT_EQ(cg.nonzeros_per_row, (8u + 1) * (8u + 1));   // nonzer 8: at most (nonzer + 1)² a row
    EXPECT_EQ(cg.iterations, nas::cg_size('A').iterations);
    EXPECT_EQ(nas::mg_size('W').n, 128u);
    const nas::FtSize ft = nas::ft_size('W');
    EXPECT_EQ(ft.nx, 128u);
    EXPECT_EQ(ft.ny, 128u);
    EXPECT_EQ(ft.nz, 32u);
    const nas::IsSize is = nas::is_size('W');
    EXPECT_EQ(is.keys, 1u << 20);
    EXPECT_EQ(is.max_key, 1u << 16);
    EXPECT_EQ(is.buckets, 1u << 10);
    EXPECT_EQ(nas::lu_size('W').n, 33u);
    EXPECT_EQ(nas::bt_size('W').n, 24u);
    EXPECT_EQ(nas::sp_size('W').n, 36u);
    // EP: class A is NPB's 2^28 pairs cut 64-fold, W NPB's 2^25 the same way.
    EXPECT_EQ(nas::ep_size('W').pairs * 64, std::uint64_t{1} << 25);
    EXPECT_EQ(nas::ep_size('A').pairs * 64, std::uint64_t{1} << 28);
    for (const char k : {'S', 'W', 'A'}) {
        EXPECT_EQ(nas::mg_size(k).iterations, 1u) << k;
        EXPECT_EQ(nas::ft_size(k).iterations, 1u) << k;
        EXPECT_EQ(nas::is_size(k).iterations, 1u) << k;
        EXPECT_EQ(nas::lu_size(k).iterations, 1u) << k;
    }
}

TEST(SimMemoryKernels, BadSizesNameTheField) {
    expect_error([] { mem::make_workload("cg:Q"); }, "workload",
                 "SIZE must be a class letter, S (tiny), W or A (the default), got 'Q'");
    expect_error([] { mem::make_workload("mg:"); }, "workload", "got ''");
    expect_error([] { mem::make_workload("ft:SA"); }, "workload", "'ft:SA'");
    expect_error([] { mem::make_workload("lu:s"); }, "workload", "got 's'");
    expect_error([] { mem::make_workload("nas"); }, "workload", "cg|mg|ft|is|lu|bt|sp|ep[:S|W|A]");
    expect_error([] { nas::make_mg({48, 1}, "mg:48"); }, "workload", "n must be a power of two, 4 to 512");
    expect_error([] { nas::make_ft({32, 24, 16, 1}, "ft:x"); }, "workload", "powers of two, 2 to 1024");
    expect_error([] { nas::make_cg({100, 101, 1}, "cg:x"); }, "workload", "nonzeros per row must be 1 to min(rows, 1024)");
    expect_error([] { nas::make_is({1u << 12, 1u << 8, 1u << 9, 1}, "is:x"); }, "workload", "at most max_key");
    expect_error([] { nas::make_lu({4, 1}, "lu:x"); }, "workload", "n must be 5 to 256");
    expect_error([] { nas::make_adi(nas::AdiSolver::sp, {12, 0}, "sp:x"); }, "workload", "iterations must be 1 to 100");
    expect_error([] { nas::make_ep({1000, 1024}, "ep:x"); }, "workload", "multiple of batch_pairs");
}


// ---- per kernel at class S: accesses by formula, first touch, remote share, strides --
// thesis-4s, 16 threads, contiguous: thread t on socket t / 4. The remote
// share is counted at page level (an access to a page homed on another
// socket than the thread's), the homes being those the init phase left.
// A page shared by two sockets' blocks goes to whichever touched it first;
// where the sockets' blocks are not page-aligned the expectation allows
// for such straddling pages: (sockets - 1) pages per array, each element
// accessed at most `per_element` times in the phase.

constexpr unsigned sockets = 4;
std::uint64_t straddle(unsigned per_element, unsigned element_bytes = 8) {
    return (sockets - 1) * (page / element_bytes) * per_element;
}

TEST(SimMemoryKernels, CgSparseMatVecGathersAndVectorSweeps) {
    const nas::CgSize s = nas::cg_size('S');
    const std::uint64_t n = s.rows, k = s.nonzeros_per_row;
    const Census& c = census("cg:S");
    // Per row: two row pointers, per nonzero its column index, the gather
    // and the value, q stored; then p·q (2), z and r updated (6), r·r (1),
    // p = r + βp (3).
    EXPECT_EQ(c.measured, s.iterations * n * (2 + 3 * k + 1 + 2 + 6 + 1 + 3));
    expect_first_touch_by_workers(c);
    enum { rowstr, colidx, values, p, q, r, z };
    // Every socket's rows are whole pages of every array (n / 4 rows: 4 KiB
    // of row pointers, 8 pages of matrix, 2 of each vector), so the only
    // remote accesses are the gathers of p and, on each socket's last row,
    // the row pointer after it, on the next socket's first page.
    EXPECT_EQ(c.of("spmv", rowstr).remote, s.iterations * (sockets - 1));
    for (const char* kind : {"spmv", "dot-pq", "axpy-zr", "dot-rr", "update-p"})
        for (unsigned a : {colidx, values, q, r, z}) EXPECT_EQ(c.of(kind, a).remote, 0u) << kind << " array " << a;
    for (const char* kind : {"dot-pq", "axpy-zr", "update-p"}) EXPECT_EQ(c.of(kind, p).remote, 0u) << kind;
    // The gathers: the diagonal is local; the other columns are uniform over
    // the n - 1 others, 3n/4 of them on other sockets.
    const double want = static_cast<double>(k - 1) / static_cast<double>(k) * 0.75 * static_cast<double>(n) /
                        static_cast<double>(n - 1);
    EXPECT_NEAR(share(c.of("spmv", p)), want, 0.015);
    EXPECT_EQ(c.stride.at("spmv").at(22), 4);    // column indices
    EXPECT_EQ(c.stride.at("spmv").at(24), 8);    // values
    EXPECT_EQ(c.stride.at("axpy-zr").at(40), 8);
}

TEST(SimMemoryKernels, MgVCycleSweepsEveryLevel) {
    const nas::MgSize s = nas::mg_size('S');
    const Census& c = census("mg:S");
    const auto stencil = [](std::uint64_t n) { return n * n * (11 * n + 18); };   // 9 lines × (n+2), v and r × n, per row
    const auto restrict_to = [](std::uint64_t nc) { return nc * nc * (19 * nc + 9); };
    const auto prolongate = [](std::uint64_t nc) { return nc * nc * (20 * nc + 4); };
    const auto zero = [](std::uint64_t n) { return (n + 2) * (n + 2) * (n + 2); };
    std::vector<std::uint64_t> lv;
    for (std::uint64_t n = s.n; n >= 2; n /= 2) lv.push_back(n);
    const std::size_t bottom = lv.size() - 1;
    std::uint64_t want = 0;
    for (std::size_t l = 0; l < bottom; ++l) want += restrict_to(lv[l + 1]);
    want += zero(lv[bottom]) + stencil(lv[bottom]);
    for (std::size_t l = bottom; l-- > 0;) want += (l != 0 ? zero(lv[l]) : 0) + prolongate(lv[l + 1]) + 2 * stencil(lv[l]);
    want += stencil(lv[0]);
    EXPECT_EQ(c.measured, s.iterations * want);
    expect_first_touch_by_workers(c);
    // The finest level: 32 interior planes, 2 per thread, 8 per socket. A
    // 27-point row at the first or last plane of a socket's slab reads 3 of
    // its 9 lines from the neighbour socket: 2 × 3 boundaries × n rows × 3
    // lines × (n + 2) loads, give or take the straddling pages (each u
    // value is loaded by 9 rows).
    const std::uint64_t n = s.n;
    const std::uint64_t halo = 2 * (sockets - 1) * n * 3 * (n + 2);
    enum { v, u0, r0 };
    for (const char* kind : {"resid:L0", "psinv:L0", "resid-norm:L0"}) {
        const unsigned lines = std::string(kind) == "psinv:L0" ? r0 : u0;
        EXPECT_GE(c.of(kind, lines).remote, halo - straddle(9)) << kind;
        EXPECT_LE(c.of(kind, lines).remote, halo + straddle(9)) << kind;
        // The pointwise input and output: straddling pages only.
        for (unsigned a : {v, u0, r0})
            EXPECT_LE(a == lines ? 0 : c.of(kind, a).remote, straddle(2)) << kind << " array " << a;
    }
    // Unit stride along the lines at every level; restriction reads the
    // fine lines at stride 2, prolongation writes them at stride 2.
    EXPECT_EQ(c.stride.at("resid:L0").at(300), 8);
    EXPECT_EQ(c.stride.at("resid:L1").at(300), 8);
    EXPECT_EQ(c.stride.at("rprj3:L1").at(510), 16);
    EXPECT_EQ(c.stride.at("interp:L0").at(610), 16);
}

TEST(SimMemoryKernels, FtPassesHaveTheirStrides) {
    const nas::FtSize s = nas::ft_size('S');
    const std::uint64_t nx = s.nx, ny = s.ny, nz = s.nz, n = nx * ny * nz;
    const Census& c = census("ft:S");
    // evolve: 4 per point; a 1-D FFT of m points: log2(m) stages of m/2
    // butterflies of 5 accesses, n/m lines per pass.
    const auto pass = [n](std::uint64_t m) { return n / m * (m / 2) * static_cast<std::uint64_t>(std::log2(m)) * 5; };
    EXPECT_EQ(c.measured, s.iterations * (4 * n + pass(nx) + pass(ny) + pass(nz)));
    expect_first_touch_by_workers(c);
    enum { u0, u1, factors, roots };
    // x and y passes and evolve work on the thread's own z planes (16 KiB
    // each: whole pages): nothing remote but the roots (thread 0's, so
    // remote to the 12 threads off socket 0).
    for (const char* kind : {"evolve", "fft-x", "fft-y"}) {
        for (unsigned a : {u0, u1, factors}) EXPECT_EQ(c.of(kind, a).remote, 0u) << kind << " array " << a;
        if (std::string(kind) != "evolve") {
            EXPECT_DOUBLE_EQ(share(c.of(kind, roots)), 0.75) << kind;
        }
    }
    // z pass: each thread's lines cross all nz planes, of which a quarter
    // are its socket's.
    EXPECT_DOUBLE_EQ(share(c.of("fft-z", u1)), 0.75);
    EXPECT_EQ(c.stride.at("fft-x").at(301), 16);
    EXPECT_EQ(c.stride.at("fft-y").at(301), static_cast<std::int64_t>(nx * 16));
    EXPECT_EQ(c.stride.at("fft-z").at(301), static_cast<std::int64_t>(nx * ny * 16));
}

TEST(SimMemoryKernels, IsCountsScattersAndRanks) {
    const nas::IsSize s = nas::is_size('S');
    const std::uint64_t n = s.keys, nb = s.buckets;
    const Census& c = census("is:S");
    // count: nb + 3 per key; bucket-ptrs: per bucket every thread's count
    // and one store; scatter: 4 per key; rank: 3 per key and 3 per key value.
    EXPECT_EQ(c.measured, s.iterations * ((threads * nb + 3 * n) + threads * nb * (threads + 1) + 4 * n + (3 * n + 3 * s.max_key)));
    expect_first_touch_by_workers(c);
    enum { keys, key_buff2, key_buff1, bucket_size, bucket_ptrs };
    // Keys (2 pages a socket) and counter rows (2 KiB a thread) are
    // page-aligned per socket: counting is local, and reading every
    // thread's counts is remote for 3 threads in 4.
    EXPECT_EQ(c.of("count").remote, 0u);
    EXPECT_DOUBLE_EQ(share(c.of("bucket-ptrs", bucket_size)), 0.75);
    EXPECT_EQ(c.of("bucket-ptrs", bucket_ptrs).remote, 0u);
    // The scatter: keys and pointers local, each key to the rank range of
    // its bucket, a quarter of which are on the thread's socket.
    EXPECT_EQ(c.of("scatter", keys).remote, 0u);
    EXPECT_EQ(c.of("scatter", bucket_ptrs).remote, 0u);
    EXPECT_NEAR(share(c.of("scatter", key_buff2)), 0.75, 0.03);
    // Ranking reads the thread's own contiguous range of the buffer, once
    // per position: at most the 3 pages shared between sockets are remote.
    EXPECT_LE(c.of("rank", key_buff2).remote, straddle(1, 4));
    EXPECT_EQ(c.stride.at("count").at(201), 4);
}

// The triangular sweeps of one thread, within one z plane of a hyperplane
// i + j + k = l: j + 1 and i - 1, one row less one cell further on.
TEST(SimMemoryKernels, LuHyperplaneSweeps) {
    const nas::GridSize s = nas::lu_size('S');
    const std::uint64_t n = s.n, in = (n - 2) * (n - 2) * (n - 2), all = n * n * n;
    const Census& c = census("lu:S");
    // Per interior point: scale 10, lower 53, upper 53, update 15, the
    // fluxes 3 × (25 + 4 + 10); per point: aux 7, forcing 10.
    EXPECT_EQ(c.measured, s.iterations * ((10 + 53 + 53 + 15 + 3 * 39) * in + 17 * all));
    expect_first_touch_by_workers(c);
    enum { u, rsd, frct, rho_i, qs };
    // One interior plane a thread, 4 a socket. flux-z reads u two planes
    // either side: at each of the 3 socket boundaries the planes b-1, b,
    // b+1, b+2 reach 5, 10, 10, 5 loads a point across it; each u value is
    // loaded by 5 points.
    const std::uint64_t halo = (sockets - 1) * 30 * (n - 2) * (n - 2);
    EXPECT_GE(c.of("rhs:flux-z", u).remote, halo - straddle(5));
    EXPECT_LE(c.of("rhs:flux-z", u).remote, halo + straddle(5));
    // Pointwise phases: straddling pages only.
    EXPECT_LE(c.of("scale", rsd).remote, straddle(2));
    EXPECT_LE(c.of("update", u).remote, straddle(2));
    EXPECT_LE(c.of("update", rsd).remote, straddle(1));
    EXPECT_EQ(c.stride.at("lower").at(350), static_cast<std::int64_t>((n - 1) * 40));
    EXPECT_EQ(c.stride.at("upper").at(450), -static_cast<std::int64_t>((n - 1) * 40));
    EXPECT_EQ(c.stride.at("rhs:flux-z").at(1300), 40);   // i innermost in every direction
}

// BT and SP: the solves along x and y stay in the thread's z planes; the z
// solve is cut by y row and crosses every plane.
void expect_adi(const std::string& spec, const nas::GridSize& s, std::uint64_t per_line, std::uint64_t per_point,
                std::uint64_t per_interior) {
    const std::uint64_t n = s.n, in = (n - 2) * (n - 2) * (n - 2), all = n * n * n;
    const Census& c = census(spec);
    EXPECT_EQ(c.measured, s.iterations * (per_point * all + per_interior * in + 3 * (n - 2) * (n - 2) * per_line)) << spec;
    expect_first_touch_by_workers(c);
    enum { u, rhs };
    // Planes of 40 n² B: a socket's 5-component planes are not page-aligned,
    // so up to 3 pages of each grid straddle two sockets; a solve touches
    // each rhs value at most 6 times.
    for (const char* kind : {"x-solve", "y-solve"}) EXPECT_LE(c.of(kind, rhs).remote, straddle(6)) << spec << " " << kind;
    // z: n - 2 interior planes on 16 threads, one each (threads 14, 15
    // idle); sockets own planes 0-4, 5-8, 9-12, 13-15 (the boundary planes
    // with the first and last thread); thread t's rows see the planes of
    // its socket as local.
    const std::uint64_t owned[] = {5, 4, 4, 3}, rows[] = {4, 4, 4, 2};
    std::uint64_t local = 0, lines = 0;
    for (unsigned so = 0; so < sockets; ++so) {
        local += rows[so] * owned[so];
        lines += rows[so] * n;
    }
    const double want = 1.0 - static_cast<double>(local) / static_cast<double>(lines);
    const Tally z = c.of("z-solve", rhs);
    EXPECT_NEAR(share(z), want, static_cast<double>(straddle(6)) / static_cast<double>(z.accesses)) << spec;
    EXPECT_EQ(c.stride.at("x-solve").at(spec == "bt:S" ? 200 : 260), 40) << spec;
    EXPECT_EQ(c.stride.at("y-solve").at(spec == "bt:S" ? 200 : 260), static_cast<std::int64_t>(40 * n)) << spec;
    EXPECT_EQ(c.stride.at("z-solve").at(spec == "bt:S" ? 200 : 260), static_cast<std::int64_t>(40 * n * n)) << spec;
}

TEST(SimMemoryKernels, BtBlockTridiagonalLineSolves) {
    ASSERT_EQ(nas::bt_size('S').n, 16u);   // the plane ownership below is for n = 16
    // Per line: forward 40 a point + rhs(q-1) (5, n - 1 points), backward
    // 40 a point (n - 1 points). Per point: aux 5 + 6, forcing 10; per
    // interior point: the fluxes 3 × (25 + 6 + 10), add 15.
    const std::uint64_t n = 16;
    expect_adi("bt:S", nas::bt_size('S'), 40 * n + 5 * (n - 1) + 40 * (n - 1), 21, 123 + 15);
}

TEST(SimMemoryKernels, SpPentadiagonalLineSolves) {
    ASSERT_EQ(nas::sp_size('S').n, 16u);
    // Per line: forward 28 a point + rhs(q-1), rhs(q-2) where they exist;
    // backward 21 a point (n - 1 points) + rhs(q+2) (n - 2 points). Per
    // point: aux 5 + 7, forcing 10; per interior point: the fluxes 123,
    // txinvr and tzetar 16 each, ninvr and pinvr 10 each, add 15.
    const std::uint64_t n = 16;
    expect_adi("sp:S", nas::sp_size('S'), 28 * n + 5 * (n - 1) + 5 * (n - 2) + 21 * (n - 1) + 5 * (n - 2), 22,
               123 + 52 + 15);
}

TEST(SimMemoryKernels, EpStaysInItsTables) {
    const nas::EpSize s = nas::ep_size('S');
    const Census& c = census("ep:S");
    // 2 stores and 2 loads a pair, and a counter's load and store for each
    // pair inside the unit circle: π/4 of them.
    ASSERT_GE(c.measured, 4 * s.pairs);
    const std::uint64_t extra = c.measured - 4 * s.pairs;
    EXPECT_EQ(extra % 2, 0u);
    EXPECT_NEAR(static_cast<double>(extra / 2) / static_cast<double>(s.pairs), std::numbers::pi / 4, 0.01);
    expect_first_touch_by_workers(c);
    EXPECT_EQ(c.remote, 0u);
    // The tables fit the L1: after init, nothing misses.
    EXPECT_EQ(c.report.l1.demand_misses, 0u);
    EXPECT_EQ(c.stride.at("batches").at(200), 8);
}

// ---- across prefetchers and placements: what the patterns imply ----------------

// MG's lines are strided at every level and short at the coarse ones: a
// deeper stride prefetcher predicts more lines from the same triggers.
TEST(SimMemoryKernels, MgDeeperStrideIssuesMore) {
    const mem::WorkloadResult k8 = run("mg:S", "stride:8");
    const mem::WorkloadResult k64 = run("mg:S", "stride:64");
    EXPECT_GT(k64.report.prefetch_counts.issued(), k8.report.prefetch_counts.issued());
    EXPECT_EQ(k64.report.accesses, k8.report.accesses);
}

// FT's z pass reads other sockets' planes at a constant stride: NASP's
// remote-only L3 prefetches fire there, though a stride of whole planes
// (16 KiB at class S) puts most far predictions in pages the TLB does not
// hold, which the simulator drops. LU works on its own planes: most of
// NASP's far predictions are dropped as local.
TEST(SimMemoryKernels, NaspFarPrefetchesFollowRemoteStrides) {
    const mem::PrefetchCounters ft = run("ft:S", "nasp:0:64").report.prefetch_counts;
    EXPECT_GT(ft.issued_l3, 0u);
    EXPECT_EQ(ft.issued_l1, 0u);
    EXPECT_GT(ft.dropped_tlb, ft.issued_l3);
    const mem::PrefetchCounters lu = run("lu:S", "nasp:0:64").report.prefetch_counts;
    EXPECT_GT(lu.dropped_local, lu.issued_l3);
}

// EP's tables stay in the L1: no prefetcher changes its time.
TEST(SimMemoryKernels, EpIgnoresPrefetchers) {
    const double none = run("ep:S", "none").measured_s;
    for (const char* p : {"stride:64", "nasp:8:64"}) EXPECT_NEAR(run("ep:S", p).measured_s / none, 1.0, 0.001) << p;
}

// Placement, at DRAM. On thesis-4s every class S working set stays in the
// L3s after init and only lines another socket wrote reach DRAM, so this
// test shrinks the caches 32-fold (L1 2 KiB, L2 8 KiB, L3 128 KiB a
// socket), below the S working sets: DRAM traffic then follows the page
// homes. Interleaved pages: 3 in 4 lines come from another socket, whatever
// the kernel. First touch: MG and LU, local by design, fetch remotely only
// what their halos read across the 3 socket boundaries (MG: 2 of each
// socket's 8 planes, reading 3 of 9 lines across; LU: the flux-z halo, 30
// of the 100 u loads per point column of each socket's 4 planes) and the
// straddling pages: under a quarter.
TEST(SimMemoryKernels, FirstTouchKeepsLocalKernelsLocalInDram) {
    mem::HierarchyPreset p = mem::preset("thesis-4s");
    p.l1.bytes /= 32;
    p.l2.bytes /= 32;
    p.l3.bytes /= 32;
    const auto remote = [](const mem::MemoryReport& r) {
        return static_cast<double>(r.dram_remote_bytes) / static_cast<double>(r.dram_remote_bytes + r.dram_local_bytes);
    };
    for (const char* spec : {"mg:S", "lu:S"}) {
        mem::RunOptions o;
        o.threads = threads;
        const mem::MemoryReport first = mem::run_workload(*mem::make_workload(spec), p, o).report;
        o.mapping = mem::parse_page_mapping("interleave");
        const mem::MemoryReport inter = mem::run_workload(*mem::make_workload(spec), p, o).report;
        EXPECT_GT(first.dram_local_bytes + first.dram_remote_bytes, 0u) << spec;
        EXPECT_LT(remote(first), 0.25) << spec;
        EXPECT_NEAR(remote(inter), 0.75, 0.03) << spec;
    }
}

TEST(SimMemoryKernels, Deterministic) {
    const mem::WorkloadResult a = run("is:S", "stride:8"), b = run("is:S", "stride:8");
    EXPECT_EQ(a.measured_s, b.measured_s);
    EXPECT_EQ(a.report.accesses, b.report.accesses);
    EXPECT_EQ(a.report.l1.demand_misses, b.report.l1.demand_misses);
    // Other thread counts: the same keys, the same total.
    mem::RunOptions o;
    o.threads = 5;
    EXPECT_EQ(mem::run_workload(*mem::make_workload("cg:S"), mem::preset("thesis-4s"), o).report.accesses,
              census("cg:S").measured);
}
