// The OpenMP shim's pure parts: the environment variables (settings.hpp)
// and the loop schedules' chunking (workshare.hpp). The shim itself runs
// under real OpenMP programs in the `omp.constructs` test.
#include <atomic>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support.hpp"
#include "tools/omp/settings.hpp"
#include "tools/omp/workshare.hpp"

namespace omp = numaware::omp;
using numaware::test::expect_error;

namespace {

omp::Settings read(const std::map<std::string, std::string>& env, std::vector<std::string>* warnings = nullptr) {
    return omp::read_settings(
        [&](const char* name) -> const char* {
            const auto it = env.find(name);
            return it == env.end() ? nullptr : it->second.c_str();
        },
        [&](const std::string& line) {
            if (warnings) warnings->push_back(line);
        });
}

}  // namespace

TEST(OmpSettings, NumThreadsTakesAListOfPositiveIntegers) {
    unsigned first = 0;
    std::vector<unsigned> nested;
    EXPECT_TRUE(omp::parse_num_threads("8", first, nested));
    EXPECT_EQ(first, 8u);
    EXPECT_TRUE(nested.empty());
    EXPECT_TRUE(omp::parse_num_threads(" 4, 2 ,1", first, nested));
    EXPECT_EQ(first, 4u);
    EXPECT_EQ(nested, (std::vector<unsigned>{2, 1}));
    for (const char* bad : {"0", "-1", "", "4,", "two", "4,0", "3.5"})
        EXPECT_FALSE(omp::parse_num_threads(bad, first, nested)) << bad;
    EXPECT_EQ(first, 4u);   // a refused value leaves the output as it was
}

TEST(OmpSettings, ProcBindKeywordsAndLists) {
    omp::Bind b = omp::Bind::false_;
    EXPECT_TRUE(omp::parse_proc_bind("spread", b));
    EXPECT_EQ(b, omp::Bind::spread);
    EXPECT_TRUE(omp::parse_proc_bind("CLOSE", b));
    EXPECT_EQ(b, omp::Bind::close);
    EXPECT_TRUE(omp::parse_proc_bind("master", b));
    EXPECT_EQ(b, omp::Bind::primary);
    EXPECT_TRUE(omp::parse_proc_bind("spread,close", b));
    EXPECT_EQ(b, omp::Bind::spread);
    EXPECT_TRUE(omp::parse_proc_bind("false", b));
    EXPECT_EQ(b, omp::Bind::false_);
    for (const char* bad : {"", "tight", "true,close", "spread,false", "close,"})
        EXPECT_FALSE(omp::parse_proc_bind(bad, b)) << bad;
}

TEST(OmpSettings, PlacesAbstractNamesAndExplicitLists) {
    omp::Places p;
    ASSERT_TRUE(omp::parse_places("cores", p));
    EXPECT_EQ(p.kind, omp::PlaceKind::cores);
    ASSERT_TRUE(omp::parse_places("numa_domains(2)", p));
    EXPECT_EQ(p.kind, omp::PlaceKind::numa_domains);
    ASSERT_TRUE(omp::parse_places("{0,1},{2:2}", p));
    EXPECT_EQ(p.kind, omp::PlaceKind::explicit_list);
    EXPECT_EQ(p.sets, (std::vector<std::vector<unsigned>>{{0, 1}, {2, 3}}));
    ASSERT_TRUE(omp::parse_places("{0:2}:3:4", p));   // three places of two CPUs, 4 apart
    EXPECT_EQ(p.sets, (std::vector<std::vector<unsigned>>{{0, 1}, {4, 5}, {8, 9}}));
    ASSERT_TRUE(omp::parse_places("{6:3:-2}", p));
    EXPECT_EQ(p.sets, (std::vector<std::vector<unsigned>>{{6, 4, 2}}));
    for (const char* bad : {"", "cores(0)", "lanes", "{}", "{0,1", "{0:0}", "{1:3:-1}", "{0},", "!{0}", "{0}:0"})
        EXPECT_FALSE(omp::parse_places(bad, p)) << bad;
}

TEST(OmpSettings, StackSizeDefaultsToKilobytes) {
    std::size_t s = 0;
    EXPECT_TRUE(omp::parse_stack_size("512", s));
    EXPECT_EQ(s, 512u * 1024);
    EXPECT_TRUE(omp::parse_stack_size(" 16M ", s));
    EXPECT_EQ(s, 16u << 20);
    EXPECT_TRUE(omp::parse_stack_size("4096B", s));
    EXPECT_EQ(s, 4096u);
    EXPECT_TRUE(omp::parse_stack_size("1g", s));
    EXPECT_EQ(s, std::size_t{1} << 30);
    for (const char* bad : {"", "0", "12X", "M", "-4K", "99999999999999999999G"})
        EXPECT_FALSE(omp::parse_stack_size(bad, s)) << bad;
}

TEST(OmpSettings, ScheduleKindsModifiersAndChunks) {
    omp::Schedule s;
    ASSERT_TRUE(omp::parse_schedule("guided,4", s));
    EXPECT_EQ(s.kind, omp::Sched::guided);
    EXPECT_EQ(s.chunk, 4);
    ASSERT_TRUE(omp::parse_schedule("monotonic:dynamic", s));
    EXPECT_EQ(s.kind, omp::Sched::dynamic);
    EXPECT_TRUE(s.monotonic);
    EXPECT_EQ(s.chunk, 0);
    ASSERT_TRUE(omp::parse_schedule("STATIC", s));
    EXPECT_EQ(s.kind, omp::Sched::static_);
    for (const char* bad : {"", "fast", "dynamic,0", "auto,4", "sometimes:static", "guided,x"})
        EXPECT_FALSE(omp::parse_schedule(bad, s)) << bad;
}

// An invalid value is reported on one line naming the variable and what it
// takes, and the default stays; an unknown policy is an error naming
// NUMAWARE_POLICY with the policies it could be.
TEST(OmpSettings, BadValuesWarnOnceAndKeepTheDefault) {
    std::vector<std::string> warnings;
    const omp::Settings s = read({{"OMP_NUM_THREADS", "0"}, {"OMP_SCHEDULE", "fast"}, {"OMP_PROC_BIND", "spread"}},
                                 &warnings);
    EXPECT_EQ(s.num_threads, 0u);
    EXPECT_EQ(s.schedule.kind, omp::Sched::dynamic);
    EXPECT_EQ(s.bind, omp::Bind::spread);
    ASSERT_EQ(warnings.size(), 2u);
    EXPECT_EQ(warnings[0], "numaware-omp: invalid value for environment variable OMP_NUM_THREADS: '0' (expected a list "
                           "of positive integers); the default is used");
    EXPECT_NE(warnings[1].find("OMP_SCHEDULE: 'fast'"), std::string::npos);
    expect_error([] { (void)read({{"NUMAWARE_POLICY", "bogus"}}); }, "NUMAWARE_POLICY", "unknown policy 'bogus'; expected one of dfifo, lq, dep");
    EXPECT_EQ(read({{"NUMAWARE_POLICY", "RIP-DEP"}}).policy, "rip-dep");
    EXPECT_EQ(read({}).rip_window, 256u);
    EXPECT_EQ(read({}).report_path, "");
    EXPECT_EQ(read({{"NUMAWARE_REPORT", "run.json"}}).report_path, "run.json");
    expect_error([] { (void)read({{"NUMAWARE_REPORT", " "}}); }, "NUMAWARE_REPORT", "is empty");
    EXPECT_EQ(read({{"NUMAWARE_RIP_WINDOW", " 64 "}}).rip_window, 64u);
    for (const char* bad : {"0", "-3", "many", ""})
        expect_error([bad] { (void)read({{"NUMAWARE_RIP_WINDOW", bad}}); }, "NUMAWARE_RIP_WINDOW",
                     "is not a positive integer");
    EXPECT_EQ(read({{"OMP_NESTED", "true"}}).max_active_levels, ~0u);
    EXPECT_EQ(read({{"OMP_MAX_ACTIVE_LEVELS", "0"}}).max_active_levels, 0u);
}

// Every schedule hands out each iteration exactly once, for any thread
// count, iteration count and chunk; static ones in the documented order.
TEST(OmpSchedules, EveryIterationExactlyOnce) {
    for (const omp::Sched kind : {omp::Sched::static_, omp::Sched::dynamic, omp::Sched::guided})
        for (const std::uint64_t count : {0ull, 1ull, 7ull, 100ull, 1001ull})
            for (const std::uint64_t chunk : {0ull, 1ull, 3ull, 64ull})
                for (const unsigned threads : {1u, 2u, 3u, 8u}) {
                    if (kind != omp::Sched::static_ && chunk == 0) continue;
                    const omp::LoopSpace loop{count, kind, chunk};
                    std::vector<int> seen(count, 0);
                    std::atomic<std::uint64_t> next{0};
                    // Threads take turns, one chunk each, as a fair interleaving would.
                    std::vector<std::uint64_t> trip(threads, 0);
                    std::vector<bool> done(threads, false);
                    for (unsigned live = threads; live > 0;)
                        for (unsigned t = 0; t < threads; ++t) {
                            if (done[t]) continue;
                            omp::Chunk c;
                            const bool got = kind == omp::Sched::static_
                                                 ? omp::static_chunk(loop, t, threads, trip[t]++, c)
                                                 : omp::shared_chunk(loop, threads, next, c);
                            if (!got) {
                                done[t] = true;
                                --live;
                                continue;
                            }
                            ASSERT_LT(c.begin, c.end);
                            ASSERT_LE(c.end, count);
                            if (kind != omp::Sched::guided && chunk > 0) {
                                ASSERT_LE(c.end - c.begin, chunk);
                            }
                            for (std::uint64_t i = c.begin; i < c.end; ++i) ++seen[i];
                        }
                    for (std::uint64_t i = 0; i < count; ++i)
                        ASSERT_EQ(seen[i], 1) << int(kind) << " count " << count << " chunk " << chunk << " threads "
                                              << threads << " iteration " << i;
                }
}

TEST(OmpSchedules, StaticBlocksAndRoundRobinChunks) {
    omp::Chunk c;
    // 10 iterations over 4 threads: blocks of 3, 3, 2, 2.
    const omp::LoopSpace block{10, omp::Sched::static_, 0};
    ASSERT_TRUE(omp::static_chunk(block, 1, 4, 0, c));
    EXPECT_EQ(c.begin, 3u);
    EXPECT_EQ(c.end, 6u);
    ASSERT_TRUE(omp::static_chunk(block, 3, 4, 0, c));
    EXPECT_EQ(c.begin, 8u);
    EXPECT_EQ(c.end, 10u);
    EXPECT_FALSE(omp::static_chunk(block, 3, 4, 1, c));   // one block a thread
    // Chunks of 2 dealt round-robin: thread 1 gets 2-3, then 10-11 (of 11).
    const omp::LoopSpace rr{11, omp::Sched::static_, 2};
    ASSERT_TRUE(omp::static_chunk(rr, 1, 4, 0, c));
    EXPECT_EQ(c.begin, 2u);
    ASSERT_TRUE(omp::static_chunk(rr, 1, 4, 1, c));
    EXPECT_EQ(c.begin, 10u);
    EXPECT_EQ(c.end, 11u);
    EXPECT_FALSE(omp::static_chunk(rr, 1, 4, 2, c));
    // Guided: the first chunk is a thread's share of everything left.
    std::atomic<std::uint64_t> next{0};
    ASSERT_TRUE(omp::shared_chunk({100, omp::Sched::guided, 1}, 4, next, c));
    EXPECT_EQ(c.end - c.begin, 25u);
    ASSERT_TRUE(omp::shared_chunk({100, omp::Sched::guided, 1}, 4, next, c));
    EXPECT_EQ(c.end - c.begin, 19u);   // ceil(75 / 4)
}
