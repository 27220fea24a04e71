// bench/memsim/bench_memsim.cpp — the memory-hierarchy simulator's speed and
// the published directions of NUMA-aware prefetching (NASP).
//
//   numaware_bench_memsim speed [--workload cg] [--prefetch nasp:8:64] [--reps 3]
//       Host time of a 16-core thesis-4s run (every phase), as simulated
//       accesses per host second and the equivalent instructions per second,
//       next to the same accesses through a plain single-level LRU cache loop
//       (the reference: generating the streams and one tag lookup each), and
//       the published speeds of ChampSim and gem5 (labelled as published).
//   numaware_bench_memsim directions [--kernels LIST] [--size S] [--check]
//       The NAS-like kernels on thesis-4s under none, stride 8/24/64, NASP
//       8:64, multilevel 8:64, AMPM, NA-AMPM 4:64 and NASP 64:128: per kernel
//       simulated time, speedup against none, prefetches issued and DRAM
//       traffic; the geometric means; the remote-latency sweep on 2 sockets
//       (80-320 ns); and each published direction with whether it holds.
//       --check exits 1 when a direction fails that is not listed as not
//       reproduced, or a listed one holds (take it off the list then).
// Every figure but host time is simulated (a throughput model, not a
// cycle-accurate core).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "common/stats.hpp"
#include "numaware/error.hpp"
#include "numaware/memory_sim.hpp"
#include "sim/memory/cache.hpp"

namespace mem = numaware::sim::memory;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> v;
    std::size_t a = 0;
    while (a <= s.size()) {
        const std::size_t b = s.find(',', a);
        const std::string item = s.substr(a, b == std::string::npos ? std::string::npos : b - a);
        if (!item.empty()) v.push_back(item);
        if (b == std::string::npos) break;
        a = b + 1;
    }
    return v;
}

double geomean(const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += std::log(x);
    return v.empty() ? 0.0 : std::exp(s / static_cast<double>(v.size()));
}

using numaware::bench::median;

// ---- speed ---------------------------------------------------------------------

struct SpeedArgs {
    std::string preset = "thesis-4s";
    std::string workload = "cg";
    std::string prefetch = "nasp:8:64";
    unsigned reps = 3;
    std::string json_file;
};

// The reference: every phase's streams, the threads taken in turn 4096
// accesses at a time, each access one lookup (and on a miss one insert) in
// one 32 KiB 8-way LRU cache.
std::uint64_t reference_loop(const mem::Workload& w, const mem::HierarchyPreset& p, std::uint64_t& hits) {
    numaware::TeamMapping tm;
    tm.threads = w.default_threads(p);
    const numaware::TeamLayout layout = numaware::plan_team(p.timed.machine, tm);
    mem::detail::Cache cache(32 * 1024, 8, 64);
    std::vector<mem::Access> buf(4096);
    std::uint64_t n = 0;
    hits = 0;
    for (unsigned ph = 0; ph < w.phases(); ++ph) {
        std::vector<mem::ThreadStream> streams = w.streams(ph, p, layout);
        for (bool any = true; any;) {
            any = false;
            for (mem::ThreadStream& s : streams) {
                const std::size_t k = s.stream->next(std::span<mem::Access>(buf));
                any = any || k != 0;
                for (std::size_t i = 0; i < k; ++i) {
                    const std::uint64_t line = buf[i].addr >> 6;
                    if (const mem::detail::LineRef x = cache.find(line)) {
                        cache.touch(x);
                        ++hits;
                    } else {
                        cache.insert(line, 0, 0);
                    }
                }
                n += k;
            }
        }
    }
    return n;
}

int speed_command(const SpeedArgs& a) {
    const mem::HierarchyPreset p = mem::preset(a.preset);
    const auto w = mem::make_workload(a.workload);
    mem::RunOptions o;
    o.prefetch = mem::parse_prefetch(a.prefetch);
    std::vector<double> sim_s, ref_s;
    mem::WorkloadResult last;
    std::uint64_t ref_n = 0, ref_hits = 0;
    for (unsigned r = 0; r < a.reps; ++r) {
        Clock::time_point t0 = Clock::now();
        last = mem::run_workload(*w, p, o);
        sim_s.push_back(seconds_since(t0));
        t0 = Clock::now();
        ref_n = reference_loop(*w, w->adapt(p), ref_hits);
        ref_s.push_back(seconds_since(t0));
    }
    const double s = median(sim_s), rs = median(ref_s);
    const double acc = static_cast<double>(last.simulated_accesses);
    const double instr_per_access =
        last.report.accesses == 0 ? 0.0 : static_cast<double>(last.report.instructions) / static_cast<double>(last.report.accesses);
    const double aps = acc / s, ref_aps = static_cast<double>(ref_n) / rs;
    fmt::print("# numaware_bench_memsim speed {} — host time of the simulator (figures simulated: throughput model)\n",
               utc_now());
    fmt::print("| what | accesses | host s (median of {}) | M accesses/s | M instructions/s (equivalent) |\n", a.reps);
    fmt::print("|---|---|---|---|---|\n");
    fmt::print("| numaware sim memory: {} on {} ({} cores), {} | {} | {:.3f} | {:.2f} | {:.2f} |\n", w->name(), p.name,
               w->adapt(p).cores(), a.prefetch, last.simulated_accesses, s, aps / 1e6, aps * instr_per_access / 1e6);
    fmt::print("| reference: the same accesses, one 32 KiB 8-way LRU lookup each | {} | {:.3f} | {:.2f} | {:.2f} |\n",
               ref_n, rs, ref_aps / 1e6, ref_aps * instr_per_access / 1e6);
    fmt::print("| ChampSim (published figure, as quoted in the issue) | | | | 0.033-0.050 |\n");
    fmt::print("| gem5 (published figure, as quoted in the issue) | | | | about 0.1 |\n\n");
    fmt::print("simulator / reference: {:.3f}; target 20 M accesses/s: {}\n", aps / ref_aps,
               aps >= 20e6 ? "met" : "MISSED");
    if (!a.json_file.empty()) {
        const nlohmann::json j = {{"date", utc_now()},
                                  {"preset", p.name},
                                  {"workload", w->name()},
                                  {"prefetch", a.prefetch},
                                  {"accesses", last.simulated_accesses},
                                  {"host_s", sim_s},
                                  {"accesses_per_s", aps},
                                  {"instructions_per_access", instr_per_access},
                                  {"reference_host_s", ref_s},
                                  {"reference_accesses_per_s", ref_aps},
                                  {"reference_hits", ref_hits}};
        std::ofstream(a.json_file) << j.dump(2) << "\n";
    }
    return 0;
}

// ---- directions ------------------------------------------------------------------

struct DirArgs {
    std::string kernels = "cg,mg,ft,is,lu,bt,sp,ep";
    std::string size;   // appended as KERNEL:SIZE when given
    std::string sweep = "80,160,240,320";
    bool check = false;
    std::string json_file;
};

const std::vector<std::string> dir_prefetchers = {"none",     "stride:8",        "stride:24", "stride:64",
                                                  "nasp:8:64", "multilevel:8:64", "ampm",      "na-ampm:4:64",
                                                  "nasp:64:128"};

// Directions listed as not reproduced, with their cause (see BENCHMARKS.md).
// While listed, --check requires that they still do not hold.
// Causes measured at class S (make test: `directions --size S --check`),
// 2026-11-25; on 2026-12-02 the model's coherence (model revision 20261202)
// made the latency sweep hold (invalidated lines reach DRAM again) and NASP
// 64:128 beat stride 64 on CG. BENCHMARKS.md has the class A table beside
// them.
const std::map<std::string, std::string> not_reproduced = {
    {"speed-order",
     "at S every kernel's data fits in the L3s after the first-touch phase, so the stride prefetchers are within "
     "1% of each other (L1 timeliness only) and deeper degrees add pollution"},
    {"issued-vs-multilevel",
     "NASP's far predictions are nearly all dropped (local homes under first touch, or pages missing from the TLB) "
     "and multilevel's far predictions find their lines already in the L3, so both issue almost only their L1 part"},
    {"traffic-order", "AMPM's zone-bounded candidates move less DRAM traffic than stride 8 at S"},
    {"mg-stride64",
     "NASP 8:64's far orders are dropped (local or TLB), so it behaves as stride 8, and stride 64 beats it on every "
     "kernel with long unit-stride runs (ft, lu, bt, ep at S)"},
    {"na-ampm", "NA-AMPM's far candidates are dropped as local; its L1 part (4) is shallower than AMPM's adaptive degree"},
    {"nasp-64-128",
     "at S only CG separates them: its SpMV reads the vector p that every thread rewrote in the iteration "
     "before, so under write-invalidate coherence those lines come again from their homes, most of them remote, "
     "and NASP's far orders (128 lines into the L3) fetch them ahead of the demand (CG 1.030 against 1.002); "
     "every other kernel is within 0.5%, and at S no kernel is limited by the bandwidth a deeper degree costs"},
};

struct Cell {
    double s = 0;
    std::uint64_t issued = 0;
    std::uint64_t traffic = 0;   // DRAM bytes: local and remote reads, writebacks
};

struct Direction {
    std::string id, text, figures;
    bool holds = false;
};

int directions_command(const DirArgs& a) {
    const std::vector<std::string> kernels = split(a.kernels);
    const mem::HierarchyPreset p = mem::preset("thesis-4s");
    std::map<std::string, std::map<std::string, Cell>> cells;   // [kernel][prefetch]
    const Clock::time_point t0 = Clock::now();
    fmt::print("# numaware_bench_memsim directions {} — SIMULATED on {} (throughput model, not cycle-accurate)\n\n",
               utc_now(), p.name);
    fmt::print("| kernel | prefetch | simulated ms | speedup vs none | prefetches issued | DRAM traffic MB |\n");
    fmt::print("|---|---|---|---|---|---|\n");
    for (const std::string& k : kernels) {
        const auto w = mem::make_workload(a.size.empty() ? k : k + ":" + a.size);
        for (const std::string& pf : dir_prefetchers) {
            mem::RunOptions o;
            o.prefetch = mem::parse_prefetch(pf);
            const mem::WorkloadResult r = mem::run_workload(*w, p, o);
            Cell c{r.measured_s, r.report.prefetch_counts.issued(),
                   r.report.dram_local_bytes + r.report.dram_remote_bytes + r.report.writeback_bytes};
            cells[k][pf] = c;
            fmt::print("| {} | {} | {:.4f} | {:.3f} | {} | {:.2f} |\n", w->name(), pf, c.s * 1e3, cells[k]["none"].s / c.s,
                       c.issued, static_cast<double>(c.traffic) / 1e6);
            std::fflush(stdout);
        }
    }
    // Geometric means over the kernels, relative to `none` (time) or stride 8 (traffic, issued).
    const auto gm = [&](const std::string& pf, auto f) {
        std::vector<double> v;
        for (const std::string& k : kernels) v.push_back(f(cells[k][pf], cells[k]));
        return geomean(v);
    };
    std::map<std::string, double> speedup, traffic, issued;
    for (const std::string& pf : dir_prefetchers) {
        speedup[pf] = gm(pf, [&](const Cell& c, auto& row) { return row["none"].s / c.s; });
        traffic[pf] = gm(pf, [&](const Cell& c, auto& row) {
            return static_cast<double>(std::max<std::uint64_t>(c.traffic, 1)) /
                   static_cast<double>(std::max<std::uint64_t>(row["stride:8"].traffic, 1));
        });
        issued[pf] = gm(pf, [&](const Cell& c, auto&) { return static_cast<double>(std::max<std::uint64_t>(c.issued, 1)); });
    }
    fmt::print("\n| prefetch | geomean speedup vs none | geomean DRAM traffic vs stride:8 | geomean prefetches issued |\n");
    fmt::print("|---|---|---|---|\n");
    for (const std::string& pf : dir_prefetchers)
        fmt::print("| {} | {:.3f} | {:.3f} | {:.0f} |\n", pf, speedup[pf], traffic[pf], issued[pf]);

    // The latency sweep: NASP 8:64 over stride 8 on 2 sockets.
    std::vector<double> lat_ns, gains;
    for (const std::string& l : split(a.sweep)) lat_ns.push_back(std::stod(l));
    fmt::print("\n| remote DRAM latency ns (2 sockets) | geomean NASP 8:64 speedup over stride 8 |\n|---|---|\n");
    for (double l : lat_ns) {
        const mem::HierarchyPreset q = mem::with_remote_latency(mem::preset("thesis-4s:2"), l);
        std::vector<double> g;
        for (const std::string& k : kernels) {
            const auto w = mem::make_workload(a.size.empty() ? k : k + ":" + a.size);
            mem::RunOptions o;
            o.prefetch = mem::parse_prefetch("stride:8");
            const double s8 = mem::run_workload(*w, q, o).measured_s;
            o.prefetch = mem::parse_prefetch("nasp:8:64");
            const double sn = mem::run_workload(*w, q, o).measured_s;
            g.push_back(s8 / sn);
        }
        gains.push_back(geomean(g));
        fmt::print("| {:.0f} | {:.3f} |\n", l, gains.back());
    }

    // The published directions.
    std::vector<Direction> d;
    const auto add = [&](std::string id, std::string text, bool holds, std::string figures) {
        d.push_back({std::move(id), std::move(text), std::move(figures), holds});
    };
    add("speed-order", "NASP 8:64 >= stride 64 > stride 24 > stride 8 (geomean speedup)",
        speedup["nasp:8:64"] >= speedup["stride:64"] && speedup["stride:64"] > speedup["stride:24"] &&
            speedup["stride:24"] > speedup["stride:8"],
        fmt::format("{:.3f} / {:.3f} / {:.3f} / {:.3f}", speedup["nasp:8:64"], speedup["stride:64"], speedup["stride:24"],
                    speedup["stride:8"]));
    add("issued-vs-stride64", "NASP 8:64 issues <= 0.8x stride 64's prefetches",
        issued["nasp:8:64"] <= 0.8 * issued["stride:64"],
        fmt::format("{:.3f}x", issued["nasp:8:64"] / issued["stride:64"]));
    add("issued-vs-multilevel", "NASP 8:64 issues <= 0.9x multilevel stride 8:64's prefetches",
        issued["nasp:8:64"] <= 0.9 * issued["multilevel:8:64"],
        fmt::format("{:.3f}x", issued["nasp:8:64"] / issued["multilevel:8:64"]));
    add("traffic-order", "DRAM traffic: stride 8 <= NASP 8:64 < AMPM < stride 64",
        traffic["stride:8"] <= traffic["nasp:8:64"] && traffic["nasp:8:64"] < traffic["ampm"] &&
            traffic["ampm"] < traffic["stride:64"],
        fmt::format("{:.3f} / {:.3f} / {:.3f} / {:.3f}", traffic["stride:8"], traffic["nasp:8:64"], traffic["ampm"],
                    traffic["stride:64"]));
    {
        std::vector<std::string> wins;
        for (const std::string& k : kernels)
            if (cells[k]["stride:64"].s < cells[k]["nasp:8:64"].s) wins.push_back(k);
        const bool mg_listed = std::find(kernels.begin(), kernels.end(), "mg") != kernels.end();
        add("mg-stride64", "MG is the kernel where stride 64 beats NASP 8:64", mg_listed && wins == std::vector<std::string>{"mg"},
            fmt::format("stride 64 faster on: {}", wins.empty() ? std::string("none") : fmt::format("{}", fmt::join(wins, ", "))));
    }
    add("na-ampm", "NA-AMPM 4:64 beats AMPM (geomean speedup)", speedup["na-ampm:4:64"] > speedup["ampm"],
        fmt::format("{:.3f} vs {:.3f}", speedup["na-ampm:4:64"], speedup["ampm"]));
    {
        bool grows = gains.size() >= 2 && gains.back() > gains.front();
        for (std::size_t i = 1; i < gains.size(); ++i) grows = grows && gains[i] >= gains[i - 1];
        std::string f;
        for (std::size_t i = 0; i < gains.size(); ++i) f += fmt::format("{}{:.0f} ns: {:.3f}", i ? ", " : "", lat_ns[i], gains[i]);
        add("latency-sweep", "the NASP 8:64 gain over stride 8 grows with the remote latency (2 sockets)", grows, f);
    }
    add("nasp-64-128", "NASP 64:128 is slower than stride 64 (geomean)", speedup["nasp:64:128"] < speedup["stride:64"],
        fmt::format("{:.3f} vs {:.3f}", speedup["nasp:64:128"], speedup["stride:64"]));

    fmt::print("\n| published direction | holds | figures | status |\n|---|---|---|---|\n");
    int failures = 0;
    nlohmann::json dj = nlohmann::json::array();
    for (const Direction& x : d) {
        const auto nr = not_reproduced.find(x.id);
        std::string status = x.holds ? "reproduced" : "FAILS";
        if (nr != not_reproduced.end()) {
            status = x.holds ? "listed as not reproduced but HOLDS: take it off the list" : "not reproduced: " + nr->second;
            if (x.holds) ++failures;
        } else if (!x.holds) {
            ++failures;
        }
        fmt::print("| {} | {} | {} | {} |\n", x.text, x.holds ? "yes" : "no", x.figures, status);
        dj.push_back({{"id", x.id}, {"direction", x.text}, {"holds", x.holds}, {"figures", x.figures}, {"status", status}});
    }
    fmt::print("\nhost time {:.1f} s\n", seconds_since(t0));
    if (!a.json_file.empty()) {
        nlohmann::json runs = nlohmann::json::array();
        for (const auto& [k, row] : cells)
            for (const auto& [pf, c] : row)
                runs.push_back({{"kernel", k}, {"prefetch", pf}, {"simulated_s", c.s}, {"prefetches_issued", c.issued},
                                {"dram_traffic_bytes", c.traffic}, {"simulated", true}});
        const nlohmann::json j = {{"date", utc_now()}, {"preset", p.name}, {"simulated", true}, {"runs", runs},
                                  {"sweep_ns", lat_ns}, {"sweep_gain", gains}, {"directions", dj}};
        std::ofstream(a.json_file) << j.dump(2) << "\n";
    }
    return a.check && failures > 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App cli{"numaware_bench_memsim: the memory-hierarchy simulator's speed and NASP's published directions"};
    cli.require_subcommand(1);
    SpeedArgs sa;
    CLI::App* speed = cli.add_subcommand("speed", "Simulated accesses per host second against a plain LRU loop");
    speed->add_option("--preset", sa.preset, "Preset")->capture_default_str();
    speed->add_option("--workload", sa.workload, "Workload")->capture_default_str();
    speed->add_option("--prefetch", sa.prefetch, "Prefetcher")->capture_default_str();
    speed->add_option("--reps", sa.reps, "Timed runs, median reported")->check(CLI::Range(1u, 100u))->capture_default_str();
    speed->add_option("--json-file", sa.json_file, "Also write the figures as JSON");
    DirArgs da;
    CLI::App* dir = cli.add_subcommand("directions", "NASP's published directions on the NAS-like kernels");
    dir->add_option("--kernels", da.kernels, "Comma list of kernels")->capture_default_str();
    dir->add_option("--size", da.size, "Kernel size (KERNEL:SIZE), e.g. S for the test size");
    dir->add_option("--sweep", da.sweep, "Remote latencies of the 2-socket sweep, ns")->capture_default_str();
    dir->add_flag("--check", da.check, "Exit 1 unless every direction holds or is listed as not reproduced");
    dir->add_option("--json-file", da.json_file, "Also write every figure as JSON");
    try {
        cli.parse(argc, argv);
        if (*speed) return speed_command(sa);
        return directions_command(da);
    } catch (const CLI::ParseError& e) {
        return cli.exit(e);
    } catch (const std::exception& e) {
        fmt::print(stderr, "numaware_bench_memsim: {}\n", e.what());
        return 2;
    }
}
