// machine/nodeset.cpp — NodeSet parsing and conversion.
#include "numaware/nodeset.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>

#include "numaware/error.hpp"

namespace numaware {

NodeSet::NodeSet(std::initializer_list<unsigned> nodes) {
    for (unsigned n : nodes) add(n);
}

NodeSet::NodeSet(const std::vector<unsigned>& nodes) {
    for (unsigned n : nodes) add(n);
}

void NodeSet::add(unsigned node) {
    if (node >= max_nodes)
        throw Error("node " + std::to_string(node),
                    "node index out of range (limit " + std::to_string(max_nodes - 1) + ")");
    bits_.set(node);
}

void NodeSet::remove(unsigned node) {
    if (node < max_nodes) bits_.reset(node);
}

namespace {

// The most indices one list may give (ranges expanded), so that a list
// like "0-4294967295" is refused instead of filling memory: 16 times the
// most CPUs Linux can be built for (NR_CPUS, up to 8,192 with x86's
// MAXSMP), whatever the repeats.
constexpr std::uint64_t max_listed_indices = std::uint64_t{1} << 17;
unsigned parse_index(std::string_view item, std::string_view field, std::string_view whole,
                     std::string_view noun, unsigned limit) {
    unsigned value = 0;
    const char* first = item.data();
    const char* last = item.data() + item.size();
    auto [ptr, ec] = std::from_chars(first, last, value);
    if (item.empty() || ec != std::errc{} || ptr != last)
        throw Error(std::string(field), "malformed " + std::string(noun) + " list '" + std::string(whole) +
                                            "': expected indices like 0-3,6");
    if (value >= limit)
        throw Error(std::string(field), std::string(noun) + " " + std::to_string(value) +
                                            " is out of range (limit " + std::to_string(limit - 1) + ")");
    return value;
}
}  // namespace

std::vector<unsigned> parse_index_list(std::string_view text, std::string_view field,
                                       std::string_view noun, unsigned limit) {
    if (text.empty())
        throw Error(std::string(field), "empty " + std::string(noun) + " list: expected indices like 0-3,6");
    std::vector<unsigned> out;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        std::size_t comma = text.find(',', pos);
        if (comma == std::string_view::npos) comma = text.size();
        std::string_view item = text.substr(pos, comma - pos);
        std::size_t dash = item.find('-');
        if (dash == std::string_view::npos) {
            out.push_back(parse_index(item, field, text, noun, limit));
        } else {
            unsigned lo = parse_index(item.substr(0, dash), field, text, noun, limit);
            unsigned hi = parse_index(item.substr(dash + 1), field, text, noun, limit);
            if (lo > hi)
                throw Error(std::string(field), "malformed " + std::string(noun) + " list '" +
                                                    std::string(text) + "': range " + std::string(item) +
                                                    " runs backwards");
            // Counted in 64 bits: a range ending at UINT_MAX must end.
            if (hi - lo >= max_listed_indices || out.size() + (hi - lo) >= max_listed_indices)
                throw Error(std::string(field), std::string(noun) + " list '" + std::string(text).substr(0, 80) +
                                                    "' lists more than " + std::to_string(max_listed_indices) +
                                                    " indices");
            for (std::uint64_t n = lo; n <= hi; ++n) out.push_back(static_cast<unsigned>(n));
        }
        pos = comma + 1;
    }
    return out;
}

std::string format_index_list(std::vector<unsigned> v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    std::string out;
    for (std::size_t i = 0; i < v.size();) {
        std::size_t j = i;
        while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
        if (!out.empty()) out += ',';
        out += std::to_string(v[i]);
        if (j > i) out += '-' + std::to_string(v[j]);
        i = j + 1;
    }
    return out;
}

NodeSet NodeSet::parse(std::string_view text, std::string_view field) {
    NodeSet set;
    for (unsigned n : parse_index_list(text, field, "node", max_nodes)) set.add(n);
    return set;
}

std::vector<unsigned> NodeSet::to_vector() const {
    std::vector<unsigned> out;
    for (unsigned n = 0; n < max_nodes; ++n)
        if (bits_.test(n)) out.push_back(n);
    return out;
}

std::string NodeSet::to_string() const { return format_index_list(to_vector()); }

NodeSet::Mask NodeSet::to_mask() const noexcept {
    constexpr unsigned word_bits = sizeof(unsigned long) * 8;
    Mask mask{};
    for (unsigned n = 0; n < max_nodes; ++n)
        if (bits_.test(n)) mask[n / word_bits] |= 1UL << (n % word_bits);
    return mask;
}

}  // namespace numaware
