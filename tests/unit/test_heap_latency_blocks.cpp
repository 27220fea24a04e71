// Latency-aware block allocator: the pure decisions on synthetic databases,
// the database file form and its errors, the allocator's lists, a real
// measurement on this host's CPUs, and the `numaware latency` command.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <set>
#include <string>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "numaware/latency_blocks.hpp"
#include "os/os.hpp"
#include "os/recording_os.hpp"
#include "support.hpp"

namespace {

using namespace numaware;
using numaware::test::contains;
using numaware::test::expect_error;

// A database of `blocks` 64 B blocks on pages of `page` bytes, one row per
// CPU, with the given noise.
LatencyDatabase synthetic(std::vector<unsigned> cpus, std::vector<std::vector<double>> rows,
                          std::vector<double> noise, std::size_t page = 256) {
    LatencyDatabase db;
    db.line_bytes = 64;
    db.page_bytes = page;
    db.region_bytes = rows.front().size() * 64;
    db.repetitions = 5;
    db.loads_per_sample = 16;
    db.cpus = std::move(cpus);
    db.latency_ns = std::move(rows);
    db.noise_ns = std::move(noise);
    return db;
}

// 16 blocks: CPU 0 finds low blocks fast, CPU 1 high blocks fast.
LatencyDatabase mirrored() {
    std::vector<double> a(16), b(16);
    for (std::size_t i = 0; i < 16; ++i) {
        a[i] = 100.0 + 10.0 * static_cast<double>(i);
        b[i] = 100.0 + 10.0 * static_cast<double>(15 - i);
    }
    return synthetic({0, 1}, {a, b}, {2.0, 2.0});
}

std::string temp_path(const std::string& name) {
    return ::testing::TempDir() + "nw_latency_" + std::to_string(::getpid()) + "_" + name;
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
}

// ---- decisions ----

TEST(LatencyPlan, SortsBlocksFastestFirstWithTiesInAddressOrder) {
    auto db = synthetic({3}, {{50, 20, 30, 20, 10, 40, 30, 60}}, {1.0});
    db.page_bytes = 512;
    const LatencyPlan plan = plan_latency_blocks(db);
    ASSERT_EQ(plan.per_cpu.size(), 1u);
    const auto& r = plan.per_cpu[0];
    EXPECT_EQ(r.cpu, 3u);
    EXPECT_EQ(r.fastest_first, (std::vector<std::uint32_t>{4, 1, 3, 2, 6, 5, 0, 7}));
    EXPECT_DOUBLE_EQ(r.min_ns, 10);
    EXPECT_DOUBLE_EQ(r.max_ns, 60);
    EXPECT_DOUBLE_EQ(r.median_ns, 30);             // (30 + 30) / 2
    EXPECT_DOUBLE_EQ(r.fast_quartile_ns, 15);      // 10, 20
    EXPECT_DOUBLE_EQ(r.slow_quartile_ns, 55);      // 60, 50
    EXPECT_DOUBLE_EQ(r.spread_ns, 40);
}

TEST(LatencyPlan, NonUniformOnlyWhenSpreadExceedsNoiseTimesFactor) {
    // Spread of the quartile means is 40 ns (see above).
    auto make = [](double noise) {
        auto db = synthetic({0}, {{50, 20, 30, 20, 10, 40, 30, 60}}, {noise});
        db.page_bytes = 512;
        return db;
    };
    EXPECT_TRUE(plan_latency_blocks(make(13.0), 3.0).non_uniform);     // 40 > 39
    EXPECT_FALSE(plan_latency_blocks(make(40.0 / 3.0), 3.0).non_uniform);   // 40 == 40: not more
    const LatencyPlan flat = plan_latency_blocks(make(20.0), 3.0);
    EXPECT_FALSE(flat.non_uniform);
    EXPECT_FALSE(flat.per_cpu[0].non_uniform);
    EXPECT_TRUE(contains(flat.diagnostic, "no measurable non-uniformity")) << flat.diagnostic;
    EXPECT_TRUE(plan_latency_blocks(make(20.0), 1.5).non_uniform);      // 40 > 30
    EXPECT_EQ(expect_error([&] { (void)plan_latency_blocks(make(1.0), 0.0); }).field(), "noise_factor");
}

TEST(LatencyPlan, UniformNoiseIsNotCalledNonUniform) {
    // Medians that differ only by noise of the recorded size.
    std::vector<double> row(256);
    unsigned x = 12345;
    for (auto& v : row) {
        x = x * 1103515245u + 12345u;
        v = 300.0 + 4.0 * (static_cast<double>((x >> 8) % 1000) / 1000.0 - 0.5);   // +-2 ns
    }
    const LatencyPlan plan = plan_latency_blocks(synthetic({0}, {row}, {2.0}));
    EXPECT_FALSE(plan.non_uniform) << plan.diagnostic;
    // The same noise on top of a real 40 ns step between halves is seen.
    for (std::size_t i = 128; i < 256; ++i) row[i] += 40;
    const LatencyPlan step = plan_latency_blocks(synthetic({0}, {row}, {2.0}));
    EXPECT_TRUE(step.non_uniform) << step.diagnostic;
    EXPECT_TRUE(contains(step.diagnostic, "measurable non-uniformity on 1 of 1 CPUs")) << step.diagnostic;
}

TEST(LatencyPlan, AssignsFastBlocksInTurnsWithoutSharing) {
    // Both CPUs prefer block 0 then 1 ...; CPU 0 chooses first each round.
    std::vector<double> same(8);
    for (std::size_t i = 0; i < 8; ++i) same[i] = 10.0 + static_cast<double>(i);
    auto db = synthetic({0, 1}, {same, same}, {0.1, 0.1});
    db.page_bytes = 512;
    const auto owner = assign_fast_blocks(plan_latency_blocks(db), 3);
    EXPECT_EQ(owner, (std::vector<int>{0, 1, 0, 1, 0, 1, -1, -1}));
    // Mirrored preferences: each CPU gets its own fast end.
    const auto mirrored_owner = assign_fast_blocks(plan_latency_blocks(mirrored()), 4);
    EXPECT_EQ(mirrored_owner,
              (std::vector<int>{0, 0, 0, 0, -1, -1, -1, -1, -1, -1, -1, -1, 1, 1, 1, 1}));
}

TEST(LatencyPlan, OverlapSaysWhetherCpusShareTheirFastBlocks) {
    const LatencyPlan own = plan_latency_blocks(mirrored());   // opposite ends
    ASSERT_EQ(own.fast_overlap.size(), 2u);
    EXPECT_DOUBLE_EQ(own.fast_overlap[0][0], 1.0);
    EXPECT_DOUBLE_EQ(own.fast_overlap[0][1], 0.0);
    EXPECT_DOUBLE_EQ(own.fast_overlap[1][0], 0.0);
    EXPECT_FALSE(contains(own.diagnostic, "memory-side")) << own.diagnostic;
    auto db = mirrored();
    db.latency_ns[1] = db.latency_ns[0];
    db.latency_ns[1][2] = 500;   // CPU 1's fastest quarter: 0, 1, 3, 4
    const LatencyPlan shared = plan_latency_blocks(db);
    EXPECT_DOUBLE_EQ(shared.fast_overlap[0][1], 0.75);
    EXPECT_TRUE(contains(shared.diagnostic, "overlap up to 0.75")) << shared.diagnostic;
    EXPECT_TRUE(contains(shared.diagnostic, "memory-side")) << shared.diagnostic;
}

// ---- database file ----

TEST(LatencyDatabaseFile, RoundTripsExactly) {
    auto db = mirrored();
    db.latency_ns[0][3] = 1.0 / 3.0;
    db.latency_ns[1][5] = 123.456789012345678;
    db.latency_ns[1][6] = std::numeric_limits<double>::denorm_min();
    db.noise_ns = {0.1 + 0.2, 0};
    db.frames = {0x1234, 0xfffffffffffULL, 7, 8};
    db.frames_note = "";
    const std::string path = temp_path("roundtrip.json");
    save_latency_database(db, path);
    const LatencyDatabase back = load_latency_database(path);
    EXPECT_EQ(back, db);
    EXPECT_EQ(back.latency_ns[0][3], 1.0 / 3.0);
    // Without frames, the note is kept.
    db.frames.clear();
    db.frames_note = "physical frames hidden";
    EXPECT_EQ(latency_database_from_json(latency_database_to_json(db)), db);
    std::remove(path.c_str());
}

TEST(LatencyDatabaseFile, BadFilesNameTheFileAndTheField) {
    const std::string path = temp_path("bad.json");
    auto json = nlohmann::json::parse(latency_database_to_json(mirrored()));
    struct Case {
        std::string what;
        std::function<void(nlohmann::json&)> spoil;
        std::string field;
        std::string text;
    };
    const std::vector<Case> cases = {
        {"missing cpus", [](auto& j) { j.erase("cpus"); }, "cpus", "missing"},
        {"wrong version", [](auto& j) { j["version"] = 99; }, "version", "version 99 is not supported"},
        {"wrong format", [](auto& j) { j["format"] = "other"; }, "format", "expected \"numaware-latency\""},
        {"negative latency", [](auto& j) { j["latency_ns"][1][7] = -3.0; }, "latency_ns[1][7]", "not a finite latency > 0"},
        {"text latency", [](auto& j) { j["latency_ns"][0][2] = "fast"; }, "latency_ns[0][2]", "expected a number"},
        {"short row", [](auto& j) { j["latency_ns"][1].erase(0); }, "latency_ns[1]", "15 entries, expected one per block (16)"},
        {"missing row", [](auto& j) { j["latency_ns"].erase(1); }, "latency_ns", "1 rows, expected one per CPU (2)"},
        {"duplicate cpu", [](auto& j) { j["cpus"][1] = 0; }, "cpus[1]", "CPU 0 listed twice"},
        {"odd region", [](auto& j) { j["region_bytes"] = 1000; }, "region_bytes", "not a positive multiple"},
        {"frames count", [](auto& j) { j["frames"] = {1, 2, 3}; }, "frames", "expected none or one per page (4)"},
        {"noise type", [](auto& j) { j["noise_ns"] = "x"; }, "noise_ns", "expected an array"},
    };
    for (const auto& c : cases) {
        auto bad = json;
        c.spoil(bad);
        write_file(path, bad.dump());
        const Error e = expect_error([&] { (void)load_latency_database(path); });
        EXPECT_EQ(e.field(), path + ": " + c.field) << c.what << ": " << e.what();
        EXPECT_TRUE(contains(e.what(), c.text)) << c.what << ": " << e.what();
    }
    write_file(path, latency_database_to_json(mirrored()).substr(0, 40));
    const Error truncated = expect_error([&] { (void)load_latency_database(path); });
    EXPECT_EQ(truncated.field(), path + ": json");
    EXPECT_TRUE(contains(truncated.what(), "not valid JSON")) << truncated.what();
    std::remove(path.c_str());
    const Error missing = expect_error([&] { (void)load_latency_database(path); });
    EXPECT_EQ(missing.field(), path);
    EXPECT_TRUE(contains(missing.what(), "cannot open for reading")) << missing.what();
}

// ---- allocator ----

struct Arena {
    explicit Arena(std::size_t bytes) : bytes_(bytes) {
        void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw std::runtime_error("mmap");
        data = static_cast<std::byte*>(p);
    }
    ~Arena() { munmap(data, bytes_); }
    std::span<std::byte> span() const { return {data, bytes_}; }
    std::size_t block(const void* p) const { return static_cast<std::size_t>(static_cast<const std::byte*>(p) - data) / 64; }
    std::byte* data;
    std::size_t bytes_;
};

TEST(LatencyAllocator, ServesEachCpuItsFastestBlocksThenOrdinaryThenNothing) {
    Arena arena(16 * 64);
    LatencyBlockAllocator alloc(arena.span(), mirrored(), {.fast_fraction = 0.5});
    ASSERT_TRUE(alloc.non_uniform()) << alloc.status();
    EXPECT_TRUE(contains(alloc.status(), "8 fast blocks over 2 CPUs, 8 ordinary")) << alloc.status();
    EXPECT_EQ(alloc.fast_free(0), 4u);
    EXPECT_EQ(alloc.fast_free(1), 4u);
    // CPU 0: blocks 0,1,2,3 fastest first; CPU 1: 15,14,13,12.
    for (std::size_t i = 0; i < 4; ++i) {
        void* p0 = alloc.allocate(64, 0);
        void* p1 = alloc.allocate(1, 1);
        EXPECT_EQ(arena.block(p0), i);
        EXPECT_EQ(arena.block(p1), 15 - i);
        EXPECT_EQ(alloc.block_owner_cpu(p0), 0);
        EXPECT_EQ(alloc.block_owner_cpu(p1), 1);
    }
    // Fast lists empty: ordinary blocks in address order, for any CPU.
    EXPECT_EQ(arena.block(alloc.allocate(8, 0)), 4u);
    EXPECT_EQ(arena.block(alloc.allocate(8, 1)), 5u);
    EXPECT_EQ(arena.block(alloc.allocate(8, 77)), 6u);   // unmeasured CPU
    EXPECT_EQ(alloc.block_owner_cpu(arena.data + 6 * 64), -1);
    for (int i = 0; i < 5; ++i) EXPECT_NE(alloc.allocate(8, 0), nullptr);
    EXPECT_EQ(alloc.ordinary_free(), 0u);
    EXPECT_EQ(alloc.allocate(8, 0), nullptr);   // region exhausted
    // Frees go back to the list the block came from, fastest served first.
    alloc.deallocate(arena.data + 2 * 64);
    alloc.deallocate(arena.data + 1 * 64);
    alloc.deallocate(arena.data + 9 * 64);
    EXPECT_EQ(alloc.fast_free(0), 2u);
    EXPECT_EQ(alloc.fast_free(1), 0u);
    EXPECT_EQ(alloc.ordinary_free(), 1u);
    EXPECT_EQ(arena.block(alloc.allocate(64, 1)), 9u);   // CPU 1 has no fast block left
    EXPECT_EQ(arena.block(alloc.allocate(64, 0)), 1u);
    EXPECT_EQ(arena.block(alloc.allocate(64, 0)), 2u);
}

TEST(LatencyAllocator, RejectsBadSizesForeignPointersAndDoubleFrees) {
    Arena arena(16 * 64);
    LatencyBlockAllocator alloc(arena.span(), mirrored());
    EXPECT_EQ(expect_error([&] { (void)alloc.allocate(65, 0); }).field(), "bytes");
    EXPECT_EQ(expect_error([&] { (void)alloc.allocate(0, 0); }).field(), "bytes");
    void* p = alloc.allocate(16, 0);
    alloc.deallocate(p);
    const Error twice = expect_error([&] { alloc.deallocate(p); });
    EXPECT_EQ(twice.field(), "p");
    EXPECT_TRUE(contains(twice.what(), "not allocated")) << twice.what();
    int local = 0;
    EXPECT_EQ(expect_error([&] { alloc.deallocate(&local); }).field(), "p");
    EXPECT_EQ(expect_error([&] { alloc.deallocate(arena.data + 3); }).field(), "p");
    alloc.deallocate(nullptr);
    EXPECT_EQ(alloc.fast_free(0) + alloc.fast_free(1) + alloc.ordinary_free(), 16u);
    Arena small(8 * 64);
    EXPECT_EQ(expect_error([&] { LatencyBlockAllocator bad(small.span(), mirrored()); }).field(), "region");
    EXPECT_EQ(expect_error([&] { LatencyBlockAllocator bad(arena.span(), mirrored(), {.fast_fraction = 0}); }).field(),
              "fast_fraction");
}

TEST(LatencyAllocator, UniformMachineSaysSoAndServesOrdinaryBlocks) {
    auto db = mirrored();
    db.noise_ns = {100.0, 100.0};   // the 80 ns spread is within noise
    Arena arena(16 * 64);
    LatencyBlockAllocator alloc(arena.span(), db);
    EXPECT_FALSE(alloc.non_uniform());
    EXPECT_TRUE(contains(alloc.status(), "no measurable non-uniformity")) << alloc.status();
    EXPECT_TRUE(contains(alloc.status(), "serving ordinary blocks")) << alloc.status();
    EXPECT_EQ(alloc.fast_free(1), 0u);
    EXPECT_EQ(alloc.ordinary_free(), 16u);
    EXPECT_EQ(arena.block(alloc.allocate(64, 1)), 0u);   // not CPU 1's "fast" block 15
    EXPECT_EQ(alloc.block_owner_cpu(arena.data + 15 * 64), -1);
}

// ---- measurement ----

std::vector<unsigned> my_cpus() {
    std::vector<unsigned> cpus;
    EXPECT_EQ(os::linux_os().get_affinity(0, cpus), 0);
    return cpus;
}

TEST(LatencyMeasure, MeasuresEveryBlockFromEveryCpuOfThisHost) {
    const std::vector<unsigned> before = my_cpus();
    ASSERT_FALSE(before.empty());
    Arena arena(64 * 1024);
    const LatencyDatabase db = measure_block_latencies(arena.span(), {.repetitions = 3, .loads_per_sample = 4});
    EXPECT_EQ(db.cpus, before);
    EXPECT_EQ(db.region_bytes, 64u * 1024);
    EXPECT_EQ(db.blocks(), 1024u);
    ASSERT_EQ(db.latency_ns.size(), before.size());
    for (const auto& row : db.latency_ns) {
        ASSERT_EQ(row.size(), 1024u);
        for (double v : row) {
            EXPECT_TRUE(std::isfinite(v));
            EXPECT_GT(v, 0.0);
            EXPECT_LT(v, 1e6);   // one load well under a millisecond
        }
    }
    for (double n : db.noise_ns) EXPECT_TRUE(std::isfinite(n) && n >= 0);
    if (geteuid() == 0) {
        ASSERT_EQ(db.frames.size(), 64u * 1024 / db.page_bytes) << db.frames_note;
        for (auto f : db.frames) EXPECT_NE(f, 0u);
    } else {
        EXPECT_TRUE(db.frames.empty());
        EXPECT_TRUE(contains(db.frames_note, "CAP_SYS_ADMIN")) << db.frames_note;
    }
    EXPECT_EQ(my_cpus(), before);   // the caller's affinity is untouched
    // What it measured is a valid database and plan.
    const LatencyPlan plan = plan_latency_blocks(db);
    EXPECT_EQ(plan.per_cpu.size(), before.size());
    EXPECT_FALSE(plan.diagnostic.empty());
}

TEST(LatencyMeasure, HiddenFramesAreNotedAndPinFailuresNamed) {
    os::RecordingOs fake(1, 2);
    Arena arena(4 * fake.page_size());
    fake.fail_call(os::CallKind::physical_frame, EPERM);
    const LatencyDatabase db =
        measure_block_latencies(arena.span(), {.cpus = {0, 1}, .repetitions = 3, .loads_per_sample = 1}, fake);
    EXPECT_TRUE(db.frames.empty());
    EXPECT_TRUE(contains(db.frames_note, "CAP_SYS_ADMIN")) << db.frames_note;
    EXPECT_EQ(db.latency_ns.size(), 2u);

    fake.fail_call(os::CallKind::set_affinity, EINVAL, 2);
    const Error pin = expect_error(
        [&] { (void)measure_block_latencies(arena.span(), {.cpus = {0, 1}, .repetitions = 3}, fake); });
    EXPECT_EQ(pin.field(), "cpu 1");
    EXPECT_EQ(pin.code(), EINVAL);
}

TEST(LatencyMeasure, RejectsBadOptions) {
    Arena arena(8192);
    EXPECT_EQ(expect_error([&] { (void)measure_block_latencies(arena.span(), {.repetitions = 2}); }).field(),
              "repetitions");
    EXPECT_EQ(expect_error([&] { (void)measure_block_latencies(arena.span(), {.loads_per_sample = 0}); }).field(),
              "loads_per_sample");
    EXPECT_EQ(expect_error([&] { (void)measure_block_latencies(arena.span().subspan(64, 4096)); }).field(), "region");
    EXPECT_EQ(expect_error([&] { (void)measure_block_latencies(arena.span(), {.cpus = {0, 0}}); }).field(), "cpus");
}

}  // namespace
