// Tests for the trace readers of the memory-hierarchy simulator
// (sim/memory/trace_file.hpp): numaware's trace format written here by an
// encoder of the test's own from docs/SIMULATOR.md ("Trace files"), and
// ChampSim records compressed here with liblzma; replay through
// run_workload; every kind of bad input rejected with the byte offset.
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <lzma.h>

#include "support.hpp"
#include "numaware/error.hpp"
#include "numaware/memory_sim.hpp"
#include "sim/memory/trace_file.hpp"
#include "trace_writer.hpp"

namespace mem = numaware::sim::memory;
using numaware::test::expect_error;
using numaware::test::put32;
using numaware::test::put64;
using numaware::test::Rec;
using numaware::test::TraceWriter;
using numaware::test::varint;
using numaware::test::write_bytes;
using numaware::test::zigzag;

namespace {

std::string temp_path(const std::string& name) {
    return ::testing::TempDir() + "nw_trace_" + std::to_string(::getpid()) + "_" + name;
}

std::vector<mem::Access> drain(mem::AccessStream& s, std::size_t chunk = 3) {
    std::vector<mem::Access> all;
    std::vector<mem::Access> buf(chunk);
    for (std::size_t n; (n = s.next(buf)) != 0;) all.insert(all.end(), buf.begin(), buf.begin() + static_cast<long>(n));
    return all;
}

numaware::TeamLayout layout_of(const mem::HierarchyPreset& p, unsigned threads) {
    numaware::TeamMapping m;
    m.threads = threads;
    return numaware::plan_team(p.timed.machine, m);
}

// Two threads, one block each, no marks.
TraceWriter two_threads() {
    TraceWriter w;
    w.thread(0);
    w.block(0, {{3, 0x10000, 0x401000, 8, false}, {0, 0x10008, 0x401000, 8, true}, {5, 0x7ff0, 0x400ff0, 4, false}});
    w.thread(1);
    w.block(1, {{1, 0x20000, 0x402000, 16, true}, {2, 0x20040, 0x402004, 10, false}});
    w.block(0, {{1, 0x10010, 0x401004, 1, false}});
    w.end(7);
    return w;
}

std::uint64_t l1_misses(const mem::WorkloadResult& r) { return r.report.l1.demand_misses; }

}  // namespace

TEST(SimMemoryTrace, DecodesEveryFieldOfEveryThread) {
    const std::string path = temp_path("two.nwt");
    write_bytes(path, two_threads().bytes);
    const mem::TraceWorkload w(path);
    const mem::TraceInfo& info = w.info();
    EXPECT_EQ(info.format, mem::TraceFormat::numaware);
    EXPECT_EQ(info.threads, 2u);
    EXPECT_EQ(info.accesses, 6u);
    EXPECT_EQ(info.instructions, 12u + 7u);
    EXPECT_EQ(info.blocks, 3u);
    ASSERT_EQ(w.phases(), 1u);
    EXPECT_TRUE(w.measured(0));
    EXPECT_EQ(w.phase_name(0), "trace");
    const mem::HierarchyPreset p = mem::preset("thesis-4s");
    EXPECT_EQ(w.default_threads(p), 2u);

    numaware::TeamMapping scatter;
    scatter.threads = 2;
    scatter.kind = numaware::MappingKind::scatter;
    const numaware::TeamLayout l = numaware::plan_team(p.timed.machine, scatter);
    std::vector<mem::ThreadStream> s = w.streams(0, p, l);
    ASSERT_EQ(s.size(), 2u);
    // Trace thread k runs as rank k.
    EXPECT_EQ(s[0].core, l.ranks[0].cpu);
    EXPECT_EQ(s[1].core, l.ranks[1].cpu);
    const std::vector<mem::Access> t0 = drain(*s[0].stream);
    ASSERT_EQ(t0.size(), 4u);
    EXPECT_EQ(t0[0].addr, 0x10000u);
    EXPECT_EQ(t0[0].gap, 2u);   // three instructions, the access's own included
    EXPECT_EQ(t0[0].pc, 0x401000u);
    EXPECT_EQ(t0[0].size, 8);
    EXPECT_FALSE(t0[0].write);
    EXPECT_EQ(t0[1].addr, 0x10008u);
    EXPECT_EQ(t0[1].gap, 0u);   // the second access of one instruction
    EXPECT_TRUE(t0[1].write);
    EXPECT_EQ(t0[2].addr, 0x7ff0u);   // a negative delta
    EXPECT_EQ(t0[2].pc, 0x400ff0u);
    EXPECT_EQ(t0[2].gap, 4u);
    EXPECT_EQ(t0[2].size, 4);
    EXPECT_EQ(t0[3].addr, 0x10010u);   // the next block starts its deltas anew
    EXPECT_EQ(t0[3].size, 1);
    const std::vector<mem::Access> t1 = drain(*s[1].stream, 1);
    ASSERT_EQ(t1.size(), 2u);
    EXPECT_EQ(t1[0].size, 16);
    EXPECT_TRUE(t1[0].write);
    EXPECT_EQ(t1[1].addr, 0x20040u);
    EXPECT_EQ(t1[1].size, 10);   // a size other than a power of two
    EXPECT_EQ(t1[1].gap, 1u);
    ::unlink(path.c_str());
}

TEST(SimMemoryTrace, PhaseMarksSplitTheReplay) {
    const std::string path = temp_path("phases.nwt");
    TraceWriter w;
    w.thread(0);
    w.block(0, {{1, 0x1000, 0x400000, 8, true}});
    w.phase(0, "init", false);
    w.block(0, {{1, 0x2000, 0x400000, 8, true}});
    w.thread(1);
    w.block(1, {{1, 0x3000, 0x400000, 8, true}});
    w.phase(1, "", true);
    w.block(1, {{1, 0x2000, 0x400004, 8, false}, {1, 0x2040, 0x400004, 8, false}});
    w.end();
    write_bytes(path, w.bytes);
    const mem::TraceWorkload t(path);
    ASSERT_EQ(t.phases(), 3u);
    EXPECT_EQ(t.phase_name(0), "start");
    EXPECT_FALSE(t.measured(0));
    EXPECT_EQ(t.phase_name(1), "init");
    EXPECT_FALSE(t.measured(1));
    EXPECT_EQ(t.phase_name(2), "phase 2");
    EXPECT_TRUE(t.measured(2));
    const mem::HierarchyPreset p = mem::preset("thesis-4s");
    const numaware::TeamLayout l = layout_of(p, 2);
    EXPECT_EQ(t.streams(0, p, l).size(), 1u);   // thread 1 had not appeared
    EXPECT_EQ(t.streams(1, p, l).size(), 2u);
    const std::vector<mem::ThreadStream> last = t.streams(2, p, l);
    ASSERT_EQ(last.size(), 1u);   // thread 0 made no access in phase 2
    EXPECT_EQ(last[0].core, l.ranks[1].cpu);

    // Only the measured phase is counted; the pages keep their first
    // toucher's home from the unmeasured phases.
    mem::RunOptions o;
    const mem::WorkloadResult r = mem::run_workload(t, p, o);
    EXPECT_EQ(r.report.accesses, 2u);
    ASSERT_EQ(r.phases.size(), 3u);
    EXPECT_TRUE(r.phases[2].measured);
    ::unlink(path.c_str());
}

TEST(SimMemoryTrace, ReplaysLikeTheSameAccessesBuiltIn) {
    // One thread streaming 64 lines twice: 64 cold misses, then hits.
    const std::string path = temp_path("stream.nwt");
    TraceWriter w;
    w.thread(0);
    std::vector<Rec> recs;
    for (int lap = 0; lap < 2; ++lap)
        for (std::uint64_t i = 0; i < 64 * 8; ++i) recs.push_back({2, 0x40000000 + i * 8, 0x400100, 8, false});
    w.block(0, recs);
    w.end();
    write_bytes(path, w.bytes);
    const mem::TraceWorkload t(path);
    const mem::WorkloadResult r = mem::run_workload(t, mem::preset("thesis-4s"), mem::RunOptions{});
    EXPECT_EQ(r.report.accesses, 1024u);
    EXPECT_EQ(l1_misses(r), 64u);
    EXPECT_EQ(r.report.instructions, 2048u);
    EXPECT_GT(r.measured_s, 0.0);
    ::unlink(path.c_str());
}

TEST(SimMemoryTrace, MoreThreadsThanRanksIsRejected) {
    const std::string path = temp_path("ranks.nwt");
    write_bytes(path, two_threads().bytes);
    const mem::TraceWorkload t(path);
    const mem::HierarchyPreset p = mem::preset("thesis-4s");
    expect_error([&] { (void)t.streams(0, p, layout_of(p, 1)); }, "threads", "has 2 threads");
    mem::RunOptions o;
    o.threads = 1;
    expect_error([&] { (void)mem::run_workload(t, p, o); }, "threads", "has 2 threads");
    ::unlink(path.c_str());
}

TEST(SimMemoryTrace, TruncatedFilesAreRejectedWithTheOffset) {
    const std::vector<std::uint8_t> full = two_threads().bytes;
    const std::string path = temp_path("cut.nwt");
    struct Cut {
        std::size_t size;
        std::string part;
    };
    // Header 0..31; thread block 32..55; access block header at 56.
    const std::vector<Cut> cuts = {
        {5, "truncated header: the file ends at byte offset 5"},
        {31, "truncated header: the file ends at byte offset 31"},
        {40, "truncated block header at byte offset 32"},
        {60, "truncated block header at byte offset 56: 16 bytes needed, 4 left"},
        {75, "truncated block at byte offset 56"},
        {full.size() - 40, "the file ends at byte offset"},
        {full.size() - 1, "truncated block at byte offset"},
    };
    for (const Cut& c : cuts) {
        write_bytes(path, std::vector<std::uint8_t>(full.begin(), full.begin() + static_cast<long>(c.size)));
        expect_error([&] { mem::TraceWorkload t(path); }, "trace", c.part);
    }
    // Cut exactly at a block boundary: no end block.
    TraceWriter w = two_threads();
    const std::size_t without_end = w.bytes.size() - 16 - 24;
    write_bytes(path, std::vector<std::uint8_t>(w.bytes.begin(), w.bytes.begin() + static_cast<long>(without_end)));
    expect_error([&] { mem::TraceWorkload t(path); }, "trace",
                 "no end block; the file ends at byte offset " + std::to_string(without_end));
    ::unlink(path.c_str());
}

TEST(SimMemoryTrace, ForeignAndMalformedFilesAreRejectedWithTheOffset) {
    const std::string path = temp_path("bad.nwt");
    write_bytes(path, {'#', '!', '/', 'b', 'i', 'n', '/', 's', 'h', '\n'});
    expect_error([&] { mem::TraceWorkload t(path); }, "trace", "at byte offset 0");
    expect_error([&] { mem::TraceWorkload t(path, mem::TraceFormat::numaware); }, "trace",
                 "not a numaware trace: the magic at byte offset 0");
    write_bytes(path, {});
    expect_error([&] { mem::TraceWorkload t(path); }, "trace", "empty file");

    const auto patched = [&](std::size_t at, std::uint8_t value, const std::string& part) {
        std::vector<std::uint8_t> b = two_threads().bytes;
        b[at] = value;
        write_bytes(path, b);
        expect_error([&] { mem::TraceWorkload t(path); }, "trace", part);
    };
    patched(8, 2, "version 2 at byte offset 8");
    patched(16, 3, "architecture 3 at byte offset 16");
    patched(24, 1, "reserved header byte at byte offset 24");
    patched(32, 9, "unknown block kind 9 at byte offset 32");
    patched(36, 1, "thread block at byte offset 32 numbers thread 1, expected 0");
    patched(60, 7, "access block at byte offset 56 names thread 7");
    patched(71, 0x7f, "more than the limit of 16777216");
    // The end block's totals must match the blocks.
    std::vector<std::uint8_t> b = two_threads().bytes;
    b[b.size() - 24] = 99;
    write_bytes(path, b);
    expect_error([&] { mem::TraceWorkload t(path); }, "trace",
                 "states 99 accesses, the access blocks hold 6");
    // Data after the end block.
    b = two_threads().bytes;
    b.push_back(0);
    write_bytes(path, b);
    expect_error([&] { mem::TraceWorkload t(path); }, "trace", "data after the end block at byte offset");
    ::unlink(path.c_str());
}

TEST(SimMemoryTrace, CorruptRecordsAreRejectedWhileReplaying) {
    const std::string path = temp_path("records.nwt");
    // A block that claims 3 records but holds 2 (padded to the minimum size).
    TraceWriter w;
    w.thread(0);
    std::vector<std::uint8_t> p;
    varint(p, (1 << 4) | 3);
    varint(p, zigzag(0x1000));
    varint(p, zigzag(0x400000));
    varint(p, (1 << 4) | 3);
    varint(p, zigzag(8));
    varint(p, zigzag(0));
    w.header(2, 0, 3, static_cast<std::uint32_t>(p.size() + 1));
    w.bytes.insert(w.bytes.end(), p.begin(), p.end());
    w.bytes.push_back(0x80);   // a number that never ends
    // The end block, by hand: 3 accesses.
    w.header(4, 1, 1, 24);
    put64(w.bytes, 3);
    put64(w.bytes, 3);
    put64(w.bytes, 0);
    write_bytes(path, w.bytes);
    const mem::TraceWorkload t(path);
    const mem::HierarchyPreset pr = mem::preset("thesis-4s");
    std::vector<mem::ThreadStream> s = t.streams(0, pr, layout_of(pr, 1));
    expect_error([&] { drain(*s[0].stream); }, "trace", "runs past the block's end at byte offset");
    expect_error([&] { (void)mem::run_workload(t, pr, mem::RunOptions{}); }, "trace", "of the access block at byte offset 56");
    ::unlink(path.c_str());
}

TEST(SimMemoryTrace, MissingFileNamesThePath) {
    const std::string path = temp_path("does-not-exist.nwt");
    expect_error([&] { mem::TraceWorkload t(path); }, "trace", path);
    expect_error([&] { mem::TraceWorkload t(path); }, "trace", "no such file");
    expect_error([&] { mem::TraceWorkload t(::testing::TempDir()); }, "trace", "is a directory");
}

TEST(SimMemoryTrace, FormatNames) {
    EXPECT_EQ(mem::parse_trace_format("auto"), mem::TraceFormat::automatic);
    EXPECT_EQ(mem::parse_trace_format("champsim"), mem::TraceFormat::champsim);
    EXPECT_EQ(mem::parse_trace_format("numaware"), mem::TraceFormat::numaware);
    expect_error([] { mem::parse_trace_format("pin"); }, "--trace-format", "known: auto, numaware, champsim");
}

// ---- ChampSim ------------------------------------------------------------------------

namespace {

struct ChampInstr {
    std::uint64_t ip;
    std::uint8_t is_branch, taken;
    std::array<std::uint64_t, 2> dst;
    std::array<std::uint64_t, 4> src;
};

std::vector<std::uint8_t> champsim_bytes(const std::vector<ChampInstr>& v) {
    std::vector<std::uint8_t> raw;
    for (const ChampInstr& c : v) {
        put64(raw, c.ip);
        raw.push_back(c.is_branch);
        raw.push_back(c.taken);
        raw.insert(raw.end(), {1, 2, 3, 4, 5, 6});   // destination and source registers
        for (std::uint64_t d : c.dst) put64(raw, d);
        for (std::uint64_t s : c.src) put64(raw, s);
    }
    return raw;
}

std::vector<std::uint8_t> xz(const std::vector<std::uint8_t>& raw) {
    std::vector<std::uint8_t> out(raw.size() + raw.size() / 2 + 1024);
    std::size_t pos = 0;
    const lzma_ret r = lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, nullptr, raw.data(), raw.size(), out.data(), &pos,
                                               out.size());
    EXPECT_EQ(r, LZMA_OK);
    out.resize(pos);
    return out;
}

// 1000 instructions: every fourth loads two addresses and stores one, the
// others have no memory operand.
std::vector<ChampInstr> champsim_program() {
    std::vector<ChampInstr> v;
    for (std::uint64_t i = 0; i < 1000; ++i) {
        ChampInstr c{0x400000 + 4 * i, static_cast<std::uint8_t>(i % 7 == 0), static_cast<std::uint8_t>(i % 14 == 0),
                     {0, 0}, {0, 0, 0, 0}};
        if (i % 4 == 3) {
            c.src = {0x10000000 + 64 * i, 0, 0x20000000 + 8 * i, 0};
            c.dst = {0, 0x30000000 + 8 * i};
        }
        v.push_back(c);
    }
    return v;
}

}  // namespace

TEST(SimMemoryTrace, ChampSimRecordsBecomeReadsAndWrites) {
    const std::string path = temp_path("champ.trace.xz");
    write_bytes(path, xz(champsim_bytes(champsim_program())));
    const mem::TraceWorkload t(path);   // detected: .xz and plausible records
    EXPECT_EQ(t.info().format, mem::TraceFormat::champsim);
    EXPECT_EQ(t.info().threads, 1u);
    const mem::HierarchyPreset p = mem::preset("thesis-4s");
    std::vector<mem::ThreadStream> s = t.streams(0, p, layout_of(p, 1));
    ASSERT_EQ(s.size(), 1u);
    const std::vector<mem::Access> a = drain(*s[0].stream, 5);
    ASSERT_EQ(a.size(), 750u);   // 250 instructions × (2 reads + 1 write)
    for (std::uint64_t k = 0; k < 250; ++k) {
        const std::uint64_t i = 4 * k + 3;
        EXPECT_EQ(a[3 * k].addr, 0x10000000 + 64 * i);
        EXPECT_FALSE(a[3 * k].write);
        EXPECT_EQ(a[3 * k].gap, 3u);   // the three instructions without memory operands before it
        EXPECT_EQ(a[3 * k].pc, 0x400000 + 4 * i);
        EXPECT_EQ(a[3 * k + 1].addr, 0x20000000 + 8 * i);
        EXPECT_EQ(a[3 * k + 1].gap, 0u);
        EXPECT_EQ(a[3 * k + 2].addr, 0x30000000 + 8 * i);
        EXPECT_TRUE(a[3 * k + 2].write);
    }
    const mem::WorkloadResult r = mem::run_workload(t, p, mem::RunOptions{});
    EXPECT_EQ(r.report.accesses, 750u);
    // 250 distinct lines read once; the other read and the write step by
    // 32 bytes, two instructions per line: 125 lines each.
    EXPECT_EQ(r.report.l1.demand_misses, 250u + 125u + 125u);

    // Named explicitly too.
    const mem::TraceWorkload named(path, mem::TraceFormat::champsim);
    EXPECT_EQ(named.info().format, mem::TraceFormat::champsim);
    ::unlink(path.c_str());
}

TEST(SimMemoryTrace, BadChampSimFilesAreRejectedWithTheOffset) {
    const std::string path = temp_path("bad.trace.xz");
    const std::vector<std::uint8_t> good = xz(champsim_bytes(champsim_program()));
    const mem::HierarchyPreset p = mem::preset("thesis-4s");

    // A truncated xz stream (found by the format check at open, which
    // decompresses a first buffer; in a larger file, while replaying).
    write_bytes(path, std::vector<std::uint8_t>(good.begin(), good.begin() + static_cast<long>(good.size() - 20)));
    expect_error(
        [&] {
            const mem::TraceWorkload cut(path);
            (void)mem::run_workload(cut, p, mem::RunOptions{});
        },
        "trace", "the xz stream is truncated at compressed byte offset " + std::to_string(good.size() - 20));

    // A stream that ends inside a record.
    std::vector<std::uint8_t> raw = champsim_bytes(champsim_program());
    raw.resize(raw.size() - 10);
    write_bytes(path, xz(raw));
    const mem::TraceWorkload partial(path);
    expect_error([&] { (void)mem::run_workload(partial, p, mem::RunOptions{}); }, "trace",
                 "ends inside record 999, at decompressed byte offset 63990");

    // Not ChampSim records: the format check on the first record.
    std::vector<std::uint8_t> text(640, 'x');
    write_bytes(path, xz(text));
    expect_error([&] { mem::TraceWorkload t(path); }, "trace", "not a ChampSim trace: record 0");

    // Not xz at all, named as ChampSim.
    write_bytes(path, two_threads().bytes);
    expect_error([&] { mem::TraceWorkload t(path, mem::TraceFormat::champsim); }, "trace",
                 "not an xz file: the magic at byte offset 0");

    // A damaged stream footer (its magic "YZ" is the last two bytes): every
    // record decodes, then the end of the stream is found corrupt.
    std::vector<std::uint8_t> bad = good;
    bad[bad.size() - 2] ^= 0x5a;
    write_bytes(path, bad);
    expect_error(
        [&] {
            const mem::TraceWorkload damaged(path);
            (void)mem::run_workload(damaged, p, mem::RunOptions{});
        },
        "trace", "corrupt xz data at compressed byte offset " + std::to_string(bad.size()));

    // An xz file that is not named .xz is not taken for ChampSim.
    const std::string plain = temp_path("champ.bin");
    write_bytes(plain, good);
    expect_error([&] { mem::TraceWorkload t(plain); }, "trace", "at byte offset 0 are [fd 37 7a 58 5a 00");
    ::unlink(path.c_str());
    ::unlink(plain.c_str());
}
