// heap/latency_measure.cpp — times every cache-line block of a region from
// every listed CPU (the mechanism half of the latency-aware allocator).
//
// Only this file touches the hardware directly (clflush, mfence); pinning
// and pagemap reads go through the os layer like everywhere else.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <set>
#include <thread>

#include <fmt/core.h>

#include "numaware/error.hpp"
#include "numaware/latency_blocks.hpp"
#include "os/os.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace numaware {

namespace {

constexpr std::size_t max_region_bytes = std::size_t{64} << 20;
constexpr unsigned max_loads_per_sample = 1u << 16;
constexpr unsigned max_repetitions = 1000;

double median_of(std::vector<double>& v) {
    const std::size_t n = v.size();
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2), v.end());
    const double upper = v[n / 2];
    if (n % 2 == 1) return upper;
    const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2));
    return (lower + upper) / 2;
}

#if defined(__x86_64__)
// One timed sample of block `line`: `loads` dependent loads of the pointer
// the line holds to itself, each preceded by clflush + mfence. The load's
// address comes from the previous load, so the loads cannot overlap, and
// mfence orders the flush before the load, so every load misses every
// cache. Returns ns per load (flush and fence included: a constant per CPU,
// common to all blocks, so rankings and spreads are unaffected).
__attribute__((noinline)) double time_block(void* line, unsigned loads, std::uintptr_t& sink) {
    void* volatile* p = static_cast<void* volatile*>(line);
    // Untimed load first, so the TLB miss of the page is not charged.
    void* q = *p;
    const auto t0 = std::chrono::steady_clock::now();
    for (unsigned k = 0; k < loads; ++k) {
        _mm_clflush(q);
        _mm_mfence();
        q = *static_cast<void* volatile*>(q);
    }
    const auto t1 = std::chrono::steady_clock::now();
    sink ^= reinterpret_cast<std::uintptr_t>(q);
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(loads);
}
#endif

// One sweep over every block, in the given order, from the calling
// (already pinned) thread.
void sweep(std::byte* base, const std::vector<std::uint32_t>& order, std::size_t line, unsigned loads, double* out) {
#if defined(__x86_64__)
    std::uintptr_t sink = 0;
    for (const std::uint32_t b : order) {
        double ns = time_block(base + b * line, loads, sink);
        // A steady clock that did not advance (coarse clock, tiny sample)
        // would record 0; retry with more loads rather than store it.
        for (unsigned more = loads * 2; !(ns > 0) && more <= max_loads_per_sample * 4; more *= 2)
            ns = time_block(base + b * line, more, sink);
        out[b] = ns;
    }
    // Keep the chase observable so the compiler cannot drop it.
    if (sink == 1) std::fputc(0, stderr);
#else
    (void)base, (void)order, (void)line, (void)loads, (void)out;
#endif
}

}  // namespace

LatencyDatabase measure_block_latencies(std::span<std::byte> region, const LatencyMeasureOptions& options,
                                        os::Os& os) {
#if !defined(__x86_64__)
    (void)region, (void)options, (void)os;
    throw Error("platform", "block latency measurement needs clflush (x86-64 only)", ENOTSUP);
#else
    const std::size_t page = os.page_size();
    const std::size_t line = latency_block_bytes;
    const auto addr = reinterpret_cast<std::uintptr_t>(region.data());
    if (region.empty() || region.size() % page != 0 || addr % page != 0)
        throw Error("region", fmt::format("{} bytes at {:#x} is not a non-empty, page-aligned whole number of {} B pages",
                                          region.size(), addr, page));
    if (region.size() > max_region_bytes)
        throw Error("region", fmt::format("{} bytes exceeds the limit of {} bytes", region.size(), max_region_bytes));
    if (options.repetitions < 3 || options.repetitions > max_repetitions)
        throw Error("repetitions", fmt::format("{} is outside 3..{} (a median needs at least 3 samples)",
                                               options.repetitions, max_repetitions));
    if (options.loads_per_sample < 1 || options.loads_per_sample > max_loads_per_sample)
        throw Error("loads_per_sample",
                    fmt::format("{} is outside 1..{}", options.loads_per_sample, max_loads_per_sample));
    std::vector<unsigned> cpus = options.cpus;
    if (cpus.empty()) {
        const int err = os.get_affinity(0, cpus);
        if (err != 0) throw Error("cpus", std::string("cannot read the thread's affinity: ") + std::strerror(err), err);
    }
    if (cpus.empty()) throw Error("cpus", "no CPU to measure from");
    std::set<unsigned> seen;
    for (unsigned c : cpus)
        if (!seen.insert(c).second) throw Error("cpus", fmt::format("CPU {} listed twice", c));

    const std::size_t blocks = region.size() / line;
    std::byte* base = region.data();
    // Each block holds a pointer to itself: the chase's next address.
    for (std::size_t b = 0; b < blocks; ++b) {
        void* self = base + b * line;
        std::memcpy(self, &self, sizeof self);
    }

    const unsigned reps = options.repetitions;
    // samples[c][b * reps + r]
    std::vector<std::vector<double>> samples(cpus.size(), std::vector<double>(blocks * reps));
    std::vector<double> sweep_out(blocks);
    std::vector<std::uint32_t> order(blocks);
    std::iota(order.begin(), order.end(), std::uint32_t{0});
    std::mt19937 shuffler(0x6e77u);   // fixed seed: the same run order every time
    // Repetitions outermost and CPUs in turn inside them, so drifts in
    // clock or memory state over time spread over every CPU and block.
    for (unsigned r = 0; r < reps; ++r) {
        for (std::size_t c = 0; c < cpus.size(); ++c) {
            int pin_err = 0;
            // A helper thread does the pinning so the caller's affinity is
            // never changed; only one measures at a time so CPUs do not
            // disturb each other's timings.
            // A fresh random order per sweep: whatever drifts with time
            // (other processes, timer ticks, refresh) or follows the
            // address order (prefetchers) then lands on random blocks and
            // shows as repetition noise instead of as block structure.
            std::shuffle(order.begin(), order.end(), shuffler);
            std::thread worker([&] {
                pin_err = os.set_affinity(0, {cpus[c]});
                if (pin_err == 0) sweep(base, order, line, options.loads_per_sample, sweep_out.data());
            });
            worker.join();
            if (pin_err != 0)
                throw Error(fmt::format("cpu {}", cpus[c]),
                            std::string("cannot pin the measuring thread: ") + std::strerror(pin_err), pin_err);
            for (std::size_t b = 0; b < blocks; ++b) samples[c][b * reps + r] = sweep_out[b];
        }
    }

    LatencyDatabase db;
    db.region_bytes = region.size();
    db.line_bytes = line;
    db.page_bytes = page;
    db.repetitions = reps;
    db.loads_per_sample = options.loads_per_sample;
    db.cpus = cpus;
    std::vector<double> rep(reps), dev(reps), sigma(blocks);
    for (std::size_t c = 0; c < cpus.size(); ++c) {
        std::vector<double> medians(blocks);
        for (std::size_t b = 0; b < blocks; ++b) {
            std::copy_n(samples[c].begin() + static_cast<std::ptrdiff_t>(b * reps), reps, rep.begin());
            const double m = median_of(rep);
            for (unsigned i = 0; i < reps; ++i) dev[i] = std::fabs(rep[i] - m);
            medians[b] = m;
            // 1.4826 x MAD estimates a normal standard deviation while
            // ignoring the odd sample hit by an interrupt.
            sigma[b] = 1.4826 * median_of(dev);
        }
        db.latency_ns.push_back(std::move(medians));
        db.noise_ns.push_back(median_of(sigma));
    }

    // Physical frames: every page was written above, so each is present.
    std::vector<std::uint64_t> frames;
    frames.reserve(region.size() / page);
    for (std::size_t off = 0; off < region.size(); off += page) {
        std::uint64_t pfn = 0;
        const int err = os.physical_frame(base + off, pfn);
        if (err != 0) {
            frames.clear();
            db.frames_note =
                err == EPERM
                    ? "physical frames hidden by the kernel (pagemap needs CAP_SYS_ADMIN): blocks are known by their "
                      "offset in the virtual region only"
                    : fmt::format("physical frame of page {} unavailable ({}): blocks are known by their offset in "
                                  "the virtual region only",
                                  off / page, std::strerror(err));
            break;
        }
        frames.push_back(pfn);
    }
    db.frames = std::move(frames);
    validate_latency_database(db, "measurement");
    return db;
#endif
}

LatencyDatabase measure_block_latencies(std::span<std::byte> region, const LatencyMeasureOptions& options) {
    return measure_block_latencies(region, options, os::linux_os());
}

}  // namespace numaware
