// os/numa_maps.cpp — parsing /proc/<pid>/numa_maps (see numa_maps.hpp).
#include "os/numa_maps.hpp"

#include <array>
#include <charconv>

#include "numaware/error.hpp"

namespace numaware::os {

namespace {

// Mode names as the kernel's mpol_to_str prints them; the two with a
// space come first so they are matched whole.
constexpr std::array<std::string_view, 7> kModes = {
    "weighted interleave", "prefer (many)", "default", "prefer", "bind", "interleave", "local",
};

std::uint64_t parse_u64(std::string_view text, std::string_view base_field, std::string_view token, int base = 10) {
    std::uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v, base);
    if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size())
        throw Error(std::string(base_field), "cannot read '" + std::string(token) + "': expected a number");
    return v;
}

std::vector<std::string_view> split_spaces(std::string_view s) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
        std::size_t j = i;
        while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
        if (j > i) out.push_back(s.substr(i, j - i));
        i = j;
    }
    return out;
}

NumaMapsRecord parse_line(std::string_view line, const std::string& field) {
    NumaMapsRecord r;
    const std::size_t sp = line.find(' ');
    if (sp == std::string_view::npos || sp == 0)
        throw Error(field, "expected '<address> <policy> ...', got '" + std::string(line) + "'");
    const std::string_view addr = line.substr(0, sp);
    r.address = static_cast<std::uintptr_t>(parse_u64(addr, field, addr, 16));

    // The policy: a known mode name (possibly with a space), then
    // optional "=flags" and ":nodes", ending at the next space.
    std::string_view rest = line.substr(sp + 1);
    std::size_t mode_len = 0;
    for (std::string_view m : kModes) {
        if (rest.substr(0, m.size()) == m &&
            (rest.size() == m.size() || rest[m.size()] == ' ' || rest[m.size()] == '=' || rest[m.size()] == ':')) {
            mode_len = m.size();
            break;
        }
    }
    if (mode_len == 0) {   // a mode this parser does not know: keep its name
        mode_len = rest.find_first_of(" =:");
        if (mode_len == std::string_view::npos) mode_len = rest.size();
        if (mode_len == 0) throw Error(field, "missing memory policy after the address");
    }
    r.policy_mode = std::string(rest.substr(0, mode_len));
    std::size_t end = rest.find(' ', mode_len);
    if (end == std::string_view::npos) end = rest.size();
    r.policy = std::string(rest.substr(0, end));
    std::string_view tail = rest.substr(mode_len, end - mode_len);   // "=flags:nodes", ":nodes", ""
    if (!tail.empty() && tail[0] == '=') {
        std::size_t colon = tail.find(':');
        r.policy_flags = std::string(tail.substr(1, colon == std::string_view::npos ? std::string_view::npos : colon - 1));
        tail = colon == std::string_view::npos ? std::string_view{} : tail.substr(colon);
    }
    if (!tail.empty()) {
        if (tail[0] != ':' || tail.size() == 1)
            throw Error(field, "malformed policy '" + r.policy + "': expected <mode>[=<flags>][:<nodes>]");
        r.policy_nodes = NodeSet::parse(tail.substr(1), field + " policy nodes");
    }

    r.kind = "anon";
    for (std::string_view tok : split_spaces(rest.substr(end))) {
        if (tok == "heap" || tok == "stack") {
            r.kind = std::string(tok);
            continue;
        }
        if (tok == "huge") {
            r.hugetlb = true;
            continue;
        }
        const std::size_t eq = tok.find('=');
        if (eq == std::string_view::npos || eq == 0)
            throw Error(field, "unexpected token '" + std::string(tok) + "'");
        const std::string_view key = tok.substr(0, eq);
        const std::string_view value = tok.substr(eq + 1);
        if (key == "file") {
            // The kernel escapes spaces, tabs, newlines and '=' in the path,
            // so the path is a single token.
            r.kind = "file";
            r.file = std::string(value);
        } else if (key == "kernelpagesize_kB") {
            r.page_size_kb = parse_u64(value, field, tok);
        } else if (key.size() > 1 && key[0] == 'N' && key.find_first_not_of("0123456789", 1) == std::string_view::npos) {
            const auto node = parse_u64(key.substr(1), field, tok);
            if (node >= NodeSet::max_nodes)
                throw Error(field, "node in '" + std::string(tok) + "' is out of range (limit " +
                                       std::to_string(NodeSet::max_nodes - 1) + ")");
            r.pages_per_node[static_cast<unsigned>(node)] = parse_u64(value, field, tok);
        } else {
            r.counters[std::string(key)] = parse_u64(value, field, tok);
        }
    }
    if (!r.pages_per_node.empty() && r.page_size_kb == 0)
        throw Error(field, "has per-node page counts but no kernelpagesize_kB");
    return r;
}

}  // namespace

std::uint64_t NumaMapsRecord::total_pages() const {
    std::uint64_t sum = 0;
    for (const auto& [node, pages] : pages_per_node) sum += pages;
    return sum;
}

std::vector<NumaMapsRecord> parse_numa_maps(std::string_view text) {
    std::vector<NumaMapsRecord> out;
    std::size_t line_no = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t nl = text.find('\n', pos);
        if (nl == std::string_view::npos) nl = text.size();
        std::string_view line = text.substr(pos, nl - pos);
        pos = nl + 1;
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
        out.push_back(parse_line(line, "numa_maps line " + std::to_string(line_no)));
    }
    return out;
}

NumaMapsTotals numa_maps_totals(const std::vector<NumaMapsRecord>& records) {
    NumaMapsTotals t;
    for (const auto& r : records) {
        for (const auto& [node, pages] : r.pages_per_node) {
            t.pages_per_node[node] += pages;
            t.bytes_per_node[node] += pages * r.page_size_kb * 1024;
        }
        t.pages += r.total_pages();
        t.bytes += r.total_bytes();
    }
    return t;
}

}  // namespace numaware::os
