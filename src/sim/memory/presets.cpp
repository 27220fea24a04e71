// sim/memory/presets.cpp — the named machines of the memory-hierarchy
// simulator: a timed machine model (sockets, DRAM latency and bandwidth)
// plus a cache and timing description, every figure with its source.
#include <algorithm>
#include <charconv>
#include <string>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "numaware/error.hpp"
#include "numaware/machine.hpp"
#include "numaware/memory_sim.hpp"
#include "sim/memory/cache.hpp"
#include "util/bits.hpp"

namespace numaware::sim::memory {

namespace {

// Sandy Bridge-class core and cache timing, used where the published
// machine leaves a figure unstated.
constexpr unsigned snb_l1_cycles = 4;    // 7-cpu.com, "Intel Sandy Bridge": L1 data cache latency 4 cycles
constexpr unsigned snb_l2_cycles = 12;   // same page: L2 latency 11-12 cycles
constexpr unsigned snb_l3_cycles = 30;   // same page: L3 latency 26-31 cycles (taken as 30)
constexpr unsigned snb_rob = 168;        // Intel 64 and IA-32 Optimization Reference Manual, Sandy Bridge: 168-entry ROB
constexpr unsigned snb_dtlb = 64;        // same manual: first-level DTLB, 64 entries for 4 KiB pages, 4-way
// Xeon E5-4600 (Sandy Bridge-EP, 4-socket): 4 DDR3-1600 channels per socket
// = 51.2 GB/s peak (Intel ARK), x 0.75 sustained (the task simulator's
// assumption, sim/models.cpp); QPI at 8 GT/s = 16 GB/s per direction (Intel ARK).
constexpr double snb_memory_gbps = 4 * 1.6 * 8 * 0.75;
constexpr double snb_qpi_gbps = 16.0;

// Energies: Horowitz, "Computing's energy problem", ISSCC 2014 (45 nm): a
// 64-bit read of a 32 KiB cache 20 pJ, of a 1 MiB cache 100 pJ, of DRAM
// 1.3-2.6 nJ. Taken as: L1 20 pJ; L2 (256 KiB) 52.5 pJ, log-linear between
// the two cache figures; L3 100 pJ (the largest figure given, a lower bound
// for 4 MiB and larger); a DRAM line 8 x 1.95 nJ (the midpoint) = 15.6 nJ.
constexpr double horowitz_l1_pj = 20.0, horowitz_l2_pj = 52.5, horowitz_l3_pj = 100.0, horowitz_dram_line_nj = 15.6;
// Static power per socket: 30% of the Xeon E5-4650's 130 W TDP (Intel ARK);
// the 30% is an assumption.
constexpr double snb_static_w = 0.3 * 130.0;

void set_energy(HierarchyPreset& p, double static_w, const std::string& static_source) {
    p.l1_access_pj = horowitz_l1_pj;
    p.l2_access_pj = horowitz_l2_pj;
    p.l3_access_pj = horowitz_l3_pj;
    p.dram_line_nj = horowitz_dram_line_nj;
    p.static_w_per_socket = static_w;
    p.sources.push_back(
        "energy per lookup or fill: L1 20 pJ, L2 52.5 pJ, L3 100 pJ; per DRAM line 15.6 nJ: Horowitz, 'Computing's "
        "energy problem', ISSCC 2014, 45 nm (32 KiB 20 pJ, 1 MiB 100 pJ, DRAM 1.3-2.6 nJ per 64-bit word, midpoint x 8; "
        "L2 log-linear between the cache figures; L3 the 1 MiB figure, a lower bound)");
    p.sources.push_back(static_source);
}

// The Sandy Bridge core that both Sandy Bridge presets share: its reorder
// window, DTLB and IPC, with their sources after the preset's own, and
// the energies (E5-4650 static power).
void set_sandy_bridge_core(HierarchyPreset& p) {
    p.rob_window = snb_rob;
    p.tlb_entries = snb_dtlb;
    p.core_ipc = 1.0;
    p.sources.insert(p.sources.end(),
                     {"hit latency L1 4, L2 12, L3 30 cycles: Sandy Bridge figures, 7-cpu.com 'Intel Sandy Bridge' "
                      "(L3 26-31, taken as 30)",
                      "reorder window 168 instructions, DTLB 64 entries 4-way: Intel 64 and IA-32 Architectures "
                      "Optimization Reference Manual, Sandy Bridge microarchitecture",
                      "1 non-memory instruction per cycle: model assumption (not fitted), the same for every "
                      "prefetcher"});
    set_energy(p, snb_static_w,
               "static power 39 W per socket: 30% (assumption) of the Xeon E5-4650's 130 W TDP (Intel ARK)");
}

// "thesis-4s" on `sockets` sockets; remote = false gives the no-NUMA variant.
HierarchyPreset thesis(unsigned sockets, bool numa) {
    if (sockets == 0) sockets = 4;
    if (sockets < 1 || sockets > 4) throw Error("preset", fmt::format("thesis-4s has 1 to 4 sockets, got {}", sockets));
    // Sockets 0-1 and 2-3 are neighbours; the other two are far.
    std::string dist, lat, bw;
    for (unsigned r = 0; r < sockets; ++r) {
        for (unsigned h = 0; h < sockets; ++h) {
            const unsigned d = r == h ? 10 : (r / 2 == h / 2 ? 20 : 30);
            const double ns = numa ? 80.0 * d / 10 : 80.0;
            const char* sep = h ? "," : "";
            dist += fmt::format("{}{}", sep, numa ? d : (r == h ? 10 : 11));
            lat += fmt::format("{}{}", sep, ns);
            bw += fmt::format("{}{}", sep, r == h ? snb_memory_gbps : snb_qpi_gbps);
        }
        if (r + 1 < sockets) {
            dist += "/";
            lat += "/";
            bw += "/";
        }
    }
    const Machine m = Machine::from_synthetic(
        fmt::format("nodes={} cpus-per-node=4 mem-per-node=16G distances={} latency={} bandwidth={}", sockets,
                    dist, lat, bw));
    TimingDefaults td;
    td.local_latency_ns = 80.0;
    td.memory_gbps = 20.0;
    HierarchyPreset p;
    p.name = numa ? "thesis-4s" : "thesis-4s-nonuma";
    if (sockets != 4) p.name += fmt::format(":{}", sockets);
    p.timed = timed(m, td);
    p.timed.name = p.name;
    p.ghz = 2.0;
    p.l1 = {64 * 1024, 2, snb_l1_cycles, 24};
    p.l2 = {256 * 1024, 8, snb_l2_cycles, 24};
    p.l3 = {4 * 1024 * 1024, 16, snb_l3_cycles, 32};
    p.l3_slices = 8;
    p.sources = {
        "sockets = 4, cores per socket = 4, L1D 64 KiB 2-way, L2 256 KiB 8-way, L3 4 MiB 16-way in 8 banks, 64 B "
        "lines, 4 KiB pages, MSHRs 24 / 24 / 32: the published NASP evaluation (gem5, 4 sockets)",
        numa ? "DRAM latency 80 ns local, 160 ns neighbour socket (0-1, 2-3), 240 ns the two far sockets: the published "
               "evaluation"
             : "DRAM latency 80 ns everywhere: the published evaluation's no-NUMA variant",
        "memory bandwidth 38.4 GB/s per socket: 4 DDR3-1600 channels (Xeon E5-4600, Sandy Bridge-EP, Intel ARK) = "
        "51.2 GB/s peak x 0.75 sustained (assumption, as in the task simulator's models); every remote path 16 GB/s "
        "per direction: one QPI link at 8 GT/s (Intel ARK)",
        "clock 2.0 GHz: gem5's default CPU clock (configs/common/Options.py, --cpu-clock); assumption",
    };
    set_sandy_bridge_core(p);
    p.validate();
    return p;
}

// "skylake-sp-2s": the task simulator's Skylake-SP model (latency and
// bandwidth sources there) with Skylake-SP core and cache figures.
HierarchyPreset skylake(unsigned sockets) {
    HierarchyPreset p;
    p.timed = model("skylake-sp-2s", sockets);
    p.name = sockets == 0 || sockets == 2 ? "skylake-sp-2s" : fmt::format("skylake-sp-2s:{}", sockets);
    p.timed.name = p.name;
    const unsigned cores = static_cast<unsigned>(p.timed.machine.nodes.front().cpus.size());
    p.ghz = 2.5;
    p.l1 = {32 * 1024, 8, 5, 10};
    p.l2 = {1024 * 1024, 16, 14, 32};
    p.l3 = {static_cast<std::uint64_t>(cores) * 1408 * 1024, 11, 60, 64};
    p.l3_slices = cores;
    p.rob_window = 224;
    p.tlb_entries = 64;
    p.core_ipc = 1.0;
    p.sources = {
        "DRAM latency, memory and link bandwidth: the task simulator's skylake-sp-2s model (sources there)",
        "clock 2.5 GHz: Xeon Platinum 8180 base frequency (Intel ARK)",
        "L1D 32 KiB 8-way 5 cycles, L2 1 MiB 16-way 14 cycles, L3 1.375 MiB per core 11-way, one slice per core: "
        "7-cpu.com 'Intel Skylake X' and the Intel Optimization Reference Manual (Skylake Server)",
        "L3 latency 60 cycles: 7-cpu.com 'Intel Skylake X' (L3 latency about 50-70 cycles, taken as 60)",
        "MSHRs: L1 10 fill buffers, L2 32 superqueue entries: Intel Optimization Reference Manual; L3 64: "
        "assumption",
        "reorder window 224, DTLB 64 entries 4-way: Intel Optimization Reference Manual (Skylake)",
        "1 non-memory instruction per cycle: model assumption (not fitted)",
    };
    set_energy(p, 0.3 * 205.0,
               "static power 61.5 W per socket: 30% (assumption) of the Xeon Platinum 8180's 205 W TDP (Intel ARK)");
    p.validate();
    return p;
}

// "sandybridge-ep-4s": the task simulator's model of four Xeon E5-4650 in a
// QPI ring (latency and bandwidth sources there) with Sandy Bridge-EP core
// and cache figures. Its L3 is 20-way: a wide cache (cache.hpp).
HierarchyPreset sandybridge_ep(unsigned sockets) {
    HierarchyPreset p;
    p.timed = model("sandybridge-ep-4s", sockets);
    p.name = sockets == 0 || sockets == 4 ? "sandybridge-ep-4s" : fmt::format("sandybridge-ep-4s:{}", sockets);
    p.timed.name = p.name;
    p.ghz = 2.7;
    p.l1 = {32 * 1024, 8, snb_l1_cycles, 10};
    p.l2 = {256 * 1024, 8, snb_l2_cycles, 16};
    p.l3 = {20 * 1024 * 1024, 20, snb_l3_cycles, 32};
    p.l3_slices = 8;
    p.sources = {
        "DRAM latency, memory and link bandwidth: the task simulator's sandybridge-ep-4s model (sources there)",
        "sockets 4 x 8 cores, clock 2.7 GHz, L3 20 MB: Xeon E5-4650 (Intel ARK); L3 in 8 slices of 2.5 MB, one per "
        "core",
        "L1D 32 KiB 8-way, L2 256 KiB 8-way: Intel 64 and IA-32 Architectures Optimization Reference Manual, Sandy "
        "Bridge microarchitecture; L3 20-way (16,384 sets of 64 B lines): the cache descriptor (CPUID leaf 4) of "
        "the 20 MB Sandy Bridge-EP parts",
        "MSHRs: L1 10 fill buffers, L2 16 superqueue entries: Intel Optimization Reference Manual (Sandy Bridge); L3 "
        "32: assumption (thesis-4s's figure)",
        "the EP's larger on-die ring is not modelled: its hit latencies are Sandy Bridge's (below)",
    };
    set_sandy_bridge_core(p);
    p.validate();
    return p;
}

struct Entry {
    const char* name;
    HierarchyPreset (*make)(unsigned);
};
const Entry presets[] = {
    {"thesis-4s", [](unsigned s) { return thesis(s, true); }},
    {"thesis-4s-nonuma", [](unsigned s) { return thesis(s, false); }},
    {"skylake-sp-2s", skylake},
    {"sandybridge-ep-4s", sandybridge_ep},
};

}  // namespace

void HierarchyPreset::validate() const {
    if (!is_power_of_two(line_bytes) || line_bytes < 8)
        throw Error("line_bytes", fmt::format("must be a power of two >= 8, got {}", line_bytes));
    if (!is_power_of_two(page_bytes) || page_bytes < line_bytes)
        throw Error("page_bytes", fmt::format("must be a power of two >= the line, got {}", page_bytes));
    const std::pair<const char*, const CacheLevel*> levels[] = {{"l1", &l1}, {"l2", &l2}, {"l3", &l3}};
    for (const auto& [field, c] : levels) {
        if (c->ways == 0 || c->latency_cycles == 0 || c->mshrs == 0)
            throw Error(field, "ways, latency and MSHRs must be >= 1");
        if (c->ways > detail::Cache::max_ways)
            throw Error(field, fmt::format("at most {} ways, got {}", detail::Cache::max_ways, c->ways));
        if (c->bytes == 0 || c->bytes % (std::uint64_t{line_bytes} * c->ways) != 0)
            throw Error(field, fmt::format("{} bytes is not a whole number of {}-way sets of {} B lines", c->bytes,
                                           c->ways, line_bytes));
    }
    if (l3_slices == 0) throw Error("l3_slices", "must be >= 1");
    if (!(ghz > 0) || !(core_ipc > 0)) throw Error("ghz", "clock and IPC must be > 0");
    if (rob_window == 0) throw Error("rob_window", "must be >= 1");
    if (tlb_entries < 4 || tlb_entries % 4 != 0) throw Error("tlb_entries", "must be a multiple of 4 (4-way)");
    timed.validate();
}

std::vector<std::string> preset_names() {
    std::vector<std::string> v;
    for (const Entry& e : presets) v.emplace_back(e.name);
    return v;
}

HierarchyPreset preset(std::string_view spec) {
    std::string_view name = spec;
    unsigned sockets = 0;
    if (const std::size_t colon = spec.find(':'); colon != std::string_view::npos) {
        name = spec.substr(0, colon);
        const std::string_view s = spec.substr(colon + 1);
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), sockets);
        if (ec != std::errc() || end != s.data() + s.size() || sockets == 0)
            throw Error("preset", fmt::format("'{}': the socket count after ':' must be a positive integer", spec));
    }
    for (const Entry& e : presets)
        if (name == e.name) return e.make(sockets);
    throw Error("preset", fmt::format("unknown preset '{}'; known: {}", spec, fmt::join(preset_names(), ", ")));
}

namespace {

// `bytes` cut to whole sets of `ways` lines (at least one set).
std::uint64_t whole_sets(std::uint64_t bytes, unsigned ways, unsigned line) {
    const std::uint64_t set = std::uint64_t{ways} * line;
    return std::max<std::uint64_t>(bytes / set, 1) * set;
}

// The largest share of one CPU among the machine's data or unified caches
// of `level` (0: it lists none).
std::uint64_t per_cpu_share(const Machine& m, unsigned level) {
    std::uint64_t best = 0;
    for (const Cache& c : m.caches)
        if (c.level == level && c.type != "instruction" && !c.cpus.empty())
            best = std::max<std::uint64_t>(best, c.size_bytes / c.cpus.size());
    return best;
}

// The largest total of level-3 data or unified cache of one node, a cache
// that spans nodes counted by its CPUs in each (0: the machine lists none).
std::uint64_t per_node_l3(const Machine& m) {
    std::uint64_t best = 0;
    for (const Node& n : m.nodes) {
        double total = 0;
        for (const Cache& c : m.caches) {
            if (c.level != 3 || c.type == "instruction" || c.cpus.empty()) continue;
            std::size_t inside = 0;
            for (unsigned cpu : c.cpus) inside += std::binary_search(n.cpus.begin(), n.cpus.end(), cpu) ? 1 : 0;
            total += static_cast<double>(c.size_bytes) * static_cast<double>(inside) / static_cast<double>(c.cpus.size());
        }
        best = std::max(best, static_cast<std::uint64_t>(total));
    }
    return best;
}

std::size_t most_cpus_of_a_node(const Machine& m) {
    std::size_t most = 0;
    for (const Node& n : m.nodes) most = std::max(most, n.cpus.size());
    return most;
}

}  // namespace

HierarchyPreset on_machine(const HierarchyPreset& base, const TimedMachine& machine) {
    base.validate();
    const Machine& m = machine.machine;
    const std::size_t cpus = most_cpus_of_a_node(m);
    if (cpus == 0) throw Error("machine", fmt::format("{} has no CPUs: nothing to run the workload on", machine.name));
    HierarchyPreset p = base;
    p.timed = machine;
    p.name = fmt::format("{} on {}", base.name, machine.name);
    p.timed.name = p.name;
    p.sources.clear();
    p.sources.push_back(fmt::format("sockets, cores, DRAM latency and bandwidth: the machine {} ({} nodes, {} CPUs; "
                                    "each CPU a core, each node a socket with its own L3)",
                                    machine.name, m.nodes.size(), m.cpu_count()));
    if (!machine.source.empty()) p.sources.push_back(fmt::format("the machine's figures: {}", machine.source));
    for (const std::string& rule : machine.rules) p.sources.push_back(fmt::format("the machine's rule: {}", rule));
    // The private levels: the machine's share of one CPU, else the preset's.
    const auto private_level = [&](CacheLevel& level, unsigned n, const char* what) {
        const std::uint64_t listed = per_cpu_share(m, n);
        if (listed == 0) {
            p.sources.push_back(fmt::format("{} {} B: the preset {} (the machine lists no L{} cache)", what, level.bytes,
                                            base.name, n));
            return;
        }
        level.bytes = whole_sets(listed, level.ways, p.line_bytes);
        p.sources.push_back(fmt::format("{} {} B: the machine's largest L{} share of one CPU ({} B), cut to whole "
                                        "{}-way sets of {} B lines",
                                        what, level.bytes, n, listed, level.ways, p.line_bytes));
    };
    private_level(p.l1, 1, "L1D");
    private_level(p.l2, 2, "L2");
    // The L3: the machine's largest per node, else the preset's per core
    // times the most CPUs of a node.
    const std::size_t base_cpus = most_cpus_of_a_node(base.timed.machine);
    if (const std::uint64_t listed = per_node_l3(m); listed != 0) {
        p.l3.bytes = whole_sets(listed, p.l3.ways, p.line_bytes);
        p.sources.push_back(fmt::format("L3 {} B per socket: the machine's largest L3 total of one node ({} B), cut "
                                        "to whole {}-way sets of {} B lines",
                                        p.l3.bytes, listed, p.l3.ways, p.line_bytes));
    } else {
        const std::uint64_t per_cpu = base.l3.bytes / base_cpus;
        p.l3.bytes = whole_sets(per_cpu * cpus, p.l3.ways, p.line_bytes);
        p.sources.push_back(fmt::format("L3 {} B per socket: the preset {}'s {} B per core x {} CPUs (the machine "
                                        "lists no L3), cut to whole {}-way sets",
                                        p.l3.bytes, base.name, per_cpu, cpus, p.l3.ways));
    }
    // Its banks: the preset's per core, at least one.
    p.l3_slices = static_cast<unsigned>(
        std::max<std::size_t>(1, (std::size_t{base.l3_slices} * cpus + base_cpus / 2) / base_cpus));
    p.sources.push_back(fmt::format("{} L3 slices per socket: the preset's {} per {} cores, for {}", p.l3_slices,
                                    base.l3_slices, base_cpus, cpus));
    p.sources.push_back(fmt::format("everything else (clock, latencies in cycles, MSHRs, line, page, window, TLB, "
                                    "IPC, energies) from the preset {}, whose sources follow",
                                    base.name));
    for (const std::string& s : base.sources) p.sources.push_back(fmt::format("{}: {}", base.name, s));
    p.validate();
    return p;
}

HierarchyPreset with_remote_latency(const HierarchyPreset& p, double remote_ns) {
    HierarchyPreset q = p;
    auto& lat = q.timed.latency_ns;
    double local = 0;
    for (std::size_t i = 0; i < lat.size(); ++i) local = std::max(local, lat[i][i]);
    if (!(remote_ns >= local))
        throw Error("remote_ns", fmt::format("must be >= the local latency {} ns, got {}", local, remote_ns));
    for (std::size_t r = 0; r < lat.size(); ++r)
        for (std::size_t h = 0; h < lat.size(); ++h)
            if (r != h) lat[r][h] = remote_ns;
    q.name += fmt::format(" (remote {} ns)", remote_ns);
    q.timed.name = q.name;
    q.sources.push_back(fmt::format("remote DRAM latency set to {} ns (a sweep point)", remote_ns));
    return q;
}

}  // namespace numaware::sim::memory
