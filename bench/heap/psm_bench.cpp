// bench/heap/psm_bench.cpp — numaware's own API measured against malloc in
// the same process: psm_alloc placement versus first-touch placement, and
// the fragmentation pattern through psm_alloc (one arena per owner rank).
//
//   psm_bench place [--threads T] [--blocks N] [--rounds R]
//       T threads pinned one per CPU, each places N x 1 MiB on its own node,
//       both ways, alternating, round after round:
//         first-touch  malloc + write (the kernel puts a page where it is
//                      first written, i.e. on the writer's node)
//         psm_alloc    psm_alloc(HeapOwner::node(my node)) + write
//       then frees them. Round 0 of each way is cold (fresh pages); the
//       others reuse what the allocator kept. Prints, per way, the cold
//       round and the median warm round (wall seconds, all threads).
//   psm_bench frag --size BYTES [--mib M] [--owners N]
//       the pattern of frag_pattern.hpp with owners = team ranks registered
//       with psm_register_team, each with its own arena.
#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/stats.hpp"
#include "frag_pattern.hpp"
#include "numaware/error.hpp"
#include "numaware/heap.hpp"
#include "numaware/machine.hpp"
#include "numaware/team.hpp"
#include "os/os.hpp"


namespace {

using Clock = std::chrono::steady_clock;

struct Options {
    std::string mode;
    unsigned threads = 0;   // 0: one per CPU
    unsigned blocks = 64;
    unsigned rounds = 5;
    std::size_t size = 0;
    std::size_t mib = 32;
    unsigned owners = 2;
};

// CLI11 parses; a bad value or unknown flag is one line on stderr and exit status 2.
Options parse(int argc, char** argv) {
    Options o;
    CLI::App app{"psm_bench: psm_alloc against first-touch placement (place) and fragmentation (frag)"};
    app.footer("example: psm_bench place --threads 2 --blocks 64 --rounds 5");
    app.add_option("mode", o.mode, "place | frag")->required()->check(CLI::IsMember({"place", "frag"}));
    app.add_option("--threads", o.threads, "threads (default one per CPU)")->check(CLI::Range(1U, 1024U));
    app.add_option("--blocks", o.blocks, "blocks per thread")->check(CLI::Range(1U, 4096U));
    app.add_option("--rounds", o.rounds, "rounds")->check(CLI::Range(1U, 1000U));
    app.add_option("--size", o.size, "frag: block size in bytes")->check(CLI::Range(std::size_t{1}, std::size_t{1} << 30));
    app.add_option("--mib", o.mib, "frag: requested MiB per owner")->check(CLI::Range(std::size_t{1}, std::size_t{4096}));
    app.add_option("--owners", o.owners, "frag: owner threads")->check(CLI::Range(1U, 64U));
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        std::exit(app.exit(e));
    } catch (const CLI::ParseError& e) {
        std::fprintf(stderr, "%s: %s\n", "psm_bench", e.what());
        std::exit(2);
    }
    if (o.mode == "frag" && o.size == 0) {
        std::fprintf(stderr, "psm_bench: frag needs --size BYTES\n");
        std::exit(2);
    }
    return o;
}

using numaware::bench::median;

void run_place(const Options& o) {
    const numaware::Machine m = numaware::Machine::from_live();
    const auto cpus = static_cast<unsigned>(m.cpu_count());
    const unsigned threads = o.threads == 0 ? cpus : o.threads;
    // One rank per CPU, spread over the nodes: plan_team refuses to put two
    // threads on one CPU.
    const numaware::TeamLayout layout =
        numaware::plan_team(m, {.threads = threads, .kind = numaware::MappingKind::scatter});
    constexpr std::size_t block = std::size_t{1} << 20;
    enum Way { first_touch = 0, psm = 1 };
    std::vector<double> seconds[2];   // per way, per round
    std::barrier sync(static_cast<std::ptrdiff_t>(threads));
    Clock::time_point start;
    std::vector<std::string> errors(threads);
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            const numaware::RankPlace place = layout.ranks[t];
            if (int rc = numaware::os::linux_os().set_affinity(0, {place.cpu}); rc != 0)
                errors[t] = "cannot pin to CPU " + std::to_string(place.cpu) + ": " + std::strerror(rc);
            std::vector<void*> mine(o.blocks, nullptr);
            for (unsigned round = 0; round < o.rounds; ++round) {
                for (Way way : {first_touch, psm}) {
                    sync.arrive_and_wait();
                    if (t == 0) start = Clock::now();
                    sync.arrive_and_wait();
                    for (auto& p : mine) {
                        try {
                            p = way == psm ? numaware::psm_alloc(block, numaware::HeapOwner::node(place.node))
                                           : std::malloc(block);
                        } catch (const std::exception& e) {
                            errors[t] = e.what();
                        }
                        if (p == nullptr) {
                            if (errors[t].empty()) errors[t] = "malloc(1 MiB) failed";
                            std::fprintf(stderr, "psm_bench: thread %u: %s\n", t, errors[t].c_str());
                            std::exit(1);
                        }
                        std::memset(p, static_cast<int>(round + 1), block);
                    }
                    sync.arrive_and_wait();
                    if (t == 0) seconds[way].push_back(std::chrono::duration<double>(Clock::now() - start).count());
                    for (auto& p : mine) {
                        if (way == psm) numaware::psm_free(p);
                        else std::free(p);
                        p = nullptr;
                    }
                }
            }
        });
    }
    for (auto& th : pool) th.join();
    for (unsigned t = 0; t < threads; ++t)
        if (!errors[t].empty()) throw numaware::Error("thread " + std::to_string(t), errors[t]);
    for (Way way : {first_touch, psm}) {
        const std::vector<double>& s = seconds[way];
        const std::vector<double> warm(s.begin() + 1, s.end());
        std::printf("bench allocator=numaware pattern=place way=%s threads=%u blocks=%u cold_seconds=%.6f warm_seconds=%.6f\n",
                    way == psm ? "psm_alloc" : "first-touch", threads, o.blocks, s.front(), median(warm));
    }
}

void run_frag(const Options& o) {
    // Every owner is a team rank with its own arena, as JArena patches are.
    const numaware::Machine m = numaware::Machine::from_live();
    numaware::TeamLayout layout;
    for (unsigned r = 0; r < o.owners; ++r) {
        const numaware::Node& n = m.nodes[r % m.nodes.size()];
        layout.ranks.push_back({.rank = r, .cpu = n.cpus.empty() ? 0 : n.cpus.front(), .node = n.os_index});
    }
    numaware::psm_register_team(layout);
    const auto r = numaware::bench::run_frag_pattern(
        o.size, o.mib, o.owners,
        [](unsigned owner, std::size_t n) { return numaware::psm_alloc(n, numaware::HeapOwner::rank(owner)); },
        [](void* p) { numaware::psm_free(p); });
    std::printf("bench allocator=numaware-psm pattern=frag size=%zu owners=%u requested_bytes=%.0f peak_rss_growth_bytes=%.0f ratio=%.3f\n",
                o.size, o.owners, r.requested_bytes, r.peak_rss_growth_bytes, r.ratio());
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    try {
        if (o.mode == "place") run_place(o);
        else run_frag(o);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "psm_bench: %s\n", e.what());
        return 1;
    }
    return 0;
}
