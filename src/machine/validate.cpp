// machine/validate.cpp — the invariants every Machine satisfies.
//
// Every source (live, XML, synthetic, JSON) ends by calling validate(), so
// the rest of numaware can index matrices by node position without checks.
#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "machine/machine_internal.hpp"
#include "numaware/error.hpp"
#include "numaware/machine.hpp"

namespace numaware {

namespace {
std::string at(std::string_view name, std::size_t i) { return std::string(name) + "[" + std::to_string(i) + "]"; }
std::string at(std::string_view name, std::size_t i, std::size_t j) { return at(name, i) + "[" + std::to_string(j) + "]"; }

template <class T>
std::string show(T v) {
    if constexpr (std::is_floating_point_v<T>) {
        std::string s = std::to_string(v);
        while (s.size() > 1 && s.back() == '0') s.pop_back();
        if (!s.empty() && s.back() == '.') s.pop_back();
        return s;
    } else {
        return std::to_string(v);
    }
}

std::string cpu_out_of_range(unsigned cpu) {
    return "CPU " + std::to_string(cpu) + " is out of range (limit " + std::to_string(Machine::max_cpus - 1) + ")";
}

// Square, and as many rows as the machine has nodes.
template <class T>
void check_shape(const NodeMatrix<T>& m, std::string_view name, std::size_t n) {
    if (m.size() != n)
        throw Error(std::string(name), "matrix has " + std::to_string(m.size()) + " rows but the machine has " +
                                           std::to_string(n) + " nodes (expected " + std::to_string(n) + "x" +
                                           std::to_string(n) + ")");
    for (std::size_t i = 0; i < n; ++i)
        if (m[i].size() != n)
            throw Error(at(name, i), "row has " + std::to_string(m[i].size()) + " entries but the matrix has " +
                                         std::to_string(n) + " rows; a node matrix must be square (" +
                                         std::to_string(n) + "x" + std::to_string(n) + ")");
}

// The SLIT may be asymmetric: ACPI's entry (i, j) is the distance from
// locality i to locality j, firmware may give the two directions different
// values, and Linux takes them as given (it checks only that the diagonal
// is the local distance). distances[from][to] keeps the direction, and
// every user reads it that way (an access from `from`'s CPUs to memory on
// `to`); a machine with such a table must load, not stop every tool.
void check_slit(const NodeMatrix<unsigned>& d) {
    const std::size_t n = d.size();
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            if (d[i][j] == 0)
                throw Error(at("distances", i, j), "is 0; SLIT distances are positive (10 = local)");
            // Ties are allowed: a node is never farther from itself than
            // from another node, but firmware may report equal values.
            if (d[i][j] < d[i][i])
                throw Error(at("distances", i, i),
                            "diagonal entry " + show(d[i][i]) + " is not the minimum of row " + std::to_string(i) +
                                ": " + at("distances", i, j) + "=" + show(d[i][j]) +
                                " is smaller; a node must be nearest to itself");
        }
    }
}

// Measured matrices: finite and non-negative; 0 means "not known". They are
// not required to be symmetric or to have a minimal diagonal, because real
// measurements (and emulated machines) are noisy.
void check_measured(const NodeMatrix<double>& m, std::string_view name) {
    for (std::size_t i = 0; i < m.size(); ++i)
        for (std::size_t j = 0; j < m[i].size(); ++j)
            if (!std::isfinite(m[i][j]) || m[i][j] < 0.0)
                throw Error(at(name, i, j), "is " + show(m[i][j]) +
                                                "; expected a finite value >= 0 (0 = not known)");
}
}  // namespace

namespace detail {
void check_page_bytes(std::uint64_t bytes, std::string_view field) {
    if (bytes < 1024 || (bytes & (bytes - 1)) != 0)
        throw Error(std::string(field), "is " + std::to_string(bytes) + "; a page size is a power of two >= 1024");
}
}  // namespace detail

void Machine::validate() const {
    const std::size_t n = nodes.size();
    if (n == 0) throw Error("nodes", "a machine needs at least one node");
    if (n > NodeSet::max_nodes)
        throw Error("nodes", std::to_string(n) + " nodes exceed the limit of " + std::to_string(NodeSet::max_nodes));

    std::set<unsigned> seen_cpus;
    for (std::size_t i = 0; i < n; ++i) {
        const Node& node = nodes[i];
        const std::string field = at("nodes", i);
        if (node.os_index >= NodeSet::max_nodes)
            throw Error(field + ".os_index", "node " + std::to_string(node.os_index) + " is out of range (limit " +
                                                 std::to_string(NodeSet::max_nodes - 1) + ")");
        if (i > 0 && node.os_index <= nodes[i - 1].os_index)
            throw Error(field + ".os_index",
                        "node " + std::to_string(node.os_index) + " follows node " +
                            std::to_string(nodes[i - 1].os_index) +
                            "; nodes must be listed once each, in ascending OS index");
        for (std::size_t c = 0; c < node.cpus.size(); ++c) {
            if (node.cpus[c] >= max_cpus) throw Error(at(field + ".cpus", c), cpu_out_of_range(node.cpus[c]));
            if (c > 0 && node.cpus[c] <= node.cpus[c - 1])
                throw Error(at(field + ".cpus", c), "CPU " + std::to_string(node.cpus[c]) + " follows CPU " +
                                                        std::to_string(node.cpus[c - 1]) +
                                                        "; a node's CPUs must be ascending and unique");
            if (!seen_cpus.insert(node.cpus[c]).second)
                throw Error(at(field + ".cpus", c), "CPU " + std::to_string(node.cpus[c]) +
                                                        " is listed on two nodes; a CPU belongs to one node");
        }
        if (node.tier < 0)
            throw Error(field + ".tier", "tier " + std::to_string(node.tier) + " is negative; tiers start at 0");
        if (node.kind.empty()) throw Error(field + ".kind", "is empty; expected e.g. DRAM, HBM, MCDRAM, CXL, NVM");
    }

    detail::check_page_bytes(page_bytes, "page_bytes");

    check_shape(distances, "distances", n);
    check_slit(distances);
    if (latency_ns) {
        check_shape(*latency_ns, "latency_ns", n);
        check_measured(*latency_ns, "latency_ns");
    }
    if (bandwidth_gbps) {
        check_shape(*bandwidth_gbps, "bandwidth_gbps", n);
        check_measured(*bandwidth_gbps, "bandwidth_gbps");
    }

    // What a restriction left out is not also in the machine.
    for (unsigned cpu : left_out.cpus) {
        if (cpu >= max_cpus) throw Error("left_out.cpus", cpu_out_of_range(cpu));
        if (seen_cpus.count(cpu))
            throw Error("left_out.cpus", "CPU " + std::to_string(cpu) + " is left out but is a CPU of a node");
    }
    for (unsigned node : left_out.nodes.to_vector())
        for (const Node& kept : nodes)
            if (kept.os_index == node)
                throw Error("left_out.nodes", "node " + std::to_string(node) + " is left out but is in the machine");
    if (!left_out.empty() && left_out.by.empty())
        throw Error("left_out.by", "is empty; a restriction names who restricts (e.g. this process's cpuset)");
    if (left_out.empty() && !left_out.by.empty())
        throw Error("left_out.by", "is '" + left_out.by +
                                       "', but nothing is left out (no CPU, node or memory); name who restricts "
                                       "only with what it left out");

    std::set<unsigned> in_a_core;
    for (std::size_t k = 0; k < smt_cores.size(); ++k) {
        const std::vector<unsigned>& core = smt_cores[k];
        const std::string field = at("smt_cores", k);
        if (core.size() < 2)
            throw Error(field, "lists " + std::to_string(core.size()) +
                                   " CPUs; an SMT core has at least 2 (a CPU alone is a core without listing)");
        if (!std::is_sorted(core.begin(), core.end()) ||
            std::adjacent_find(core.begin(), core.end()) != core.end())
            throw Error(field, "is not ascending with each CPU once");
        for (unsigned cpu : core) {
            if (!seen_cpus.count(cpu))
                throw Error(field, "CPU " + std::to_string(cpu) + " is not a CPU of any node");
            if (!in_a_core.insert(cpu).second)
                throw Error(field, "CPU " + std::to_string(cpu) + " is in another core too");
        }
        if (k > 0 && smt_cores[k - 1].front() >= core.front())
            throw Error(field, "is out of order: the cores go by their first CPU, ascending");
    }
    for (std::size_t k = 0; k < caches.size(); ++k) {
        const Cache& cache = caches[k];
        const std::string field = at("caches", k);
        if (cache.level == 0) throw Error(field + ".level", "is 0; cache levels start at 1");
        for (unsigned cpu : cache.cpus)
            if (!seen_cpus.count(cpu))
                throw Error(field + ".cpus", "CPU " + std::to_string(cpu) + " is not a CPU of any node");
    }
}

}  // namespace numaware
