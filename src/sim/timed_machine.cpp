// sim/timed_machine.cpp — a Machine plus the figures the simulator times:
// per-node memory bandwidth, per-path link bandwidth and a full latency
// matrix, taken from the machine where it has them and derived by the
// documented rules (sim.hpp, docs/SIMULATOR.md) where it does not. Every
// rule that fills at least one entry is recorded, one line each, in
// TimedMachine::rules.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "numaware/error.hpp"
#include "numaware/sim.hpp"

namespace numaware::sim {

namespace {

std::string at(std::string_view name, std::size_t i) { return std::string(name) + "[" + std::to_string(i) + "]"; }
std::string at(std::string_view name, std::size_t i, std::size_t j) {
    return at(name, i) + "[" + std::to_string(j) + "]";
}

// Up to 6 significant digits: "80", "69.4444", "0.5".
std::string num(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

bool positive_finite(double v) { return std::isfinite(v) && v > 0; }

// Checks that `m` is n x n; `name` is the field reported.
template <class T>
void check_square(const NodeMatrix<T>& m, std::size_t n, std::string_view name) {
    if (m.size() != n)
        throw Error(std::string(name), "has " + std::to_string(m.size()) + " rows; the machine has " +
                                           std::to_string(n) + " nodes");
    for (std::size_t r = 0; r < n; ++r)
        if (m[r].size() != n)
            throw Error(at(name, r), "has " + std::to_string(m[r].size()) + " entries; the machine has " +
                                         std::to_string(n) + " nodes");
}

// "2,3" for a list of node positions, naming the nodes by OS index.
std::string node_list(const Machine& m, const std::vector<std::size_t>& positions) {
    std::string out;
    for (std::size_t p : positions) {
        if (!out.empty()) out += ",";
        out += std::to_string(m.nodes[p].os_index);
    }
    return out;
}

}  // namespace

void TimedMachine::validate() const {
    machine.validate();
    const std::size_t n = machine.node_count();
    if (n == 0) throw Error("machine", "has no nodes");

    check_square(latency_ns, n, "latency_ns");
    for (std::size_t r = 0; r < n; ++r)
        for (std::size_t h = 0; h < n; ++h)
            if (!positive_finite(latency_ns[r][h]))
                throw Error(at("latency_ns", r, h), "is " + num(latency_ns[r][h]) + "; every latency must be > 0 ns");

    if (memory_gbps.size() != n)
        throw Error("memory_gbps", "has " + std::to_string(memory_gbps.size()) + " entries; the machine has " +
                                       std::to_string(n) + " nodes");
    for (std::size_t h = 0; h < n; ++h)
        if (!positive_finite(memory_gbps[h]))
            throw Error(at("memory_gbps", h), "is " + num(memory_gbps[h]) + "; memory bandwidth must be > 0 GB/s");

    for (std::size_t k = 0; k < shared_links.size(); ++k) {
        const SharedLink& l = shared_links[k];
        const std::string field = "shared_links[" + std::to_string(k) + "]";
        if (!positive_finite(l.gbps)) throw Error(field, "is " + num(l.gbps) + " GB/s; a link bandwidth must be > 0");
        for (const auto& [r, h] : l.paths)
            if (r >= n || h >= n || r == h)
                throw Error(field, "lists the path " + std::to_string(h) + " -> " + std::to_string(r) +
                                       ", not a remote pair of the machine's " + std::to_string(n) + " nodes");
    }
    if (!positive_finite(outstanding_lines))
        throw Error("outstanding_lines", "is " + num(outstanding_lines) + "; must be > 0");
    if (!positive_finite(line_bytes)) throw Error("line_bytes", "is " + num(line_bytes) + "; must be > 0");

    check_square(link_gbps, n, "link_gbps");
    for (std::size_t r = 0; r < n; ++r)
        for (std::size_t h = 0; h < n; ++h) {
            const double v = link_gbps[r][h];
            if (r == h) {
                if (v != 0)
                    throw Error(at("link_gbps", r, h),
                                "is " + num(v) + "; the diagonal must be 0 (a local access uses only the node's memory)");
            } else if (!positive_finite(v)) {
                throw Error(at("link_gbps", r, h), "is " + num(v) + "; a link bandwidth must be > 0 GB/s");
            }
        }
}

TimedMachine timed(const Machine& machine, const TimingDefaults& defaults) {
    if (!positive_finite(defaults.local_latency_ns))
        throw Error("local_latency_ns", "is " + num(defaults.local_latency_ns) + "; must be > 0 ns");
    if (!positive_finite(defaults.memory_gbps))
        throw Error("memory_gbps", "is " + num(defaults.memory_gbps) + "; must be > 0 GB/s");
    machine.validate();
    const std::size_t n = machine.node_count();
    if (n == 0) throw Error("machine", "has no nodes");

    TimedMachine t;
    t.machine = machine;
    t.name = machine.name.empty() ? "machine" : machine.name;
    const auto& slit = machine.distances;
    const auto slit_ratio = [&](std::size_t r, std::size_t h) {
        return static_cast<double>(slit[r][h]) / static_cast<double>(slit[h][h]);
    };

    // ---- latency ----
    t.latency_ns.assign(n, std::vector<double>(n, 0.0));
    std::size_t from_matrix = 0;
    for (std::size_t r = 0; r < n; ++r)
        for (std::size_t h = 0; h < n; ++h) {
            const double given = machine.latency_ns ? (*machine.latency_ns)[r][h] : 0.0;
            if (given > 0) {
                t.latency_ns[r][h] = given;
                ++from_matrix;
            } else {
                t.latency_ns[r][h] = defaults.local_latency_ns * slit_ratio(r, h);
            }
        }
    const std::size_t cells = n * n;
    if (from_matrix > 0)
        t.rules.push_back("latency from the machine's latency matrix (" + std::to_string(from_matrix) + " of " +
                          std::to_string(cells) + " entries)");
    if (from_matrix < cells) {
        const std::string rule =
            "latency from SLIT: " + num(defaults.local_latency_ns) + " ns × SLIT[r][h] / SLIT[h][h]";
        if (!machine.latency_ns)
            t.rules.push_back(rule + " (machine has no latency matrix)");
        else
            t.rules.push_back(rule + " for " + std::to_string(cells - from_matrix) + " of " + std::to_string(cells) +
                              " entries (latency matrix entry 0 = not known)");
    }

    // ---- memory bandwidth ----
    t.memory_gbps.assign(n, 0.0);
    std::vector<std::size_t> defaulted;
    for (std::size_t h = 0; h < n; ++h) {
        const double given = machine.bandwidth_gbps ? (*machine.bandwidth_gbps)[h][h] : 0.0;
        if (given > 0) {
            t.memory_gbps[h] = given;
        } else {
            t.memory_gbps[h] = defaults.memory_gbps;
            defaulted.push_back(h);
        }
    }
    if (defaulted.size() < n)
        t.rules.push_back("memory bandwidth from the bandwidth matrix diagonal (" +
                          std::to_string(n - defaulted.size()) + " of " + std::to_string(n) + " nodes)");
    if (!defaulted.empty()) {
        const std::string rule = "memory bandwidth: default " + num(defaults.memory_gbps) + " GB/s per node";
        if (!machine.bandwidth_gbps)
            t.rules.push_back(rule + " (machine has no bandwidth matrix)");
        else
            t.rules.push_back(rule + " for node(s) " + node_list(machine, defaulted) +
                              " (bandwidth matrix diagonal 0 = not known)");
    }

    // ---- link bandwidth ----
    t.link_gbps.assign(n, std::vector<double>(n, 0.0));
    std::size_t links_given = 0;
    for (std::size_t r = 0; r < n; ++r)
        for (std::size_t h = 0; h < n; ++h) {
            if (r == h) continue;
            const double given = machine.bandwidth_gbps ? (*machine.bandwidth_gbps)[r][h] : 0.0;
            if (given > 0) {
                t.link_gbps[r][h] = given;
                ++links_given;
            } else {
                t.link_gbps[r][h] = t.memory_gbps[h] / slit_ratio(r, h);
            }
        }
    const std::size_t pairs = n * (n - 1);
    if (links_given > 0)
        t.rules.push_back("link bandwidth from the bandwidth matrix (" + std::to_string(links_given) + " of " +
                          std::to_string(pairs) + " node pairs)");
    if (links_given < pairs) {
        const std::string rule = "link bandwidth from SLIT: memory[h] × SLIT[h][h] / SLIT[r][h]";
        if (!machine.bandwidth_gbps)
            t.rules.push_back(rule + " (machine has no bandwidth matrix)");
        else
            t.rules.push_back(rule + " for " + std::to_string(pairs - links_given) + " of " + std::to_string(pairs) +
                              " node pairs (bandwidth matrix entry 0 = not known)");
    }

    // ---- one core ----
    if (!positive_finite(defaults.outstanding_lines) || !positive_finite(defaults.line_bytes))
        throw Error("outstanding_lines", "is " + num(defaults.outstanding_lines) + " lines of " + num(defaults.line_bytes) +
                                             " bytes; both must be > 0");
    t.outstanding_lines = defaults.outstanding_lines;
    t.line_bytes = defaults.line_bytes;
    t.rules.push_back("one core's bandwidth by Little's law: " + num(t.outstanding_lines) + " outstanding " +
                      num(t.line_bytes) + "-byte lines per latency[r][h]");

    // ---- memory-only nodes ----
    std::vector<std::size_t> memory_only;
    for (std::size_t i = 0; i < n; ++i)
        if (!machine.nodes[i].has_cpus()) memory_only.push_back(i);
    if (!memory_only.empty())
        t.rules.push_back("memory-only node(s) " + node_list(machine, memory_only) +
                          ": homes only; their reader rows are filled by the same rules");

    t.validate();
    return t;
}

}  // namespace numaware::sim
