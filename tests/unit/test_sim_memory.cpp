// Tests for the memory-hierarchy simulator: prefetcher modules on hand-made
// access streams, the spec and preset parsers, and the analytic and
// microbenchmark checks (latency steps, exact DRAM latencies, STREAM
// bandwidth, stride coverage, NASP on one node, the NUMA microbenchmark).
#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support.hpp"
#include "numaware/error.hpp"
#include "numaware/memory_sim.hpp"
#include "numaware/team.hpp"
#include "sim/memory/cache.hpp"
#include "sim/memory/prefetchers.hpp"

namespace mem = numaware::sim::memory;
using mem::detail::Prediction;
using mem::detail::Target;
using numaware::test::expect_error;

namespace {

// A module's predictions for one access, one line each (runs expanded).
std::vector<Prediction> feed(mem::detail::Prefetcher& p, std::uint64_t pc, std::uint64_t line, double now = 0) {
    std::vector<Prediction> runs, out;
    p.on_access({pc, line, false, false, now}, runs);
    for (const Prediction& r : runs) {
        EXPECT_GE(r.count, 1u);
        for (std::uint32_t i = 0; i < r.count; ++i) out.push_back({r.at(i), r.target});
    }
    return out;
}

// The one module a spec names.
std::unique_ptr<mem::detail::Prefetcher> single(const mem::PrefetchSpec& spec) {
    auto v = mem::detail::make_prefetchers(spec, 64);
    EXPECT_EQ(v.size(), 1u) << spec.text;
    return std::move(v.front());
}

std::vector<std::uint64_t> lines_of(const std::vector<Prediction>& v) {
    std::vector<std::uint64_t> out;
    for (const Prediction& p : v) out.push_back(p.line);
    return out;
}

// One PC reading `lines` consecutive lines of one array, 8 bytes per access.
class Sequential final : public mem::AccessStream {
public:
    Sequential(std::uint64_t base, std::uint64_t lines, bool write) : base_(base), n_(lines * 8), write_(write) {}
    std::size_t next(std::span<mem::Access> out) override {
        std::size_t k = 0;
        for (; k < out.size() && i_ < n_; ++k, ++i_) out[k] = mem::Access{base_ + i_ * 8, 1, 7, 8, write_, false};
        return k;
    }

private:
    std::uint64_t base_, n_, i_ = 0;
    bool write_;
};

std::vector<mem::ThreadStream> one(unsigned core, std::unique_ptr<mem::AccessStream> s) {
    std::vector<mem::ThreadStream> v;
    v.push_back({core, std::move(s)});
    return v;
}

mem::WorkloadResult run(const std::string& workload, const std::string& preset, const std::string& prefetch,
                        const std::string& mapping = "first-touch", unsigned threads = 0) {
    mem::RunOptions o;
    o.prefetch = mem::parse_prefetch(prefetch);
    o.mapping = mem::parse_page_mapping(mapping);
    o.threads = threads;
    return mem::run_workload(*mem::make_workload(workload), mem::preset(preset), o);
}

double served_latency(const mem::LevelCounters& c) { return c.served_latency_ns / static_cast<double>(c.served); }

}  // namespace

// ---- parsers -----------------------------------------------------------------

TEST(SimMemorySpec, ParsesEveryForm) {
    EXPECT_EQ(mem::parse_prefetch("none").kind, mem::PrefetchKind::none);
    EXPECT_EQ(mem::parse_prefetch("next-line").kind, mem::PrefetchKind::next_line);
    const mem::PrefetchSpec s = mem::parse_prefetch("stride:24");
    EXPECT_EQ(s.kind, mem::PrefetchKind::stride);
    EXPECT_EQ(s.l1_degree, 24u);
    const mem::PrefetchSpec n = mem::parse_prefetch("nasp:8:64");
    EXPECT_EQ(n.kind, mem::PrefetchKind::nasp);
    EXPECT_EQ(n.l1_degree, 8u);
    EXPECT_EQ(n.far_degree, 64u);
    EXPECT_EQ(n.text, "nasp:8:64");
    EXPECT_EQ(mem::parse_prefetch("nasp:0:128").l1_degree, 0u);
    EXPECT_EQ(mem::parse_prefetch("multilevel:8:64").kind, mem::PrefetchKind::multilevel);
}

TEST(SimMemorySpec, NamesTheFieldAndTheLimit) {
    expect_error([] { mem::parse_prefetch("nasp:64:8"); }, "prefetch", "k_rem must be >= k^L1");
    expect_error([] { mem::parse_prefetch("multilevel:9:8"); }, "prefetch", "k must be >= k^L1");
    expect_error([] { mem::parse_prefetch("stride:0"); }, "prefetch", "K must be an integer in 1..256");
    expect_error([] { mem::parse_prefetch("stride:257"); }, "prefetch", "1..256");
    expect_error([] { mem::parse_prefetch("stride:x"); }, "prefetch", "got 'x'");
    expect_error([] { mem::parse_prefetch("stride"); }, "prefetch", "expected stride:K");
    expect_error([] { mem::parse_prefetch("nasp:8"); }, "prefetch", "expected nasp:K_L1:K_REM");
    expect_error([] { mem::parse_prefetch("ghb"); }, "prefetch", "known: none, next-line");
    expect_error([] { mem::parse_prefetch("na-ampm:9:4"); }, "prefetch", "k_rem must be >= k^L1");
    expect_error([] { mem::parse_prefetch("bop:2"); }, "prefetch", "expected bop");
    expect_error([] { mem::parse_page_mapping("bind:x"); }, "mapping", "first-touch, interleave, bind:N");
    expect_error([] { mem::make_workload("fft"); }, "workload", "known: stream");
    expect_error([] { mem::make_workload("chase"); }, "workload", "chase:BYTES");
    expect_error([] { mem::make_workload("chase:12Q"); }, "workload", "BYTES must be a size");
}

TEST(SimMemoryPreset, ThesisMachineAsPublished) {
    const mem::HierarchyPreset p = mem::preset("thesis-4s");
    EXPECT_EQ(p.sockets(), 4u);
    EXPECT_EQ(p.cores(), 16u);
    EXPECT_EQ(p.l1.bytes, 64u * 1024);
    EXPECT_EQ(p.l1.ways, 2u);
    EXPECT_EQ(p.l2.bytes, 256u * 1024);
    EXPECT_EQ(p.l2.ways, 8u);
    EXPECT_EQ(p.l3.bytes, 4u * 1024 * 1024);
    EXPECT_EQ(p.l3.ways, 16u);
    EXPECT_EQ(p.l3_slices, 8u);
    EXPECT_EQ(p.l1.mshrs, 24u);
    EXPECT_EQ(p.l2.mshrs, 24u);
    EXPECT_EQ(p.l3.mshrs, 32u);
    for (std::size_t r = 0; r < 4; ++r)
        for (std::size_t h = 0; h < 4; ++h) {
            const double want = r == h ? 80.0 : (r / 2 == h / 2 ? 160.0 : 240.0);
            EXPECT_DOUBLE_EQ(p.timed.latency_ns[r][h], want) << r << "," << h;
            EXPECT_DOUBLE_EQ(mem::preset("thesis-4s-nonuma").timed.latency_ns[r][h], 80.0);
        }
    EXPECT_FALSE(p.sources.empty());
    EXPECT_EQ(mem::preset("thesis-4s:2").sockets(), 2u);
    EXPECT_EQ(mem::preset("skylake-sp-2s").cores(), 56u);
}

// Four Xeon E5-4650 in a ring of QPI links: a socket's two neighbours one
// hop away, the opposite socket two; a 20 MiB 20-way L3 per socket.
TEST(SimMemoryPreset, SandyBridgeEpRingAsSourced) {
    const mem::HierarchyPreset p = mem::preset("sandybridge-ep-4s");
    EXPECT_EQ(p.sockets(), 4u);
    EXPECT_EQ(p.cores(), 32u);
    EXPECT_EQ(p.l1.bytes, 32u * 1024);
    EXPECT_EQ(p.l1.ways, 8u);
    EXPECT_EQ(p.l3.bytes, 20u * 1024 * 1024);
    EXPECT_EQ(p.l3.ways, 20u);
    EXPECT_DOUBLE_EQ(p.ghz, 2.7);
    const double hop[4][4] = {{0, 1, 2, 1}, {1, 0, 1, 2}, {2, 1, 0, 1}, {1, 2, 1, 0}};
    for (std::size_t r = 0; r < 4; ++r)
        for (std::size_t h = 0; h < 4; ++h) {
            EXPECT_DOUBLE_EQ(p.timed.latency_ns[r][h], 80.0 + 80.0 * hop[r][h]) << r << "," << h;
            EXPECT_DOUBLE_EQ(r == h ? p.timed.memory_gbps[r] : p.timed.link_gbps[r][h], r == h ? 38.4 : 16.0);
        }
    // The clockwise links carry their one-hop path and the two two-hop
    // paths routed over them; the others one path each (not shared).
    ASSERT_EQ(p.timed.shared_links.size(), 4u);
    for (const auto& l : p.timed.shared_links) EXPECT_EQ(l.paths.size(), 3u) << l.name;
    EXPECT_EQ(mem::preset("sandybridge-ep-4s:2").sockets(), 2u);
    EXPECT_DOUBLE_EQ(mem::preset("sandybridge-ep-4s:2").timed.latency_ns[0][1], 160.0);
    EXPECT_EQ(expect_error([] { mem::preset("sandybridge-ep-4s:3"); }).field(), "sockets");
}

TEST(SimMemoryPreset, RejectsUnknownNamesAndBadGeometry) {
    expect_error([] { mem::preset("gem5"); }, "preset", "known: thesis-4s, thesis-4s-nonuma, skylake-sp-2s");
    expect_error([] { mem::preset("thesis-4s:9"); }, "preset", "1 to 4 sockets");
    expect_error([] { mem::preset("thesis-4s:x"); }, "preset", "positive integer");
    mem::HierarchyPreset p = mem::preset("thesis-4s");
    p.l1.bytes = 1000;
    expect_error([&] { p.validate(); }, "l1", "not a whole number");
    expect_error([] { mem::with_remote_latency(mem::preset("thesis-4s"), 40); }, "remote_ns", ">= the local");
    const mem::HierarchyPreset q = mem::with_remote_latency(mem::preset("thesis-4s:2"), 320);
    EXPECT_DOUBLE_EQ(q.timed.latency_ns[0][1], 320.0);
    EXPECT_DOUBLE_EQ(q.timed.latency_ns[1][1], 80.0);
}

// ---- the memory controllers and links --------------------------------------------

TEST(SimMemoryServers, ARequestForLaterDoesNotHoldUpOneForSooner) {
    // Interleaved STREAM on thesis-4s: most reads cross a link, and the
    // sockets' 32 DRAM MSHRs are full, so requests that waited for one ask
    // for a time to come. A stride prefetcher moves the same lines; it must
    // not make the run slower. With one "next free" time per controller and
    // link (model revision 20261202.2) a request booked for later held up
    // the ones for sooner behind it: stride:8 took 0.888 ms against 0.666.
    const mem::WorkloadResult none = run("stream:8", "thesis-4s", "none", "interleave");
    const mem::WorkloadResult stride = run("stream:8", "thesis-4s", "stride:8", "interleave");
    EXPECT_EQ(stride.report.dram_local_bytes + stride.report.dram_remote_bytes,
              none.report.dram_local_bytes + none.report.dram_remote_bytes);
    EXPECT_LE(stride.measured_s, none.measured_s * 1.02) << stride.measured_s << " s against " << none.measured_s;
}

// ---- another machine under a preset's cores and caches (on_machine) ------------

TEST(SimMemoryMachine, ItsNodesAreTheSocketsAndItsCpusTheCores) {
    const numaware::sim::TimedMachine t =
        numaware::sim::timed_from_spec("nodes=3 cpus=4,2,0 mem=1G,1G,2G latency=90,150,300/150,90,300/300,300,300");
    const mem::HierarchyPreset base = mem::preset("thesis-4s");
    const mem::HierarchyPreset p = mem::on_machine(base, t);
    EXPECT_EQ(p.sockets(), 3u);
    EXPECT_EQ(p.cores(), 6u);
    for (std::size_t r = 0; r < 3; ++r)
        for (std::size_t h = 0; h < 3; ++h) EXPECT_DOUBLE_EQ(p.timed.latency_ns[r][h], t.latency_ns[r][h]);
    // The machine lists no caches: the preset's L1 and L2, and its 1 MiB of
    // L3 per core times the 4 CPUs of the largest node.
    EXPECT_EQ(p.l1.bytes, base.l1.bytes);
    EXPECT_EQ(p.l2.bytes, base.l2.bytes);
    EXPECT_EQ(p.l3.bytes, 4u << 20);
    EXPECT_EQ(p.l3_slices, 8u);
    EXPECT_EQ(p.ghz, base.ghz);
    EXPECT_EQ(p.rob_window, base.rob_window);
    EXPECT_TRUE(p.name.starts_with("thesis-4s on ")) << p.name;
    EXPECT_FALSE(p.sources.empty());
    // A memory-only node is a home no core is local to: a stream bound to it
    // reads every line remotely, and takes longer than under first touch.
    mem::RunOptions o;
    o.mapping = mem::parse_page_mapping("bind:2");
    const mem::WorkloadResult far = mem::run_workload(*mem::make_workload("stream:8"), p, o);
    EXPECT_GT(far.report.dram_remote_bytes, 0u);
    EXPECT_EQ(far.report.dram_local_bytes, 0u);
    o.mapping = mem::parse_page_mapping("first-touch");
    const mem::WorkloadResult near = mem::run_workload(*mem::make_workload("stream:8"), p, o);
    // (First touch leaves only the pages where two threads' parts meet remote.)
    EXPECT_LT(near.report.dram_remote_bytes * 100, far.report.dram_remote_bytes);
    EXPECT_GT(far.measured_s, near.measured_s);
}

TEST(SimMemoryMachine, CacheSizesComeFromTheMachinesCacheList) {
    numaware::Machine m = numaware::Machine::from_synthetic("nodes=2 cpus-per-node=4 mem-per-node=1G");
    const auto cache = [](unsigned level, const char* type, std::uint64_t bytes, std::vector<unsigned> cpus) {
        return numaware::Cache{level, type, bytes, 64, std::move(cpus)};
    };
    for (unsigned c = 0; c < 8; c += 2) {
        m.caches.push_back(cache(1, "data", 48 << 10, {c, c + 1}));         // two SMT siblings: 24 KiB each
        m.caches.push_back(cache(1, "instruction", 1 << 20, {c, c + 1}));   // not a data cache: ignored
        m.caches.push_back(cache(2, "unified", 1280 << 10, {c}));          // 1.25 MiB, one CPU
        m.caches.push_back(cache(2, "unified", 1280 << 10, {c + 1}));
    }
    m.caches.push_back(cache(3, "unified", 30 << 20, {0, 1, 2, 3, 4, 5}));   // spans both nodes: 20 + 10 MiB
    m.caches.push_back(cache(3, "unified", 6 << 20, {6, 7}));                // node 1: 10 + 6 MiB
    const mem::HierarchyPreset p = mem::on_machine(mem::preset("thesis-4s"), numaware::sim::timed(m));
    EXPECT_EQ(p.l1.bytes, 24u << 10);     // 192 sets of 2 ways
    EXPECT_EQ(p.l2.bytes, 1280u << 10);   // 2,560 sets of 8 ways
    EXPECT_EQ(p.l3.bytes, 20u << 20);     // node 0's 4 of the 6 CPUs of the 30 MiB cache
    EXPECT_EQ(p.cores(), 8u);
    // Sizes that are not whole sets of the preset's ways are cut down.
    m.caches.push_back(cache(2, "unified", 1300 << 10, {0}));
    const mem::HierarchyPreset q = mem::on_machine(mem::preset("thesis-4s"), numaware::sim::timed(m));
    EXPECT_EQ(q.l2.bytes, 1300u * 1024 / 512 * 512);
    // And a simulation runs on it.
    mem::RunOptions o;
    EXPECT_GT(mem::run_workload(*mem::make_workload("cg:S"), q, o).measured_s, 0.0);
}

TEST(SimMemoryMachine, AMachineWithoutCpusIsRefused) {
    expect_error([] { mem::on_machine(mem::preset("thesis-4s"), numaware::sim::timed_from_spec("nodes=2 cpus=0,0")); },
                 "machine", "has no CPUs");
}

TEST(SimMemorySim, RejectsBadCoresAndNodes) {
    expect_error(
        [] {
            mem::MemorySim sim(mem::preset("thesis-4s"), mem::parse_prefetch("none"), mem::parse_page_mapping("bind:4"));
        },
        "mapping", "nodes 0..3");
    mem::MemorySim sim(mem::preset("thesis-4s"), mem::parse_prefetch("none"), {});
    expect_error([&] { sim.run(one(16, std::make_unique<Sequential>(0, 4, false))); }, "core", "cores 0..15");
    expect_error(
        [&] {
            std::vector<mem::ThreadStream> v;
            v.push_back({3, std::make_unique<Sequential>(0, 4, false)});
            v.push_back({3, std::make_unique<Sequential>(4096, 4, false)});
            sim.run(std::move(v));
        },
        "core", "two streams");
    EXPECT_EQ(sim.report().accesses, 0u);
}

// ---- prefetcher modules --------------------------------------------------------

TEST(SimMemoryPrefetch, StrideTableNeedsTwoMatchingStrides) {
    mem::detail::StrideTable t;
    EXPECT_EQ(t.observe(1, 100), 0);   // new entry
    EXPECT_EQ(t.observe(1, 102), 0);   // first stride: confidence 4 -> 3, stride learnt
    EXPECT_EQ(t.observe(1, 104), 2);   // confirmed: 4, at the threshold
    EXPECT_EQ(t.observe(1, 104), 0);   // the same line: nothing new
    EXPECT_EQ(t.observe(1, 106), 2);
    EXPECT_EQ(t.observe(1, 107), 2);   // one miss: 5 -> 4, still confident in 2
    EXPECT_EQ(t.observe(2, 50), 0);    // another PC has its own entry
    EXPECT_EQ(t.observe(1, 109), 2);
}

// An empty entry holds the largest pc: that pc must still start with an
// entry of its own and learn its stride like any other, beside a pc that
// shares its set.
TEST(SimMemoryPrefetch, StrideTableTreatsTheLargestPcAsAnyOther) {
    mem::detail::StrideTable t;
    const std::uint64_t top = ~std::uint64_t{0};
    EXPECT_EQ(t.observe(top, 100), 0);   // new entry, not an empty one taken for it
    EXPECT_EQ(t.observe(top, 103), 0);
    EXPECT_EQ(t.observe(top, 106), 3);
    EXPECT_EQ(t.observe(top, 106), 0);   // the same line
    EXPECT_EQ(t.observe(top, 109), 3);
}

TEST(SimMemoryPrefetch, StrideFollowsNegativeStrides) {
    auto p = single(mem::parse_prefetch("stride:3"));
    EXPECT_TRUE(feed(*p, 9, 1000).empty());
    EXPECT_TRUE(feed(*p, 9, 997).empty());
    EXPECT_EQ(lines_of(feed(*p, 9, 994)), (std::vector<std::uint64_t>{991, 988, 985}));
}

TEST(SimMemoryPrefetch, StrideDegreeAndTargets) {
    auto p = single(mem::parse_prefetch("stride:4"));
    feed(*p, 1, 0);
    feed(*p, 1, 1);
    const auto v = feed(*p, 1, 2);
    EXPECT_EQ(lines_of(v), (std::vector<std::uint64_t>{3, 4, 5, 6}));
    for (const Prediction& x : v) EXPECT_EQ(x.target, Target::l1);
}

TEST(SimMemoryPrefetch, NaspSplitsByOrder) {
    auto p = single(mem::parse_prefetch("nasp:2:5"));
    feed(*p, 1, 10);
    feed(*p, 1, 11);
    const auto v = feed(*p, 1, 12);
    ASSERT_EQ(lines_of(v), (std::vector<std::uint64_t>{13, 14, 15, 16, 17}));
    EXPECT_EQ(v[0].target, Target::l1);
    EXPECT_EQ(v[1].target, Target::l1);
    for (std::size_t i = 2; i < v.size(); ++i) EXPECT_EQ(v[i].target, Target::l3_if_remote);
    auto m = single(mem::parse_prefetch("multilevel:2:5"));
    feed(*m, 1, 10);
    feed(*m, 1, 11);
    const auto w = feed(*m, 1, 12);
    for (std::size_t i = 2; i < w.size(); ++i) EXPECT_EQ(w[i].target, Target::l3);
}

TEST(SimMemoryPrefetch, NextLineOncePerLine) {
    auto p = single(mem::parse_prefetch("next-line"));
    EXPECT_EQ(lines_of(feed(*p, 1, 5)), (std::vector<std::uint64_t>{6}));
    EXPECT_TRUE(feed(*p, 2, 5).empty());
    EXPECT_EQ(lines_of(feed(*p, 1, 6)), (std::vector<std::uint64_t>{7}));
}

TEST(SimMemoryPrefetch, AmpmMatchesStridesInTheZoneNearestFirst) {
    auto p = single(mem::parse_prefetch("ampm"));
    EXPECT_TRUE(feed(*p, 1, 0).empty());
    EXPECT_TRUE(feed(*p, 1, 1).empty());
    EXPECT_EQ(lines_of(feed(*p, 1, 2)), (std::vector<std::uint64_t>{3}));      // 1, 0 accessed: stride 1
    EXPECT_EQ(lines_of(feed(*p, 1, 3)), (std::vector<std::uint64_t>{4}));      // k = 1
    EXPECT_EQ(lines_of(feed(*p, 1, 4)), (std::vector<std::uint64_t>{5, 6}));   // k = 1, then k = 2 (2, 0)
    // Over a whole zone: no line twice, nearest first, at most the degree (4).
    std::set<std::uint64_t> seen{3, 4, 5, 6};
    std::size_t most = 0;
    for (std::uint64_t l = 5; l < 32; ++l) {
        const auto v = lines_of(feed(*p, 1, l));
        most = std::max(most, v.size());
        for (std::size_t k = 0; k < v.size(); ++k) {
            EXPECT_TRUE(seen.insert(v[k]).second) << v[k] << " predicted twice";
            EXPECT_GT(v[k], l);
            EXPECT_LT(v[k], 32u);   // within the 2 KiB zone
            if (k > 0) {
                EXPECT_GT(v[k], v[k - 1]);
            }
        }
    }
    EXPECT_GE(most, 2u);
    EXPECT_LE(most, 4u);
    // Another zone has its own map: one access, no pattern.
    EXPECT_TRUE(feed(*p, 1, 64).empty());
}

TEST(SimMemoryPrefetch, NaAmpmSplitsTheCandidateList) {
    auto p = single(mem::parse_prefetch("na-ampm:1:5"));
    std::size_t most = 0;
    for (std::uint64_t l = 0; l < 32; ++l) {
        const auto v = feed(*p, 1, l);
        most = std::max(most, v.size());
        for (std::size_t k = 0; k < v.size(); ++k)
            EXPECT_EQ(v[k].target, k == 0 ? Target::l1 : Target::l3_if_remote) << "line " << l << " order " << k + 1;
    }
    EXPECT_GE(most, 2u);
    EXPECT_LE(most, 5u);
}

TEST(SimMemoryPrefetch, BestOffsetListAsPublished) {
    const std::vector<unsigned> v = mem::detail::best_offset_list();
    EXPECT_EQ(v.size(), 52u);
    EXPECT_EQ(std::vector<unsigned>(v.begin(), v.begin() + 8), (std::vector<unsigned>{1, 2, 3, 4, 5, 6, 8, 9}));
    EXPECT_EQ(v.back(), 256u);
    EXPECT_EQ(std::count(v.begin(), v.end(), 7u), 0);
}

// Prefetches that take 20 ns while misses come every 1 ns: only offsets of
// at least 20 lines would have been timely, and best-offset learns 20.
TEST(SimMemoryPrefetch, BestOffsetLearnsATimelyOffset) {
    auto p = single(mem::parse_prefetch("bop"));
    EXPECT_EQ(p->level(), mem::detail::Level::l2);
    std::vector<Prediction> out;
    for (std::uint64_t i = 0; i < 20000; ++i) {
        out.clear();
        const double now = static_cast<double>(i);
        p->on_access({1, 100000 + i, false, false, now}, out);
        for (const Prediction& x : out) p->on_issued(x.line, now + 20);
    }
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].count, 1u);
    EXPECT_EQ(out[0].line, 100000 + 19999 + 20);
    EXPECT_EQ(out[0].target, Target::l2);
}

TEST(SimMemoryPrefetch, IntelSetKnobs) {
    EXPECT_TRUE(mem::detail::make_prefetchers(mem::parse_prefetch("intel:0000"), 64).empty());
    const auto all = mem::detail::make_prefetchers(mem::parse_prefetch("intel:1111"), 64);
    ASSERT_EQ(all.size(), 4u);
    EXPECT_EQ(all[0]->level(), mem::detail::Level::l1);
    EXPECT_EQ(all[1]->level(), mem::detail::Level::l1);
    EXPECT_EQ(all[2]->level(), mem::detail::Level::l2);
    EXPECT_EQ(all[3]->level(), mem::detail::Level::l2);
    const mem::PrefetchSpec s = mem::parse_prefetch("intel:1010");
    EXPECT_EQ(s.intel_mask, 0b0101u);
    expect_error([] { mem::parse_prefetch("intel:11"); }, "prefetch", "four 0/1 digits");
    expect_error([] { mem::parse_prefetch("intel:1121"); }, "prefetch", "four 0/1 digits");
    // Adjacent line: the other line of the 128-byte pair.
    auto adj = single(mem::parse_prefetch("intel:0010"));
    EXPECT_EQ(lines_of(feed(*adj, 1, 10)), (std::vector<std::uint64_t>{11}));
    EXPECT_EQ(lines_of(feed(*adj, 1, 11)), (std::vector<std::uint64_t>{10}));
    // Next-line fires on ascending accesses only.
    auto dcu = single(mem::parse_prefetch("intel:0100"));
    EXPECT_TRUE(feed(*dcu, 1, 40).empty());
    EXPECT_EQ(lines_of(feed(*dcu, 1, 41)), (std::vector<std::uint64_t>{42}));
    EXPECT_TRUE(feed(*dcu, 1, 39).empty());
    // IP-stride: one line, the next of the stride.
    auto ip = single(mem::parse_prefetch("intel:1000"));
    feed(*ip, 5, 100);
    feed(*ip, 5, 103);
    EXPECT_EQ(lines_of(feed(*ip, 5, 106)), (std::vector<std::uint64_t>{109}));
}

TEST(SimMemoryPrefetch, StreamerRunsAheadWithinThePage) {
    auto p = single(mem::parse_prefetch("intel:0001"));
    EXPECT_TRUE(feed(*p, 1, 0).empty());
    EXPECT_EQ(lines_of(feed(*p, 1, 1)), (std::vector<std::uint64_t>{2, 3}));
    EXPECT_EQ(lines_of(feed(*p, 1, 2)), (std::vector<std::uint64_t>{4, 5}));
    // Never further than 20 lines ahead of the access.
    for (int i = 0; i < 20; ++i) feed(*p, 1, 3);
    const auto v = feed(*p, 1, 4);
    for (std::uint64_t l : lines_of(v)) EXPECT_LE(l, 24u);
    // Never across the 64-line page.
    auto q = single(mem::parse_prefetch("intel:0001"));
    feed(*q, 1, 61);
    EXPECT_EQ(lines_of(feed(*q, 1, 62)), (std::vector<std::uint64_t>{63}));
    // Descending streams too.
    auto d = single(mem::parse_prefetch("intel:0001"));
    feed(*d, 1, 200);
    EXPECT_EQ(lines_of(feed(*d, 1, 199)), (std::vector<std::uint64_t>{198, 197}));
}

TEST(SimMemoryCache, LruEvictsTheLeastRecentlyUsed) {
    mem::detail::Cache c(2 * 64 * 2, 2, 64);   // 2 sets, 2 ways
    EXPECT_EQ(c.insert(0, 0, 0).tag, 0u);
    EXPECT_EQ(c.insert(2, 0, 0).tag, 0u);
    c.touch(c.find(0));
    const mem::detail::CacheLine out = c.insert(4, 0, 0);   // set 0 is full: line 2 is older
    EXPECT_EQ(out.line(), 2u);
    EXPECT_TRUE(c.find(0));
    EXPECT_FALSE(c.find(2));
}

TEST(SimMemoryCache, LruListKeepsTheOrderOfUseForEveryWayCount) {
    // Random hits, fills and erasures against a plain list of ways, most
    // recent first, for 1 to 16 ways (16: every nibble of the word).
    std::uint64_t seed = 12345;
    const auto next = [&seed](unsigned n) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<unsigned>((seed >> 33) % n);
    };
    using mem::detail::LruList;
    for (unsigned ways = 1; ways <= 16; ++ways) {
        std::vector<unsigned> order;
        for (unsigned w = 0; w < ways; ++w) order.push_back(w);
        std::uint64_t l = LruList::identity(ways);
        const std::uint64_t used = LruList::used(ways);
        for (int step = 0; step < 2000; ++step) {
            const unsigned op = next(3), w = next(ways);
            if (op == 0) {   // a hit of way w
                LruList::make_recent(l, w);
                order.erase(std::find(order.begin(), order.end(), w));
                order.insert(order.begin(), w);
            } else if (op == 1) {   // a fill: the last way
                const unsigned v = LruList::last(l, ways);
                ASSERT_EQ(v, order.back()) << ways << " ways, step " << step;
                l = LruList::fill_last(l, v, used);
                order.pop_back();
                order.insert(order.begin(), v);
            } else {   // an erasure of way w
                LruList::make_last(l, w, ways);
                order.erase(std::find(order.begin(), order.end(), w));
                order.push_back(w);
            }
            for (unsigned k = 0; k < ways; ++k)
                ASSERT_EQ((l >> (4 * k)) & 15u, order[k]) << ways << " ways, step " << step << ", place " << k;
            ASSERT_EQ(l & ~used, 0u);
        }
    }
}

// A cache of more ways than the LRU word holds (17 to 32) keeps use counts
// per way: random hits, fills and erasures against a plain list of its
// lines, most recent first, in one set.
TEST(SimMemoryCache, WideCachesKeepTheOrderOfUse) {
    std::uint64_t seed = 777;
    const auto next = [&seed](unsigned n) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<unsigned>((seed >> 33) % n);
    };
    for (unsigned ways : {17u, 20u, 32u}) {
        mem::detail::Cache c(std::uint64_t{ways} * 64, ways, 64);   // one set
        std::vector<std::uint64_t> order;   // present lines, most recent first
        std::uint64_t fresh = 1000;
        for (int step = 0; step < 4000; ++step) {
            const unsigned op = next(order.empty() ? 1 : 3);
            if (op == 0) {   // a fill of a new line
                const mem::detail::CacheLine out = c.insert(fresh, 0, 0);
                if (order.size() == ways) {
                    ASSERT_EQ(out.line(), order.back()) << ways << " ways, step " << step;
                    order.pop_back();
                } else {
                    ASSERT_EQ(out.tag, 0u) << ways << " ways, step " << step;
                }
                order.insert(order.begin(), fresh++);
            } else if (op == 1) {   // a hit
                const std::uint64_t line = order[next(static_cast<unsigned>(order.size()))];
                const mem::detail::LineRef x = c.find(line);
                ASSERT_TRUE(x) << line;
                c.touch(x);
                order.erase(std::find(order.begin(), order.end(), line));
                order.insert(order.begin(), line);
            } else {   // an erasure
                const std::uint64_t line = order[next(static_cast<unsigned>(order.size()))];
                const mem::detail::LineRef x = c.find(line);
                ASSERT_TRUE(x) << line;
                c.erase(x);
                order.erase(std::find(order.begin(), order.end(), line));
            }
            ASSERT_FALSE(c.find(fresh));
        }
        for (std::uint64_t line : order) EXPECT_TRUE(c.find(line)) << ways << " ways, line " << line;
    }
    expect_error([] { mem::HierarchyPreset p = mem::preset("thesis-4s"); p.l3 = {33 * 64 * 16, 33, 30, 32}; p.validate(); },
                 "l3", "at most 32 ways");
}

TEST(SimMemoryCache, AnErasedLineLeavesAnEmptyWayThatIsFilledNext) {
    mem::detail::Cache c(4 * 64, 4, 64);   // one set, 4 ways
    for (std::uint64_t line : {0, 1, 2, 3}) EXPECT_EQ(c.insert(line, 0, 0).tag, 0u);
    const mem::detail::LineRef zero = c.find(0), two = c.find(2);
    ASSERT_TRUE(zero);
    ASSERT_TRUE(two);
    c.touch(zero);   // line 1 is now the least recently used
    c.erase(two);
    EXPECT_FALSE(c.find(2));
    EXPECT_EQ(c.insert(4, 0, 0).tag, 0u);   // into line 2's way: nothing evicted
    for (std::uint64_t line : {0, 1, 3, 4}) EXPECT_TRUE(c.find(line)) << line;
    EXPECT_EQ(c.insert(5, 0, 0).line(), 1u);   // then the LRU order goes on as before
}

// ---- coherence -------------------------------------------------------------------

namespace {
// Each phase of `steps` on thesis-4s (4 sockets x 4 cores, pages bound to
// node 0): one core reading or writing the same 16 lines; the counters of
// each phase.
struct Step {
    unsigned core;
    bool write;
};
std::vector<mem::MemoryReport> phases(std::initializer_list<Step> steps) {
    mem::MemorySim sim(mem::preset("thesis-4s"), mem::parse_prefetch("none"), mem::parse_page_mapping("bind:0"));
    std::vector<mem::MemoryReport> out;
    for (const Step& s : steps) {
        sim.run(one(s.core, std::make_unique<Sequential>(std::uint64_t{1} << 30, 16, s.write)));
        out.push_back(sim.phase_report());
    }
    return out;
}
}  // namespace

// A reader on another socket keeps its copies while nobody writes, and
// loses all three (its L1, its L2, its socket's L3) to each line written:
// it reads them again from DRAM.
TEST(SimMemoryCoherence, AStoreInvalidatesTheCopiesOfAnotherSocket) {
    const auto r = phases({{4, false}, {4, false}, {0, true}, {4, false}});
    EXPECT_EQ(r[0].dram.demand_accesses, 16u);   // core 4 (socket 1): cold
    EXPECT_EQ(r[1].l1.demand_misses, 0u);        // again: every line in its L1
    EXPECT_EQ(r[1].invalidations, 0u);
    EXPECT_EQ(r[2].invalidations, 3u * 16);      // core 0 writes: core 4's L1 and L2, socket 1's L3
    EXPECT_EQ(r[3].l1.demand_misses, 16u);
    EXPECT_EQ(r[3].l3.demand_misses, 16u);
    EXPECT_EQ(r[3].dram.demand_accesses, 16u);
    EXPECT_EQ(r[3].invalidations, 0u);
}

// Within a socket the L3 keeps the line: a neighbour core's read after a
// write misses its private caches only.
TEST(SimMemoryCoherence, WithinASocketTheL3ServesTheWrittenLine) {
    const auto r = phases({{1, false}, {0, true}, {1, false}});
    EXPECT_EQ(r[1].invalidations, 2u * 16);   // core 1's L1 and L2; socket 0's L3 stays
    EXPECT_EQ(r[2].l2.demand_misses, 16u);
    EXPECT_EQ(r[2].l3.demand_misses, 0u);
    EXPECT_EQ(r[2].dram.demand_accesses, 0u);
}

// A core that writes its own lines again invalidates nothing, and a line
// read by another core after a write must be invalidated again at the next
// write (the writer lost its exclusive copy).
TEST(SimMemoryCoherence, OnlyLinesOthersReadAreInvalidatedAgain) {
    const auto r = phases({{0, true}, {0, true}, {8, false}, {0, true}, {0, true}});
    EXPECT_EQ(r[0].invalidations, 0u);
    EXPECT_EQ(r[1].invalidations, 0u);
    EXPECT_EQ(r[3].invalidations, 3u * 16);   // core 8 (socket 2) read them
    EXPECT_EQ(r[4].invalidations, 0u);
}

// The barrier that ends a phase of several threads (libgomp's: one counter
// line taken by each arrival in turn, then the release read by every
// waiter). Two cores whose lines are already in their L1s end together; on
// one socket each of the three transfers takes an L3 latency (30 cycles at
// 2 GHz: 15 ns), across sockets 0 and 1 the two that cross take the DRAM
// latency between them (160 ns).
TEST(SimMemoryBarrier, ArrivalsTakeTheCounterLineInTurnThenTheReleaseIsRead) {
    const auto barrier_s = [](unsigned a, unsigned b) {
        mem::MemorySim sim(mem::preset("thesis-4s"), mem::parse_prefetch("none"), mem::parse_page_mapping("first-touch"));
        const std::uint64_t base_a = std::uint64_t{1} << 30, base_b = std::uint64_t{2} << 30;
        sim.run(one(a, std::make_unique<Sequential>(base_a, 1, false)), false);   // warm: one core at a time
        sim.run(one(b, std::make_unique<Sequential>(base_b, 1, false)), false);
        std::vector<mem::ThreadStream> v;
        v.push_back({a, std::make_unique<Sequential>(base_a, 1, false)});
        v.push_back({b, std::make_unique<Sequential>(base_b, 1, false)});
        sim.run(std::move(v));
        EXPECT_EQ(sim.phase_report().l1.demand_misses, 0u);
        return sim.phase_report().barrier_s;
    };
    EXPECT_NEAR(barrier_s(0, 1), 3 * 15e-9, 1e-15);
    EXPECT_NEAR(barrier_s(0, 4), 15e-9 + 2 * 160e-9, 1e-15);
    // One thread has no barrier.
    mem::MemorySim sim(mem::preset("thesis-4s"), mem::parse_prefetch("none"), {});
    sim.run(one(0, std::make_unique<Sequential>(0, 4, false)));
    EXPECT_EQ(sim.phase_report().barrier_s, 0.0);
}

// ---- analytic cases ------------------------------------------------------------

// A chase over half a level's capacity is answered by that level, at its
// load-to-use latency; one over twice the capacity by the next level.
TEST(SimMemoryAnalytic, ChaseShowsTheLatencySteps) {
    const mem::HierarchyPreset p = mem::preset("thesis-4s");
    const double cyc = p.cycle_ns();
    const mem::MemoryReport l1 = run("chase:32K", "thesis-4s", "none").report;
    EXPECT_EQ(l1.l1.served, l1.accesses);
    EXPECT_DOUBLE_EQ(served_latency(l1.l1), p.l1.latency_cycles * cyc);
    const mem::MemoryReport l2 = run("chase:128K", "thesis-4s", "none").report;
    EXPECT_EQ(l2.l2.served, l2.accesses);
    EXPECT_NEAR(served_latency(l2.l2), p.l2.latency_cycles * cyc, 1e-9);
    const mem::MemoryReport l3 = run("chase:2M", "thesis-4s", "none").report;
    EXPECT_EQ(l3.l3.served, l3.accesses);
    EXPECT_NEAR(served_latency(l3.l3), p.l3.latency_cycles * cyc, 1e-9);
    const mem::MemoryReport dram = run("chase:16M", "thesis-4s", "none").report;
    EXPECT_GE(dram.dram.served, dram.accesses * 99 / 100);
    // Mean time per load: a chase has one load in flight.
    const mem::WorkloadResult d = run("chase:16M", "thesis-4s", "none");
    EXPECT_NEAR(d.measured_s * 1e9 / static_cast<double>(d.report.accesses), p.l3.latency_cycles * cyc + 80.0, 1.0);
}

TEST(SimMemoryAnalytic, DramLatencyLocalAndRemoteExactly) {
    const mem::HierarchyPreset p = mem::preset("thesis-4s");
    const double l3 = p.l3.latency_cycles * p.cycle_ns();
    const double want[] = {80.0, 160.0, 240.0, 240.0};
    for (unsigned node = 0; node < 4; ++node) {
        const mem::MemoryReport r = run("chase:8M", "thesis-4s", "none", "bind:" + std::to_string(node)).report;
        ASSERT_GT(r.dram.served, 0u);
        EXPECT_NEAR(served_latency(r.dram), l3 + want[node], 1e-6) << "node " << node;
        EXPECT_EQ(node == 0 ? r.dram_remote_bytes : r.dram_local_bytes, 0u);
    }
}

// On the Sandy Bridge-EP ring a chase reads its node's memory in the L3's
// latency plus 80 ns, a neighbour's in 160 ns more and the opposite
// socket's in 240 ns more; a chase that fits the 20 MiB L3 stays there.
TEST(SimMemoryAnalytic, SandyBridgeEpLatencyByHops) {
    const mem::HierarchyPreset p = mem::preset("sandybridge-ep-4s");
    const double l3 = p.l3.latency_cycles * p.cycle_ns();
    const double want[] = {80.0, 160.0, 240.0, 160.0};
    for (unsigned node = 0; node < 4; ++node) {
        const mem::MemoryReport r = run("chase:32M", "sandybridge-ep-4s", "none", "bind:" + std::to_string(node)).report;
        ASSERT_GT(r.dram.served, 0u);
        EXPECT_NEAR(served_latency(r.dram), l3 + want[node], 1e-6) << "node " << node;
    }
    const mem::MemoryReport in_l3 = run("chase:16M", "sandybridge-ep-4s", "none").report;
    EXPECT_EQ(in_l3.l3.served, in_l3.accesses);
    EXPECT_NEAR(served_latency(in_l3.l3), l3, 1e-9);
}

// Every socket's memory controller busy: the DRAM traffic of a 16-thread
// triad (reads and writebacks) reaches the configured bandwidth, and never
// exceeds it.
TEST(SimMemoryAnalytic, StreamReachesTheConfiguredBandwidth) {
    const mem::HierarchyPreset p = mem::preset("thesis-4s");
    const mem::WorkloadResult r = run("stream:16", "thesis-4s", "none");
    double configured = 0;
    for (double g : p.timed.memory_gbps) configured += g;
    const double bytes = static_cast<double>(r.report.dram_local_bytes + r.report.writeback_bytes);
    const double gbps = bytes / r.measured_s * 1e-9;
    EXPECT_EQ(r.report.dram_remote_bytes, 0u);
    EXPECT_LE(gbps, configured * 1.0001);
    EXPECT_GE(gbps, configured * 0.9) << gbps << " GB/s of " << configured;
}

// The energy estimate is the preset's per-access energies times the counts,
// plus static power over the simulated time.
TEST(SimMemoryAnalytic, EnergyFromCountsAndStaticPower) {
    const mem::HierarchyPreset p = mem::preset("thesis-4s");
    const mem::MemoryReport r = run("stream:16", "thesis-4s", "none").report;
    const double lines = static_cast<double>(r.dram_local_bytes + r.dram_remote_bytes + r.writeback_bytes) / 64.0;
    EXPECT_GT(lines, 0.0);
    EXPECT_NEAR(r.energy_dram_j, lines * 15.6e-9, 1e-12);
    EXPECT_NEAR(r.energy_static_j, 4 * 39.0 * r.simulated_s, 1e-12);
    const double l1 = static_cast<double>(r.l1.demand_accesses) + static_cast<double>(r.l1.fill_bytes) / 64.0;
    EXPECT_GT(r.energy_cache_j, l1 * 20e-12);
    EXPECT_DOUBLE_EQ(r.energy_j(), r.energy_cache_j + r.energy_dram_j + r.energy_static_j);
    EXPECT_GT(p.static_w_per_socket, 0.0);
}

// A unit-stride stream under stride k: every line is prefetched but the
// first of each page (a prediction into a page the TLB does not hold is
// dropped), so the coverage is 1 - 1/64 with 64 lines per page.
TEST(SimMemoryAnalytic, StrideCoverageOnAUnitStrideStream) {
    for (const char* spec : {"stride:8", "stride:24", "stride:64"}) {
        mem::MemorySim sim(mem::preset("thesis-4s"), mem::parse_prefetch(spec), mem::parse_page_mapping("bind:0"));
        const std::uint64_t lines = 64 * 256;   // 256 pages, 1 MiB: larger than the L2, the L3 holds it
        sim.run(one(0, std::make_unique<Sequential>(std::uint64_t{1} << 30, lines, true)), false);
        // Flush the L1 and L2 with another 4 MiB array, then sweep again.
        sim.run(one(0, std::make_unique<Sequential>(std::uint64_t{2} << 30, 4 * lines, true)), false);
        sim.run(one(0, std::make_unique<Sequential>(std::uint64_t{1} << 30, lines, false)));
        const mem::MemoryReport r = sim.report();
        const double coverage = static_cast<double>(r.prefetch_counts.useful) / static_cast<double>(lines);
        EXPECT_NEAR(coverage, 1.0 - 1.0 / 64, 0.002) << spec;
        EXPECT_EQ(r.l1.demand_misses, 256u) << spec;   // the first line of each page
    }
}

// On one socket nothing is remote: NASP k^L1:k_rem is stride k^L1.
TEST(SimMemoryAnalytic, NaspOnOneNodeIsStride) {
    for (const char* w : {"stream:4", "chase:1M"}) {
        const mem::WorkloadResult s = run(w, "thesis-4s:1", "stride:8");
        const mem::WorkloadResult n = run(w, "thesis-4s:1", "nasp:8:64");
        EXPECT_EQ(s.measured_s, n.measured_s) << w;
        EXPECT_EQ(s.report.prefetch_counts.issued_l1, n.report.prefetch_counts.issued_l1) << w;
        EXPECT_EQ(n.report.prefetch_counts.issued_l3, 0u) << w;
        // Whenever stride predicted, NASP's far orders were dropped as local.
        EXPECT_EQ(n.report.prefetch_counts.dropped_local > 0, s.report.prefetch_counts.issued_l1 > 0) << w;
        EXPECT_EQ(s.report.l1.demand_misses, n.report.l1.demand_misses) << w;
    }
}

// ---- the microbenchmark ---------------------------------------------------------

double phase_s(const mem::WorkloadResult& r, const std::string& name) {
    for (const mem::PhaseResult& p : r.phases)
        if (p.name == name) return p.simulated_s;
    ADD_FAILURE() << "no phase " << name;
    return 0;
}

TEST(SimMemoryMicro, NoNumaAllPhasesEqual) {
    const mem::WorkloadResult r = run("numa-micro:8", "thesis-4s-nonuma", "none");
    const double local = phase_s(r, "local");
    EXPECT_NEAR(phase_s(r, "remote") / local, 1.0, 0.02);
    EXPECT_NEAR(phase_s(r, "local-again") / local, 1.0, 0.02);
}

TEST(SimMemoryMicro, RemotePhaseSlowerByTheLatencyRatio) {
    const mem::WorkloadResult r = run("numa-micro:8", "thesis-4s", "none");
    const double ratio = phase_s(r, "remote") / phase_s(r, "local");
    EXPECT_NEAR(ratio, 1.5, 0.15) << "remote / local " << ratio;   // remote = 1.5 x local latency
    EXPECT_NEAR(phase_s(r, "local-again") / phase_s(r, "local"), 1.0, 0.02);
}

// Published: a remote-only L3 prefetch at least 128 deep brings the remote
// phase within 10% of the local one. Listed as not reproduced (BENCHMARKS.md
// gives the figures: without the TLB rule the same run gives 1.01); while
// listed, the test asserts that it
// still does not hold, so that a change that reproduces it must take it off
// the list, and that the shortfall has the stated cause.
constexpr bool deep_prefetch_reproduced = false;

TEST(SimMemoryMicro, DeepRemoteL3PrefetchClosesTheGap) {
    const mem::WorkloadResult none = run("numa-micro:8", "thesis-4s", "none");
    const mem::WorkloadResult r = run("numa-micro:8", "thesis-4s", "nasp:0:128");
    const double gap = phase_s(r, "remote") / phase_s(r, "local");
    EXPECT_LT(phase_s(r, "remote"), phase_s(none, "remote"));   // the prefetch helps
    EXPECT_EQ(phase_s(r, "local"), phase_s(none, "local"));       // and leaves local phases alone
    EXPECT_GT(r.report.prefetch_counts.issued_l3, 0u);
    EXPECT_EQ(r.report.prefetch_counts.issued_l1, 0u);
    if (deep_prefetch_reproduced) {
        EXPECT_LE(gap, 1.10);
    } else {
        EXPECT_GT(gap, 1.10) << "reproduced now: set deep_prefetch_reproduced";
        // The cause: a prediction into a page the core's TLB does not hold
        // is dropped (the prefetcher rule), and the remote core has
        // touched none of the pages before, so no page's first line is ever
        // prefetched and each page's stream restarts there.
        const std::uint64_t lines = (8u << 20) / 64, pages = (8u << 20) / 4096;
        EXPECT_GT(r.report.prefetch_counts.dropped_tlb, r.report.prefetch_counts.issued_l3);
        EXPECT_LE(r.report.prefetch_counts.issued_l3 + pages, lines);
    }
}

// ---- stream semantics -------------------------------------------------------------

namespace {
class Listed final : public mem::AccessStream {
public:
    explicit Listed(std::vector<mem::Access> v) : v_(std::move(v)) {}
    std::size_t next(std::span<mem::Access> out) override {
        std::size_t k = 0;
        for (; k < out.size() && i_ < v_.size(); ++k) out[k] = v_[i_++];
        return k;
    }

private:
    std::vector<mem::Access> v_;
    std::size_t i_ = 0;
};
}  // namespace

// A stream that gives more accesses than asked for is refused, through
// next() and through next_in_place().
TEST(SimMemorySim, AStreamThatGivesMoreThanAskedIsRefused) {
    class TooMany final : public mem::AccessStream {
    public:
        std::size_t next(std::span<mem::Access> out) override { return out.size() + 1; }
    };
    class TooManyInPlace final : public mem::AccessStream {
    public:
        std::size_t next(std::span<mem::Access>) override { return 0; }
        std::span<const mem::Access> next_in_place(std::span<mem::Access> scratch) override {
            return {own_.data(), scratch.size() + 1};
        }

    private:
        std::vector<mem::Access> own_ = std::vector<mem::Access>(4096);
    };
    for (int k = 0; k < 2; ++k) {
        mem::MemorySim sim(mem::preset("thesis-4s"), mem::parse_prefetch("none"), {});
        std::unique_ptr<mem::AccessStream> s;
        if (k == 0) s = std::make_unique<TooMany>();
        else s = std::make_unique<TooManyInPlace>();
        EXPECT_EQ(expect_error([&] { sim.run(one(0, std::move(s))); }).field(), "stream") << k;
    }
}

// A workload's streams give the same accesses in place as copied: each
// thread of cg:S (segments of 8 rows) and of stream:1, taken 100 at a time
// both ways.
TEST(SimMemorySim, AWorkloadStreamGivesTheSameAccessesInPlace) {
    const auto same = [](const mem::Access& a, const mem::Access& b) {
        return a.addr == b.addr && a.gap == b.gap && a.pc == b.pc && a.size == b.size && a.write == b.write &&
               a.dependent == b.dependent && a.same_instruction == b.same_instruction;
    };
    for (const char* name : {"cg:S", "stream:1"}) {
        const auto w = mem::make_workload(name);
        const mem::HierarchyPreset p = w->adapt(mem::preset("thesis-4s"));
        numaware::TeamMapping tm;
        tm.threads = 4;
        const numaware::TeamLayout layout = numaware::plan_team(p.timed.machine, tm);
        for (unsigned ph = 0; ph < w->phases(); ++ph) {
            std::vector<mem::ThreadStream> copied = w->streams(ph, p, layout), in_place = w->streams(ph, p, layout);
            ASSERT_EQ(copied.size(), in_place.size());
            for (std::size_t t = 0; t < copied.size(); ++t) {
                std::vector<mem::Access> a(100), scratch(100);
                std::uint64_t n = 0;
                for (;;) {
                    const std::size_t k = copied[t].stream->next(std::span<mem::Access>(a));
                    const std::span<const mem::Access> b = in_place[t].stream->next_in_place(std::span<mem::Access>(scratch));
                    ASSERT_LE(b.size(), scratch.size());
                    // In place, a part may end at a segment's end: take more until k.
                    std::vector<mem::Access> got(b.begin(), b.end());
                    while (got.size() < k) {
                        const std::span<const mem::Access> more =
                            in_place[t].stream->next_in_place(std::span<mem::Access>(scratch).first(k - got.size()));
                        ASSERT_FALSE(more.empty()) << name << " thread " << t << " after " << n;
                        got.insert(got.end(), more.begin(), more.end());
                    }
                    ASSERT_EQ(got.size(), k) << name << " thread " << t << " after " << n;
                    for (std::size_t i = 0; i < k; ++i) ASSERT_TRUE(same(a[i], got[i])) << name << " access " << n + i;
                    n += k;
                    if (k == 0) break;
                }
                EXPECT_GT(n, 0u) << name << " phase " << ph << " thread " << t;
            }
        }
    }
}

TEST(SimMemorySim, AccessesThatCrossLinesLookUpEachLine) {
    mem::MemorySim sim(mem::preset("thesis-4s"), mem::parse_prefetch("none"), {});
    mem::Access a{};
    a.addr = (std::uint64_t{1} << 30) + 60;   // bytes 60..67: two lines
    a.size = 8;
    mem::Access b{};
    b.addr = (std::uint64_t{2} << 30);
    b.size = 512;   // eight lines (an fxsave)
    sim.run(one(0, std::make_unique<Listed>(std::vector<mem::Access>{a, b})));
    const mem::MemoryReport r = sim.report();
    EXPECT_EQ(r.accesses, 2u);
    EXPECT_EQ(r.l1.demand_accesses, 10u);
    EXPECT_EQ(r.l1.demand_misses, 10u);
}

TEST(SimMemorySim, SameInstructionRetiresNothing) {
    mem::MemorySim sim(mem::preset("thesis-4s"), mem::parse_prefetch("none"), {});
    mem::Access a{};
    a.addr = std::uint64_t{1} << 30;
    a.gap = 3;
    mem::Access b = a;
    b.addr += 8;
    b.gap = 0;
    b.same_instruction = true;   // e.g. a push: one instruction, a read and a write
    sim.run(one(0, std::make_unique<Listed>(std::vector<mem::Access>{a, b})));
    EXPECT_EQ(sim.report().instructions, 4u);   // 3 + the accessing instruction, once
}

TEST(SimMemorySim, InterleaveByPageNumber) {
    mem::MemorySim sim(mem::preset("thesis-4s"), mem::parse_prefetch("none"), mem::parse_page_mapping("interleave"));
    std::vector<mem::Access> v;
    for (std::uint64_t page : {7, 2, 5, 0}) {   // touched out of order
        mem::Access a{};
        a.addr = (std::uint64_t{1} << 30) + page * 4096;
        v.push_back(a);
    }
    sim.run(one(0, std::make_unique<Listed>(v)));
    for (std::uint64_t page : {7, 2, 5, 0})
        EXPECT_EQ(sim.home_of((std::uint64_t{1} << 30) + page * 4096), static_cast<int>(((std::uint64_t{1} << 18) + page) % 4));
    EXPECT_EQ(sim.home_of(std::uint64_t{3} << 30), -1);
}

// ---- random updates (gups) -------------------------------------------------------

namespace {
// Every access of one phase of `w` on thesis-4s with `threads` threads, per thread.
std::vector<std::vector<mem::Access>> accesses(const mem::Workload& w, unsigned phase, unsigned threads) {
    const mem::HierarchyPreset p = mem::preset("thesis-4s");
    numaware::TeamMapping tm;
    tm.threads = threads;
    std::vector<std::vector<mem::Access>> out;
    for (mem::ThreadStream& s : w.streams(phase, p, numaware::plan_team(p.timed.machine, tm))) {
        out.emplace_back();
        std::vector<mem::Access> buf(256);
        for (std::size_t k; (k = s.stream->next(std::span<mem::Access>(buf))) != 0;)
            out.back().insert(out.back().end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(k));
    }
    return out;
}
}  // namespace

TEST(SimMemoryWorkloads, GupsInitTouchesEachLineOnceThenUpdatesAtRandom) {
    const auto w = mem::make_workload("gups:1");
    EXPECT_EQ(w->name(), "gups:1M");
    ASSERT_EQ(w->phases(), 2u);
    EXPECT_FALSE(w->measured(0));
    EXPECT_TRUE(w->measured(1));
    const std::uint64_t base = std::uint64_t{1} << 30, words = (1u << 20) / 8;
    // Init: each thread stores once to each line of its own slice, all lines once.
    std::set<std::uint64_t> lines;
    std::uint64_t stores = 0;
    for (const auto& t : accesses(*w, 0, 4))
        for (const mem::Access& a : t) {
            EXPECT_TRUE(a.write);
            lines.insert(a.addr / 64);
            ++stores;
        }
    EXPECT_EQ(stores, words / 8);
    EXPECT_EQ(lines.size(), words / 8);
    // Update: load then a store made by the same instruction, at one random
    // word of the table; half the table's words in updates over the team.
    const auto upd = accesses(*w, 1, 4);
    ASSERT_EQ(upd.size(), 4u);
    for (const auto& t : upd) {
        ASSERT_EQ(t.size(), words / 2 / 4 * 2);
        for (std::size_t k = 0; k < t.size(); k += 2) {
            EXPECT_FALSE(t[k].write);
            EXPECT_FALSE(t[k].same_instruction);
            EXPECT_FALSE(t[k].dependent);
            EXPECT_TRUE(t[k + 1].write);
            EXPECT_TRUE(t[k + 1].same_instruction);
            EXPECT_EQ(t[k + 1].addr, t[k].addr);
            EXPECT_GE(t[k].addr, base);
            EXPECT_LT(t[k].addr, base + words * 8);
            EXPECT_EQ(t[k].addr % 8, 0u);
        }
    }
    // Threads draw their own sequences: not one sequence shifted by a step
    // (seeds r·γ of SplitMix64 would give exactly that), nor the same one.
    std::size_t same = 0, shifted = 0, n = upd[0].size() / 2 - 1;
    for (std::size_t k = 0; k < n; ++k) {
        same += upd[1][2 * k].addr == upd[0][2 * k].addr;
        shifted += upd[1][2 * k].addr == upd[0][2 * k + 2].addr;
    }
    EXPECT_LT(same, n / 100);
    EXPECT_LT(shifted, n / 100);
    // Across the team the updates cover the table about uniformly: every
    // 64 KiB sixteenth of it gets 1/16 of them within 10%.
    std::vector<std::uint64_t> per(16, 0);
    std::uint64_t all = 0;
    for (const auto& t : upd)
        for (std::size_t k = 0; k < t.size(); k += 2, ++all) ++per[(t[k].addr - base) * 16 / (words * 8)];
    const double mean = static_cast<double>(all) / 16;
    for (std::uint64_t c : per) EXPECT_NEAR(static_cast<double>(c), mean, mean / 10);
}

TEST(SimMemoryWorkloads, GupsBadSizesNameTheLimit) {
    expect_error([] { (void)mem::make_workload("gups:0"); }, "workload", "1 to 512 MiB");
    expect_error([] { (void)mem::make_workload("gups:1024"); }, "workload", "1 to 512 MiB");
    expect_error([] { (void)mem::make_workload("gups:x"); }, "workload", "MIB must be a size");
}

// Random updates leave a prefetcher nothing to predict: whatever the
// next-line and adjacent-line prefetchers bring is not used and takes DRAM
// bandwidth from the updates, so switching the Intel-like set off is faster.
TEST(SimMemoryWorkloads, GupsPrefetchesAreUselessAndCostBandwidth) {
    const mem::WorkloadResult on = run("gups:8", "thesis-4s", "intel:1111", "first-touch", 16);
    const mem::WorkloadResult off = run("gups:8", "thesis-4s", "intel:0000", "first-touch", 16);
    const mem::PrefetchCounters& c = on.report.prefetch_counts;
    EXPECT_GT(c.issued(), 0u);
    EXPECT_LT(c.useful, c.issued() / 10);
    EXPECT_EQ(off.report.prefetch_counts.issued(), 0u);
    const auto dram = [](const mem::WorkloadResult& r) {
        return r.report.dram_local_bytes + r.report.dram_remote_bytes;
    };
    EXPECT_GT(dram(on), dram(off));
    EXPECT_GT(on.measured_s, off.measured_s);
}

// ---- the lower-triangular matrix-vector product (trmv) ---------------------------

TEST(SimMemoryWorkloads, TrmvRowsReadTheirTriangleCutStatically) {
    const auto w = mem::make_workload("trmv:1");
    EXPECT_EQ(w->name(), "trmv:1M");
    ASSERT_EQ(w->phases(), 2u);
    EXPECT_FALSE(w->measured(0));
    EXPECT_TRUE(w->measured(1));
    const std::uint64_t n = 362;   // the largest with n·n·8 <= 1 MiB
    const std::uint64_t l = std::uint64_t{1} << 30;
    const auto t = accesses(*w, 1, 4);
    ASSERT_EQ(t.size(), 4u);
    std::uint64_t all = 0;
    std::vector<std::uint64_t> per;
    std::uint64_t row = 0;   // rows follow each other over the ranks, as static_block cuts them
    for (const auto& thread : t) {
        per.push_back(thread.size());
        all += thread.size();
        for (std::size_t k = 0; k < thread.size();) {
            // Row `row`: (L[row][j..j+3], x[j..j+3]) for j = 0, 4, .. up to
            // row, the last pair shorter, then y[row].
            for (std::uint64_t j = 0; j <= row; j += 4, k += 2) {
                ASSERT_LT(k + 1, thread.size());
                EXPECT_EQ(thread[k].addr, l + (row * n + j) * 8);
                EXPECT_EQ(thread[k].size, 8 * std::min<std::uint64_t>(4, row + 1 - j));
                EXPECT_EQ(thread[k + 1].size, thread[k].size);
                EXPECT_FALSE(thread[k].write);
                EXPECT_FALSE(thread[k + 1].write);
            }
            EXPECT_TRUE(thread[k].write);
            ++k;
            ++row;
        }
    }
    EXPECT_EQ(row, n);
    std::uint64_t want = 0;
    for (std::uint64_t i = 0; i < n; ++i) want += 2 * ((i + 1 + 3) / 4) + 1;
    EXPECT_EQ(all, want);
    // The last quarter of the rows holds 1 − (3/4)² of the triangle: about
    // seven times the first quarter's 1/16.
    EXPECT_GT(per[3], 6 * per[0]);
    EXPECT_LT(per[3], 8 * per[0]);
}

TEST(SimMemoryWorkloads, TrmvBadSizesNameTheLimit) {
    expect_error([] { (void)mem::make_workload("trmv:0"); }, "workload", "1 to 4096 MiB");
    expect_error([] { (void)mem::make_workload("trmv:8192"); }, "workload", "1 to 4096 MiB");
}

// The heavy last rows on one node (contiguous team) against spread over
// every node (scattered team): that node's memory carries almost half of
// the matrix, so the scattered team finishes first.
TEST(SimMemoryWorkloads, TrmvScatteredTeamSpreadsTheHeavyRows) {
    mem::RunOptions o;
    o.prefetch = mem::parse_prefetch("intel:1111");
    o.threads = 16;
    o.thread_mapping = numaware::MappingKind::contiguous;
    const auto w = mem::make_workload("trmv:32");
    const double contiguous = mem::run_workload(*w, mem::preset("thesis-4s"), o).measured_s;
    o.thread_mapping = numaware::MappingKind::scatter;
    const double scattered = mem::run_workload(*w, mem::preset("thesis-4s"), o).measured_s;
    EXPECT_LT(scattered, contiguous);
}

// ---- the integral histogram's scans (ihist) --------------------------------------

// The row scan: each thread its static block of rows, per pixel the image
// byte and one 64-byte store of its 16 counters; the column scan: each
// thread its static block of columns, down the rows from the second, per
// pixel the row above's counters, its own, and the store.
TEST(SimMemoryWorkloads, IntegralHistogramScansRowsThenColumns) {
    const auto w = mem::make_workload("ihist:1");
    EXPECT_EQ(w->name(), "ihist:1M");
    ASSERT_EQ(w->phases(), 3u);
    EXPECT_EQ(w->phase_name(1), "rows");
    EXPECT_EQ(w->phase_name(2), "columns");
    EXPECT_FALSE(w->measured(0));
    EXPECT_TRUE(w->measured(1) && w->measured(2));
    const std::uint64_t n = 128;   // 128 x 128 pixels x 64 bytes = 1 MiB
    const std::uint64_t h = std::uint64_t{1} << 30;
    const std::uint64_t image = (std::uint64_t{2} << 30) + 12288;   // the second array (arrays.hpp)
    const auto rows = accesses(*w, 1, 4);
    ASSERT_EQ(rows.size(), 4u);
    for (unsigned t = 0; t < 4; ++t) {
        ASSERT_EQ(rows[t].size(), 2 * 32 * n) << t;
        for (std::uint64_t k = 0; k < rows[t].size(); k += 2) {
            const std::uint64_t pixel = t * 32 * n + k / 2;
            EXPECT_EQ(rows[t][k].addr, image + pixel);
            EXPECT_EQ(rows[t][k].size, 1);
            EXPECT_FALSE(rows[t][k].write);
            EXPECT_EQ(rows[t][k + 1].addr, h + pixel * 64);
            EXPECT_EQ(rows[t][k + 1].size, 64);
            EXPECT_TRUE(rows[t][k + 1].write);
        }
    }
    const auto cols = accesses(*w, 2, 4);
    ASSERT_EQ(cols.size(), 4u);
    for (unsigned t = 0; t < 4; ++t) {
        ASSERT_EQ(cols[t].size(), 3 * (n - 1) * 32) << t;
        std::size_t k = 0;
        for (std::uint64_t y = 1; y < n; ++y)
            for (std::uint64_t x = t * 32; x < (t + 1) * 32; ++x, k += 3) {
                EXPECT_EQ(cols[t][k].addr, h + ((y - 1) * n + x) * 64);
                EXPECT_EQ(cols[t][k + 1].addr, h + (y * n + x) * 64);
                EXPECT_EQ(cols[t][k + 2].addr, h + (y * n + x) * 64);
                EXPECT_FALSE(cols[t][k].write || cols[t][k + 1].write);
                EXPECT_TRUE(cols[t][k + 2].write);
            }
    }
}

TEST(SimMemoryWorkloads, IntegralHistogramBadSizesNameTheLimit) {
    expect_error([] { (void)mem::make_workload("ihist:0"); }, "workload", "1 to 1024 MiB");
    expect_error([] { (void)mem::make_workload("ihist:2048"); }, "workload", "1 to 1024 MiB");
}

// The two scans want opposite pages (a 32 MiB histogram, twice the L3s):
// first touch leaves every row on its row-scanning thread's node, which the row scan wants and the column scan
// does not; the locality plan (from the accesses of both scans) puts pages
// where the column scan, with three accesses a pixel to the row scan's two,
// reads them.
TEST(SimMemoryWorkloads, IntegralHistogramScansWantOppositePages) {
    const auto phase = [](const mem::WorkloadResult& r, const std::string& name) {
        for (const auto& ph : r.phases)
            if (ph.name == name) return ph.simulated_s;
        return -1.0;
    };
    const mem::WorkloadResult touch = run("ihist:32", "thesis-4s", "intel:1111", "first-touch", 16);
    const mem::WorkloadResult plan = run("ihist:32", "thesis-4s", "intel:1111", "locality", 16);
    EXPECT_LT(phase(touch, "rows"), phase(plan, "rows"));
    EXPECT_LT(phase(plan, "columns"), phase(touch, "columns"));
}

// ---- the task applications' stencils (jacobi, gauss-seidel, red-black) -----------------

namespace {
constexpr std::uint64_t grid0 = std::uint64_t{1} << 30;               // arrays.hpp: the first array
constexpr std::uint64_t grid1 = (std::uint64_t{2} << 30) + 12288;     // and the second
}  // namespace

// jacobi:1: two 256 × 256 grids. Thread t of 4 sweeps rows 64t .. 64t+63
// of A into B: a boundary row is n copies (load, store), an interior row a
// copy, n - 2 points (north, south, west, east, store) and a copy.
TEST(SimMemoryWorkloads, JacobiSweepsRowBlocksOfAIntoB) {
    const auto w = mem::make_workload("jacobi:1");
    EXPECT_EQ(w->name(), "jacobi:1M");
    ASSERT_EQ(w->phases(), 2u);
    EXPECT_EQ(w->phase_name(1), "sweep");
    EXPECT_FALSE(w->measured(0));
    EXPECT_TRUE(w->measured(1));
    const std::uint64_t n = 256;
    const auto a = [n](std::uint64_t r, std::uint64_t c) { return grid0 + (r * n + c) * 8; };
    const auto b = [n](std::uint64_t r, std::uint64_t c) { return grid1 + (r * n + c) * 8; };
    const auto t = accesses(*w, 1, 4);
    ASSERT_EQ(t.size(), 4u);
    EXPECT_EQ(t[0].size(), 2 * n + 63 * (4 + 5 * (n - 2)));
    EXPECT_EQ(t[1].size(), 64 * (4 + 5 * (n - 2)));
    EXPECT_EQ(t[3].size(), t[0].size());
    // Thread 1's first row (64): the copy of column 0, then point (64, 1).
    const std::vector<mem::Access>& r = t[1];
    EXPECT_EQ(r[0].addr, a(64, 0));
    EXPECT_FALSE(r[0].write);
    EXPECT_EQ(r[1].addr, b(64, 0));
    EXPECT_TRUE(r[1].write);
    const std::uint64_t want[] = {a(63, 1), a(65, 1), a(64, 0), a(64, 2), b(64, 1)};
    for (unsigned k = 0; k < 5; ++k) {
        EXPECT_EQ(r[2 + k].addr, want[k]) << k;
        EXPECT_EQ(r[2 + k].write, k == 4) << k;
        EXPECT_EQ(r[2 + k].size, 8);
    }
    // Every store goes to B, into the thread's own rows.
    for (unsigned th = 0; th < 4; ++th)
        for (const mem::Access& x : t[th])
            if (x.write) {
                EXPECT_GE(x.addr, b(64 * th, 0));
                EXPECT_LT(x.addr, b(64 * th + 64, 0));
            }
}

// gauss-seidel:1: a 352 × 352 grid of 11 × 11 tiles of 32 × 32, tile-major.
// Thread t of 4 its band of tile rows (3, 3, 3, 2), tiles in row-major
// order, each point in place from its four neighbours, across tile edges.
TEST(SimMemoryWorkloads, GaussSeidelSweepsTilesInPlace) {
    const auto w = mem::make_workload("gauss-seidel:1");
    EXPECT_EQ(w->name(), "gauss-seidel:1M");
    ASSERT_EQ(w->phases(), 2u);
    EXPECT_EQ(w->phase_name(1), "sweep");
    const std::uint64_t tps = 11, tile = 32;
    const auto at = [&](std::uint64_t ti, std::uint64_t tj, std::uint64_t r, std::uint64_t c) {
        return grid0 + ((ti * tps + tj) * tile * tile + r * tile + c) * 8;
    };
    const auto t = accesses(*w, 1, 4);
    ASSERT_EQ(t.size(), 4u);
    // Thread 1: tile rows 3..5, none on the grid's top or bottom; per tile
    // row 2 edge tiles of 32 × 31 points and 9 of 32 × 32.
    EXPECT_EQ(t[1].size(), 3 * 5 * (2 * 32 * 31 + 9 * 32 * 32));
    // Its first tile (3, 0): column 0 is the boundary, so the first point is
    // (0, 1), whose north is the last row of tile (2, 0).
    const std::uint64_t want[] = {at(2, 0, 31, 1), at(3, 0, 1, 1), at(3, 0, 0, 0), at(3, 0, 0, 2), at(3, 0, 0, 1)};
    for (unsigned k = 0; k < 5; ++k) {
        EXPECT_EQ(t[1][k].addr, want[k]) << k;
        EXPECT_EQ(t[1][k].write, k == 4) << k;
    }
    // The second tile (3, 1) starts at its point (0, 0): west is the last
    // column of tile (3, 0).
    const std::size_t second = 5 * 32 * 31;
    const std::uint64_t want2[] = {at(2, 1, 31, 0), at(3, 1, 1, 0), at(3, 0, 0, 31), at(3, 1, 0, 1), at(3, 1, 0, 0)};
    for (unsigned k = 0; k < 5; ++k) EXPECT_EQ(t[1][second + k].addr, want2[k]) << k;
    // Every store stays in the thread's band.
    for (unsigned th = 0; th < 4; ++th) {
        const std::uint64_t first_row = th * 3, end_row = th == 3 ? 11 : th * 3 + 3;
        for (const mem::Access& x : t[th])
            if (x.write) {
                EXPECT_GE(x.addr, at(first_row, 0, 0, 0));
                EXPECT_LT(x.addr, at(end_row, 0, 0, 0));
            }
    }
}

// red-black:1: two arrays of 352 rows × 176 points. The red half-sweep
// updates red points in place from the black array's rows above, level and
// below; in a row where red sits on even columns (r even) west is the black
// point before, east the one at the same index.
TEST(SimMemoryWorkloads, RedBlackHalfSweepsReadTheOtherColour) {
    const auto w = mem::make_workload("red-black:1");
    EXPECT_EQ(w->name(), "red-black:1M");
    ASSERT_EQ(w->phases(), 3u);
    EXPECT_EQ(w->phase_name(1), "red");
    EXPECT_EQ(w->phase_name(2), "black");
    EXPECT_TRUE(w->measured(1) && w->measured(2));
    const std::uint64_t h = 176;   // n = 352
    const auto red = [h](std::uint64_t r, std::uint64_t k) { return grid0 + (r * h + k) * 8; };
    const auto black = [h](std::uint64_t r, std::uint64_t k) { return grid1 + (r * h + k) * 8; };
    const auto t = accesses(*w, 1, 4);
    ASSERT_EQ(t.size(), 4u);
    // Thread 1: rows 88..175, none a boundary row; an even row skips its
    // point at column 0, an odd row its point at column n - 1.
    EXPECT_EQ(t[1].size(), 88 * 5 * (h - 1));
    // Row 88 (red on even columns), its first point is k = 1 (column 2).
    const std::uint64_t want[] = {black(87, 1), black(89, 1), black(88, 0), black(88, 1), red(88, 1)};
    for (unsigned k = 0; k < 5; ++k) {
        EXPECT_EQ(t[1][k].addr, want[k]) << k;
        EXPECT_EQ(t[1][k].write, k == 4) << k;
    }
    // Row 89 (red on odd columns): k = 0 is column 1, west black(89, 0),
    // east black(89, 1).
    const std::size_t row89 = 5 * (h - 1);
    const std::uint64_t want89[] = {black(88, 0), black(90, 0), black(89, 0), black(89, 1), red(89, 0)};
    for (unsigned k = 0; k < 5; ++k) EXPECT_EQ(t[1][row89 + k].addr, want89[k]) << k;
    // The black half-sweep writes black and reads red.
    const auto black_sweep = accesses(*w, 2, 4);
    for (const mem::Access& x : black_sweep[2]) EXPECT_EQ(x.addr < grid1, !x.write);
}

TEST(SimMemoryWorkloads, StencilBadSizesNameTheLimit) {
    for (const char* spec : {"jacobi:0", "gauss-seidel:2048", "red-black:0"})
        expect_error([spec] { (void)mem::make_workload(spec); }, "workload", "1 to 1024 MiB");
}

// Owner computes: each thread first touches the rows (or tile rows) it
// updates, so under first touch only the halos at block edges cross nodes;
// interleaving puts three quarters of every thread's lines on other nodes.
// 24 MiB of arrays: more than the 16 MiB of L3 that the sweep could
// otherwise hit in after the init.
TEST(SimMemoryWorkloads, StencilsFirstTouchKeepsTheSweepLocal) {
    for (const char* spec : {"jacobi:24", "gauss-seidel:24", "red-black:24"}) {
        const mem::WorkloadResult touch = run(spec, "thesis-4s", "intel:1111", "first-touch", 16);
        const mem::WorkloadResult spread = run(spec, "thesis-4s", "intel:1111", "interleave", 16);
        for (std::size_t ph = 0; ph < touch.phases.size(); ++ph) {
            if (!touch.phases[ph].measured) continue;
            const auto& ft = touch.phases[ph].report;
            const auto& il = spread.phases[ph].report;
            const std::string what = std::string(spec) + " " + touch.phases[ph].name;
            EXPECT_LT(ft.dram_remote_bytes * 20, il.dram_remote_bytes) << what;
            EXPECT_LT(touch.phases[ph].simulated_s, spread.phases[ph].simulated_s) << what;
        }
    }
}

// ---- the tiled Cholesky factorisation (cholesky) ---------------------------------------

// cholesky:1: 28 tiles of 32 KiB (nt = 7), slots in row-major order over
// the lower triangle, 7 a thread of 4. Step 0's panel: thread 0 owns (0, 0)
// and (1..3, 0): a POTRF (its tile loaded and stored, line by line), then
// three TRSMs (tile (0, 0)'s lines, then the output's).
TEST(SimMemoryWorkloads, CholeskyRunsTileOperationsWhereTheirTilesLive) {
    const auto w = mem::make_workload("cholesky:1");
    EXPECT_EQ(w->name(), "cholesky:1M");
    ASSERT_EQ(w->phases(), 1u + 7 + 6);
    EXPECT_EQ(w->phase_name(1), "step0:panel");
    EXPECT_EQ(w->phase_name(2), "step0:update");
    EXPECT_EQ(w->phase_name(13), "step6:panel");
    EXPECT_FALSE(w->measured(0));
    EXPECT_TRUE(w->measured(1) && w->measured(13));
    const std::uint64_t base = std::uint64_t{1} << 30, tile = 32768;
    const auto line = [&](std::uint64_t slot, std::uint64_t l) { return base + slot * tile + l * 64; };
    const auto panel = accesses(*w, 1, 4);
    ASSERT_EQ(panel.size(), 4u);
    EXPECT_EQ(panel[0].size(), 1024u + 3 * (512 + 1024));
    EXPECT_EQ(panel[1].size(), 512u + 1024);   // TRSM on (4, 0), slot 10
    EXPECT_EQ(panel[3].size(), 512u + 1024);   // TRSM on (6, 0), slot 21
    const std::vector<mem::Access>& t0 = panel[0];
    EXPECT_EQ(t0[0].addr, line(0, 0));
    EXPECT_FALSE(t0[0].write);
    EXPECT_EQ(t0[1].addr, line(0, 0));
    EXPECT_TRUE(t0[1].write);
    EXPECT_EQ(t0[0].size, 64);
    EXPECT_EQ(t0[0].gap, 262144u / 3 / 8 / 1024);   // POTRF: b³/3 flops at 8 an instruction
    EXPECT_EQ(t0[1024].addr, line(0, 0));             // the first TRSM reads (0, 0)
    EXPECT_EQ(t0[1024 + 511].addr, line(0, 511));
    EXPECT_EQ(t0[1024 + 512].addr, line(1, 0));       // then updates (1, 0)
    EXPECT_EQ(t0[1024].gap, 262144u / 8 / 1536);
    EXPECT_EQ(panel[1][512].addr, line(10, 0));
    // Step 0's update: thread 3 owns row 6: GEMMs on (6, 1..5) and a SYRK on (6, 6).
    const auto update = accesses(*w, 2, 4);
    EXPECT_EQ(update[3].size(), 5u * 2048 + 1536);
    EXPECT_EQ(update[3][0].addr, line(21, 0));      // (6, 0)
    EXPECT_EQ(update[3][512].addr, line(1, 0));     // (1, 0)
    EXPECT_EQ(update[3][1024].addr, line(22, 0));   // the output (6, 1)
    EXPECT_EQ(update[3][0].gap, 2 * 262144u / 8 / 2048);
    // Owner computes: every store goes to a tile of the thread's own slots.
    for (unsigned th = 0; th < 4; ++th)
        for (unsigned ph = 1; ph < w->phases(); ++ph) {
            const auto t = accesses(*w, ph, 4);
            for (const mem::Access& x : t[th])
                if (x.write) {
                    EXPECT_GE(x.addr, line(7 * th, 0)) << ph;
                    EXPECT_LT(x.addr, line(7 * th + 7, 0)) << ph;
                }
        }
}

TEST(SimMemoryWorkloads, CholeskyBadSizesNameTheLimit) {
    for (const char* spec : {"cholesky:0", "cholesky:2048"})
        expect_error([spec] { (void)mem::make_workload(spec); }, "workload", "1 to 1024 MiB");
}

// ---- the tiled QR factorisation (qr) -----------------------------------------------------

// qr:1: 32 tiles of 32 KiB hold a 5 × 5 matrix of tiles, dealt 7, 6, 6, 6
// to 4 threads; the T factors (16 KiB a tile) lie in the second array.
// Step 0's panel runs on thread 0 alone (it owns A(0,0)): GEQRT, then the
// chain of four TSQRTs. Step 0's update gives thread r column r + 1: its
// UNMQR, then the chain of TSQRTs down the column.
TEST(SimMemoryWorkloads, QrRunsItsPanelOnOneThreadAndItsUpdateByColumns) {
    const auto w = mem::make_workload("qr:1");
    EXPECT_EQ(w->name(), "qr:1M");
    ASSERT_EQ(w->phases(), 1u + 5 + 4);
    EXPECT_EQ(w->phase_name(1), "step0:panel");
    EXPECT_EQ(w->phase_name(2), "step0:update");
    EXPECT_EQ(w->phase_name(9), "step4:panel");
    EXPECT_FALSE(w->measured(0));
    EXPECT_TRUE(w->measured(1) && w->measured(9));
    const std::uint64_t a = std::uint64_t{1} << 30, t = (std::uint64_t{2} << 30) + 12288;
    const auto A = [&](std::uint64_t m, std::uint64_t n) { return a + (m * 5 + n) * 32768; };
    const auto T = [&](std::uint64_t m, std::uint64_t n) { return t + (m * 5 + n) * 16384; };
    const auto panel = accesses(*w, 1, 4);
    ASSERT_EQ(panel.size(), 4u);
    EXPECT_EQ(panel[0].size(), 2u * (512 + 256) + 4 * 2 * (512 + 512 + 256));
    EXPECT_TRUE(panel[1].empty() && panel[2].empty() && panel[3].empty());
    EXPECT_EQ(panel[0][0].addr, A(0, 0));
    EXPECT_EQ(panel[0][0].gap, 262144u * 4 / 3 / 8 / 1536);   // GEQRT: 4b³/3 flops
    EXPECT_EQ(panel[0][1024].addr, T(0, 0));
    EXPECT_EQ(panel[0][1536].addr, A(0, 0));                  // the first TSQRT
    EXPECT_EQ(panel[0][1536 + 1024].addr, A(1, 0));
    EXPECT_EQ(panel[0][1536 + 2048].addr, T(1, 0));
    EXPECT_EQ(panel[0][1536].gap, 2 * 262144u / 8 / 2560);
    // Step 2's panel: A(2,2) is tile 12, thread 1's.
    const auto panel2 = accesses(*w, 5, 4);
    EXPECT_TRUE(panel2[0].empty() && !panel2[1].empty() && panel2[2].empty());
    const auto update = accesses(*w, 2, 4);
    for (unsigned r = 0; r < 4; ++r) {
        const std::vector<mem::Access>& u = update[r];
        ASSERT_EQ(u.size(), 512u + 256 + 1024 + 4 * (512 + 256 + 2048)) << r;
        EXPECT_EQ(u[0].addr, A(0, 0));
        EXPECT_EQ(u[512].addr, T(0, 0));
        EXPECT_EQ(u[768].addr, A(0, r + 1));   // UNMQR updates A(0, n)
        EXPECT_TRUE(u[769].write);
        EXPECT_EQ(u[1792].addr, A(1, 0));      // TSMQR(1, n, 0) reads A(1,0), T(1,0)
        EXPECT_EQ(u[1792 + 512].addr, T(1, 0));
        EXPECT_EQ(u[1792 + 768].addr, A(0, r + 1));
        EXPECT_EQ(u[1792 + 768 + 1024].addr, A(1, r + 1));
        EXPECT_EQ(u[1792].gap, 4 * 262144u / 8 / 2816);
        // Every store goes to column r + 1.
        for (const mem::Access& x : u)
            if (x.write) {
                EXPECT_EQ((x.addr - a) / 32768 % 5, r + 1);
            }
    }
}

// A dense QR does 4n³/3 flops and a Cholesky factorisation n³/3: the gaps
// of their tile operations, summed over every measured phase, are that
// many instructions (8 flops an instruction), less the rounding down of
// each operation's gap (under one instruction an access, at least 21
// instructions an access but in POTRF and GEQRT).
TEST(SimMemoryWorkloads, TiledFactorisationsRetireTheirOperationCounts) {
    struct Case {
        const char* spec;
        double n;        // the matrix order: tiles a side × 64
        double flops;    // a factor of n³
    };
    for (const Case c : {Case{"qr:1", 5 * 64, 4.0 / 3}, Case{"cholesky:1", 7 * 64, 1.0 / 3}}) {
        const auto w = mem::make_workload(c.spec);
        double instructions = 0;
        for (unsigned ph = 1; ph < w->phases(); ++ph)
            for (const auto& thread : accesses(*w, ph, 3))
                for (const mem::Access& x : thread) instructions += x.gap;
        const double expected = c.flops * c.n * c.n * c.n / 8;
        EXPECT_LE(instructions, expected) << c.spec;
        EXPECT_GE(instructions, 0.97 * expected) << c.spec;
    }
}

TEST(SimMemoryWorkloads, QrBadSizesNameTheLimit) {
    for (const char* spec : {"qr:0", "qr:2048"})
        expect_error([spec] { (void)mem::make_workload(spec); }, "workload", "1 to 1024 MiB");
}
