// tools/cli/cmd_latency.cpp — `numaware latency`: measure the per-cache-line
// access latency of a region from each CPU, save it as a latency database,
// load one back and report what the latency-aware allocator would do.
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "numaware/error.hpp"
#include "numaware/latency_blocks.hpp"
#include "numaware/machine.hpp"
#include "numaware/placement.hpp"
#include "numaware/team.hpp"
#include "os/os.hpp"
#include "tools/cli/commands.hpp"

namespace numaware::cli {

namespace {

struct MeasureOptions {
    std::string cpus;
    std::string size = "1M";
    unsigned repetitions = 5;
    unsigned loads = 16;
    std::string policy;
    std::string save;
    double noise_factor = default_noise_factor;
    bool validate = false;
    bool json = false;
};

struct ReportOptions {
    std::string file;
    double noise_factor = default_noise_factor;
    bool json = false;
};

// An anonymous mapping that is unmapped on every exit path.
class Region {
public:
    explicit Region(std::size_t bytes) : bytes_(bytes) {
        void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw Error("--size", fmt::format("cannot map {} bytes: {}", bytes, errno_name(errno)), errno);
        data_ = static_cast<std::byte*>(p);
    }
    ~Region() { ::munmap(data_, bytes_); }
    Region(const Region&) = delete;
    Region& operator=(const Region&) = delete;
    std::span<std::byte> span() const { return {data_, bytes_}; }

private:
    std::byte* data_ = nullptr;
    std::size_t bytes_;
};

// Mean measured latency of the first `n` blocks the allocator serves to
// each CPU: shows the allocator handing out that CPU's fast blocks.
struct ServedSample {
    unsigned cpu;
    std::size_t blocks;
    double mean_ns;
};

std::vector<ServedSample> sample_allocator(std::span<std::byte> region, const LatencyDatabase& db,
                                           LatencyBlockAllocator& alloc, std::size_t n) {
    std::vector<ServedSample> out;
    for (std::size_t c = 0; c < db.cpus.size(); ++c) {
        std::vector<void*> got;
        double sum = 0;
        for (std::size_t i = 0; i < n; ++i) {
            void* p = alloc.allocate(latency_block_bytes, db.cpus[c]);
            if (p == nullptr) break;
            got.push_back(p);
            sum += db.latency_ns[c][static_cast<std::size_t>(static_cast<std::byte*>(p) - region.data()) / db.line_bytes];
        }
        for (void* p : got) alloc.deallocate(p);
        out.push_back({db.cpus[c], got.size(), got.empty() ? 0 : sum / static_cast<double>(got.size())});
    }
    return out;
}

// A second, independent measurement of the same region, read through the
// allocator's lists: if the first measurement's ranking was only noise,
// a CPU's fast list re-measures no faster than the ordinary blocks.
struct Validation {
    unsigned cpu;
    double fast_list_ns;   // mean re-measured latency of cpu's fast-list blocks
    double ordinary_ns;    // mean re-measured latency of the ordinary blocks
};

std::vector<Validation> validate_lists(std::span<std::byte> region, const LatencyDatabase& again,
                                       const LatencyBlockAllocator& alloc) {
    std::vector<Validation> out;
    for (std::size_t c = 0; c < again.cpus.size(); ++c) {
        double fast = 0, ordinary = 0;
        std::size_t nf = 0, no = 0;
        for (std::size_t b = 0; b < again.blocks(); ++b) {
            const int owner = alloc.block_owner_cpu(region.data() + b * again.line_bytes);
            if (owner == static_cast<int>(again.cpus[c])) {
                fast += again.latency_ns[c][b];
                ++nf;
            } else if (owner < 0) {
                ordinary += again.latency_ns[c][b];
                ++no;
            }
        }
        out.push_back({again.cpus[c], nf == 0 ? 0 : fast / static_cast<double>(nf),
                       no == 0 ? 0 : ordinary / static_cast<double>(no)});
    }
    return out;
}

void report(const LatencyDatabase& db, const LatencyPlan& plan, const std::string& status,
            const std::vector<ServedSample>& served, const std::vector<Validation>& validation, bool json,
            const std::string& command) {
    if (json) {
        nlohmann::json j;
        j["region_bytes"] = db.region_bytes;
        j["line_bytes"] = db.line_bytes;
        j["blocks"] = db.blocks();
        j["repetitions"] = db.repetitions;
        j["loads_per_sample"] = db.loads_per_sample;
        j["physical_frames"] = !db.frames.empty();
        j["frames_note"] = db.frames_note;
        if (!db.frames.empty()) {
            std::unordered_set<std::uint64_t> distinct(db.frames.begin(), db.frames.end());
            j["distinct_frames"] = distinct.size();
        }
        j["noise_factor"] = plan.noise_factor;
        j["non_uniform"] = plan.non_uniform;
        j["diagnostic"] = plan.diagnostic;
        if (!status.empty()) j["allocator_status"] = status;
        j["cpus"] = nlohmann::json::array();
        for (const auto& r : plan.per_cpu) {
            nlohmann::json c;
            c["cpu"] = r.cpu;
            c["min_ns"] = r.min_ns;
            c["median_ns"] = r.median_ns;
            c["max_ns"] = r.max_ns;
            c["fast_quartile_ns"] = r.fast_quartile_ns;
            c["slow_quartile_ns"] = r.slow_quartile_ns;
            c["spread_ns"] = r.spread_ns;
            c["noise_ns"] = r.noise_ns;
            c["non_uniform"] = r.non_uniform;
            c["fastest_blocks"] = std::vector<std::uint32_t>(
                r.fastest_first.begin(), r.fastest_first.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(8, r.fastest_first.size())));
            if (plan.per_cpu.size() > 1) {
                nlohmann::json ov = nlohmann::json::object();
                const std::size_t a = j["cpus"].size();
                for (std::size_t b = 0; b < plan.per_cpu.size(); ++b)
                    if (b != a) ov[std::to_string(plan.per_cpu[b].cpu)] = plan.fast_overlap[a][b];
                c["fast_quartile_overlap"] = ov;
            }
            j["cpus"].push_back(c);
        }
        j["served"] = nlohmann::json::array();
        for (const auto& s : served)
            j["served"].push_back({{"cpu", s.cpu}, {"blocks", s.blocks}, {"mean_ns", s.mean_ns}});
        j["validation"] = nlohmann::json::array();
        for (const auto& v : validation)
            j["validation"].push_back(
                {{"cpu", v.cpu}, {"fast_list_ns", v.fast_list_ns}, {"ordinary_ns", v.ordinary_ns}});
        j["command"] = command;
        fmt::print("{}\n", j.dump(2));
        return;
    }
    fmt::print("region {} B: {} blocks of {} B, {} repetitions x {} flushed dependent loads per sample\n",
               db.region_bytes, db.blocks(), db.line_bytes, db.repetitions, db.loads_per_sample);
    if (db.frames.empty()) {
        fmt::print("physical frames: unknown ({})\n", db.frames_note);
    } else {
        std::unordered_set<std::uint64_t> distinct(db.frames.begin(), db.frames.end());
        fmt::print("physical frames: {} pages, {} distinct frames, first pfn {:#x}\n", db.frames.size(),
                   distinct.size(), db.frames.front());
    }
    fmt::print("\n{:>4} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}  {}\n", "cpu", "min ns", "median", "max",
               "fast 25%", "slow 25%", "spread", "noise", "non-uniform");
    for (const auto& r : plan.per_cpu)
        fmt::print("{:>4} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.2f}  {}\n", r.cpu, r.min_ns,
                   r.median_ns, r.max_ns, r.fast_quartile_ns, r.slow_quartile_ns, r.spread_ns, r.noise_ns,
                   r.non_uniform ? "yes" : "no");
    if (plan.per_cpu.size() > 1) {
        fmt::print("\nfastest-quarter overlap (0.25 = unrelated rankings):");
        for (std::size_t a = 0; a < plan.per_cpu.size(); ++a)
            for (std::size_t b = a + 1; b < plan.per_cpu.size(); ++b)
                fmt::print(" cpu{}/cpu{} {:.2f}", plan.per_cpu[a].cpu, plan.per_cpu[b].cpu,
                           plan.fast_overlap[a][b]);
        fmt::print("\n");
    }
    fmt::print("\n{}\n", plan.diagnostic);
    if (!status.empty()) fmt::print("allocator: {}\n", status);
    for (const auto& s : served)
        fmt::print("  first {} blocks served to cpu {}: mean {:.1f} ns (that CPU's median {:.1f} ns)\n", s.blocks,
                   s.cpu, s.mean_ns,
                   std::find_if(plan.per_cpu.begin(), plan.per_cpu.end(), [&](const auto& r) { return r.cpu == s.cpu; })
                       ->median_ns);
    if (!validation.empty()) fmt::print("re-measured (independent second pass):\n");
    for (const auto& v : validation)
        fmt::print("  cpu {}: its fast-list blocks {:.1f} ns, ordinary blocks {:.1f} ns ({:+.1f}%)\n", v.cpu,
                   v.fast_list_ns, v.ordinary_ns,
                   v.ordinary_ns > 0 ? 100.0 * (v.fast_list_ns - v.ordinary_ns) / v.ordinary_ns : 0.0);
}

void run_measure(const MeasureOptions& o) {
    os::Os& os = os::linux_os();
    const std::uint64_t size = parse_size(o.size, "--size");
    LatencyMeasureOptions mo;
    if (!o.cpus.empty()) mo.cpus = parse_cpu_list(o.cpus, "--cpus");
    mo.repetitions = o.repetitions;
    mo.loads_per_sample = o.loads;
    Region region(static_cast<std::size_t>(size));
    if (!o.policy.empty()) {
        const Machine machine = Machine::from_live();
        const PlanOptions po = plan_options_for(os);
        const PlacementPlan p = plan(parse_policy(o.policy, machine), region.span().data(), region.span().size(), machine, po);
        apply(region.span().data(), region.span().size(), p, os);
    }
    const LatencyDatabase db = measure_block_latencies(region.span(), mo, os);
    if (!o.save.empty()) save_latency_database(db, o.save);
    LatencyBlockAllocator alloc(region.span(), db, {.noise_factor = o.noise_factor});
    const auto served = sample_allocator(region.span(), db, alloc, 64);
    std::vector<Validation> validation;
    if (o.validate) validation = validate_lists(region.span(), measure_block_latencies(region.span(), mo, os), alloc);
    std::string command = "numaware latency measure --size " + o.size + " --repetitions " +
                          std::to_string(o.repetitions) + " --loads " + std::to_string(o.loads);
    if (!o.cpus.empty()) command += " --cpus " + o.cpus;
    if (o.validate) command += " --validate";
    report(db, alloc.plan(), alloc.status(), served, validation, o.json, command);
    if (!o.save.empty() && !o.json) fmt::print("saved to {}\n", o.save);
}

void run_report(const ReportOptions& o) {
    const LatencyDatabase db = load_latency_database(o.file);
    const LatencyPlan plan = plan_latency_blocks(db, o.noise_factor);
    report(db, plan, "", {}, {}, o.json, "numaware latency report " + o.file);
}

}  // namespace

void add_latency_command(CLI::App& app) {
    CLI::App* cmd = app.add_subcommand(
        "latency", "Per-cache-line access latency from each CPU, and the latency-aware block allocator's view of it");
    cmd->require_subcommand(1);
    cmd->footer("Example: numaware latency measure --cpus 0-1 --size 1M --save lat.json && numaware latency report lat.json");

    auto mo = std::make_shared<MeasureOptions>();
    CLI::App* m = cmd->add_subcommand("measure", "Measure every 64 B block of a fresh region from each CPU");
    m->add_option("--cpus", mo->cpus, "CPUs to measure from, cpulist syntax (default: this process's CPUs)");
    m->add_option("--size", mo->size, "Region size, whole pages, e.g. 1M (default 1M, at most 64M)");
    m->add_option("--repetitions", mo->repetitions, "Samples per block and CPU; the median is kept (default 5, >= 3)");
    m->add_option("--loads", mo->loads, "Flushed dependent loads timed per sample (default 16)");
    m->add_option("--policy", mo->policy, "Place the region first, e.g. bind:0 (default: first touch)");
    m->add_option("--save", mo->save, "Write the latency database (JSON) to this file");
    m->add_option("--noise-factor", mo->noise_factor,
                  "Non-uniform when the quartile spread exceeds this many noise widths (default 3)");
    m->add_flag("--validate", mo->validate,
                "Measure the region a second time and compare each CPU's fast-list blocks with the ordinary ones");
    m->add_flag("--json", mo->json, "Machine-readable output");
    m->footer("Example: numaware latency measure --cpus 0,1 --size 1M --repetitions 5 --validate --save lat.json");
    m->callback([mo] { run_measure(*mo); });

    auto ro = std::make_shared<ReportOptions>();
    CLI::App* r = cmd->add_subcommand("report", "Load a saved latency database and report on it");
    r->alias("load");
    r->add_option("FILE", ro->file, "A database written by `numaware latency measure --save`")->required();
    r->add_option("--noise-factor", ro->noise_factor,
                  "Non-uniform when the quartile spread exceeds this many noise widths (default 3)");
    r->add_flag("--json", ro->json, "Machine-readable output");
    r->footer("Example: numaware latency report lat.json --json");
    r->callback([ro] { run_report(*ro); });
}

}  // namespace numaware::cli
