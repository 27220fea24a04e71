// The OpenMP shim's pure parts: the environment variables (settings.hpp),
// the loop schedules' chunking and the doacross progress (workshare.hpp),
// and the task reduction descriptors (task_reduction.hpp). The shim itself runs under real OpenMP
// programs in the `omp.constructs` test.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "support.hpp"
#include "tools/omp/settings.hpp"
#include "tools/omp/task_reduction.hpp"
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
    std::vector<omp::Bind> nested;
    EXPECT_TRUE(omp::parse_proc_bind("spread", b, nested));
    EXPECT_EQ(b, omp::Bind::spread);
    EXPECT_TRUE(nested.empty());
    EXPECT_TRUE(omp::parse_proc_bind("CLOSE", b, nested));
    EXPECT_EQ(b, omp::Bind::close);
    EXPECT_TRUE(omp::parse_proc_bind("master", b, nested));
    EXPECT_EQ(b, omp::Bind::primary);
    EXPECT_TRUE(omp::parse_proc_bind("spread, close,primary", b, nested));
    EXPECT_EQ(b, omp::Bind::spread);
    EXPECT_EQ(nested, (std::vector<omp::Bind>{omp::Bind::close, omp::Bind::primary}));
    EXPECT_TRUE(omp::parse_proc_bind("false", b, nested));
    EXPECT_EQ(b, omp::Bind::false_);
    EXPECT_TRUE(nested.empty());
    for (const char* bad : {"", "tight", "true,close", "spread,false", "close,", "close,,spread"}) {
        EXPECT_FALSE(omp::parse_proc_bind(bad, b, nested)) << bad;
        EXPECT_EQ(b, omp::Bind::false_) << bad;   // a refused value leaves the output as it was
    }
}

TEST(OmpSettings, PlacesAbstractNamesAndExplicitLists) {
    omp::Places p;
    ASSERT_TRUE(omp::parse_places("cores", p));
    EXPECT_EQ(p.kind, omp::PlaceKind::cores);
    EXPECT_EQ(p.count, 0u);
    ASSERT_TRUE(omp::parse_places("numa_domains(2)", p));
    EXPECT_EQ(p.kind, omp::PlaceKind::numa_domains);
    EXPECT_EQ(p.count, 2u);
    ASSERT_TRUE(omp::parse_places("LL_Caches", p));
    EXPECT_EQ(p.kind, omp::PlaceKind::ll_caches);
    EXPECT_EQ(p.count, 0u);
    ASSERT_TRUE(omp::parse_places("ll_caches(3)", p));
    EXPECT_EQ(p.count, 3u);
    ASSERT_TRUE(omp::parse_places("{0,1},{2:2}", p));
    EXPECT_EQ(p.kind, omp::PlaceKind::explicit_list);
    EXPECT_EQ(p.sets, (std::vector<std::vector<unsigned>>{{0, 1}, {2, 3}}));
    ASSERT_TRUE(omp::parse_places("{0:2}:3:4", p));   // three places of two CPUs, 4 apart
    EXPECT_EQ(p.sets, (std::vector<std::vector<unsigned>>{{0, 1}, {4, 5}, {8, 9}}));
    ASSERT_TRUE(omp::parse_places("{6:3:-2}", p));
    EXPECT_EQ(p.sets, (std::vector<std::vector<unsigned>>{{6, 4, 2}}));
    for (const char* bad : {"", "cores(0)", "ll_caches(", "ll_caches()", "lanes", "{}", "{0,1", "{0:0}", "{1:3:-1}", "{0},", "!{0}", "{0}:0"})
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

// Unset, bind-var is false as under libgomp (mmseqs2 refuses to run with
// anything else), and numaware pins only its own pool threads; a place
// list alone binds (true), as under libgomp; an explicit false pins nothing.
TEST(OmpSettings, WithoutBindingAskedForBindVarIsFalseAndOnlyThePoolIsPinned) {
    const omp::Settings none = read({});
    EXPECT_EQ(none.bind, omp::Bind::false_);
    EXPECT_TRUE(none.pin_pool_threads);
    EXPECT_FALSE(none.bind_set || none.places_set);
    for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
             {"OMP_PLACES", "cores"}, {"GOMP_CPU_AFFINITY", "0"}}) {
        const omp::Settings placed = read({{name, value}});
        EXPECT_EQ(placed.bind, omp::Bind::true_) << name;
        EXPECT_FALSE(placed.pin_pool_threads) << name;
    }
    const omp::Settings off = read({{"OMP_PROC_BIND", "false"}});
    EXPECT_EQ(off.bind, omp::Bind::false_);
    EXPECT_FALSE(off.pin_pool_threads);
    EXPECT_EQ(read({{"OMP_PROC_BIND", "close"}}).bind, omp::Bind::close);
    EXPECT_FALSE(read({{"OMP_PROC_BIND", "close"}}).pin_pool_threads);
    // An invalid value is warned about and leaves the default.
    std::vector<std::string> warnings;
    const omp::Settings bogus = read({{"OMP_PROC_BIND", "sideways"}}, &warnings);
    EXPECT_EQ(bogus.bind, omp::Bind::false_);
    EXPECT_TRUE(bogus.pin_pool_threads);
    EXPECT_EQ(warnings.size(), 1u);
}

TEST(OmpSettings, GompCpuAffinityIsOnePlacePerCpuInTheOrderGiven) {
    omp::Places p;
    ASSERT_TRUE(omp::parse_cpu_affinity("0 3 1-2 4-15:2", p));
    EXPECT_EQ(p.kind, omp::PlaceKind::explicit_list);
    const std::vector<std::vector<unsigned>> want{{0}, {3}, {1}, {2}, {4}, {6}, {8}, {10}, {12}, {14}};
    EXPECT_EQ(p.sets, want);
    ASSERT_TRUE(omp::parse_cpu_affinity(" 1,0 ", p));
    EXPECT_EQ(p.sets, (std::vector<std::vector<unsigned>>{{1}, {0}}));
    for (const char* bad : {"", " , ", "x", "3-1", "1-4:0", "1:2", "-2", "0-99999999999", "0-4294967295"})
        EXPECT_FALSE(omp::parse_cpu_affinity(bad, p)) << bad;
    // Read as libgomp reads it: not over OMP_PLACES, not with OMP_PROC_BIND=false.
    omp::Settings s = read({{"GOMP_CPU_AFFINITY", "1 0"}});
    EXPECT_TRUE(s.places_set);
    EXPECT_EQ(s.places.sets, (std::vector<std::vector<unsigned>>{{1}, {0}}));
    EXPECT_EQ(read({{"GOMP_CPU_AFFINITY", "1 0"}, {"OMP_PLACES", "threads"}}).places.kind, omp::PlaceKind::threads);
    EXPECT_FALSE(read({{"GOMP_CPU_AFFINITY", "1 0"}, {"OMP_PROC_BIND", "false"}}).places_set);
    std::vector<std::string> warnings;
    EXPECT_FALSE(read({{"GOMP_CPU_AFFINITY", "bogus"}}, &warnings).places_set);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("GOMP_CPU_AFFINITY: 'bogus'"), std::string::npos);
    // GOMP_STACKSIZE, in kilobytes, when OMP_STACKSIZE gives none.
    EXPECT_EQ(read({{"GOMP_STACKSIZE", "256"}}).stack_bytes, 256u * 1024);
    EXPECT_EQ(read({{"GOMP_STACKSIZE", "256"}, {"OMP_STACKSIZE", "1M"}}).stack_bytes, std::size_t{1} << 20);
}

TEST(OmpSettings, TaskPriorityDefaultDeviceAndCancellation) {
    std::vector<std::string> warnings;
    EXPECT_EQ(read({}).max_task_priority, 0u);
    EXPECT_EQ(read({{"OMP_MAX_TASK_PRIORITY", "7"}}).max_task_priority, 7u);
    EXPECT_EQ(read({{"OMP_DEFAULT_DEVICE", "3"}}).default_device, 3);
    EXPECT_EQ(read({{"OMP_MAX_TASK_PRIORITY", "-1"}, {"OMP_DEFAULT_DEVICE", "x"}}, &warnings).max_task_priority, 0u);
    ASSERT_EQ(warnings.size(), 2u);
    EXPECT_NE(warnings[0].find("OMP_MAX_TASK_PRIORITY: '-1'"), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[1].find("OMP_DEFAULT_DEVICE: 'x'"), std::string::npos) << warnings[1];
    // cancel-var.
    warnings.clear();
    EXPECT_FALSE(read({}).cancellation);
    EXPECT_TRUE(read({{"OMP_CANCELLATION", "true"}}, &warnings).cancellation);
    EXPECT_TRUE(read({{"OMP_CANCELLATION", " TRUE "}}, &warnings).cancellation);
    EXPECT_FALSE(read({{"OMP_CANCELLATION", "false"}}, &warnings).cancellation);
    EXPECT_TRUE(warnings.empty());
    EXPECT_FALSE(read({{"OMP_CANCELLATION", "yes"}}, &warnings).cancellation);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("OMP_CANCELLATION: 'yes'"), std::string::npos) << warnings[0];
    warnings.clear();
    // OMP_WAIT_POLICY: how long waiters spin (team.cpp).
    EXPECT_EQ(read({}).wait_policy, omp::Settings::Wait::unset);
    EXPECT_EQ(read({{"OMP_WAIT_POLICY", "ACTIVE"}}).wait_policy, omp::Settings::Wait::active);
    EXPECT_EQ(read({{"OMP_WAIT_POLICY", " passive"}}).wait_policy, omp::Settings::Wait::passive);
    EXPECT_EQ(read({{"OMP_WAIT_POLICY", "busy"}}, &warnings).wait_policy, omp::Settings::Wait::unset);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("OMP_WAIT_POLICY: 'busy' (expected active or passive)"), std::string::npos) << warnings[0];
    warnings.clear();
    // GOMP_SPINCOUNT, libgomp's: the count itself, which OMP_WAIT_POLICY
    // then no longer decides.
    EXPECT_EQ(omp::spin_count(read({})), 2000u);
    EXPECT_EQ(omp::spin_count(read({{"OMP_WAIT_POLICY", "active"}})), 30'000'000'000u);
    EXPECT_EQ(omp::spin_count(read({{"OMP_WAIT_POLICY", "passive"}})), 0u);
    EXPECT_EQ(omp::spin_count(read({{"GOMP_SPINCOUNT", "5k"}, {"OMP_WAIT_POLICY", "passive"}})), 5000u);
    EXPECT_EQ(omp::spin_count(read({{"GOMP_SPINCOUNT", "0"}, {"OMP_WAIT_POLICY", "active"}})), 0u);
    EXPECT_EQ(omp::spin_count(read({{"GOMP_SPINCOUNT", "bogus"}}, &warnings)), 2000u);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("GOMP_SPINCOUNT: 'bogus'"), std::string::npos) << warnings[0];
}

TEST(OmpSettings, DynamicThreadsAsLibgompBoundsThem) {
    // CPUs, nthreads-var, 15-minute load average -> the most threads.
    EXPECT_EQ(omp::dynamic_threads(2, 8, 0.0), 2u);
    EXPECT_EQ(omp::dynamic_threads(2, 8, 0.85), 2u);    // 0.95: rounds down
    EXPECT_EQ(omp::dynamic_threads(2, 8, 0.9), 1u);     // 1.0
    EXPECT_EQ(omp::dynamic_threads(2, 8, 11.16), 1u);   // measured: libgomp ran 1 thread at this load
    EXPECT_EQ(omp::dynamic_threads(64, 16, 3.2), 13u);
    EXPECT_EQ(omp::dynamic_threads(64, 16, 40.0), 1u);
    EXPECT_EQ(omp::dynamic_threads(4, 1, 0.0), 1u);
    EXPECT_EQ(omp::dynamic_threads(8, 8, -1.0), 8u);   // no load average known
}

TEST(OmpSettings, SpinCountAsLibgompReadsIt) {
    // Each checked against libgomp 12's OMP_DISPLAY_ENV=verbose.
    const std::uint64_t most = std::numeric_limits<std::uint64_t>::max();
    const std::pair<const char*, std::uint64_t> good[] = {
        {"300000", 300000},  {"5K", 5000},       {"2m", 2000000}, {"3g", 3000000000ull}, {"1T", 1000000000000ull},
        {" 7 ", 7},          {"7 k", 7000},      {"0", 0},        {"INFINITY", most},     {"infinite", most},
        {"20000000T", most}, {"18446744073709551615", most},     {"18446744073709552", 18446744073709552ull},
        {"99999999999999999999", most}};
    for (const auto& [text, want] : good) {
        std::uint64_t got = 1;
        ASSERT_TRUE(omp::parse_spin_count(text, got)) << text;
        EXPECT_EQ(got, want) << text;
    }
    for (const char* text : {"", " ", "k", "0x10", "1.5k", "-1", "5 kk", "5q", "infinit", "1e3"}) {
        std::uint64_t got = 42;
        EXPECT_FALSE(omp::parse_spin_count(text, got)) << "'" << text << "'";
        EXPECT_EQ(got, 42u) << text;
    }
}

TEST(OmpSettings, ScheduleKindsModifiersAndChunks) {
    omp::Schedule s;
    ASSERT_TRUE(omp::parse_schedule("guided,4", s));
    EXPECT_EQ(s.kind, omp::Sched::guided);
    EXPECT_EQ(s.chunk, 4);
    EXPECT_FALSE(s.monotonic);
    // As libgomp keeps run-sched-var (checked against it: omp_get_schedule
    // under the same OMP_SCHEDULE): a chunk of 0, given or not, is 1 for
    // every kind but static; static is monotonic unless said otherwise;
    // auto keeps a chunk (its runtime loops are static with it).
    ASSERT_TRUE(omp::parse_schedule("monotonic:dynamic", s));
    EXPECT_EQ(s.kind, omp::Sched::dynamic);
    EXPECT_TRUE(s.monotonic);
    EXPECT_EQ(s.chunk, 1);
    ASSERT_TRUE(omp::parse_schedule("dynamic,0", s));
    EXPECT_EQ(s.chunk, 1);
    ASSERT_TRUE(omp::parse_schedule("STATIC", s));
    EXPECT_EQ(s.kind, omp::Sched::static_);
    EXPECT_EQ(s.chunk, 0);
    EXPECT_TRUE(s.monotonic);
    ASSERT_TRUE(omp::parse_schedule("static,0", s));
    EXPECT_EQ(s.chunk, 0);
    ASSERT_TRUE(omp::parse_schedule("nonmonotonic:static,3", s));
    EXPECT_FALSE(s.monotonic);
    EXPECT_EQ(s.chunk, 3);
    ASSERT_TRUE(omp::parse_schedule("auto,4", s));
    EXPECT_EQ(s.kind, omp::Sched::auto_);
    EXPECT_EQ(s.chunk, 4);
    EXPECT_EQ(omp::Schedule{}.chunk, 1);   // the default: dynamic, 1
    for (const char* bad : {"", "fast", "dynamic,-1", "sometimes:static", "guided,x", "static,"})
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
    EXPECT_EQ(read({}).policy, "dep");   // locality scheduling without a setting
    EXPECT_EQ(read({}).rip_window, 256u);
    EXPECT_EQ(read({}).report_path, "");
    EXPECT_EQ(read({{"NUMAWARE_REPORT", "run.json"}}).report_path, "run.json");
    expect_error([] { (void)read({{"NUMAWARE_REPORT", " "}}); }, "NUMAWARE_REPORT", "is empty");
    EXPECT_EQ(read({{"NUMAWARE_RIP_WINDOW", " 64 "}}).rip_window, 64u);
    for (const char* bad : {"0", "-3", "many", ""})
        expect_error([bad] { (void)read({{"NUMAWARE_RIP_WINDOW", bad}}); }, "NUMAWARE_RIP_WINDOW",
                     "is not a positive integer");
    EXPECT_EQ(read({}).task_throttle, 64u);
    EXPECT_EQ(read({{"NUMAWARE_TASK_THROTTLE", " 0 "}}).task_throttle, 0u);
    EXPECT_EQ(read({{"NUMAWARE_TASK_THROTTLE", "16777216"}}).task_throttle, 16777216u);
    for (const char* bad : {"16777217", "-1", "4294967296", "lots", ""})
        expect_error([bad] { (void)read({{"NUMAWARE_TASK_THROTTLE", bad}}); }, "NUMAWARE_TASK_THROTTLE",
                     "is not an integer from 0 to 16777216");
    // libgomp's figures: OMP_NESTED and lists of levels ask for every
    // supported level (255); an explicit count is kept up to that.
    EXPECT_EQ(read({{"OMP_NESTED", "true"}}).max_active_levels, omp::supported_active_levels);
    EXPECT_EQ(read({{"OMP_NUM_THREADS", "2,3"}}).max_active_levels, omp::supported_active_levels);
    EXPECT_EQ(read({{"OMP_PROC_BIND", "spread,close"}}).max_active_levels, omp::supported_active_levels);
    EXPECT_EQ(read({{"OMP_NUM_THREADS", "2,3"}, {"OMP_MAX_ACTIVE_LEVELS", "2"}}).max_active_levels, 2u);
    EXPECT_EQ(read({{"OMP_MAX_ACTIVE_LEVELS", "300"}}).max_active_levels, omp::supported_active_levels);
    EXPECT_EQ(read({{"OMP_NUM_THREADS", "4"}}).max_active_levels, 1u);
    EXPECT_EQ(read({{"OMP_NUM_THREADS", "2,2"}, {"OMP_NESTED", "false"}}).max_active_levels, 1u);
    EXPECT_EQ(read({{"OMP_MAX_ACTIVE_LEVELS", "0"}}).max_active_levels, 0u);
}

TEST(OmpSettings, TeamsVariablesTakePositiveIntegers) {
    const omp::Settings s = read({{"OMP_NUM_TEAMS", "4"}, {"OMP_TEAMS_THREAD_LIMIT", " 6 "}});
    EXPECT_EQ(s.num_teams, 4u);
    EXPECT_EQ(s.teams_thread_limit, 6u);
    std::vector<std::string> warnings;
    const omp::Settings bad = read({{"OMP_NUM_TEAMS", "0"}, {"OMP_TEAMS_THREAD_LIMIT", "lots"}}, &warnings);
    EXPECT_EQ(bad.num_teams, 0u);
    EXPECT_EQ(bad.teams_thread_limit, 0u);
    ASSERT_EQ(warnings.size(), 2u);
    EXPECT_EQ(warnings[0], "numaware-omp: invalid value for environment variable OMP_NUM_TEAMS: '0' (expected a "
                           "positive integer); the default is used");
    EXPECT_NE(warnings[1].find("OMP_TEAMS_THREAD_LIMIT: 'lots'"), std::string::npos);
}

TEST(OmpSettings, DisplayVariables) {
    const omp::Settings none = read({});
    EXPECT_EQ(none.affinity_format, "");
    EXPECT_FALSE(none.display_affinity);
    EXPECT_EQ(none.display_env, omp::Settings::Display::no);
    const omp::Settings s = read(
        {{"OMP_AFFINITY_FORMAT", "%n on %A"}, {"OMP_DISPLAY_AFFINITY", " TRUE "}, {"OMP_DISPLAY_ENV", "Verbose"}});
    EXPECT_EQ(s.affinity_format, "%n on %A");
    EXPECT_TRUE(s.display_affinity);
    EXPECT_EQ(s.display_env, omp::Settings::Display::verbose);
    EXPECT_EQ(read({{"OMP_DISPLAY_ENV", "true"}}).display_env, omp::Settings::Display::yes);
    std::vector<std::string> warnings;
    const omp::Settings bad = read({{"OMP_DISPLAY_AFFINITY", "yes"}, {"OMP_DISPLAY_ENV", "loud"}}, &warnings);
    EXPECT_FALSE(bad.display_affinity);
    EXPECT_EQ(bad.display_env, omp::Settings::Display::no);
    ASSERT_EQ(warnings.size(), 2u);
    EXPECT_NE(warnings[0].find("OMP_DISPLAY_AFFINITY: 'yes' (expected true or false)"), std::string::npos);
    EXPECT_NE(warnings[1].find("OMP_DISPLAY_ENV: 'loud' (expected true, false or verbose)"), std::string::npos);
}

TEST(OmpSettings, AllocatorNamesAPredefinedAllocator) {
    EXPECT_EQ(read({}).default_allocator, 1u);
    EXPECT_EQ(read({{"OMP_ALLOCATOR", "omp_high_bw_mem_alloc"}}).default_allocator, 4u);
    EXPECT_EQ(read({{"OMP_ALLOCATOR", " OMP_THREAD_MEM_ALLOC "}}).default_allocator, 8u);
    std::vector<std::string> warnings;
    EXPECT_EQ(read({{"OMP_ALLOCATOR", "omp_fast_alloc"}}, &warnings).default_allocator, 1u);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("OMP_ALLOCATOR: 'omp_fast_alloc' (expected a predefined allocator"), std::string::npos);
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

// ---- task reduction descriptors (the layout GCC's code builds) ----------------
namespace {
// A descriptor of `items` list items, `bytes` of copies per thread.
std::vector<std::uintptr_t> descriptor(std::size_t items, std::uintptr_t bytes, std::uintptr_t align) {
    std::vector<std::uintptr_t> d(7 + 3 * items, 0);
    d[0] = items;
    d[1] = bytes;
    d[2] = align;
    d[3] = static_cast<std::uintptr_t>(-1);
    return d;
}
void set_item(std::vector<std::uintptr_t>& d, std::size_t k, const void* original, std::uintptr_t offset) {
    d[7 + 3 * k] = reinterpret_cast<std::uintptr_t>(original);
    d[7 + 3 * k + 1] = offset;
}
}  // namespace

TEST(OmpTaskReductions, CopiesAreZeroedAlignedAndPerThread) {
    long a = 0;
    double b = 0;
    auto d = descriptor(2, 64, 64);
    set_item(d, 0, &a, 0);
    set_item(d, 1, &b, 16);
    omp::register_task_reductions(d.data(), nullptr, nullptr, 3);
    ASSERT_NE(d[2], 0u);
    EXPECT_EQ(d[2] % 64, 0u);
    EXPECT_EQ(d[6], d[2] + 3 * 64);
    for (std::uintptr_t p = d[2]; p < d[6]; ++p) ASSERT_EQ(*reinterpret_cast<const unsigned char*>(p), 0);
    // Thread 2's copy of b, and the original's address in ptrs[cnt + i].
    void* ptrs[4] = {&b, &a, nullptr, nullptr};
    omp::remap_task_reductions(d.data(), 2, 2, 2, ptrs);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(ptrs[0]), d[2] + 2 * 64 + 16);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(ptrs[1]), d[2] + 2 * 64);
    EXPECT_EQ(ptrs[2], &b);
    EXPECT_EQ(ptrs[3], &a);
    // An address inside thread 0's copies maps to the same item's copy of
    // thread 1, and back to the original.
    void* again[2] = {reinterpret_cast<void*>(d[2] + 16), nullptr};
    omp::remap_task_reductions(d.data(), 1, 1, 1, again);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(again[0]), d[2] + 64 + 16);
    EXPECT_EQ(again[1], &b);
    omp::unregister_task_reductions(d.data(), true);
    EXPECT_EQ(d[5], 0u);
}

TEST(OmpTaskReductions, InnerRegistrationsFindTheOuterItems) {
    long outer_item = 0, inner_item = 0;
    auto outer = descriptor(1, 8, 8);
    set_item(outer, 0, &outer_item, 0);
    omp::register_task_reductions(outer.data(), nullptr, nullptr, 2);
    auto inner = descriptor(1, 8, 8);
    set_item(inner, 0, &inner_item, 0);
    omp::register_task_reductions(inner.data(), outer.data(), nullptr, 2);
    EXPECT_EQ(inner[4], reinterpret_cast<std::uintptr_t>(outer.data()));   // chained behind
    void* ptrs[2] = {&outer_item, &inner_item};
    omp::remap_task_reductions(inner.data(), 1, 2, 0, ptrs);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(ptrs[0]), outer[2] + 8);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(ptrs[1]), inner[2] + 8);
    // Through a copy's address as well.
    void* via_copy[1] = {reinterpret_cast<void*>(outer[2])};
    omp::remap_task_reductions(inner.data(), 1, 1, 0, via_copy);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(via_copy[0]), outer[2] + 8);
    // Unregistering the inner one frees its copies only: the outer lookup
    // still answers.
    omp::unregister_task_reductions(inner.data(), true);
    void* still[1] = {&outer_item};
    omp::remap_task_reductions(outer.data(), 0, 1, 0, still);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(still[0]), outer[2]);
    omp::unregister_task_reductions(outer.data(), true);
}

TEST(OmpTaskReductions, AWorksharingFollowerSharesTheFirstThreadsCopies) {
    long x = 0;
    auto first = descriptor(1, 16, 8), follower = descriptor(1, 16, 8);
    set_item(first, 0, &x, 0);
    set_item(follower, 0, &x, 0);
    omp::register_task_reductions(first.data(), nullptr, nullptr, 4);
    omp::register_task_reductions(follower.data(), nullptr, first.data(), 4);
    EXPECT_EQ(follower[2], first[2]);
    EXPECT_EQ(follower[6], first[6]);
    void* ptrs[1] = {&x};
    omp::remap_task_reductions(follower.data(), 3, 1, 0, ptrs);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(ptrs[0]), first[2] + 3 * 16);
    omp::unregister_task_reductions(follower.data(), false);   // the lookup only
    omp::unregister_task_reductions(first.data(), true);
}

TEST(OmpTaskReductions, ChainedDescriptorsAreAllRegistered) {
    long a = 0, b = 0;
    auto second = descriptor(1, 8, 8);
    set_item(second, 0, &b, 0);
    auto head = descriptor(1, 32, 32);
    set_item(head, 0, &a, 0);
    head[4] = reinterpret_cast<std::uintptr_t>(second.data());
    omp::register_task_reductions(head.data(), nullptr, nullptr, 2);
    ASSERT_NE(second[2], 0u);
    EXPECT_EQ(second[4], 0u);   // the end of the chain: no outer registration
    void* ptrs[2] = {&b, &a};
    omp::remap_task_reductions(head.data(), 1, 2, 0, ptrs);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(ptrs[0]), second[2] + 8);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(ptrs[1]), head[2] + 32);
    omp::unregister_task_reductions(head.data(), true);
}

TEST(OmpTaskReductions, BadDescriptorsAreRefusedNamingTheWordAndChangeNothing) {
    long a = 0;
    auto d = descriptor(1, 8, 24);
    set_item(d, 0, &a, 0);
    const auto before = d;
    expect_error([&] { omp::register_task_reductions(d.data(), nullptr, nullptr, 2); },
                 "task reductions", "alignment 24 (word 2) is not a power of two");
    EXPECT_EQ(d, before);
    // The second of a chain fails: the first's copies are given back.
    auto bad = descriptor(1, 8, 3), head = descriptor(1, 8, 8);
    set_item(head, 0, &a, 0);
    head[4] = reinterpret_cast<std::uintptr_t>(bad.data());
    const auto head_before = head;
    expect_error([&] { omp::register_task_reductions(head.data(), nullptr, nullptr, 2); }, "task reductions", "alignment 3");
    EXPECT_EQ(head, head_before);
    auto huge = descriptor(1, std::uintptr_t{1} << 62, 8);
    expect_error([&] { omp::register_task_reductions(huge.data(), nullptr, nullptr, 8); }, "task reductions", "overflow");
    expect_error([&] { omp::register_task_reductions(d.data(), nullptr, nullptr, 0); }, "threads", "is 0");
    // An address no registration knows, and no registration at all.
    auto ok = descriptor(1, 8, 8);
    set_item(ok, 0, &a, 0);
    omp::register_task_reductions(ok.data(), nullptr, nullptr, 2);
    long stranger = 0;
    void* ptrs[1] = {&stranger};
    expect_error([&] { omp::remap_task_reductions(ok.data(), 0, 1, 0, ptrs); }, "task reductions", "is no list item");
    EXPECT_EQ(ptrs[0], &stranger);
    expect_error([&] { omp::remap_task_reductions(nullptr, 0, 1, 0, ptrs); }, "task reductions", "no task_reduction");
    omp::unregister_task_reductions(ok.data(), true);
}

// ---- doacross progress (workshare.hpp) ------------------------------------------
TEST(OmpDoacross, AWaitReturnsOnceItsIterationIsPostedAndAtOnceOutsideTheLoop) {
    omp::Doacross d;
    const std::uint64_t counts[3] = {4, 3, 5};
    d.start(3, counts);
    EXPECT_EQ(d.dims(), 3u);
    const std::uint64_t outside[][3] = {{4, 0, 0}, {0, 3, 0}, {0, 0, 5}, {~0ull, 0, 0}};
    for (const auto& it : outside) d.wait(it);   // would block for ever if it waited
    // Iteration (1, 2, 4) posted: every earlier inner iteration of outer
    // iteration 1 counts as done (its thread runs them in order).
    const std::uint64_t done[3] = {1, 2, 4};
    d.post(done);
    const std::uint64_t earlier[3] = {1, 0, 3};
    d.wait(earlier);
    d.wait(done);
    // A waiter on (2, 0, 1) returns only after that iteration is posted.
    std::atomic<bool> returned{false};
    std::thread waiter([&] {
        const std::uint64_t it[3] = {2, 0, 1};
        d.wait(it);
        returned.store(true);
    });
    const std::uint64_t before[3] = {2, 0, 0};
    d.post(before);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    EXPECT_FALSE(returned.load()) << "a sink on (2,0,1) returned after only (2,0,0) was posted";
    const std::uint64_t it[3] = {2, 0, 1};
    d.post(it);
    waiter.join();
    EXPECT_TRUE(returned.load());
    d.clear();
    EXPECT_EQ(d.dims(), 0u);
}

TEST(OmpDoacross, SizesThatOverflowAnIndexAreRefused) {
    omp::Doacross d;
    const std::uint64_t counts[3] = {2, std::uint64_t{1} << 40, std::uint64_t{1} << 30};
    expect_error([&] { d.start(3, counts); }, "ordered", "overflow a 64-bit index");
    EXPECT_EQ(d.dims(), 0u);
    expect_error([&] { d.start(0, counts); }, "ordered", "at least one dimension");
}
