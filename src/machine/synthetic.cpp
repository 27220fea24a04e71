// machine/synthetic.cpp — machines described in one line of text.
//
// Two forms: numaware's own key=value form (see machine.hpp) and hwloc's
// synthetic syntax behind an "hwloc:" prefix. Both exist so tests, the
// simulators and the emulated-machine harness can name a machine that the
// host does not have.
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "machine/machine_internal.hpp"
#include "numaware/error.hpp"
#include "numaware/machine.hpp"
#include "util/text.hpp"

namespace numaware {

namespace {

constexpr const char* known_keys = "nodes, cpus-per-node, mem-per-node, distances, cpus, mem, tiers, kinds, "
                                   "latency, bandwidth, page, allowed-cpus, allowed-mems";
// Who restricts a synthetic machine (Restriction::by).
constexpr std::string_view allowed_sets_by = "the allowed-cpus=/allowed-mems= sets";
// Far above any real machine, low enough that a typo cannot exhaust memory.
constexpr unsigned max_cpus_per_node = 4096;
// The most PUs an hwloc synthetic description may make: NR_CPUS's largest
// value in Linux (x86 MAXSMP).
constexpr std::uint64_t max_synthetic_pus = 8192;
// The most objects one level of an hwloc synthetic description may put
// under each parent. hwloc inserts siblings one by one, in time that grows
// with the square of their number: "hwloc:4676" took 1.4 s and
// "hwloc:8192" 6.4 s of CPU in `numaware topo` (release build), "hwloc:8
// 1024" 0.7 s. Real machines stay far below: 288 cores share one L3 in the
// widest 2026 packages, and 256 packages make the largest SMP servers.
constexpr std::uint64_t max_synthetic_width = 1024;

std::vector<std::string_view> split_words(std::string_view text) {
    std::vector<std::string_view> out;
    std::size_t pos = 0;
    while (pos < text.size()) {
        while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
        std::size_t end = pos;
        while (end < text.size() && !std::isspace(static_cast<unsigned char>(text[end]))) ++end;
        if (end > pos) out.push_back(text.substr(pos, end - pos));
        pos = end;
    }
    return out;
}

template <class T>
T parse_integer(std::string_view text, const std::string& field, const char* example) {
    T value{};
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size())
        throw Error(field, "'" + std::string(text) + "' is not a whole number (expected e.g. " + example + ")");
    return value;
}

double parse_double(std::string_view text, const std::string& field) {
    // from_chars for double is in GCC 12's libstdc++.
    double value = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size() || !std::isfinite(value))
        throw Error(field, "'" + std::string(text) + "' is not a number (expected e.g. 85.5)");
    return value;
}

template <class T, class Parse>
NodeMatrix<T> parse_matrix(std::string_view text, std::string_view name, Parse parse_entry) {
    if (text.empty())
        throw Error(std::string(name), "empty matrix: expected rows split by '/' and entries by ',', e.g. 10,21/21,10");
    NodeMatrix<T> m;
    const auto rows = split(text, '/');
    for (std::size_t i = 0; i < rows.size(); ++i) {
        std::vector<T> row;
        const auto cells = split(rows[i], ',');
        for (std::size_t j = 0; j < cells.size(); ++j)
            row.push_back(parse_entry(cells[j], std::string(name) + "[" + std::to_string(i) + "][" +
                                                    std::to_string(j) + "]"));
        m.push_back(std::move(row));
    }
    return m;
}

// A per-node list must name every node exactly once.
std::vector<std::string_view> node_list(std::string_view text, const std::string& key, unsigned node_count) {
    auto items = split(text, ',');
    if (items.size() != node_count)
        throw Error(key, "lists " + std::to_string(items.size()) + " values but nodes=" + std::to_string(node_count) +
                             " (expected one value per node)");
    return items;
}

}  // namespace

namespace detail {

NodeMatrix<unsigned> parse_unsigned_matrix(std::string_view text, std::string_view field) {
    return parse_matrix<unsigned>(text, field, [](std::string_view cell, const std::string& f) {
        return parse_integer<unsigned>(cell, f, "10");
    });
}

NodeMatrix<double> parse_double_matrix(std::string_view text, std::string_view field) {
    return parse_matrix<double>(text, field, [](std::string_view cell, const std::string& f) {
        return parse_double(cell, f);
    });
}

}  // namespace detail

namespace {

// Keys that may follow an hwloc synthetic description.
bool is_matrix_key(std::string_view key) { return key == "distances" || key == "latency" || key == "bandwidth"; }

void apply_matrix(Machine& m, std::string_view key, std::string_view value) {
    if (key == "distances") m.distances = detail::parse_unsigned_matrix(value, "distances");
    else if (key == "latency") m.latency_ns = detail::parse_double_matrix(value, "latency");
    else m.bandwidth_gbps = detail::parse_double_matrix(value, "bandwidth");
}

Machine from_hwloc_form(std::string_view description) {
    std::string hwloc_part;
    std::vector<std::pair<std::string_view, std::string_view>> matrices;
    for (std::string_view word : split_words(description)) {
        const std::size_t eq = word.find('=');
        // "NUMANode:1(memory=1GB)" is hwloc's own attribute syntax: only a
        // word that starts with one of our keys is ours.
        if (eq != std::string_view::npos && is_matrix_key(word.substr(0, eq))) {
            matrices.emplace_back(word.substr(0, eq), word.substr(eq + 1));
        } else {
            if (!matrices.empty())
                throw Error("synthetic '" + std::string(word) + "'",
                            "hwloc synthetic text must come before distances=/latency=/bandwidth=");
            if (!hwloc_part.empty()) hwloc_part += ' ';
            hwloc_part += word;
        }
    }
    if (hwloc_part.empty())
        throw Error("synthetic", "'hwloc:' must be followed by hwloc synthetic syntax, e.g. "
                                 "'hwloc:Package:2 NUMANode:1 Core:2 PU:1'");
    // hwloc builds every object of the description, in time that grows
    // with the square of a level's width (9,351 PUs under one machine took
    // 9.4 s): refuse, before hwloc sees it, a description whose levels
    // multiply to more PUs than Linux can run (NR_CPUS, at most 8,192).
    // A level is "Type:N" or "N", attributes in parentheses after it. hwloc
    // reads N as strtoul does in base 0 ("0x86" is 134, "010" is 8, "+8" is
    // 8), and so does this count: "hwloc:0x86 351 1 5" (235,170 PUs) once
    // passed it as "not a number" and kept hwloc busy for over a minute.
    // A number that ends on a digit ("0286": octal 02, then 86) is
    // followed by the next level at once, as hwloc reads it: "hwloc:1 0286
    // 151 1 1" is 1 x 2 x 86 x 151 x 1 x 1 = 25,972 PUs (7 s in hwloc), and
    // had passed as 302.
    std::uint64_t pus = 1;
    for (std::string_view level : split_words(hwloc_part)) {
        const std::size_t colon = level.find(':');
        const std::string count(colon == std::string_view::npos ? level : level.substr(colon + 1));
        for (const char* at = count.c_str();;) {
            errno = 0;
            char* end = nullptr;
            const unsigned long long read = std::strtoull(at, &end, 0);
            if (end == at || read == 0) break;   // hwloc judges it
            const std::uint64_t n = errno == ERANGE ? std::numeric_limits<std::uint64_t>::max() : read;
            if (n > max_synthetic_width)
                throw Error("synthetic", "level '" + printable_ascii(level).substr(0, 40) + "' puts " +
                                             std::to_string(n) + " objects under each parent; at most " +
                                             std::to_string(max_synthetic_width) +
                                             " (hwloc builds a level in time that grows with the square of its width)");
            pus = pus > max_synthetic_pus / n ? max_synthetic_pus + 1 : pus * n;
            if (pus > max_synthetic_pus)
                throw Error("synthetic", "'hwloc:" + printable_ascii(hwloc_part).substr(0, 80) +
                                             "' describes more than " + std::to_string(max_synthetic_pus) +
                                             " PUs (Linux's NR_CPUS maximum)");
            if (std::isdigit(static_cast<unsigned char>(*end)) == 0) break;
            at = end;
        }
    }
    Machine m = detail::machine_from_hwloc_synthetic(hwloc_part);
    for (auto [key, value] : matrices) apply_matrix(m, key, value);
    m.name = "hwloc synthetic: " + printable_ascii(description);
    m.validate();
    return m;
}

}  // namespace

Machine Machine::from_synthetic(std::string_view description) {
    // Every key, value and name is ASCII: a byte outside printable ASCII
    // (and the white space that separates words) is a mistake, and would reach the JSON
    // form as invalid UTF-8.
    for (std::size_t i = 0; i < description.size(); ++i) {
        const auto c = static_cast<unsigned char>(description[i]);
        if ((c < 0x20 && !std::isspace(c)) || c > 0x7e) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "0x%02x", c);
            throw Error("machine", "synthetic description: byte " + std::to_string(i) + " (" + hex +
                                       ") is not printable ASCII");
        }
    }
    constexpr std::string_view hwloc_prefix = "hwloc:";
    if (description.substr(0, hwloc_prefix.size()) == hwloc_prefix)
        return from_hwloc_form(description.substr(hwloc_prefix.size()));

    std::map<std::string, std::string_view, std::less<>> values;
    for (std::string_view word : split_words(description)) {
        const std::size_t eq = word.find('=');
        if (eq == std::string_view::npos || eq == 0)
            throw Error("synthetic '" + std::string(word) + "'",
                        "expected key=value (keys: " + std::string(known_keys) + ")");
        const std::string key(word.substr(0, eq));
        if (key != "nodes" && key != "cpus-per-node" && key != "mem-per-node" && key != "distances" &&
            key != "cpus" && key != "mem" && key != "tiers" && key != "kinds" && key != "latency" &&
            key != "bandwidth" && key != "page" && key != "allowed-cpus" && key != "allowed-mems")
            throw Error(key, "unknown key in synthetic description '" + std::string(description) +
                                 "' (known keys: " + known_keys + ")");
        if (values.count(key)) throw Error(key, "given twice in synthetic description");
        values[key] = word.substr(eq + 1);
    }

    auto it = values.find("nodes");
    if (it == values.end())
        throw Error("nodes", "missing nodes=N in synthetic description '" + std::string(description) +
                                 "' (e.g. 'nodes=4 cpus-per-node=2 mem-per-node=512M')");
    const unsigned node_count = parse_integer<unsigned>(it->second, "nodes", "nodes=4");
    if (node_count == 0 || node_count > NodeSet::max_nodes)
        throw Error("nodes", "nodes=" + std::to_string(node_count) + " is out of range (expected 1.." +
                                 std::to_string(NodeSet::max_nodes) + ")");

    std::vector<unsigned> cpus(node_count, 1u);
    if ((it = values.find("cpus-per-node")) != values.end())
        cpus.assign(node_count, parse_integer<unsigned>(it->second, "cpus-per-node", "cpus-per-node=2"));
    if ((it = values.find("cpus")) != values.end()) {
        auto items = node_list(it->second, "cpus", node_count);
        for (unsigned i = 0; i < node_count; ++i)
            cpus[i] = parse_integer<unsigned>(items[i], "cpus[" + std::to_string(i) + "]", "cpus=2,2,0");
    }
    for (unsigned i = 0; i < node_count; ++i)
        if (cpus[i] > max_cpus_per_node)
            throw Error(values.count("cpus") ? "cpus[" + std::to_string(i) + "]" : std::string("cpus-per-node"),
                        std::to_string(cpus[i]) + " CPUs on one node exceeds the limit of " +
                            std::to_string(max_cpus_per_node));

    std::vector<std::uint64_t> memory(node_count, 512ULL << 20);
    if ((it = values.find("mem-per-node")) != values.end())
        memory.assign(node_count, parse_size(it->second, "mem-per-node"));
    if ((it = values.find("mem")) != values.end()) {
        auto items = node_list(it->second, "mem", node_count);
        for (unsigned i = 0; i < node_count; ++i) memory[i] = parse_size(items[i], "mem[" + std::to_string(i) + "]");
    }

    Machine m;
    m.name = "synthetic: " + printable_ascii(description);
    unsigned next_cpu = 0;
    for (unsigned i = 0; i < node_count; ++i) {
        Node node;
        node.os_index = i;
        node.memory_bytes = memory[i];
        for (unsigned c = 0; c < cpus[i]; ++c) node.cpus.push_back(next_cpu++);
        m.nodes.push_back(std::move(node));
    }
    if ((it = values.find("tiers")) != values.end()) {
        auto items = node_list(it->second, "tiers", node_count);
        for (unsigned i = 0; i < node_count; ++i)
            m.nodes[i].tier = parse_integer<int>(items[i], "tiers[" + std::to_string(i) + "]", "tiers=0,0,1");
    }
    if ((it = values.find("kinds")) != values.end()) {
        auto items = node_list(it->second, "kinds", node_count);
        for (unsigned i = 0; i < node_count; ++i) m.nodes[i].kind = std::string(items[i]);
    }

    if ((it = values.find("page")) != values.end()) {
        m.page_bytes = parse_size(it->second, "page");
        detail::check_page_bytes(m.page_bytes, "page");
    }

    // No distances given: the kernel's own default (10 local, 20 remote).
    m.distances = detail::default_distances(node_count);
    for (const char* key : {"distances", "latency", "bandwidth"})
        if ((it = values.find(key)) != values.end()) apply_matrix(m, key, it->second);
    m.validate();

    // A process in a cpuset of these CPUs and memory nodes sees this part.
    const auto allowed_cpus = values.find("allowed-cpus");
    const auto allowed_mems = values.find("allowed-mems");
    if (allowed_cpus == values.end() && allowed_mems == values.end()) return m;
    std::vector<unsigned> cpu_list;
    if (allowed_cpus != values.end()) {
        cpu_list = parse_index_list(allowed_cpus->second, "allowed-cpus", "CPU", static_cast<unsigned>(next_cpu));
    } else {
        for (unsigned c = 0; c < next_cpu; ++c) cpu_list.push_back(c);
    }
    NodeSet mems = m.all_nodes();
    if (allowed_mems != values.end()) {
        mems = NodeSet(parse_index_list(allowed_mems->second, "allowed-mems", "node", node_count));
    }
    return m.restrict_to(cpu_list, mems, allowed_sets_by);
}

}  // namespace numaware
