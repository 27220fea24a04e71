// placement/policy.cpp — policy values, their spec syntax and their checks
// against a machine.
#include <algorithm>
#include <charconv>
#include <limits>
#include <string>

#include "numaware/error.hpp"
#include "numaware/placement.hpp"

namespace numaware {

using Kind = PlacementPolicy::Kind;

namespace {
// A policy of `kind` over a node set.
PlacementPolicy over(Kind kind, NodeSet set) {
    PlacementPolicy p;
    p.kind = kind;
    p.nodes = std::move(set);
    return p;
}
}  // namespace

PlacementPolicy PlacementPolicy::first_touch() { return PlacementPolicy{}; }

PlacementPolicy PlacementPolicy::bind(NodeSet set) { return over(Kind::bind, std::move(set)); }

PlacementPolicy PlacementPolicy::preferred(unsigned node) { return over(Kind::preferred, NodeSet{node}); }

PlacementPolicy PlacementPolicy::preferred_many(NodeSet set) { return over(Kind::preferred_many, std::move(set)); }

PlacementPolicy PlacementPolicy::interleave(NodeSet set) { return over(Kind::interleave, std::move(set)); }

PlacementPolicy PlacementPolicy::weighted_interleave(std::map<unsigned, unsigned> node_weights) {
    PlacementPolicy p;
    p.kind = Kind::weighted_interleave;
    for (const auto& [node, weight] : node_weights) {
        p.nodes.add(node);
        p.weights.emplace_back(node, weight);
    }
    return p;
}

namespace {
PlacementPolicy anchored(Kind kind, Anchor anchor, unsigned index) {
    PlacementPolicy p;
    p.kind = kind;
    p.anchor = anchor;
    p.anchor_index = index;
    return p;
}
}  // namespace

PlacementPolicy PlacementPolicy::local_to_calling_thread() { return anchored(Kind::local, Anchor::calling_thread, 0); }
PlacementPolicy PlacementPolicy::local_to_cpu(unsigned cpu) { return anchored(Kind::local, Anchor::cpu, cpu); }
PlacementPolicy PlacementPolicy::local_to_node(unsigned node) { return anchored(Kind::local, Anchor::node, node); }
PlacementPolicy PlacementPolicy::remote_to_calling_thread() { return anchored(Kind::remote, Anchor::calling_thread, 0); }
PlacementPolicy PlacementPolicy::remote_to_cpu(unsigned cpu) { return anchored(Kind::remote, Anchor::cpu, cpu); }
PlacementPolicy PlacementPolicy::remote_to_node(unsigned node) { return anchored(Kind::remote, Anchor::node, node); }

PlacementPolicy PlacementPolicy::block(std::vector<std::pair<unsigned, unsigned>> node_weights) {
    PlacementPolicy p;
    p.kind = Kind::block;
    for (const auto& [node, weight] : node_weights) {
        (void)weight;
        p.nodes.add(node);
    }
    p.weights = std::move(node_weights);
    return p;
}

PlacementPolicy PlacementPolicy::block_even(NodeSet set) {
    std::vector<std::pair<unsigned, unsigned>> parts;
    for (unsigned node : set.to_vector()) parts.emplace_back(node, 1u);
    return block(std::move(parts));
}

PlacementPolicy PlacementPolicy::cyclic(NodeSet set, std::size_t unit) {
    PlacementPolicy p;
    p.kind = Kind::cyclic;
    p.nodes = std::move(set);
    p.unit_pages = unit;
    return p;
}

PlacementPolicy PlacementPolicy::page_map(std::vector<unsigned> page_nodes) {
    PlacementPolicy p;
    p.kind = Kind::page_map;
    for (unsigned node : page_nodes) p.nodes.add(node);
    p.map = std::move(page_nodes);
    return p;
}

bool PlacementPolicy::fine_grained() const {
    switch (kind) {
    case Kind::interleave:
    case Kind::weighted_interleave:
    case Kind::block:
    case Kind::cyclic:
    case Kind::page_map:
        return true;
    default:
        return false;
    }
}

namespace {

std::string weights_text(const std::vector<std::pair<unsigned, unsigned>>& weights) {
    std::string out;
    for (const auto& [node, weight] : weights) {
        if (!out.empty()) out += ',';
        out += std::to_string(node) + "=" + std::to_string(weight);
    }
    return out;
}

std::string anchor_text(const PlacementPolicy& p) {
    switch (p.anchor) {
    case Anchor::calling_thread: return "";
    case Anchor::cpu: return ":cpu=" + std::to_string(p.anchor_index);
    case Anchor::node: return ":node=" + std::to_string(p.anchor_index);
    }
    return "";
}

bool all_weights_equal(const std::vector<std::pair<unsigned, unsigned>>& weights) {
    for (const auto& w : weights)
        if (w.second != weights.front().second) return false;
    return true;
}

}  // namespace

std::string PlacementPolicy::to_string() const {
    switch (kind) {
    case Kind::first_touch: return "first-touch";
    case Kind::bind: return "bind:" + nodes.to_string();
    case Kind::preferred: return "preferred:" + nodes.to_string();
    case Kind::preferred_many: return "preferred-many:" + nodes.to_string();
    case Kind::interleave: return "interleave:" + nodes.to_string();
    case Kind::weighted_interleave: return "weighted:" + weights_text(weights);
    case Kind::local: return "local" + anchor_text(*this);
    case Kind::remote: return "remote" + anchor_text(*this);
    case Kind::block: {
        // An even block over ascending nodes reads as a plain node list.
        bool ascending = std::is_sorted(weights.begin(), weights.end()) &&
                         std::adjacent_find(weights.begin(), weights.end(), [](const auto& a, const auto& b) {
                             return a.first == b.first;
                         }) == weights.end();
        if (!weights.empty() && ascending && all_weights_equal(weights) && weights.front().second == 1)
            return "block:" + nodes.to_string();
        return "block:" + weights_text(weights);
    }
    case Kind::cyclic:
        return "cyclic:" + nodes.to_string() + (unit_pages == 1 ? "" : "/" + std::to_string(unit_pages));
    case Kind::page_map: return "map:" + std::to_string(map.size()) + " pages";
    }
    return "?";
}

// ---- checks against a machine ---------------------------------------------

namespace {

// A node absent from the machine is refused with the reason: not in the
// hardware, or left out by a cpuset (Machine::absent_node_reason).
void check_node(unsigned node, const Machine& machine, std::string_view field) {
    machine.check_placement_target(node, field);
}

void check_set(const NodeSet& set, const Machine& machine, std::string_view field) {
    if (set.empty()) throw Error(std::string(field), "the node set is empty; name at least one node");
    for (unsigned node : set.to_vector()) check_node(node, machine, field);
}

void check_anchor(const PlacementPolicy& p, const Machine& machine, std::string_view field) {
    const char* what = p.kind == Kind::local ? "local" : "remote";
    if (p.anchor == Anchor::cpu) {
        bool known = false;
        for (const Node& n : machine.nodes)
            known = known || std::find(n.cpus.begin(), n.cpus.end(), p.anchor_index) != n.cpus.end();
        if (!known) throw Error(std::string(field), machine.absent_cpu_reason(p.anchor_index));
    } else if (p.anchor == Anchor::node) {
        if (!machine.all_nodes().contains(p.anchor_index))
            throw Error(std::string(field), machine.absent_node_reason(p.anchor_index));
        if (!machine.node(p.anchor_index).has_cpus())
            throw Error(std::string(field),
                        std::string(what) + " placement for a thread on node " +
                            std::to_string(p.anchor_index) + " is impossible: node " +
                            std::to_string(p.anchor_index) +
                            " has no CPUs, so no thread runs there (bind:" +
                            std::to_string(p.anchor_index) + " places memory on it)");
    }
}

void check_weights(const std::vector<std::pair<unsigned, unsigned>>& weights, unsigned max_weight,
                   const Machine& machine, std::string_view field) {
    if (weights.empty()) throw Error(std::string(field), "the node set is empty; name at least one node");
    for (const auto& [node, weight] : weights) {
        check_node(node, machine, field);
        if (weight == 0 || weight > max_weight)
            throw Error(std::string(field), "weight " + std::to_string(weight) + " for node " +
                                                std::to_string(node) + " is outside 1.." +
                                                std::to_string(max_weight));
    }
}

}  // namespace

void validate_policy(const PlacementPolicy& p, const Machine& machine, std::string_view field) {
    switch (p.kind) {
    case Kind::first_touch:
        return;
    case Kind::bind:
    case Kind::preferred_many:
    case Kind::interleave:
        check_set(p.nodes, machine, field);
        return;
    case Kind::preferred:
        if (p.nodes.size() != 1)
            throw Error(std::string(field), "preferred takes exactly one node, got " +
                                                std::to_string(p.nodes.size()));
        check_set(p.nodes, machine, field);
        return;
    case Kind::weighted_interleave:
        // The kernel stores interleave weights as u8.
        check_weights(p.weights, 255, machine, field);
        return;
    case Kind::block:
        check_weights(p.weights, std::numeric_limits<unsigned>::max(), machine, field);
        return;
    case Kind::cyclic:
        check_set(p.nodes, machine, field);
        if (p.unit_pages == 0) throw Error(std::string(field), "the cyclic unit is 0 pages; it must be at least 1");
        return;
    case Kind::local:
    case Kind::remote:
        check_anchor(p, machine, field);
        return;
    case Kind::page_map:
        if (p.map.empty()) throw Error(std::string(field), "the page map is empty");
        for (unsigned node : p.nodes.to_vector()) check_node(node, machine, field);
        return;
    }
}

// ---- the spec syntax --------------------------------------------------------

namespace {

unsigned parse_number(std::string_view text, const std::string& field, const char* what) {
    unsigned value = 0;
    const char* begin = text.data();
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(begin, end, value);
    if (text.empty() || ec != std::errc{} || ptr != end)
        throw Error(field, std::string("expected ") + what + ", got '" + std::string(text) + "'");
    return value;
}

NodeSet parse_nodes(std::string_view text, const Machine& machine, const std::string& field) {
    if (text.empty()) throw Error(field, "the node set is empty; name nodes like 0-3,6 or 'all'");
    if (text == "all") {
        return machine.memory_nodes();
    }
    try {
        return NodeSet::parse(text, field);
    } catch (const Error& e) {
        // NodeSet::parse named the field already: its reason alone follows.
        const std::string what = e.what();
        throw Error(field, std::string("bad node list '") + std::string(text) + "': " +
                               what.substr(std::min(what.size(), e.field().size() + 2)));
    }
}

std::vector<std::pair<unsigned, unsigned>> parse_weights(std::string_view text, const std::string& field) {
    std::vector<std::pair<unsigned, unsigned>> out;
    if (text.empty()) throw Error(field, "the node set is empty; expected NODE=WEIGHT,...");
    std::size_t pos = 0;
    while (pos <= text.size()) {
        std::size_t comma = text.find(',', pos);
        std::string_view item = text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
        std::size_t eq = item.find('=');
        if (eq == std::string_view::npos)
            throw Error(field, "expected NODE=WEIGHT, got '" + std::string(item) + "'");
        out.emplace_back(parse_number(item.substr(0, eq), field, "a node number"),
                         parse_number(item.substr(eq + 1), field, "a weight"));
        if (comma == std::string_view::npos) break;
        pos = comma + 1;
    }
    return out;
}

PlacementPolicy parse_anchored(Kind kind, std::string_view arg, bool has_arg, const std::string& field) {
    if (!has_arg) return anchored(kind, Anchor::calling_thread, 0);
    if (arg.substr(0, 4) == "cpu=") return anchored(kind, Anchor::cpu, parse_number(arg.substr(4), field, "a CPU number"));
    if (arg.substr(0, 5) == "node=") return anchored(kind, Anchor::node, parse_number(arg.substr(5), field, "a node number"));
    throw Error(field, "expected cpu=N or node=N after ':', got '" + std::string(arg) + "'");
}

}  // namespace

PlacementPolicy parse_policy(std::string_view spec, const Machine& machine) {
    const std::string field = "policy '" + std::string(spec) + "'";
    const std::size_t colon = spec.find(':');
    const bool has_arg = colon != std::string_view::npos;
    const std::string_view name = spec.substr(0, colon);
    const std::string_view arg = has_arg ? spec.substr(colon + 1) : std::string_view{};

    auto need_arg = [&](const char* form) {
        if (!has_arg || arg.empty())
            throw Error(field, std::string("missing argument; expected ") + form);
    };

    PlacementPolicy p;
    if (name == "first-touch" || name == "default") {
        if (has_arg) throw Error(field, "first-touch takes no argument");
        p = PlacementPolicy::first_touch();
    } else if (name == "bind") {
        need_arg("bind:NODES");
        p = PlacementPolicy::bind(parse_nodes(arg, machine, field));
    } else if (name == "preferred") {
        need_arg("preferred:NODE");
        p = PlacementPolicy::preferred(parse_number(arg, field, "one node number"));
    } else if (name == "preferred-many") {
        need_arg("preferred-many:NODES");
        p = PlacementPolicy::preferred_many(parse_nodes(arg, machine, field));
    } else if (name == "interleave") {
        need_arg("interleave:NODES");
        p = PlacementPolicy::interleave(parse_nodes(arg, machine, field));
    } else if (name == "weighted" || name == "weighted-interleave") {
        need_arg("weighted:NODE=WEIGHT,...");
        auto weights = parse_weights(arg, field);
        std::map<unsigned, unsigned> by_node;
        for (const auto& [node, weight] : weights)
            if (!by_node.emplace(node, weight).second)
                throw Error(field, "node " + std::to_string(node) + " is given twice");
        p = PlacementPolicy::weighted_interleave(std::move(by_node));
    } else if (name == "local") {
        p = parse_anchored(Kind::local, arg, has_arg, field);
    } else if (name == "remote") {
        p = parse_anchored(Kind::remote, arg, has_arg, field);
    } else if (name == "block") {
        need_arg("block:NODES or block:NODE=WEIGHT,...");
        if (arg.find('=') != std::string_view::npos)
            p = PlacementPolicy::block(parse_weights(arg, field));
        else
            p = PlacementPolicy::block_even(parse_nodes(arg, machine, field));
    } else if (name == "cyclic") {
        need_arg("cyclic:NODES[/UNIT_PAGES]");
        const std::size_t slash = arg.find('/');
        std::size_t unit = 1;
        if (slash != std::string_view::npos) unit = parse_number(arg.substr(slash + 1), field, "a unit in pages");
        p = PlacementPolicy::cyclic(parse_nodes(arg.substr(0, slash), machine, field), unit);
    } else {
        throw Error(field, "unknown policy '" + std::string(name) +
                               "'; expected first-touch, bind, preferred, preferred-many, interleave, "
                               "weighted, local, remote, block or cyclic");
    }
    validate_policy(p, machine, field);
    return p;
}

}  // namespace numaware
