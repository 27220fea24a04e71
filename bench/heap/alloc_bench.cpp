// bench/heap/alloc_bench.cpp — allocator throughput and fragmentation, for
// any allocator.
//
// Only malloc/free are called, so each allocator is measured the same way:
// through LD_PRELOAD (numaware through libnumaware_malloc.so). One process
// measures one pattern once; scripts/bench-heap runs every allocator in the
// same run, repeats, takes medians and reports ratios against numaware.
//
// Patterns (one op = one malloc plus one free):
//   single    one thread, random sizes 16-256 B, a ring of 256 live blocks
//   pairs     the same in two threads at once (ops summed)
//   prodcons  one thread allocates, the other frees, via a bounded queue
//   larson    two threads replace random slots of a 1024-block array; every
//             epoch the threads swap arrays, so each frees the other's blocks
//   xfree     one thread allocates 64 B blocks, the other frees them
//             (cross-thread frees; one op = one block made and freed)
//   mixed     two threads, each malloc/free of random sizes 16 B-4 KiB
//             (ring of 256 live blocks per thread, ops summed)
//   large     20 zero-initialised buffers (std::make_unique<char[]>), a
//             random one replaced --replacements times by one of a random
//             5-25 MiB; prints seconds and peak RSS growth / peak live bytes
//   frag      owners (threads) allocate blocks of --size bytes up to
//             --mib MiB each, write them, free every other one and allocate
//             again, three times; prints peak RSS / peak requested bytes
//
// Output, one line: bench allocator=NAME pattern=P ... mops=X (or ratio=X).
#include <atomic>
#include <barrier>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "frag_pattern.hpp"


namespace {

using Clock = std::chrono::steady_clock;

struct Options {
    std::string allocator = "unnamed";
    std::string pattern;
    double seconds = 0.5;
    std::size_t size = 0;      // frag: block size
    std::size_t mib = 32;      // frag: requested MiB per owner
    unsigned owners = 2;       // frag: owner threads
    unsigned replacements = 2000;   // large: buffers replaced
};

// CLI11 parses; a bad value or unknown flag is one line on stderr and exit status 2.
Options parse(int argc, char** argv) {
    Options o;
    CLI::App app{"alloc_bench: allocator throughput (single, pairs, prodcons, larson) and fragmentation (frag)"};
    app.footer("example: LD_PRELOAD=libmimalloc.so.2 alloc_bench single --allocator mimalloc");
    app.add_option("pattern", o.pattern, "single | pairs | prodcons | larson | xfree | mixed | large | frag")
        ->required()
        ->check(CLI::IsMember({"single", "pairs", "prodcons", "larson", "xfree", "mixed", "large", "frag"}));
    app.add_option("--allocator", o.allocator, "name printed with the results");
    app.add_option("--seconds", o.seconds, "run time per pattern")->check(CLI::Range(1e-6, 60.0));
    app.add_option("--size", o.size, "frag: block size in bytes")->check(CLI::Range(std::size_t{1}, std::size_t{1} << 30));
    app.add_option("--mib", o.mib, "frag: requested MiB per owner")->check(CLI::Range(std::size_t{1}, std::size_t{4096}));
    app.add_option("--owners", o.owners, "frag: owner threads")->check(CLI::Range(1U, 64U));
    app.add_option("--replacements", o.replacements, "large: buffers replaced")->check(CLI::Range(1U, 1000000U));
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        std::exit(app.exit(e));
    } catch (const CLI::ParseError& e) {
        std::fprintf(stderr, "%s: %s\n", "alloc_bench", e.what());
        std::exit(2);
    }
    if (o.pattern == "frag" && o.size == 0) {
        std::fprintf(stderr, "alloc_bench: frag needs --size BYTES\n");
        std::exit(2);
    }
    return o;
}

// Random sizes are drawn up front so the generator stays out of the timed loop.
constexpr std::size_t size_table_len = 4096;   // power of two: indexed by op & mask
std::vector<std::size_t> size_table(std::uint64_t seed, std::size_t lo = 16, std::size_t hi = 256) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::size_t> dist(lo, hi);
    std::vector<std::size_t> t(size_table_len);
    for (auto& s : t) s = dist(rng);
    return t;
}

void* must_malloc(std::size_t n) {
    void* p = std::malloc(n);
    if (p == nullptr) {
        std::fprintf(stderr, "alloc_bench: malloc(%zu) failed\n", n);
        std::exit(1);
    }
    // Writing the block keeps the compiler from pairing malloc with free
    // away, and is what a real program does.
    *static_cast<volatile char*>(p) = 1;
    return p;
}

double since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// Ops are done in chunks; the clock is read once per chunk.
constexpr std::uint64_t chunk = 1 << 14;

std::uint64_t ring_loop(double seconds, std::uint64_t seed, double& elapsed, std::size_t max_size = 256) {
    const auto sizes = size_table(seed, 16, max_size);
    constexpr std::size_t ring_len = 256;
    void* ring[ring_len];
    for (std::size_t i = 0; i < ring_len; ++i) ring[i] = must_malloc(sizes[i]);
    std::uint64_t ops = 0;
    const auto start = Clock::now();
    do {
        for (std::uint64_t k = 0; k < chunk; ++k, ++ops) {
            const std::size_t slot = ops & (ring_len - 1);
            std::free(ring[slot]);
            ring[slot] = must_malloc(sizes[(ops * 7) & (size_table_len - 1)]);
        }
    } while ((elapsed = since(start)) < seconds);
    for (void* p : ring) std::free(p);
    return ops;
}

void report_rate(const Options& o, unsigned threads, std::uint64_t ops, double seconds) {
    std::printf("bench allocator=%s pattern=%s threads=%u ops=%llu seconds=%.3f mops=%.2f\n", o.allocator.c_str(),
                o.pattern.c_str(), threads, static_cast<unsigned long long>(ops), seconds,
                static_cast<double>(ops) / seconds / 1e6);
}

void run_single(const Options& o) {
    double elapsed = 0;
    const std::uint64_t ops = ring_loop(o.seconds, 1, elapsed);
    report_rate(o, 1, ops, elapsed);
}

// pairs (sizes to 256 B) and mixed (sizes to 4 KiB): two threads at once.
void run_two_rings(const Options& o, std::size_t max_size) {
    std::uint64_t ops[2] = {};
    double elapsed[2] = {};
    std::barrier go(2);
    std::thread other([&] {
        go.arrive_and_wait();
        ops[1] = ring_loop(o.seconds, 2, elapsed[1], max_size);
    });
    go.arrive_and_wait();
    ops[0] = ring_loop(o.seconds, 1, elapsed[0], max_size);
    other.join();
    // Both threads ran for about the same time; the rate is the sum of the two.
    const double rate = static_cast<double>(ops[0]) / elapsed[0] + static_cast<double>(ops[1]) / elapsed[1];
    const double secs = std::max(elapsed[0], elapsed[1]);
    std::printf("bench allocator=%s pattern=%s threads=2 ops=%llu seconds=%.3f mops=%.2f\n", o.allocator.c_str(),
                o.pattern.c_str(), static_cast<unsigned long long>(ops[0] + ops[1]), secs, rate / 1e6);
}

// A single-producer single-consumer ring of pointers.
class BoundedQueue {
public:
    bool push(void* p) {
        const auto h = head_.load(std::memory_order_relaxed);
        if (h - tail_.load(std::memory_order_acquire) == capacity) return false;
        slots_[h & (capacity - 1)] = p;
        head_.store(h + 1, std::memory_order_release);
        return true;
    }
    bool pop(void*& p) {
        const auto t = tail_.load(std::memory_order_relaxed);
        if (head_.load(std::memory_order_acquire) == t) return false;
        p = slots_[t & (capacity - 1)];
        tail_.store(t + 1, std::memory_order_release);
        return true;
    }

private:
    static constexpr std::uint64_t capacity = 1024;
    // Producer and consumer indices on their own cache lines.
    alignas(64) std::atomic<std::uint64_t> head_{0};
    alignas(64) std::atomic<std::uint64_t> tail_{0};
    alignas(64) void* slots_[capacity] = {};
};

// prodcons (random 16-256 B) and xfree (64 B): one thread makes, the other frees.
void run_prodcons(const Options& o, std::size_t lo, std::size_t hi) {
    BoundedQueue q;
    std::atomic<bool> done{false};
    std::uint64_t freed = 0;
    std::thread consumer([&] {
        void* p = nullptr;
        for (;;) {
            if (q.pop(p)) {
                std::free(p);
                ++freed;
            } else if (done.load(std::memory_order_acquire)) {
                while (q.pop(p)) {
                    std::free(p);
                    ++freed;
                }
                return;
            } else {
                std::this_thread::yield();   // two cores are shared: do not burn one waiting
            }
        }
    });
    const auto sizes = size_table(3, lo, hi);
    std::uint64_t made = 0;
    const auto start = Clock::now();
    double elapsed = 0;
    do {
        for (std::uint64_t k = 0; k < chunk; ++k, ++made) {
            void* p = must_malloc(sizes[made & (size_table_len - 1)]);
            while (!q.push(p)) std::this_thread::yield();
        }
    } while (since(start) < o.seconds);
    done.store(true, std::memory_order_release);
    consumer.join();
    elapsed = since(start);
    if (freed != made) {
        std::fprintf(stderr, "alloc_bench: prodcons lost blocks: made %llu, freed %llu\n",
                     static_cast<unsigned long long>(made), static_cast<unsigned long long>(freed));
        std::exit(1);
    }
    report_rate(o, 2, made, elapsed);
}

void run_larson(const Options& o) {
    constexpr std::size_t slots = 1024;
    constexpr std::uint64_t epoch_ops = 1 << 15;
    std::vector<void*> arrays[2];
    const auto sizes = size_table(4);
    for (auto& a : arrays)
        for (std::size_t i = 0; i < slots; ++i) a.push_back(must_malloc(sizes[i]));
    std::atomic<bool> stop{false};
    std::uint64_t epoch = 0;
    const auto start = Clock::now();
    // At every epoch end the threads swap arrays, so each one frees blocks
    // the other allocated (remote frees), as in larson.
    std::barrier sync(2, [&]() noexcept {
        ++epoch;
        if (since(start) >= o.seconds) stop.store(true, std::memory_order_relaxed);
    });
    std::uint64_t ops[2] = {};
    auto worker = [&](unsigned t) {
        std::mt19937 rng(17 + t);
        std::uint64_t e = 0;
        while (!stop.load(std::memory_order_relaxed)) {
            std::vector<void*>& a = arrays[(t + e) & 1];
            for (std::uint64_t k = 0; k < epoch_ops; ++k) {
                const std::size_t slot = rng() & (slots - 1);
                std::free(a[slot]);
                a[slot] = must_malloc(sizes[(ops[t] + k) & (size_table_len - 1)]);
            }
            ops[t] += epoch_ops;
            ++e;
            sync.arrive_and_wait();
        }
    };
    std::thread other(worker, 1u);
    worker(0);
    other.join();
    const double elapsed = since(start);
    for (auto& a : arrays)
        for (void* p : a) std::free(p);
    report_rate(o, 2, ops[0] + ops[1], elapsed);
}

void run_large(const Options& o) {
    constexpr std::size_t buffers = 20;
    constexpr std::size_t mib = std::size_t{1} << 20;
    std::mt19937_64 rng(5);
    std::uniform_int_distribution<std::size_t> size(5 * mib, 25 * mib);
    std::uniform_int_distribution<std::size_t> slot(0, buffers - 1);
    std::uint64_t base_rss = 0, base_hwm = 0;
    numaware::bench::read_rss(base_rss, base_hwm);
    std::unique_ptr<char[]> buf[buffers];
    std::size_t bytes[buffers] = {};
    std::size_t live = 0, peak_live = 0;
    const auto start = Clock::now();
    auto replace = [&](std::size_t i) {
        const std::size_t n = size(rng);
        // The new buffer is made before the old one goes: both are live.
        live += n;
        peak_live = std::max(peak_live, live);
        buf[i] = std::make_unique<char[]>(n);
        live -= bytes[i];
        bytes[i] = n;
    };
    for (std::size_t i = 0; i < buffers; ++i) replace(i);
    unsigned long long checksum = 0;
    for (unsigned r = 0; r < o.replacements; ++r) {
        const std::size_t i = slot(rng);
        replace(i);
        // Zero-initialised, as make_unique promises: check one byte per page.
        for (std::size_t k = 0; k < bytes[i]; k += 4096) checksum += static_cast<unsigned char>(buf[i][k]);
        buf[i][bytes[i] / 2] = 1;
    }
    const double elapsed = since(start);
    std::uint64_t rss = 0, hwm = 0;
    numaware::bench::read_rss(rss, hwm);
    if (checksum != 0) {
        std::fprintf(stderr, "alloc_bench: large: a zero-initialised buffer held non-zero bytes\n");
        std::exit(1);
    }
    const double growth = static_cast<double>(hwm - std::min(hwm, base_rss)) * 1024.0;
    std::printf("bench allocator=%s pattern=large replacements=%u seconds=%.3f peak_live_bytes=%zu "
                "peak_rss_growth_bytes=%.0f rss_ratio=%.3f\n",
                o.allocator.c_str(), o.replacements, elapsed, peak_live, growth, growth / static_cast<double>(peak_live));
}

void run_frag(const Options& o) {
    const auto r = numaware::bench::run_frag_pattern(
        o.size, o.mib, o.owners, [](unsigned, std::size_t n) { return must_malloc(n); },
        [](void* p) { std::free(p); });
    std::printf("bench allocator=%s pattern=frag size=%zu owners=%u requested_bytes=%.0f peak_rss_growth_bytes=%.0f ratio=%.3f\n",
                o.allocator.c_str(), o.size, o.owners, r.requested_bytes, r.peak_rss_growth_bytes, r.ratio());
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    if (o.pattern == "single") run_single(o);
    else if (o.pattern == "pairs") run_two_rings(o, 256);
    else if (o.pattern == "mixed") run_two_rings(o, 4096);
    else if (o.pattern == "prodcons") run_prodcons(o, 16, 256);
    else if (o.pattern == "xfree") run_prodcons(o, 64, 64);
    else if (o.pattern == "large") run_large(o);
    else if (o.pattern == "larson") run_larson(o);
    else run_frag(o);
    std::fflush(stdout);
    return 0;
}
