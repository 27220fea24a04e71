// bench/common/line_transfer.cpp — numaware_bench_line_transfer: what it
// costs to move one cache line from one CPU to another, measured now.
//
// Two threads, each pinned to one CPU, pass a counter back and forth in one
// 64-byte line: each waits for the other's increment, then adds its own.
// Every handover moves the line once, so a round trip is two transfers.
//
// Why the benchmarks run it: on a shared virtual machine the host may move
// the vCPUs between cores, core complexes and dies while the VM runs, and
// what a line transfer costs changes with that (on the 2-vCPU AMD build
// host, 55 ns in one placement and 240 ns in another, minutes apart).
// Every task handed from one thread to another moves a few lines (its
// record, a queue's lock, a successor list), so the task benchmarks' times
// follow that cost. scripts/bench-omp-tasks prints this figure beside each
// round so that a result says which placement it ran in.
//
// usage: numaware_bench_line_transfer [--cpus A,B] [--round-trips N]
// Prints one line: line_transfer_ns=... round_trip_ns=... cpus=A,B
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

namespace {

// The line the two threads pass; nothing else shares it.
struct alignas(128) Line {
    std::atomic<std::uint64_t> turn{0};
};

bool pin(unsigned cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0;
}

// The CPUs this process may run on, ascending.
std::vector<unsigned> allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<unsigned> cpus;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
    for (unsigned c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) cpus.push_back(c);
    return cpus;
}

int fail(const std::string& what) {
    std::fprintf(stderr, "numaware_bench_line_transfer: %s\n", what.c_str());
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"The time to move one cache line between two CPUs, measured now"};
    std::vector<unsigned> cpus;
    std::uint64_t round_trips = 200000;
    app.add_option("--cpus", cpus, "the two CPUs (default: the first two this process may use)")
        ->delimiter(',')
        ->expected(2);
    app.add_option("--round-trips", round_trips, "round trips, the first 1,000 untimed (2,000 to 10^9)")
        ->check(CLI::Range(std::uint64_t{2000}, std::uint64_t{1000000000}));
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    const std::vector<unsigned> allowed = allowed_cpus();
    if (cpus.empty()) {
        if (allowed.size() < 2)
            return fail(fmt::format("this process may use {} CPU(s); a transfer needs two", allowed.size()));
        cpus = {allowed[0], allowed[1]};
    }
    if (cpus[0] == cpus[1]) return fail(fmt::format("--cpus names CPU {} twice; give two different CPUs", cpus[0]));
    for (unsigned c : cpus) {
        bool ok = false;
        for (unsigned a : allowed) ok = ok || a == c;
        if (!ok) return fail(fmt::format("--cpus: CPU {} is not one this process may use", c));
    }

    Line line;
    std::atomic<bool> pinned_ok{true};
    std::thread other([&] {
        if (!pin(cpus[1])) pinned_ok.store(false);
        for (std::uint64_t i = 0; i < round_trips; ++i) {
            while (line.turn.load(std::memory_order_acquire) != 2 * i + 1) {
            }
            line.turn.store(2 * i + 2, std::memory_order_release);
        }
    });
    if (!pin(cpus[0])) pinned_ok.store(false);
    // Warm-up: both threads running and pinned before the clock starts.
    constexpr std::uint64_t warm = 1000;
    std::uint64_t i = 0;
    const auto step = [&] {
        line.turn.store(2 * i + 1, std::memory_order_release);
        while (line.turn.load(std::memory_order_acquire) != 2 * i + 2) {
        }
        ++i;
    };
    while (i < warm) step();
    const auto t0 = std::chrono::steady_clock::now();
    while (i < round_trips) step();
    const auto t1 = std::chrono::steady_clock::now();
    other.join();
    if (!pinned_ok.load()) return fail(fmt::format("could not pin a thread to CPU {} or {}", cpus[0], cpus[1]));
    const std::uint64_t timed = round_trips - warm;
    const double round_trip_ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(timed);
    fmt::print("line_transfer_ns={:.1f} round_trip_ns={:.1f} cpus={},{}\n", round_trip_ns / 2, round_trip_ns, cpus[0],
               cpus[1]);
    return 0;
}
