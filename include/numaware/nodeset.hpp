// numaware/nodeset.hpp — a set of NUMA node OS indices.
//
// Sized like the Debian kernel's MAX_NUMNODES (1024) so a set converts to a
// kernel nodemask without loss. Parsing accepts numactl's list syntax
// ("0-3,6") and "all" only where a Machine is given to resolve it.
#pragma once

#include <array>
#include <bitset>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace numaware {

// The kernel's list syntax for indices ("0-3,8"), shared by node and CPU
// lists. parse_index_list keeps the order written and any repeats, so a
// caller can reject duplicates with its own message. `noun` names what is
// listed ("node", "CPU") in errors; indices >= `limit` are refused.
std::vector<unsigned> parse_index_list(std::string_view text, std::string_view field,
                                       std::string_view noun, unsigned limit);
// Ascending, deduplicated, with runs folded: {0,1,2,3,8} -> "0-3,8".
std::string format_index_list(std::vector<unsigned> indices);

class NodeSet {
public:
    static constexpr unsigned max_nodes = 1024;

    NodeSet() = default;
    NodeSet(std::initializer_list<unsigned> nodes);
    explicit NodeSet(const std::vector<unsigned>& nodes);

    // Parses "0-3,6". Throws Error naming `field` on malformed text or an
    // index >= max_nodes.
    static NodeSet parse(std::string_view text, std::string_view field = "nodes");

    void add(unsigned node);
    void remove(unsigned node);
    bool contains(unsigned node) const { return node < max_nodes && bits_.test(node); }
    bool empty() const { return bits_.none(); }
    std::size_t size() const { return bits_.count(); }
    std::vector<unsigned> to_vector() const;    // ascending
    std::string to_string() const;              // "0-3,6"
    // The kernel's nodemask layout: unsigned long words, bit n = node n.
    static constexpr std::size_t mask_words = max_nodes / (8 * sizeof(unsigned long));
    using Mask = std::array<unsigned long, mask_words>;
    // By value, with no allocation: the malloc shim binds memory with it.
    Mask to_mask() const noexcept;
    static constexpr unsigned long mask_bits = max_nodes;

    bool operator==(const NodeSet&) const = default;

private:
    std::bitset<max_nodes> bits_;
};

}  // namespace numaware
