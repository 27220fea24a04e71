// tools/cli/cmd_probe.cpp — `numaware probe`: measure the node-to-node
// latency and bandwidth matrices of the live machine.
//
// For every node i with CPUs and every node j with memory, one thread is
// pinned to a CPU of node i (a one-rank Team) and reads memory bound to node
// j (placement bind, applied and verified page by page with move_pages; on
// a machine with one node of memory nothing is bound, every page is there):
//  - latency: a pointer chase through a randomly permuted cyclic list of
//    cache lines, so every load depends on the previous one and the
//    prefetchers cannot guess the next line; ns per load, best of 3 parts;
//  - bandwidth: memcpy of the whole buffer from node j into a buffer bound
//    to node i (the reader's own memory); GB/s = 10^9 bytes copied per
//    second, best of 3 passes.
// Memory-only nodes appear as columns only: no thread runs on them. Entries
// that cannot be measured stay 0, which the machine model reads as "not known".
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "numaware/error.hpp"
#include "numaware/machine.hpp"
#include "numaware/placement.hpp"
#include "numaware/team.hpp"
#include "tools/cli/commands.hpp"

namespace numaware::cli {
namespace {

constexpr std::size_t kLine = 64;   // bytes per chase step: one cache line on x86 and most arm64
constexpr int kRepeats = 3;

struct ProbeOptions {
    std::string size = "64M";
    std::size_t iterations = 1000000;
    bool json = false;
};

// An anonymous mapping bound to one node, unmapped on every path out.
// Unbound where binding tells nothing: a node without memory (first touch
// decides) or a machine with one memory node (every page is on it).
class BoundBuffer {
public:
    BoundBuffer(std::size_t bytes, const Node& node, const Machine& machine, bool bind) : bytes_(bytes) {
        void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            throw Error("--size", fmt::format("cannot map {} bytes: {}", bytes, std::strerror(errno)), errno);
        data_ = static_cast<unsigned char*>(p);
        if (!bind || !node.holds_pages()) return;
        const auto fail = [&](const std::string& why, int code) {
            forget_placement(data_, bytes_);
            ::munmap(data_, bytes_);
            throw Error(fmt::format("node {}", node.os_index),
                        fmt::format("could not bind the probe buffer: {}", why), code);
        };
        PlacementResult r;
        try {
            r = apply(data_, bytes, plan(PlacementPolicy::bind(NodeSet{node.os_index}), data_, bytes, machine));
        } catch (const Error& e) {
            fail(e.what(), e.code());
        }
        if (!r.ok()) fail(r.summary(), r.unplaced.empty() ? EIO : r.unplaced.front().error);
    }
    ~BoundBuffer() {
        forget_placement(data_, bytes_);   // placement remembers what apply() placed
        ::munmap(data_, bytes_);
    }
    BoundBuffer(const BoundBuffer&) = delete;
    BoundBuffer& operator=(const BoundBuffer&) = delete;

    unsigned char* data() const { return data_; }
    std::size_t bytes() const { return bytes_; }

private:
    std::size_t bytes_;
    unsigned char* data_ = nullptr;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// ns per dependent load over a random single cycle through all lines.
double chase_latency_ns(const BoundBuffer& buf, std::size_t iterations) {
    const std::size_t lines = buf.bytes() / kLine;
    std::vector<std::size_t> order(lines);
    std::iota(order.begin(), order.end(), std::size_t{0});
    // Fixed seed: the same walk for every node pair, so rows are comparable.
    std::mt19937_64 rng(0x6e756d61u);
    std::shuffle(order.begin() + 1, order.end(), rng);
    unsigned char* base = buf.data();
    for (std::size_t k = 0; k < lines; ++k) {
        void* next = base + order[(k + 1) % lines] * kLine;
        std::memcpy(base + order[k] * kLine, &next, sizeof next);
    }
    double best = 0;
    const std::size_t part = std::max<std::size_t>(1, iterations / kRepeats);
    void* p = base;
    for (int rep = 0; rep < kRepeats; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
        for (std::size_t n = 0; n < part; ++n) p = *static_cast<void**>(p);
        const double ns = seconds_since(t0) * 1e9 / static_cast<double>(part);
        best = rep == 0 ? ns : std::min(best, ns);
    }
    // Make p observable so the chase cannot be optimised away.
    asm volatile("" : : "r"(p) : "memory");
    return best;
}

double copy_bandwidth_gbps(const BoundBuffer& from, const BoundBuffer& to) {
    double best = 0;
    for (int rep = 0; rep < kRepeats; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
        std::memcpy(to.data(), from.data(), from.bytes());
        const double s = seconds_since(t0);
        best = std::max(best, static_cast<double>(from.bytes()) / s / 1e9);
    }
    return best;
}

std::string matrix_table(const Machine& m, const NodeMatrix<double>& v, const char* format) {
    std::string out = fmt::format("{:>8}", "");
    for (const Node& n : m.nodes) out += fmt::format("{:>10}", fmt::format("N{}", n.os_index));
    out += '\n';
    for (std::size_t i = 0; i < m.nodes.size(); ++i) {
        if (!m.nodes[i].has_cpus()) continue;
        out += fmt::format("{:>8}", fmt::format("N{}", m.nodes[i].os_index));
        for (std::size_t j = 0; j < m.nodes.size(); ++j)
            out += v[i][j] > 0 ? fmt::format("{:>10}", fmt::format(fmt::runtime(format), v[i][j]))
                               : fmt::format("{:>10}", "-");
        out += '\n';
    }
    return out;
}

void probe(const ProbeOptions& o) {
    const std::size_t requested = parse_size(o.size, "--size");
    if (requested < 64 * 1024)
        throw Error("--size", fmt::format("{} is too small: at least 64K, so the chase leaves the L1 cache",
                                          format_size(requested)));
    if (o.iterations == 0) throw Error("--iterations", "must be at least 1");
    const std::size_t bytes = requested / kLine * kLine;

    Machine machine = Machine::from_live();
    const std::size_t n = machine.nodes.size();
    const bool bind = std::count_if(machine.nodes.begin(), machine.nodes.end(),
                                    [](const Node& node) { return node.holds_pages(); }) > 1;
    NodeMatrix<double> latency(n, std::vector<double>(n, 0.0));
    NodeMatrix<double> bandwidth(n, std::vector<double>(n, 0.0));

    for (std::size_t i = 0; i < n; ++i) {
        const Node& cpu_node = machine.nodes[i];
        if (!cpu_node.has_cpus()) continue;
        // One rank pinned to the node's first CPU; its buffers are mapped,
        // bound and freed on that thread.
        Team team(machine, {.cpus = {cpu_node.cpus.front()}});
        team.run([&](TeamContext&) {
            const BoundBuffer local(bytes, cpu_node, machine, bind);
            for (std::size_t j = 0; j < n; ++j) {
                const Node& mem_node = machine.nodes[j];
                if (!mem_node.holds_pages()) continue;
                const BoundBuffer target(bytes, mem_node, machine, bind);
                latency[i][j] = chase_latency_ns(target, o.iterations);
                bandwidth[i][j] = copy_bandwidth_gbps(target, local);
            }
        });
    }
    machine.latency_ns = latency;
    machine.bandwidth_gbps = bandwidth;
    machine.validate();

    if (o.json) {
        std::printf("%s\n", machine.to_json().c_str());
        return;
    }
    std::printf("numaware probe: %s; %s buffers %s, %zu dependent loads, best of %d\n", machine.name.c_str(),
                format_size(bytes).c_str(),
                bind ? "bound with placement bind (verified with move_pages)"
                     : "on the one node with memory (not bound: every page is there)",
                o.iterations, kRepeats);
    std::printf("\nlatency (ns per load; row: CPU node, column: memory node)\n%s",
                matrix_table(machine, latency, "{:.1f}").c_str());
    std::printf("\nbandwidth (GB/s copied from the column's memory into the row's; row: CPU node)\n%s",
                matrix_table(machine, bandwidth, "{:.2f}").c_str());
}

}  // namespace

void add_probe_command(CLI::App& app) {
    auto opts = std::make_shared<ProbeOptions>();
    CLI::App* sub = app.add_subcommand(
        "probe", "Measure the node-to-node latency (pointer chase) and bandwidth (copy) matrices, "
                 "with pinned threads and bound memory");
    sub->add_option("--size", opts->size, "Buffer size per measurement, e.g. 64M (default 64M)");
    sub->add_option("--iterations", opts->iterations, "Dependent loads per latency measurement (default 1000000)");
    sub->add_flag("--json", opts->json,
                  "Print the live machine as JSON with latency_ns and bandwidth_gbps filled in "
                  "(loadable with --machine FILE)");
    sub->footer(
        "Rows are nodes with CPUs; memory-only nodes appear only as columns; '-' (0 in JSON) is not measured.\n"
        "Example: numaware probe --size 16M --json > probe.json && numaware topo --machine probe.json");
    sub->callback([opts] { probe(*opts); });
}

}  // namespace numaware::cli
