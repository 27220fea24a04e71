// os/numa_maps.hpp — a pure parser of /proc/<pid>/numa_maps text.
//
// One record per line (one VMA). The kernel prints
//   <start-hex> <policy> [file=<path>|heap|stack] [huge] [anon=N] [dirty=N]
//   [mapped=N] [mapmax=N] [swapcache=N] [active=N] [writeback=N]
//   [N<node>=<pages>]... [kernelpagesize_kB=<n>]
// where <policy> is the mode name, optional "=<flags>" and ":<nodes>",
// e.g. "default", "bind:0-1", "interleave=static:0-3", "prefer:1",
// "prefer (many):0-1", "weighted interleave:0-3", "bind=balancing:0".
// Two mode names contain a space, so the policy is not one token. A line
// without present pages has no N<node>= counts and no kernelpagesize_kB.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "numaware/nodeset.hpp"

namespace numaware::os {

struct NumaMapsRecord {
    std::uintptr_t address = 0;       // start of the mapping
    std::string policy;               // as printed, e.g. "bind:0-1"
    std::string policy_mode;          // "default", "prefer", "bind", "interleave",
                                      // "weighted interleave", "local", "prefer (many)"
    std::string policy_flags;         // "static", "relative", "balancing", "static|balancing", or ""
    NodeSet policy_nodes;             // the ":<nodes>" part, empty when absent
    std::string kind;                 // "file", "heap", "stack" or "anon"
    std::string file;                 // path for kind "file" (kernel-escaped as printed)
    bool hugetlb = false;             // "huge": a hugetlbfs mapping
    std::map<std::string, std::uint64_t> counters;   // anon, dirty, mapped, mapmax, active, ...
    std::map<unsigned, std::uint64_t> pages_per_node; // N<node>=<pages>
    std::uint64_t page_size_kb = 0;   // kernelpagesize_kB; 0 when the line has no pages

    std::uint64_t total_pages() const;
    std::uint64_t total_bytes() const { return total_pages() * page_size_kb * 1024; }
};

// Throws Error("numa_maps line N", ...) naming the token it could not read.
std::vector<NumaMapsRecord> parse_numa_maps(std::string_view text);

// Sums over records.
struct NumaMapsTotals {
    std::map<unsigned, std::uint64_t> pages_per_node;   // in each record's own page size
    std::map<unsigned, std::uint64_t> bytes_per_node;
    std::uint64_t pages = 0;
    std::uint64_t bytes = 0;
};
NumaMapsTotals numa_maps_totals(const std::vector<NumaMapsRecord>& records);

}  // namespace numaware::os
