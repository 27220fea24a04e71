// bench/heap/locality.cpp — the locality proof (the JArena verification
// benchmark), for any allocator.
//
// T threads are pinned one per CPU, round-robin over the CPUs of the nodes
// that have CPUs (8 threads on a 4-node, 2-CPU-per-node machine = 2 threads
// per node). Every round each thread allocates its blocks and writes them;
// after a barrier the pages of every thread's live blocks are looked up with
// move_pages(nodes = NULL) and a page counts as remote when it is not on the
// node of the thread that owns the block; then every thread frees its LEFT
// neighbour's blocks. The next round's allocations are where an allocator
// that caches freed memory in the freeing thread hands out a page that
// belongs to another node. Round 0 is the warm-up; rounds 1..R are reported.
//
// Only malloc/free allocate the blocks, so every allocator is tested the same
// way: through LD_PRELOAD (numaware through libnumaware_malloc.so). The
// program does not know which allocator it runs on; --allocator is a label.
//
// Output: one line per round and block kind, key=value, e.g.
//   locality allocator=glibc kind=big round=1 threads=8 nodes=4 blocks=512 pages=131072 remote=0 absent=0 remote_pct=0.000
// With --expect-zero the exit status is 1 when a reported round had a remote
// (or absent) page.
#include <algorithm>
#include <barrier>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "numaware/error.hpp"
#include "numaware/machine.hpp"
#include "os/os.hpp"
#include "placement/page_locations.hpp"


namespace {

struct Options {
    std::string allocator = "unnamed";
    unsigned threads = 8;
    unsigned rounds = 5;            // reported rounds, after one warm-up round
    unsigned big_blocks = 64;       // per thread
    std::size_t big_bytes = std::size_t{1} << 20;
    std::size_t small_pages = 30000;   // pages of small blocks, all threads together
    std::size_t small_min = 64;
    std::size_t small_max = 4096;
    bool run_big = true;
    bool run_small = true;
    bool expect_zero = false;
};

[[noreturn]] void usage_error(const std::string& what) {
    std::fprintf(stderr, "locality: %s\n", what.c_str());
    std::fprintf(stderr,
                 "usage: locality [--allocator NAME] [--threads T] [--rounds R] [--big-blocks N]\n"
                 "                [--small-pages P] [--kind big|small|both] [--expect-zero]\n"
                 "example: LD_PRELOAD=libjemalloc.so.2 locality --allocator jemalloc --threads 8\n");
    std::exit(2);
}

// CLI11 parses; a bad value or unknown flag is one line on stderr and exit status 2.
Options parse(int argc, char** argv) {
    Options o;
    CLI::App app{"locality: remote pages per allocator, asked of the kernel with move_pages"};
    app.footer("example: LD_PRELOAD=libjemalloc.so.2 locality --allocator jemalloc --threads 8");
    app.add_option("--allocator", o.allocator, "name printed with the results");
    app.add_option("--threads", o.threads, "threads, pinned one per CPU")->check(CLI::Range(1U, 1024U));
    app.add_option("--rounds", o.rounds, "reported rounds after one warm-up")->check(CLI::Range(1U, 1000U));
    app.add_option("--big-blocks", o.big_blocks, "1 MiB blocks per thread")->check(CLI::Range(1U, 4096U));
    app.add_option("--small-pages", o.small_pages, "pages of small blocks, all threads together")
        ->check(CLI::Range(std::size_t{1}, std::size_t{10'000'000}));
    std::string kind = "both";
    app.add_option("--kind", kind, "big | small | both")->check(CLI::IsMember({"big", "small", "both"}));
    app.add_flag("--expect-zero", o.expect_zero, "exit 1 unless every page is local");
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        std::exit(app.exit(e));
    } catch (const CLI::ParseError& e) {
        std::fprintf(stderr, "%s: %s\n", "locality", e.what());
        std::exit(2);
    }
    o.run_small = kind != "big";
    o.run_big = kind != "small";
    return o;
}

struct Block {
    char* p;
    std::size_t bytes;
};

// What a thread owns: its CPU, that CPU's node and its live blocks.
struct Worker {
    unsigned cpu = 0;
    unsigned node = 0;
    std::vector<Block> live;
};

struct Count {
    std::size_t blocks = 0, pages = 0, remote = 0, absent = 0;
};

// Pages (page-aligned addresses) covered by `blocks`, each once.
std::vector<void*> pages_of(const std::vector<Block>& blocks, std::size_t page) {
    std::vector<void*> out;
    for (const Block& b : blocks) {
        const auto first = reinterpret_cast<std::uintptr_t>(b.p) / page;
        const auto last = (reinterpret_cast<std::uintptr_t>(b.p) + b.bytes - 1) / page;
        for (auto pg = first; pg <= last; ++pg) out.push_back(reinterpret_cast<void*>(pg * page));
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

Count count_remote(const Worker& w, numaware::os::Os& os) {
    Count c;
    c.blocks = w.live.size();
    std::vector<void*> pages = pages_of(w.live, os.page_size());
    std::vector<int> status(pages.size(), 0);
    c.pages = pages.size();
    // Every page was written, so one that reads absent is in transit
    // (settled). move_pages may give up part way (EAGAIN); a query is
    // side-effect free, so asking again is safe.
    int rc = 0;
    for (int attempt = 0; attempt < 5; ++attempt) {
        rc = numaware::locate_pages(os, pages.data(), pages.size(), status.data(), numaware::PagesExpected::present);
        if (rc != EAGAIN) break;
    }
    if (rc != 0) throw numaware::Error("move_pages", std::string("query failed: ") + std::strerror(rc));
    for (int s : status) {
        if (s < 0) ++c.absent;   // never touched (or unmapped): reported, never hidden
        else if (static_cast<unsigned>(s) != w.node) ++c.remote;
    }
    return c;
}

void print(const Options& o, const char* kind, unsigned round, unsigned nodes, const Count& c) {
    const double pct = c.pages == 0 ? 0.0 : 100.0 * static_cast<double>(c.remote) / static_cast<double>(c.pages);
    std::printf("locality allocator=%s kind=%s round=%u threads=%u nodes=%u blocks=%zu pages=%zu remote=%zu absent=%zu remote_pct=%.3f\n",
                o.allocator.c_str(), kind, round, o.threads, nodes, c.blocks, c.pages, c.remote, c.absent, pct);
    std::fflush(stdout);
}

// Sizes of one thread's blocks for one round.
std::vector<std::size_t> block_sizes(const Options& o, bool big, std::mt19937_64& rng) {
    std::vector<std::size_t> sizes;
    if (big) {
        sizes.assign(o.big_blocks, o.big_bytes);
        return sizes;
    }
    // Small blocks up to about small_pages / threads pages of requested bytes.
    const std::size_t budget = o.small_pages * 4096 / o.threads;
    std::uniform_int_distribution<std::size_t> dist(o.small_min, o.small_max);
    for (std::size_t total = 0; total < budget;) {
        const std::size_t s = dist(rng);
        sizes.push_back(s);
        total += s;
    }
    return sizes;
}

// One experiment (big or small blocks): warm-up + o.rounds rounds. Returns
// the remote+absent pages seen in the reported rounds.
std::size_t run_kind(const Options& o, bool big, std::vector<Worker>& workers, unsigned nodes,
                     numaware::os::Os& os) {
    const unsigned t_count = o.threads;
    std::vector<Count> counts(t_count);
    std::size_t bad = 0;
    std::barrier sync(static_cast<std::ptrdiff_t>(t_count));
    std::vector<std::thread> threads;
    std::vector<std::string> errors(t_count);
    for (unsigned t = 0; t < t_count; ++t) {
        threads.emplace_back([&, t] {
            Worker& me = workers[t];
            if (int rc = os.set_affinity(0, {me.cpu}); rc != 0)
                errors[t] = "cannot pin thread to CPU " + std::to_string(me.cpu) + ": " + std::strerror(rc);
            std::mt19937_64 rng(0x9e3779b97f4a7c15ULL ^ t);
            for (unsigned round = 0; round <= o.rounds; ++round) {
                for (std::size_t s : block_sizes(o, big, rng)) {
                    auto* p = static_cast<char*>(std::malloc(s));
                    if (p == nullptr) {
                        errors[t] = "malloc(" + std::to_string(s) + ") failed";
                        break;
                    }
                    std::memset(p, static_cast<int>(t + 1), s);   // first touch happens here
                    me.live.push_back({p, s});
                }
                sync.arrive_and_wait();
                if (errors[t].empty()) {
                    try {
                        counts[t] = count_remote(me, os);
                    } catch (const std::exception& e) {
                        errors[t] = e.what();
                    }
                }
                sync.arrive_and_wait();
                if (t == 0) {
                    Count sum;
                    for (const Count& c : counts) {
                        sum.blocks += c.blocks;
                        sum.pages += c.pages;
                        sum.remote += c.remote;
                        sum.absent += c.absent;
                    }
                    if (round > 0) bad += sum.remote + sum.absent;
                    print(o, big ? "big" : "small", round, nodes, sum);
                }
                // Free the left neighbour's blocks: memory goes back to the
                // allocator from a thread (usually) on another node.
                Worker& left = workers[(t + t_count - 1) % t_count];
                // Only this thread touches left.live in this phase.
                for (const Block& b : left.live) std::free(b.p);
                left.live.clear();
                sync.arrive_and_wait();
            }
        });
    }
    for (auto& th : threads) th.join();
    for (unsigned t = 0; t < t_count; ++t)
        if (!errors[t].empty()) throw numaware::Error("thread " + std::to_string(t), errors[t]);
    return bad;
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    try {
        const numaware::Machine m = numaware::Machine::from_live();
        // CPUs in node order so that consecutive threads share a node.
        std::vector<std::pair<unsigned, unsigned>> cpus;   // (cpu, node)
        for (const numaware::Node& n : m.nodes)
            for (unsigned c : n.cpus) cpus.emplace_back(c, n.os_index);
        if (cpus.empty()) throw numaware::Error("machine", "has no CPUs");
        if (o.threads > cpus.size())
            usage_error("--threads " + std::to_string(o.threads) + " exceeds the " + std::to_string(cpus.size()) +
                        " CPUs of this machine (threads are pinned one per CPU)");
        std::vector<Worker> workers(o.threads);
        // Spread the threads evenly: thread t takes CPU t * cpus / threads.
        for (unsigned t = 0; t < o.threads; ++t) {
            const auto& [cpu, node] = cpus[static_cast<std::size_t>(t) * cpus.size() / o.threads];
            workers[t].cpu = cpu;
            workers[t].node = node;
        }
        const auto nodes = static_cast<unsigned>(m.node_count());
        numaware::os::Os& os = numaware::os::linux_os();
        std::size_t bad = 0;
        if (o.run_big) bad += run_kind(o, true, workers, nodes, os);
        if (o.run_small) bad += run_kind(o, false, workers, nodes, os);
        if (o.expect_zero && bad != 0) {
            std::fprintf(stderr, "locality: FAIL: %s had %zu remote or absent pages in the reported rounds\n",
                         o.allocator.c_str(), bad);
            return 1;
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "locality: %s\n", e.what());
        return 1;
    }
}
