// numaware/latency_blocks.hpp — the latency-aware block allocator (heap layer).
//
// On manycores the time a CPU needs to load one cache line depends on where
// the line's home (cache slice, ring/mesh stop, memory channel) sits relative
// to that CPU, so "uniform" memory is not uniform per line (Gerofi, Takagi,
// Ishikawa, Euro-Par 2014 workshops). This header splits the idea in four:
//
//   1. measure_block_latencies()  mechanism: times every 64 B block of a
//      caller's region from every listed CPU (pointer chase with flushes);
//   2. LatencyDatabase            pure data, saved to / loaded from JSON;
//   3. plan_latency_blocks()      pure decision: per CPU the blocks sorted
//      fastest first, and whether the non-uniformity is measurable at all;
//   4. LatencyBlockAllocator      serves one-block allocations from per-CPU
//      lists of that CPU's fastest blocks, falling back to ordinary blocks.
//
//     auto region = ...;   // mmap'd, placed as the caller wants, 1-4 MiB
//     auto db = numaware::measure_block_latencies(region, {.cpus = {0, 1}});
//     numaware::save_latency_database(db, "lat.json");
//     numaware::LatencyBlockAllocator alloc{region, db};
//     void* p = alloc.allocate(48, /*cpu=*/1);   // a block fast for CPU 1
//     alloc.deallocate(p);
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace numaware {

namespace os {
class Os;
}

// The allocator's block: one cache line.
inline constexpr std::size_t latency_block_bytes = 64;
// Version written into saved databases; load refuses any other version.
inline constexpr unsigned latency_database_version = 1;

// What was measured. Plain data; every vector is indexed as documented.
struct LatencyDatabase {
    std::size_t region_bytes = 0;   // multiple of line_bytes and of page_bytes
    std::size_t line_bytes = latency_block_bytes;
    std::size_t page_bytes = 4096;
    unsigned repetitions = 0;       // samples per (CPU, block); the median is kept
    unsigned loads_per_sample = 0;  // dependent flushed loads timed per sample
    std::vector<unsigned> cpus;     // CPU OS indices, measurement order
    // latency_ns[c][b]: median ns of one flushed load of block b from cpus[c].
    std::vector<std::vector<double>> latency_ns;
    // noise_ns[c]: the repetition noise of cpus[c]: median over blocks of the
    // blocks' robust standard deviation (1.4826 x median absolute deviation
    // of their repetitions).
    std::vector<double> noise_ns;
    // Physical frame number of each page of the region (region_bytes /
    // page_bytes entries) when /proc/self/pagemap gave them (root), else
    // empty, with frames_note saying why; blocks are then known only by
    // their offset in the (virtual) region.
    std::vector<std::uint64_t> frames;
    std::string frames_note;

    std::size_t blocks() const { return line_bytes == 0 ? 0 : region_bytes / line_bytes; }
    bool operator==(const LatencyDatabase&) const = default;
};

// Throws Error naming `source` and the field (e.g. "lat.json: latency_ns[1][7]")
// when the database is inconsistent: sizes not multiples, vector lengths not
// matching cpus/blocks/pages, a latency that is not finite and > 0, a CPU
// listed twice.
void validate_latency_database(const LatencyDatabase& db, std::string_view source = "database");

// JSON text (nlohmann): an object {"format":"numaware-latency","version":1,
// "region_bytes",...,"latency_ns":[[...],...],"noise_ns":[...],"frames":[...],
// "frames_note":...}. Doubles are written in shortest round-trip form, so
// save followed by load gives back an equal database.
std::string latency_database_to_json(const LatencyDatabase& db);
// Throws Error("<source>: <field>", ...) on malformed text, a wrong format
// or version, a missing or mistyped field, or an inconsistent database.
LatencyDatabase latency_database_from_json(std::string_view text, std::string_view source = "database");
// File versions; errors name the file.
void save_latency_database(const LatencyDatabase& db, const std::string& path);
LatencyDatabase load_latency_database(const std::string& path);

// ---- measurement (mechanism) ----

struct LatencyMeasureOptions {
    std::vector<unsigned> cpus{};    // empty: the calling thread's allowed CPUs
    unsigned repetitions = 5;        // >= 3, median taken
    unsigned loads_per_sample = 16;  // >= 1 flushed dependent loads per timed sample
};

// Measures every latency_block_bytes block of `region` (page aligned, a
// whole number of pages, at most 64 MiB) from each CPU: a helper thread
// pinned to the CPU (Os::set_affinity; the caller's own affinity is never
// touched) runs, per block, a chain of dependent loads of a pointer the
// block holds to itself, with clflush + mfence before every load so each
// load misses every cache level, and times the chain with the steady clock.
// Repetitions sweep the whole region in turn so slow drifts hit all blocks
// alike. The region's contents are overwritten. Physical frames come from
// Os::physical_frame where permitted; otherwise frames is left empty and
// frames_note says why. x86-64 only (clflush); elsewhere throws
// Error("platform", ...). Throws Error naming the option on bad input and
// Error("cpu N", ...) when a CPU cannot be pinned.
LatencyDatabase measure_block_latencies(std::span<std::byte> region, const LatencyMeasureOptions& options,
                                        os::Os& os);
LatencyDatabase measure_block_latencies(std::span<std::byte> region, const LatencyMeasureOptions& options = {});

// ---- decision (pure) ----

// One CPU's view of the region.
struct CpuBlockRanking {
    unsigned cpu = 0;
    std::vector<std::uint32_t> fastest_first;   // block indices, ties by index
    double min_ns = 0, median_ns = 0, max_ns = 0;
    double fast_quartile_ns = 0;   // mean latency of the fastest 25% of blocks
    double slow_quartile_ns = 0;   // mean latency of the slowest 25% of blocks
    double spread_ns = 0;          // slow_quartile_ns - fast_quartile_ns
    double noise_ns = 0;           // from the database
    bool non_uniform = false;      // spread_ns > noise_factor * noise_ns
};

// Default factor of the non-uniformity test. With R repetitions and pure
// noise of standard deviation s, the quartile spread of the block medians is
// about 2.5 x 1.25 s / sqrt(R) (~1.4 s for R = 5), so 3 x s keeps a uniform
// machine from being called non-uniform while a real per-line structure of a
// few noise widths is still seen.
inline constexpr double default_noise_factor = 3.0;

struct LatencyPlan {
    std::vector<CpuBlockRanking> per_cpu;   // database CPU order
    double noise_factor = default_noise_factor;
    bool non_uniform = false;               // some CPU is non-uniform
    // fast_overlap[a][b]: share of CPU a's fastest quarter of blocks that is
    // also in CPU b's fastest quarter (1 on the diagonal). About 0.25 when
    // the rankings are unrelated; near 1 when every CPU finds the same
    // blocks fast, i.e. the non-uniformity is on the memory side (banks,
    // rows, channels) rather than in where each CPU sits, and per-CPU lists
    // then gain little over one shared list of fast blocks.
    std::vector<std::vector<double>> fast_overlap;
    std::string diagnostic;                 // one line saying what was found
};

// Pure and deterministic. Throws like validate_latency_database, and
// Error("noise_factor", ...) unless it is finite and > 0.
LatencyPlan plan_latency_blocks(const LatencyDatabase& db, double noise_factor = default_noise_factor);

// Which blocks go to which CPU's fast list: CPUs take turns (database
// order) picking their fastest block not yet taken, until each holds
// `blocks_per_cpu` (or the blocks run out). owner[b] = index into
// plan.per_cpu, or -1 for an ordinary block. Pure.
std::vector<int> assign_fast_blocks(const LatencyPlan& plan, std::size_t blocks_per_cpu);

// ---- the allocator ----

struct LatencyAllocatorOptions {
    double noise_factor = default_noise_factor;
    // Share of the region's blocks handed out as per-CPU fast lists, split
    // equally over the CPUs; the rest are ordinary blocks. In (0, 1].
    double fast_fraction = 0.5;
};

// Serves allocations of at most latency_block_bytes (one block: latency is
// a property of one line, and neighbouring lines rank independently, so a
// larger request could not be "fast" as a whole). allocate(bytes, cpu)
// returns the fastest free block of cpu's fast list, then (none left, an
// unmeasured CPU, or a uniform machine) the lowest free ordinary block, and
// nullptr when the region is exhausted. A freed block returns to the list
// it came from. Thread safe (one mutex). The region is not owned and must
// outlive the allocator; it must be the region the database measured.
class LatencyBlockAllocator {
public:
    // Throws Error("region", ...) if region.size() != db.region_bytes, and
    // like plan_latency_blocks / the options' fields otherwise.
    LatencyBlockAllocator(std::span<std::byte> region, const LatencyDatabase& db,
                          const LatencyAllocatorOptions& options = {});
    ~LatencyBlockAllocator();
    LatencyBlockAllocator(const LatencyBlockAllocator&) = delete;
    LatencyBlockAllocator& operator=(const LatencyBlockAllocator&) = delete;

    // Throws Error("bytes", ...) for 0 or > latency_block_bytes.
    void* allocate(std::size_t bytes, unsigned cpu);
    // The calling thread's current CPU (sched_getcpu through the os layer).
    void* allocate(std::size_t bytes);
    // p == nullptr is a no-op; throws Error("p", ...) for a pointer that is
    // not a live block of this allocator (foreign, misaligned, double free).
    void deallocate(void* p);

    // False when no CPU showed measurable non-uniformity: every block is
    // then ordinary.
    bool non_uniform() const;
    const std::string& status() const;   // one line for logs and tools
    const LatencyPlan& plan() const;
    std::size_t fast_free(unsigned cpu) const;   // free blocks on cpu's fast list
    std::size_t ordinary_free() const;
    // The fast list `p`'s block belongs to: its CPU, or -1 for ordinary.
    int block_owner_cpu(const void* p) const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace numaware
