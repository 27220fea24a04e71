// tools/cli/cmd_sim_memory.cpp — `numaware sim memory`: the memory-
// hierarchy simulator. One workload (built in, or a recorded trace with
// --trace) on one preset under each prefetcher listed, each run from cold
// caches; every figure labelled simulated, with the preset and its
// parameters' sources in the JSON. --plot hands the same JSON document to
// the Python package (numaware.memsim_plot) for a PNG.
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "numaware/error.hpp"
#include "numaware/memory_sim.hpp"
#include "sim/memory/trace_file.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/python_package.hpp"
#include "tools/vm/process.hpp"

namespace numaware::cli {

namespace {

namespace mem = sim::memory;

struct SimMemoryOptions {
    std::string preset = "thesis-4s";
    std::string machine;                // another machine under the preset's cores and caches
    std::string workload = "stream";
    std::string trace;                  // a recorded trace instead of --workload
    std::string trace_format = "auto";
    std::string prefetch = "none";
    std::string mapping = "first-touch";
    std::string thread_mapping = "contiguous";
    unsigned threads = 0;
    unsigned nodes = 0;                 // the team on the first K nodes (0: all)
    bool json = false;
    bool csv = false;
    bool list_presets = false;
    std::string plot;                   // a PNG of speedup and bytes per prefetcher
};

// --list-presets: every preset's name and shape, what the advisor's
// configuration space is built from (python/numaware/advisor/space.py).
// Every preset simulates the four Intel-like prefetcher knobs (intel:MASK).
void list_presets(bool json) {
    nlohmann::json doc = nlohmann::json::array();
    for (const std::string& name : mem::preset_names()) {
        const mem::HierarchyPreset p = mem::preset(name);
        doc.push_back({{"name", name},
                       {"sockets", p.sockets()},
                       {"cores_per_socket", p.cores() / p.sockets()},
                       {"prefetcher_control", true}});
    }
    if (json) {
        fmt::print("{}\n", nlohmann::json{{"presets", doc}}.dump());
        return;
    }
    for (const auto& e : doc)
        fmt::print("{}: {} sockets x {} cores\n", e["name"].get<std::string>(), e["sockets"].get<unsigned>(),
                   e["cores_per_socket"].get<unsigned>());
}

std::vector<std::string> split_list(const std::string& s) {
    std::vector<std::string> v;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, ',');)
        if (!item.empty()) v.push_back(item);
    return v;
}

nlohmann::json level_json(const mem::MemoryReport& r, const mem::LevelCounters& c) {
    return {{"demand_accesses", c.demand_accesses}, {"demand_misses", c.demand_misses},
            {"mpki", r.mpki(c)},                     {"fill_bytes", c.fill_bytes},
            {"served", c.served},
            {"mean_latency_ns", c.served == 0 ? 0.0 : c.served_latency_ns / static_cast<double>(c.served)}};
}

// The counters of a report over `s` simulated seconds: a run's, or one
// phase's (the advisor's features).
nlohmann::json counters_json(const mem::MemoryReport& r, double s) {
    const mem::PrefetchCounters& pc = r.prefetch_counts;
    return {{"accesses", r.accesses},
            {"instructions", r.instructions},
            {"prefetches_issued", pc.issued()},
            {"prefetch_counts",
             {{"issued_l1", pc.issued_l1},
              {"issued_l2", pc.issued_l2},
              {"issued_l3", pc.issued_l3},
              {"useful", pc.useful},
              {"late", pc.late},
              {"unused_evicted", pc.unused_evicted},
              {"dropped_queue", pc.dropped_queue},
              {"dropped_tlb", pc.dropped_tlb},
              {"dropped_unmapped", pc.dropped_unmapped},
              {"dropped_local", pc.dropped_local}}},
            {"bytes",
             {{"l1", r.l1.fill_bytes},
              {"l2", r.l2.fill_bytes},
              {"l3", r.l3.fill_bytes},
              {"dram_local", r.dram_local_bytes},
              {"dram_remote", r.dram_remote_bytes},
              {"writeback", r.writeback_bytes}}},
            {"invalidations", r.invalidations},
            {"barrier_s", r.barrier_s},
            {"energy_j",
             {{"total", r.energy_j()},
              {"caches", r.energy_cache_j},
              {"dram", r.energy_dram_j},
              {"static", r.energy_static_j}}},
            {"bandwidth_gbps",
             {{"dram_local", s > 0 ? static_cast<double>(r.dram_local_bytes) / s * 1e-9 : 0.0},
              {"dram_remote", s > 0 ? static_cast<double>(r.dram_remote_bytes) / s * 1e-9 : 0.0}}},
            {"levels", {{"l1", level_json(r, r.l1)}, {"l2", level_json(r, r.l2)}, {"l3", level_json(r, r.l3)},
                        {"dram", {{"served", r.dram.served},
                                  {"mean_latency_ns", r.dram.served == 0 ? 0.0 : r.dram.served_latency_ns /
                                                                                    static_cast<double>(r.dram.served)}}}}}};
}

nlohmann::json run_json(const mem::WorkloadResult& w, double baseline_s) {
    nlohmann::json phases = nlohmann::json::array();
    for (const mem::PhaseResult& ph : w.phases) {
        nlohmann::json j = {{"name", ph.name}, {"measured", ph.measured}, {"simulated_s", ph.simulated_s}};
        if (ph.measured) j["counters"] = counters_json(ph.report, ph.simulated_s);
        phases.push_back(std::move(j));
    }
    const double s = w.measured_s;
    nlohmann::json run = {{"prefetch", w.report.prefetch},
                          {"simulated", true},
                          {"simulated_s", s},
                          {"speedup", s > 0 ? baseline_s / s : 0.0}};
    run.update(counters_json(w.report, s));
    run["phases"] = std::move(phases);
    return run;
}

// The one document of a run: --json prints it, --plot hands it to Python.
nlohmann::json memory_document(const SimMemoryOptions& o, const mem::HierarchyPreset& used, const mem::Workload& w,
                               const mem::TraceWorkload* traced, const mem::RunOptions& ro,
                               const std::vector<mem::WorkloadResult>& results, double base) {
    nlohmann::json runs = nlohmann::json::array();
    for (const auto& r : results) runs.push_back(run_json(r, base));
    nlohmann::json doc = {
        {"label", "simulated (memory-hierarchy throughput model, not cycle-accurate)"},
        {"simulated", true},
        {"preset", used.name},
        {"workload", w.name()},
        {"mapping", ro.mapping.text},
        {"mapping_applied", results.front().report.mapping},
        {"thread_mapping", o.thread_mapping},
        {"nodes", o.nodes},
        {"baseline", results.front().report.prefetch},
        {"parameters",
         {{"sockets", used.sockets()},
          {"cores", used.cores()},
          {"ghz", used.ghz},
          {"l1", {{"bytes", used.l1.bytes}, {"ways", used.l1.ways}, {"cycles", used.l1.latency_cycles}, {"mshrs", used.l1.mshrs}}},
          {"l2", {{"bytes", used.l2.bytes}, {"ways", used.l2.ways}, {"cycles", used.l2.latency_cycles}, {"mshrs", used.l2.mshrs}}},
          {"l3", {{"bytes", used.l3.bytes}, {"ways", used.l3.ways}, {"cycles", used.l3.latency_cycles}, {"mshrs", used.l3.mshrs}, {"slices", used.l3_slices}}},
          {"dram_latency_ns", used.timed.latency_ns},
          {"memory_gbps", used.timed.memory_gbps},
          {"link_gbps", used.timed.link_gbps},
          {"rob_window", used.rob_window},
          {"tlb_entries", used.tlb_entries},
          {"core_ipc", used.core_ipc}}},
        {"sources", used.sources},
        {"runs", runs}};
    if (traced != nullptr) {
        const mem::TraceInfo& ti = traced->info();
        nlohmann::json phases = nlohmann::json::array();
        for (const auto& ph : ti.phases) phases.push_back({{"name", ph.name}, {"measured", ph.measured}});
        doc["trace"] = {{"path", ti.path},
                        {"format", mem::trace_format_name(ti.format)},
                        {"threads", ti.threads},
                        {"file_bytes", ti.file_bytes},
                        {"phases", phases}};
    }
    return doc;
}

void print_csv(const mem::HierarchyPreset& used, const mem::Workload& w, const std::vector<mem::WorkloadResult>& results,
               double base) {
    fmt::print("# simulated: memory-hierarchy throughput model, not cycle-accurate; preset {}, workload {}\n",
               used.name, w.name());
    fmt::print("prefetch,simulated_s,speedup,accesses,instructions,l1_mpki,l2_mpki,l3_mpki,prefetches_issued,"
               "issued_l1,issued_l2,issued_l3,useful,late,unused_evicted,bytes_l1,bytes_l2,bytes_l3,dram_local_bytes,"
               "dram_remote_bytes,writeback_bytes,energy_j\n");
    for (const auto& res : results) {
        const mem::MemoryReport& r = res.report;
        const mem::PrefetchCounters& pc = r.prefetch_counts;
        fmt::print("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", r.prefetch, res.measured_s,
                   res.measured_s > 0 ? base / res.measured_s : 0.0, r.accesses, r.instructions, r.mpki(r.l1),
                   r.mpki(r.l2), r.mpki(r.l3), pc.issued(), pc.issued_l1, pc.issued_l2, pc.issued_l3, pc.useful, pc.late,
                   pc.unused_evicted, r.l1.fill_bytes, r.l2.fill_bytes, r.l3.fill_bytes, r.dram_local_bytes,
                   r.dram_remote_bytes, r.writeback_bytes, r.energy_j());
    }
}

void print_table(const SimMemoryOptions& o, const mem::HierarchyPreset& used, const mem::Workload& w,
                 const mem::RunOptions& ro, const std::vector<mem::WorkloadResult>& results, double base) {
    fmt::print("numaware sim memory — SIMULATED (throughput model, not cycle-accurate)\n");
    fmt::print("preset {}, workload {}, pages {}, threads {}\n\n", used.name, w.name(), ro.mapping.text,
               results.front().report.accesses == 0 ? 0 : (o.threads != 0 ? o.threads : w.default_threads(used)));
    fmt::print("| prefetch | simulated ms | speedup vs {} | L1 MPKI | L2 MPKI | L3 MPKI | issued L1 | issued L3 | useful | late "
               "| unused | DRAM local MB | DRAM remote MB |\n",
               results.front().report.prefetch);
    fmt::print("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (const auto& res : results) {
        const mem::MemoryReport& r = res.report;
        const mem::PrefetchCounters& pc = r.prefetch_counts;
        fmt::print("| {} | {:.4f} | {:.3f} | {:.2f} | {:.2f} | {:.2f} | {} | {} | {} | {} | {} | {:.2f} | {:.2f} |\n",
                   r.prefetch, res.measured_s * 1e3, res.measured_s > 0 ? base / res.measured_s : 0.0, r.mpki(r.l1),
                   r.mpki(r.l2), r.mpki(r.l3), pc.issued_l1, pc.issued_l3, pc.useful, pc.late, pc.unused_evicted,
                   static_cast<double>(r.dram_local_bytes) / 1e6, static_cast<double>(r.dram_remote_bytes) / 1e6);
    }
}

void sim_memory(const SimMemoryOptions& o) {
    const mem::HierarchyPreset p =
        o.machine.empty() ? mem::preset(o.preset) : mem::on_machine(mem::preset(o.preset), sim::timed_from_spec(o.machine));
    std::unique_ptr<mem::Workload> w;
    const mem::TraceWorkload* traced = nullptr;
    if (!o.trace.empty()) {
        auto t = std::make_unique<mem::TraceWorkload>(o.trace, mem::parse_trace_format(o.trace_format));
        traced = t.get();
        w = std::move(t);
    } else {
        w = mem::make_workload(o.workload);
    }
    const std::vector<std::string> specs = split_list(o.prefetch);
    if (specs.empty()) throw Error("--prefetch", "give at least one prefetcher (none, stride:8, nasp:8:64, ...)");
    mem::RunOptions ro;
    ro.mapping = mem::parse_page_mapping(o.mapping);
    ro.threads = o.threads;
    ro.nodes = o.nodes;
    if (o.thread_mapping == "contiguous") ro.thread_mapping = MappingKind::contiguous;
    else if (o.thread_mapping == "scatter") ro.thread_mapping = MappingKind::scatter;
    else throw Error("--thread-mapping", fmt::format("'{}': expected contiguous or scatter", o.thread_mapping));
    std::vector<mem::PrefetchSpec> parsed;
    for (const std::string& s : specs) parsed.push_back(mem::parse_prefetch(s));
    // Before simulating, which may take minutes: python3, the package,
    // matplotlib and a writable --plot file must be there.
    std::optional<PythonPackage> plotter;
    if (!o.plot.empty()) {
        plotter = find_python_package("--plot");
        run_python_module(*plotter, "--plot", "memsim_plot", {"--check", o.plot});
    }
    std::vector<mem::WorkloadResult> results;
    for (const mem::PrefetchSpec& ps : parsed) {
        ro.prefetch = ps;
        results.push_back(mem::run_workload(*w, p, ro));
    }
    const double base = results.front().measured_s;
    const mem::HierarchyPreset used = w->adapt(p);
    const nlohmann::json doc = memory_document(o, used, *w, traced, ro, results, base);
    if (o.json) fmt::print("{}\n", doc.dump(2));
    else if (o.csv) print_csv(used, *w, results, base);
    else print_table(o, used, *w, ro, results, base);
    if (plotter) {
        // The module reads the document from a file. The plot comes after
        // the output above, so a failed plot still leaves the figures printed.
        std::fflush(stdout);
        const vm::TempDir tmp("numaware-plot");
        const std::string path = tmp.path() + "/sim-memory.json";
        vm::write_file(path, doc.dump());
        run_python_module(*plotter, "--plot", "memsim_plot", {path, o.plot});
    }
}

}  // namespace

void add_sim_memory_command(CLI::App& sim_cmd) {
    auto o = std::make_shared<SimMemoryOptions>();
    CLI::App* cmd = sim_cmd.add_subcommand(
        "memory", "Simulate a workload on a multi-socket cache hierarchy under prefetchers (NASP among them)");
    cmd->add_option("--preset", o->preset,
                    fmt::format("{} (NAME:S: the first S sockets)", fmt::join(mem::preset_names(), ", ")))
        ->capture_default_str();
    cmd->add_option("--machine", o->machine,
                    "Simulate this machine with the preset's cores and caches: a named model (bullion-s16:8, "
                    "epyc-nps4-2s, ...), live, an hwloc XML or JSON file, or a synthetic description; its nodes are "
                    "the sockets (docs/SIMULATOR.md)");
    CLI::Option* workload =
        cmd->add_option("--workload", o->workload,
                        "stream[:MIB], chase:BYTES, numa-micro[:MIB], gups[:MIB] (random updates), "
                        "trmv[:MIB] (triangular matrix-vector product), ihist[:MIB] (integral histogram), "
                        "jacobi|gauss-seidel|red-black[:MIB] (the task applications' stencils), cholesky|qr[:MIB] (tiled factorisations), "
                        "a NAS kernel cg|mg|ft|is|lu|bt|sp|ep[:S|W|A] "
                        "(class S tiny, W NPB's class W sizes, A the default) or a Rodinia-like kernel "
                        "bfs|hotspot|kmeans|lud|nw|pathfinder|streamcluster|cfd[:S|W] (S tiny, W the default, "
                        "31-50 MiB); docs/SIMULATOR.md")
            ->capture_default_str();
    CLI::Option* trace = cmd->add_option("--trace", o->trace,
                                         "Replay a recorded trace instead of a workload: numaware's (numaware trace "
                                         "record) or ChampSim's (.xz)");
    trace->excludes(workload);
    cmd->add_option("--trace-format", o->trace_format, "auto (by content and the .xz name), numaware, champsim")
        ->capture_default_str()
        ->needs(trace);
    cmd->add_option("--prefetch", o->prefetch,
                    "Comma list, one run each, the first is the baseline: none, next-line, stride:K, "
                    "nasp:K_L1:K_REM, multilevel:K_L1:K, ampm, na-ampm:K_L1:K_REM, bop, intel:MASK")
        ->capture_default_str();
    cmd->add_option("--mapping", o->mapping, "Page homes: first-touch, interleave, bind:N, local, remote, locality, balance (docs/SIMULATOR.md)")->capture_default_str();
    cmd->add_option("--threads", o->threads, "Simulated threads (0: the workload's default)")->capture_default_str();
    cmd->add_option("--thread-mapping", o->thread_mapping, "contiguous|scatter")->capture_default_str();
    cmd->add_option("--nodes", o->nodes, "The team on the first K nodes of the preset (0: all)")->capture_default_str();
    cmd->add_flag("--json", o->json, "Print one JSON document: label, preset, parameters, sources, runs");
    cmd->add_flag("--csv", o->csv, "Print one CSV row per prefetcher (after a '#' line naming the preset)")->excludes("--json");
    cmd->add_option("--plot", o->plot,
                    "Also write a PNG of the speedup and the bytes moved per prefetcher (numaware's Python package "
                    "and matplotlib: scripts/bootstrap; docs/SIMULATOR.md)");
    cmd->footer("Example: numaware sim memory --preset thesis-4s --workload numa-micro --prefetch none,nasp:0:128\n"
                "         numaware sim memory --trace py.nwt --prefetch none,stride:8 --json\n"
                "         numaware sim memory --workload cg:S --prefetch none,stride:8,nasp:8:64 --plot cg.png");
    cmd->add_flag("--list-presets", o->list_presets,
                  "Print every preset's name, sockets and cores per socket (with --json: one document) and exit");
    cmd->callback([o] {
        if (o->list_presets) return list_presets(o->json);
        sim_memory(*o);
    });
}

}  // namespace numaware::cli
