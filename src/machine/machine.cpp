// machine/machine.cpp — Machine queries and the SPEC dispatcher.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "machine/machine_internal.hpp"
#include "numaware/error.hpp"
#include "numaware/machine.hpp"
#include "util/text.hpp"

namespace numaware {

namespace detail {

NodeMatrix<unsigned> default_distances(std::size_t node_count) {
    NodeMatrix<unsigned> m(node_count, std::vector<unsigned>(node_count, 20u));
    for (std::size_t i = 0; i < node_count; ++i) m[i][i] = 10u;
    return m;
}

std::string read_text_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        const int err = errno;
        throw Error("machine file '" + path + "'", std::string("cannot be read: ") + std::strerror(err),
                    err != 0 ? err : ENOENT);
    }
    std::ostringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

}  // namespace detail

namespace {
bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

Machine from_text(std::string_view text, const std::string& origin) {
    text = trim(text);
    if (!text.empty() && text.front() == '{') return Machine::from_json(text);
    if (!text.empty() && text.front() == '<') return detail::machine_from_hwloc_xml_buffer(std::string(text), origin);
    return Machine::from_synthetic(text);
}
}  // namespace

Machine Machine::from_spec(std::string_view spec_in) {
    const std::string_view spec = trim(spec_in);
    if (spec.empty())
        throw Error("machine", "empty machine spec: expected 'live', a .xml or .json file, '@file' or a "
                               "synthetic description such as 'nodes=2 cpus-per-node=1 mem-per-node=256M'");
    if (spec == "live") return from_live();
    if (spec.front() == '@') {
        const std::string path(spec.substr(1));
        return from_text(detail::read_text_file(path), path);
    }
    if (ends_with(spec, ".xml")) return from_hwloc_xml(std::string(spec));
    if (ends_with(spec, ".json")) return from_json(detail::read_text_file(std::string(spec)));
    return from_synthetic(spec);
}

std::size_t Machine::cpu_count() const {
    std::size_t total = 0;
    for (const Node& n : nodes) total += n.cpus.size();
    return total;
}


std::size_t Machine::index_of(unsigned os_index) const {
    for (std::size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].os_index == os_index) return i;
    throw Error("node", absent_node_reason(os_index));
}

unsigned Machine::node_of_cpu(unsigned cpu) const {
    for (const Node& n : nodes)
        if (std::binary_search(n.cpus.begin(), n.cpus.end(), cpu)) return n.os_index;
    throw Error("cpu", absent_cpu_reason(cpu));
}

std::vector<std::vector<unsigned>> Machine::cores() const {
    std::vector<unsigned> all;
    for (const Node& n : nodes) all.insert(all.end(), n.cpus.begin(), n.cpus.end());
    std::sort(all.begin(), all.end());
    // Each CPU's level-1 cache (its position in `caches`; with smt_cores,
    // its core's there), one pass over the lists: a machine of 8,192 PUs
    // has as many caches.
    constexpr std::size_t none = static_cast<std::size_t>(-1);
    std::vector<std::size_t> l1_of(all.size(), none);
    for (std::size_t k = 0; k < caches.size(); ++k) {
        if (caches[k].level != 1 || caches[k].type == "instruction") continue;
        for (unsigned c : caches[k].cpus) {
            const auto it = std::lower_bound(all.begin(), all.end(), c);
            if (it != all.end() && *it == c && l1_of[static_cast<std::size_t>(it - all.begin())] == none)
                l1_of[static_cast<std::size_t>(it - all.begin())] = k;
        }
    }
    std::vector<std::vector<unsigned>> out;
    std::vector<std::size_t> core_of_l1(caches.size(), none);
    if (!smt_cores.empty()) {
        // The listed cores instead of the caches.
        std::fill(l1_of.begin(), l1_of.end(), none);
        core_of_l1.assign(smt_cores.size(), none);
        for (std::size_t k = 0; k < smt_cores.size(); ++k)
            for (unsigned c : smt_cores[k]) {
                const auto it = std::lower_bound(all.begin(), all.end(), c);
                if (it != all.end() && *it == c && l1_of[static_cast<std::size_t>(it - all.begin())] == none)
                    l1_of[static_cast<std::size_t>(it - all.begin())] = k;
            }
    }
    for (std::size_t i = 0; i < all.size(); ++i) {
        const std::size_t k = l1_of[i];
        if (k == none) {
            out.push_back({all[i]});
        } else if (core_of_l1[k] == none) {
            core_of_l1[k] = out.size();
            out.push_back({all[i]});
        } else {
            out[core_of_l1[k]].push_back(all[i]);   // ascending: `all` is
        }
    }
    return out;
}

std::string Machine::absent_cpu_reason(unsigned cpu) const {
    std::vector<unsigned> all;
    for (const Node& n : nodes) all.insert(all.end(), n.cpus.begin(), n.cpus.end());
    const std::string head = "CPU " + std::to_string(cpu);
    if (std::binary_search(left_out.cpus.begin(), left_out.cpus.end(), cpu))
        return head + " is not allowed: it is not in " + left_out.by + " (allowed CPUs: " + format_index_list(all) +
               ")";
    return head + " is not in this machine (its CPUs are " + format_index_list(all) + ")";
}

std::string Machine::absent_node_reason(unsigned os_index) const {
    const std::string head = "node " + std::to_string(os_index);
    if (left_out.nodes.contains(os_index))
        return head + " is not allowed: neither its CPUs nor its memory are in " + left_out.by +
               " (allowed nodes: " + all_nodes().to_string() + ")";
    return head + " is not in this machine (nodes: " + all_nodes().to_string() + ")";
}

NodeSet Machine::all_nodes() const {
    NodeSet set;
    for (const Node& n : nodes) set.add(n.os_index);
    return set;
}

NodeSet Machine::nodes_with_cpus() const {
    NodeSet set;
    for (const Node& n : nodes)
        if (n.has_cpus()) set.add(n.os_index);
    return set;
}

unsigned Machine::distance(unsigned from_os, unsigned to_os) const {
    return distances[index_of(from_os)][index_of(to_os)];
}

void Machine::check_placement_target(unsigned os_index, std::string_view field) const {
    const std::string f = field.empty() ? "node " + std::to_string(os_index) : std::string(field);
    std::size_t index = 0;
    try {
        index = index_of(os_index);
    } catch (const Error& e) {
        throw Error(f, absent_node_reason(os_index));
    }
    if (!nodes[index].memory_allowed)
        throw Error(f, "node " + std::to_string(os_index) + "'s memory is not allowed: it is not in " + left_out.by +
                           " (nodes whose memory is allowed: " + memory_nodes().to_string() + ")");
    if (nodes[index].memory_bytes == 0) {
        const NodeSet with_memory = memory_nodes();
        throw Error(f, "node " + std::to_string(os_index) +
                           " has zero memory and cannot hold pages; a placement target needs memory "
                           "(nodes with memory: " +
                           (with_memory.empty() ? std::string("none") : with_memory.to_string()) + ")");
    }
}

NodeSet Machine::memory_nodes() const {
    NodeSet set;
    for (const Node& n : nodes)
        if (n.memory_allowed && n.memory_bytes > 0) set.add(n.os_index);
    return set;
}

unsigned Machine::memory_node_near(unsigned os_index) const {
    const std::size_t from = index_of(os_index);
    std::size_t best = nodes.size();
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (!nodes[i].memory_allowed || nodes[i].memory_bytes == 0) continue;
        if (best == nodes.size() || distances[from][i] < distances[from][best]) best = i;
    }
    if (best == nodes.size())
        throw Error("node " + std::to_string(os_index), "no node of this machine has memory that placement may use");
    return nodes[best].os_index;
}

}  // namespace numaware
