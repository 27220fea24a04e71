// bench/tasks/main.cpp — numaware_bench_tasks: the task runtime's overhead
// against oneTBB and libgomp, every implementation in the same process and
// the same run, ratios reported.
//
//   numaware_bench_tasks [BENCH...] [options]
//     BENCH       spawn | wavefront | jacobi | gauss-seidel | all (default all)
//     --reps N          timed runs per implementation, median reported (default 5)
//     --warmup N        untimed runs per implementation first (default 1)
//     --threads T       workers of every runtime (default 2)
//     --tasks N         spawn: empty tasks (default 1000000)
//     --n N             wavefront: grid side, N*N tasks (default 1000)
//     --stencil-n N     jacobi/gauss-seidel: grid side (default 2048)
//     --block B         jacobi: rows per block (default 32); gauss-seidel: tile side (default 128)
//     --iterations I    jacobi/gauss-seidel: sweeps (default 60 / 15)
//     --impls LIST      comma list of implementations to run (default: all of each bench)
//     --machine SPEC    numaware's machine: a Machine spec or "live" (default: T one-CPU
//                       nodes, so the policies see T nodes; rank r runs on CPU r)
//     --kernel-homes    numaware asks the kernel for regions' homes (default off: homes
//                       follow the first writer's node, see RuntimeOptions)
//     --steal-delay-tasks D  numaware LQ, DEP, RIP: cross-node steal delay in mean task
//                       durations (default: PolicyOptions's)
//     --no-pin-peers    leave oneTBB's and libgomp's threads unpinned (default: thread k
//                       on the k-th allowed CPU during a run, as numaware pins rank k)
//     --settle-ms M     pause between runs so the previous runtime's spinning
//                       threads go to sleep (default 20)
//     --json FILE       also write every figure (all repetitions) as JSON
//
// Implementations: numaware-dfifo, numaware-lq, numaware-dep (spawn: all
// three; other benches: dfifo and dep), tbb (oneTBB), gomp (libgomp), and
// for spawn gomp-deferred (libgomp kept below its inline-execution
// throttle, see omp_spawn_deferred in bench_tasks.hpp).
// Every run is checked against a serial reference (wavefront and stencils:
// checksum of the grid, which must match exactly; spawn: numaware's count
// of tasks run); a mismatch stops the program with exit status 1 before
// anything is reported.
//
// Output: one line per implementation,
//   result bench=B impl=I threads=T tasks=N reps=R median_s=S min_s=S max_s=S mtasks_per_s=X cpu_s=C checksum=K
// (cpu_s: median process CPU time of a run, user + system, including the
// untimed reset and check around it; on a shared machine it shows how
// much of the CPUs each implementation actually got)
// then one line per (numaware policy, peer) pair,
//   ratio bench=B numaware=I peer=P value=V
// where V = peer median seconds / numaware median seconds (> 1: numaware is faster).
#include <sys/resource.h>
#include <sys/utsname.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench_tasks.hpp"
#include "common/stats.hpp"

namespace {

using namespace bench::tasks;

struct Options {
    std::vector<std::string> benches;
    unsigned reps = 5;
    unsigned warmup = 1;
    unsigned threads = 2;
    std::uint64_t tasks = 1'000'000;
    std::size_t wave_n = 1000;
    std::size_t stencil_n = 0;      // 0: per-kind default
    std::size_t block = 0;
    unsigned iterations = 0;
    std::vector<std::string> impls;   // empty: all
    std::string machine;              // empty: T one-CPU nodes
    bool kernel_homes = false;
    double steal_delay_tasks = -1;   // < 0: the policies' default
    bool pin_peers = true;
    unsigned settle_ms = 20;
    std::string json;
};

const std::vector<std::string> all_benches{"spawn", "wavefront", "jacobi", "gauss-seidel"};

// CLI11 does the parsing: a bad value or unknown flag prints one line and
// exits with status 2 (CLI11's own exit code for parse errors is kept non-zero).
Options parse(int argc, char** argv) {
    Options o;
    CLI::App app{"numaware_bench_tasks: task-runtime overhead against oneTBB and libgomp"};
    app.footer("example: numaware_bench_tasks spawn wavefront --reps 5 --threads 2 --json out.json");
    std::vector<std::string> benches;
    app.add_option("bench", benches, "spawn | wavefront | jacobi | gauss-seidel | all (default all)")
        ->check(CLI::IsMember({"spawn", "wavefront", "jacobi", "gauss-seidel", "all"}));
    app.add_option("--reps", o.reps, "timed runs per implementation")->check(CLI::Range(1U, 1000U));
    app.add_option("--warmup", o.warmup, "untimed runs first")->check(CLI::Range(0U, 100U));
    app.add_option("--threads", o.threads, "workers of every runtime")->check(CLI::Range(1U, 1024U));
    app.add_option("--tasks", o.tasks, "spawn: empty tasks")->check(CLI::Range(std::uint64_t{1}, std::uint64_t{100'000'000}));
    app.add_option("--n", o.wave_n, "wavefront: grid side")->check(CLI::Range(std::size_t{1}, std::size_t{10'000}));
    app.add_option("--stencil-n", o.stencil_n, "jacobi/gauss-seidel: grid side")
        ->check(CLI::Range(std::size_t{1}, std::size_t{65'536}));
    app.add_option("--block", o.block, "rows per block / tile side")->check(CLI::Range(std::size_t{1}, std::size_t{65'536}));
    app.add_option("--iterations", o.iterations, "sweeps")->check(CLI::Range(1U, 100'000U));
    app.add_option("--impls", o.impls, "implementations to run")->delimiter(',');
    app.add_option("--machine", o.machine, "numaware's machine: a spec or live");
    app.add_flag("--kernel-homes", o.kernel_homes, "ask the kernel for regions' homes");
    app.add_option("--steal-delay-tasks", o.steal_delay_tasks,
                   "numaware LQ, DEP, RIP: cross-node steal delay in mean task durations (negative: the default)");
    bool no_pin = false;
    app.add_flag("--no-pin-peers", no_pin, "leave oneTBB's and libgomp's threads unpinned");
    app.add_option("--settle-ms", o.settle_ms, "pause between runs")->check(CLI::Range(0U, 10'000U));
    app.add_option("--json", o.json, "also write every figure as JSON");
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        std::exit(app.exit(e));
    } catch (const CLI::ParseError& e) {
        std::fprintf(stderr, "numaware_bench_tasks: %s\n", e.what());
        std::exit(2);
    }
    o.pin_peers = !no_pin;
    for (const std::string& b : benches) {
        if (b == "all") {
            o.benches = all_benches;
            break;
        }
        if (std::find(o.benches.begin(), o.benches.end(), b) == o.benches.end()) o.benches.push_back(b);
    }
    if (o.benches.empty()) o.benches = all_benches;
    return o;
}

std::string default_machine(unsigned threads) {
    // T nodes of one CPU each, distance 10 local and 21 remote.
    std::string d;
    for (unsigned r = 0; r < threads; ++r) {
        if (r) d += '/';
        for (unsigned c = 0; c < threads; ++c) d += (c ? "," : "") + std::string(r == c ? "10" : "21");
    }
    return "nodes=" + std::to_string(threads) + " cpus-per-node=1 mem-per-node=512M distances=" + d;
}

using numaware::bench::median;

struct Impl {
    std::string name;
    std::function<Outcome()> run;   // one run, from its initial state
    std::vector<double> seconds;
    std::vector<double> cpu_seconds;   // process CPU time (user + system) of each timed run
    std::uint64_t tasks = 0;
    double checksum = 0;
};

struct Bench {
    std::string name;
    nlohmann::json params;
    double reference = 0;            // the checksum every run must reproduce
    std::vector<Impl> impls;
};

void add(Bench& b, std::string name, std::function<Outcome()> run) {
    Impl impl;
    impl.name = std::move(name);
    impl.run = std::move(run);
    b.impls.push_back(std::move(impl));
}

bool wanted(const Options& o, const std::string& impl) {
    return o.impls.empty() || std::find(o.impls.begin(), o.impls.end(), impl) != o.impls.end();
}

bool is_numaware(const std::string& impl) { return impl.rfind("numaware-", 0) == 0; }

std::string host_description() {
    std::string model;
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);) {
        if (line.rfind("model name", 0) == 0) {
            model = line.substr(line.find(':') + 2);
            break;
        }
    }
    utsname u{};
    ::uname(&u);
    std::string load;
    std::ifstream("/proc/loadavg") >> load;
    return std::to_string(std::thread::hardware_concurrency()) + " CPUs, " + model + ", kernel " + u.release +
           ", load average at start " + load;
}

// Runs every implementation of `b`: warm-up, then the repetitions with the
// implementations in turn (the first one rotates every repetition), so a
// burst of load from elsewhere on a shared machine hits all of them alike.
void measure(const Options& o, Bench& b) {
    const auto settle = [&] { std::this_thread::sleep_for(std::chrono::milliseconds(o.settle_ms)); };
    const auto cpu_now = [] {
        rusage u{};
        ::getrusage(RUSAGE_SELF, &u);
        return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
               static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
    };
    const auto checked = [&](Impl& impl, double* cpu) {
        const double c0 = cpu_now();
        const Outcome out = impl.run();
        if (cpu) *cpu = cpu_now() - c0;
        if (out.checksum != b.reference) {
            std::fprintf(stderr, "numaware_bench_tasks: %s: %s produced checksum %.17g, the serial reference is %.17g\n",
                         b.name.c_str(), impl.name.c_str(), out.checksum, b.reference);
            std::exit(1);
        }
        impl.tasks = out.tasks;
        impl.checksum = out.checksum;
        settle();
        return out;
    };
    for (unsigned w = 0; w < o.warmup; ++w)
        for (Impl& impl : b.impls) checked(impl, nullptr);
    const std::size_t k = b.impls.size();
    for (unsigned r = 0; r < o.reps; ++r)
        for (std::size_t q = 0; q < k; ++q) {
            Impl& impl = b.impls[(q + r) % k];
            double cpu = 0;
            impl.seconds.push_back(checked(impl, &cpu).seconds);
            impl.cpu_seconds.push_back(cpu);
        }
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    try {
        const std::string spec = o.machine.empty() ? default_machine(o.threads) : o.machine;
        set_peer_pinning(o.pin_peers);
        NumawareRunner nw(o.threads, spec, o.kernel_homes, o.steal_delay_tasks);
        const unsigned T = o.threads;
        std::vector<Bench> benches;

        // The buffers outlive the loop that measures them.
        std::vector<double> wave_grid;
        std::vector<std::unique_ptr<StencilGrids>> stencil_grids;
        std::vector<std::unique_ptr<StencilProblem>> stencil_problems;

        for (const std::string& name : o.benches) {
            Bench b;
            b.name = name;
            std::vector<std::string> policies{"dfifo", "dep"};
            if (name == "spawn") {
                const SpawnProblem p{o.tasks};
                b.params = {{"tasks", p.tasks}};
                b.reference = static_cast<double>(p.tasks);
                policies = {"dfifo", "lq", "dep"};
                for (const std::string& pol : policies)
                    add(b, "numaware-" + pol, [&nw, pol, p] { return nw.spawn(pol, p); });
                // The peers do not count their tasks; their checksum is the
                // count spawned (their own runtimes are trusted to run them).
                add(b, "tbb", [T, p] { Outcome r = tbb_spawn(T, p); r.checksum = static_cast<double>(r.tasks); return r; });
                add(b, "gomp", [T, p] { Outcome r = omp_spawn(T, p); r.checksum = static_cast<double>(r.tasks); return r; });
                add(b, "gomp-deferred", [T, p] { Outcome r = omp_spawn_deferred(T, p); r.checksum = static_cast<double>(r.tasks); return r; });
            } else if (name == "wavefront") {
                const WavefrontProblem p{o.wave_n};
                b.params = {{"n", p.n}};
                wave_grid.assign(p.n * p.n, 0.0);
                b.reference = wavefront_serial(wave_grid.data(), p.n);
                double* grid = wave_grid.data();
                const std::size_t cells = p.n * p.n;
                // Each run starts from a zeroed grid (untimed), so a task that
                // ran before its inputs were ready would change the sum.
                auto wrap = [grid, cells](std::function<Outcome()> f) {
                    return [grid, cells, f] {
                        std::fill(grid, grid + cells, 0.0);
                        Outcome r = f();
                        r.checksum = grid_checksum(grid, cells);
                        return r;
                    };
                };
                for (const std::string& pol : policies)
                    add(b, "numaware-" + pol, wrap([&nw, pol, p, grid] { return nw.wavefront(pol, p, grid); }));
                add(b, "tbb", wrap([T, p, grid] { return tbb_wavefront(T, p, grid); }));
                add(b, "gomp", wrap([T, p, grid] { return omp_wavefront(T, p, grid); }));
            } else {
                auto prob = std::make_unique<StencilProblem>();
                prob->kind = name == "jacobi" ? Stencil::jacobi : Stencil::gauss_seidel;
                prob->n = o.stencil_n ? o.stencil_n : 2048;
                prob->block = o.block ? o.block : (prob->kind == Stencil::jacobi ? 32 : 128);
                prob->iterations = o.iterations ? o.iterations : (prob->kind == Stencil::jacobi ? 60 : 15);
                check(*prob);
                auto grids = std::make_unique<StencilGrids>(*prob);
                const StencilProblem* p = prob.get();
                StencilGrids* g = grids.get();
                b.params = {{"n", p->n}, {"block", p->block}, {"iterations", p->iterations}, {"tasks_per_sweep", p->blocks()}};
                b.reference = stencil_serial(*p, *g);
                auto wrap = [g](std::function<Outcome()> f) {
                    return [g, f] {
                        g->reset();
                        Outcome r = f();
                        r.checksum = g->checksum();
                        return r;
                    };
                };
                for (const std::string& pol : policies)
                    add(b, "numaware-" + pol, wrap([&nw, pol, p, g] { return nw.stencil(pol, *p, *g); }));
                add(b, "tbb", wrap([T, p, g] { return tbb_stencil(T, *p, *g); }));
                add(b, "gomp", wrap([T, p, g] { return omp_stencil(T, *p, *g); }));
                stencil_problems.push_back(std::move(prob));
                stencil_grids.push_back(std::move(grids));
            }
            std::erase_if(b.impls, [&](const Impl& impl) { return !wanted(o, impl.name); });
            if (b.impls.empty()) {
                std::fprintf(stderr, "numaware_bench_tasks: --impls leaves nothing to run for %s\n", name.c_str());
                return 2;
            }
            benches.push_back(std::move(b));
        }

        char date[32];
        const std::time_t now = std::time(nullptr);
        std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
        const std::string host = host_description();
        std::printf("# numaware_bench_tasks %s threads=%u reps=%u warmup=%u machine=\"%s\" kernel_homes=%d pin_peers=%d\n"
                    "# host: %s\n",
                    date, T, o.reps, o.warmup, spec.c_str(), o.kernel_homes ? 1 : 0, o.pin_peers ? 1 : 0, host.c_str());
        std::fflush(stdout);

        nlohmann::json doc = {{"date", date},          {"host", host},     {"threads", T},
                              {"reps", o.reps},        {"warmup", o.warmup}, {"numaware_machine", spec},
                              {"kernel_homes", o.kernel_homes}, {"pin_peers", o.pin_peers}, {"benchmarks", nlohmann::json::array()}};
        for (Bench& b : benches) {
            measure(o, b);
            nlohmann::json jb = {{"name", b.name}, {"params", b.params}, {"reference_checksum", b.reference},
                                 {"results", nlohmann::json::array()}, {"ratios", nlohmann::json::array()}};
            std::map<std::string, double> med;
            for (const Impl& impl : b.impls) {
                const double m = median(impl.seconds);
                med[impl.name] = m;
                const double mmin = *std::min_element(impl.seconds.begin(), impl.seconds.end());
                const double mmax = *std::max_element(impl.seconds.begin(), impl.seconds.end());
                const double rate = static_cast<double>(impl.tasks) / m / 1e6;
                const double cpu = median(impl.cpu_seconds);
                std::printf("result bench=%s impl=%s threads=%u tasks=%llu reps=%zu median_s=%.6f min_s=%.6f max_s=%.6f "
                            "mtasks_per_s=%.3f cpu_s=%.6f checksum=%.17g\n",
                            b.name.c_str(), impl.name.c_str(), T, static_cast<unsigned long long>(impl.tasks),
                            impl.seconds.size(), m, mmin, mmax, rate, cpu, impl.checksum);
                jb["results"].push_back({{"impl", impl.name}, {"tasks", impl.tasks}, {"seconds", impl.seconds},
                                         {"cpu_seconds", impl.cpu_seconds}, {"median_s", m}, {"min_s", mmin},
                                         {"max_s", mmax}, {"mtasks_per_s", rate}, {"median_cpu_s", cpu},
                                         {"checksum", impl.checksum}});
            }
            for (const Impl& a : b.impls) {
                if (!is_numaware(a.name)) continue;
                for (const Impl& peer : b.impls) {
                    if (is_numaware(peer.name)) continue;
                    const double v = med[peer.name] / med[a.name];
                    std::printf("ratio bench=%s numaware=%s peer=%s value=%.3f\n", b.name.c_str(), a.name.c_str(),
                                peer.name.c_str(), v);
                    jb["ratios"].push_back({{"numaware", a.name}, {"peer", peer.name}, {"value", v}});
                }
            }
            std::fflush(stdout);
            doc["benchmarks"].push_back(jb);
        }
        if (!o.json.empty()) {
            std::ofstream f(o.json);
            f << doc.dump(2) << '\n';
            if (!f) throw std::runtime_error("cannot write " + o.json);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "numaware_bench_tasks: %s\n", e.what());
        return 1;
    }
    return 0;
}
