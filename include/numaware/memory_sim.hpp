// numaware/memory_sim.hpp — the memory-hierarchy simulator (the `sim`
// layer, beside the task-level simulator of sim.hpp).
//
// A trace-driven throughput model of a multi-socket cache hierarchy with
// pluggable prefetchers, NUMA-aware prefetching (NASP) among them. Each
// simulated core replays an access stream (address, size, read or write,
// PC, and the instructions since its previous access); private L1D and L2
// per core, a shared L3 per socket, DRAM per socket with the latency of
// the page's home node, and memory-controller and link bandwidth shared by
// every core. It is NOT a cycle-accurate core: a core retires its
// non-memory instructions at a fixed rate and overlaps misses up to its
// MSHRs and reorder window; every result says so (`simulated: true`).
//
//     namespace mem = numaware::sim::memory;
//     const mem::HierarchyPreset p = mem::preset("thesis-4s");
//     const auto w = mem::make_workload("stream");
//     mem::RunOptions o;
//     o.prefetch = mem::parse_prefetch("nasp:8:64");
//     const mem::WorkloadResult r = mem::run_workload(*w, p, o);
//
// Every parameter of a preset has a written source (HierarchyPreset::
// sources, docs/SIMULATOR.md). Bad input throws numaware::Error naming the
// field and the limit.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "numaware/sim.hpp"
#include "numaware/team.hpp"

namespace numaware::sim::memory {

// The revision of the simulator's model: bumped whenever a change moves
// any simulated figure (a new rule, a preset's parameter, a workload's
// stream), so that stored results (the advisor's store, keyed by
// `numaware --version`, which ends in "+memsim.<revision>") are never
// mixed across models.
inline constexpr const char* model_revision = "20261206.1";


// =====================================================================
// The simulated machine
// =====================================================================

struct CacheLevel {
    std::uint64_t bytes = 0;          // capacity (per core for L1/L2, per socket for L3)
    unsigned ways = 1;                // associativity; sets = bytes / line / ways
    unsigned latency_cycles = 1;      // load-to-use latency of a hit at this level
    unsigned mshrs = 1;               // misses this cache keeps outstanding
};

// A cache and timing description on top of the machine model: sockets are
// the TimedMachine's nodes (DRAM latency, memory and link bandwidth), cores
// its CPUs.
struct HierarchyPreset {
    std::string name;
    TimedMachine timed;
    double ghz = 2.0;                 // core clock
    CacheLevel l1, l2, l3;            // l3 is per socket, shared by its cores
    unsigned l3_slices = 1;           // L3 banks per socket (NASP's queues are per slice)
    unsigned line_bytes = 64;
    unsigned page_bytes = 4096;
    unsigned rob_window = 128;        // instructions in flight per core
    unsigned tlb_entries = 64;        // per core, 4-way; a prefetch into another page needs a hit
    double core_ipc = 1.0;            // non-memory instructions retired per cycle
    // The energy estimate: per-access energies (a lookup or a fill) per
    // level, per line moved to or from DRAM, and static power per socket.
    double l1_access_pj = 0, l2_access_pj = 0, l3_access_pj = 0;
    double dram_line_nj = 0;
    double static_w_per_socket = 0;
    std::vector<std::string> sources; // every parameter: "field = value: source"

    unsigned sockets() const { return static_cast<unsigned>(timed.machine.nodes.size()); }
    unsigned cores() const { return static_cast<unsigned>(timed.machine.cpu_count()); }
    double cycle_ns() const { return 1.0 / ghz; }
    // Throws Error naming the field: a geometry whose sets are not whole,
    // a zero latency, ways or MSHRs, a line or page that is not a power of two.
    void validate() const;
};

// Named presets:
//   "thesis-4s"          the published NASP machine: 4 sockets × 4 cores, L1D
//                        64 KiB 2-way, L2 256 KiB 8-way, L3 4 MiB 16-way in 8
//                        banks per socket, DRAM 80 / 160 / 240 ns;
//   "thesis-4s-nonuma"   the same at 80 ns everywhere;
//   "skylake-sp-2s"      2 × Xeon Platinum 8180 (28 cores).
// "NAME:S" keeps the first S sockets. Unknown names: Error("preset", ...)
// listing the known ones.
std::vector<std::string> preset_names();
HierarchyPreset preset(std::string_view name);
// The preset with every remote DRAM latency set to `remote_ns` (the
// latency sweep); Error("remote_ns", ...) unless remote_ns >= the local one.
HierarchyPreset with_remote_latency(const HierarchyPreset& p, double remote_ns);
// The preset's cores and caches on another machine (a named model of the
// task simulator, the live machine, an hwloc XML or JSON file, a synthetic
// description: timed_from_spec). The machine's nodes become the sockets,
// with its DRAM latencies and bandwidths; each of its CPUs is a core (SMT
// siblings are cores of their own); a node without CPUs is memory alone
// (CXL, HBM), a home that no core is local to. Cache sizes come from the
// machine's cache list where it has one (L1D and L2: the largest share of
// one CPU; L3: the largest total of one node, a cache that spans nodes
// counted by its CPUs in each), else from the preset (its L3 per core, times
// the most CPUs of a node). Each size is cut to whole sets of the preset's
// ways and line. Everything else (clock, latencies in cycles, MSHRs, line,
// page, window, TLB, IPC, energies) is the preset's. `sources` says which
// figure came from where. Error("machine", ...) for a machine without CPUs.
HierarchyPreset on_machine(const HierarchyPreset& base, const TimedMachine& machine);

// =====================================================================
// Prefetchers
// =====================================================================

enum class PrefetchKind { none, next_line, stride, nasp, multilevel, ampm, na_ampm, bop, intel };

// A prefetcher as the user names it:
//   none | next-line | stride:K | nasp:K_L1:K_REM | multilevel:K_L1:K |
//   ampm | na-ampm:K_L1:K_REM | bop | intel:MASK
// Degrees are 1..256 (k^L1 of NASP and NA-AMPM may be 0: nothing to the
// L1); the split forms need K_REM >= K_L1 ("nasp:64:8" -> "k_rem must be
// >= k^L1"). intel:MASK is four 0/1 digits switching Intel's four
// prefetchers on, in the order L1 IP-stride, L1 next-line, L2 adjacent
// line, L2 streamer ("intel:1111" all on, "intel:0000" all off).
struct PrefetchSpec {
    std::string text;                  // as given
    PrefetchKind kind = PrefetchKind::none;
    unsigned l1_degree = 0;            // the most predictions per access that go to the L1
    unsigned far_degree = 0;           // nasp/na-ampm: K_REM; multilevel: K
    unsigned l2_degree = 0;            // the most per access that go to the L2
    unsigned intel_mask = 0;           // bit 0 IP-stride, 1 next-line, 2 adjacent line, 3 streamer
};
PrefetchSpec parse_prefetch(std::string_view text);

// =====================================================================
// Access streams and workloads
// =====================================================================

struct Access {
    std::uint64_t addr = 0;
    std::uint32_t gap = 0;        // non-memory instructions since the previous access
    std::uint64_t pc = 0;
    std::uint32_t size = 8;       // bytes; an access that crosses lines looks every line up
    bool write = false;
    bool dependent = false;       // its address needs the previous access's data (a chase)
    bool same_instruction = false;   // made by the previous access's instruction: nothing retires
};

// One simulated thread's accesses, in program order, a chunk at a time.
class AccessStream {
public:
    virtual ~AccessStream() = default;
    // Fills up to out.size() accesses; 0 at the end.
    virtual std::size_t next(std::span<Access> out) = 0;
    // The next accesses, at most scratch.size() (none at the end), where
    // the stream keeps them or in `scratch`; valid until the next call.
    // A stream that makes its accesses in a buffer of its own overrides it
    // to give them without a copy; by default, next() into `scratch`.
    // (A count past scratch.size() is passed on, for the caller to refuse.)
    virtual std::span<const Access> next_in_place(std::span<Access> scratch) { return {scratch.data(), next(scratch)}; }
};

struct ThreadStream {
    unsigned core = 0;                        // CPU OS index of the preset's machine
    std::unique_ptr<AccessStream> stream;
};

// Where a page lives. The first three are rules MemorySim applies when a
// page is first touched; the others depend on the team and are resolved by
// run_workload (docs/SIMULATOR.md, "Page mappings"):
//   local     every page on the node of the team's first thread (bind);
//   remote    every page on the lowest node the team does not use (bind);
//   locality  each page on the node whose threads access it most (a
//             profile of the measured phases' accesses), placed before
//             the run; pages the profile never saw are first-touched;
//   balance   locality, but no node of the team takes more than its
//             share of the accesses (plan_balance).
struct PageMapping {
    enum class Kind { first_touch, interleave, bind, local, remote, locality, balance };
    Kind kind = Kind::first_touch;
    unsigned node = 0;                        // bind: node position
    std::string text = "first-touch";
};
// "first-touch" | "interleave" | "bind:N" | "local" | "remote" | "locality" | "balance"
PageMapping parse_page_mapping(std::string_view text);

// =====================================================================
// Results
// =====================================================================

struct LevelCounters {
    std::uint64_t demand_accesses = 0;   // demand lookups at this level
    std::uint64_t demand_misses = 0;
    std::uint64_t fill_bytes = 0;        // bytes brought into this level (demand and prefetch)
    std::uint64_t served = 0;            // demand accesses this level answered
    double served_latency_ns = 0;        // their summed load-to-use latency
};

struct PrefetchCounters {
    std::uint64_t issued_l1 = 0, issued_l2 = 0, issued_l3 = 0;
    std::uint64_t useful = 0;            // prefetched lines a demand access used
    std::uint64_t late = 0;              // of those, still in flight at the demand
    std::uint64_t unused_evicted = 0;    // prefetched lines evicted before any use
    std::uint64_t dropped_queue = 0;     // predictions refused by a full prefetch queue
    std::uint64_t dropped_tlb = 0;       // predictions into another page that missed the TLB
    std::uint64_t dropped_unmapped = 0;  // predictions into a page nobody has touched (no translation)
    std::uint64_t dropped_local = 0;     // NASP: far predictions whose home is local
    std::uint64_t issued() const { return issued_l1 + issued_l2 + issued_l3; }
};

struct MemoryReport {
    bool simulated = true;
    std::string preset, prefetch, mapping;
    double simulated_s = 0;
    std::uint64_t accesses = 0;
    std::uint64_t instructions = 0;
    LevelCounters l1, l2, l3, dram;
    std::uint64_t dram_local_bytes = 0;
    std::uint64_t dram_remote_bytes = 0;
    std::uint64_t writeback_bytes = 0;
    std::uint64_t invalidations = 0;     // copies removed from other cores' or sockets' caches by stores (coherence)
    double barrier_s = 0;                // from the last thread's end to the team leaving the phase's barrier
    PrefetchCounters prefetch_counts;
    // The energy estimate (HierarchyPreset's energies): dynamic by level,
    // DRAM, and static power over the simulated time.
    double energy_cache_j = 0, energy_dram_j = 0, energy_static_j = 0;
    double energy_j() const { return energy_cache_j + energy_dram_j + energy_static_j; }
    double mpki(const LevelCounters& c) const {
        return instructions == 0 ? 0.0 : 1000.0 * static_cast<double>(c.demand_misses) / static_cast<double>(instructions);
    }
};

// =====================================================================
// The simulator
// =====================================================================

class MemorySim {
public:
    MemorySim(HierarchyPreset preset, PrefetchSpec prefetch, PageMapping mapping);
    ~MemorySim();
    MemorySim(const MemorySim&) = delete;
    MemorySim& operator=(const MemorySim&) = delete;

    // Replays the streams to their ends, all starting together; returns the
    // simulated seconds of this phase (the last core's end). Caches, page
    // homes and the clock carry over to the next phase; the report counts
    // the phase only when `counted` (an initialisation or a warm-up is not).
    // Error("core", ...) for a core that is not a CPU of the preset or is
    // listed twice.
    double run(std::vector<ThreadStream> streams, bool counted = true);
    // Node position holding the page of `addr`, or -1 if never touched.
    int home_of(std::uint64_t addr) const;
    // Puts page number `page` (address >> log2 page size) on node position
    // `node` before any access touches it, as move_pages would. Error
    // ("node") when there is no such node, Error("page") when the page
    // already has a home.
    void place(std::uint64_t page, unsigned node);
    // Every access replayed so far, counted phases or not.
    std::uint64_t accesses_simulated() const;
    MemoryReport report() const;
    // The counters of the last run() alone (zero if it was not counted).
    MemoryReport phase_report() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// A workload: phases of per-thread streams. Phases that are not measured
// (initialisation, warm-up) still move caches and page homes.
class Workload {
public:
    virtual ~Workload() = default;
    virtual std::string name() const = 0;
    virtual unsigned phases() const = 0;
    virtual std::string phase_name(unsigned phase) const = 0;
    virtual bool measured(unsigned phase) const = 0;
    // The streams of `phase` on `p` (as adapt() made it) for the ranks
    // that `layout` places.
    virtual std::vector<ThreadStream> streams(unsigned phase, const HierarchyPreset& p,
                                              const TeamLayout& layout) const = 0;
    // The machine the workload needs instead of the one given (the NUMA
    // microbenchmark: 2 sockets, remote = 1.5 × local); default: as given.
    virtual HierarchyPreset adapt(const HierarchyPreset& p) const { return p; }
    // Ranks to use when the caller gives 0.
    virtual unsigned default_threads(const HierarchyPreset& p) const { return p.cores(); }
};

// Built-in workloads:
//   "stream[:MIB]"   STREAM triad over three arrays of MIB MiB each (default 32),
//                    first touched by the thread that computes on them;
//   "chase:BYTES"    one thread's dependent pointer chase over a random cyclic
//                    permutation of the lines of BYTES ("64K", "16M"), a
//                    warm-up lap then a measured lap;
//   "numa-micro[:MIB]"  the published NUMA microbenchmark on 2 sockets with
//                    remote = 1.5 × local: first touch on socket 0, then read +
//                    write at a one-line stride in a local, a remote and a
//                    local phase (default 16 MiB);
//   "gups[:MIB]"     random read-modify-write updates of a table of MIB MiB
//                    (default 64), HPCC RandomAccess's pattern, the table
//                    first touched by each thread in its own slice;
//   "trmv[:MIB]"     y = L·x for a lower-triangular matrix of MIB MiB
//                    (default 128), its rows cut OpenMP-static-style, so the
//                    last threads carry most of the work;
//   "ihist[:MIB]"    an integral histogram of MIB MiB (default 32): a row
//                    scan cut by rows, then a column scan cut by columns,
//                    which want opposite page placements;
//   "jacobi[:MIB]", "gauss-seidel[:MIB]", "red-black[:MIB]"  the task
//                    applications' 5-point stencils over MIB MiB of arrays
//                    (default 16): a Jacobi sweep between two row-major
//                    grids, an in-place Gauss-Seidel sweep over a
//                    tile-major grid, and red-black's two half-sweeps;
//   "cholesky[:MIB]" the tiled Cholesky factorisation (the inversion
//                    application's first stage) of a matrix whose lower
//                    triangle of 64 × 64 tiles takes MIB MiB (default 16):
//                    per step a panel and an update loop of tile operations;
//   "qr[:MIB]"       the tiled QR factorisation (the qr application) of a
//                    square matrix of 64 × 64 tiles of MIB MiB (default 16)
//                    and its T factors: per step a serial panel and a
//                    parallel loop over the trailing columns;
//   "cg|mg|ft|is|lu|bt|sp|ep[:S|W|A]"  multithreaded kernels with the
//                    access patterns of the NAS Parallel Benchmarks, class S
//                    (tiny), W (NPB's class W sizes) or A (the default;
//                    docs/SIMULATOR.md, "Memory-hierarchy simulator:
//                    workloads");
//   "bfs|hotspot|kmeans|lud|nw|pathfinder|streamcluster|cfd[:S|W]"
//                    multithreaded kernels with the access patterns of the
//                    Rodinia suite's OpenMP codes, class S (tiny) or W (the
//                    default: 31-50 MiB, 2-3 times thesis-4s's L3).
// Error("workload", ...) listing them for anything else.
std::unique_ptr<Workload> make_workload(std::string_view spec);

struct RunOptions {
    PrefetchSpec prefetch{};
    PageMapping mapping{};
    unsigned threads = 0;                           // 0: the workload's default
    MappingKind thread_mapping = MappingKind::contiguous;
    unsigned nodes = 0;                             // the team on the first K nodes (0: all)
};

struct PhaseResult {
    std::string name;
    bool measured = false;
    double simulated_s = 0;
    MemoryReport report;   // this phase's counters (measured phases only)
};

struct WorkloadResult {
    std::string workload;
    MemoryReport report;              // over the measured phases
    double measured_s = 0;            // sum of the measured phases
    std::vector<PhaseResult> phases;
    std::uint64_t simulated_accesses = 0;   // every phase's, measured or not
};

WorkloadResult run_workload(const Workload& w, const HierarchyPreset& p, const RunOptions& o);

}  // namespace numaware::sim::memory
