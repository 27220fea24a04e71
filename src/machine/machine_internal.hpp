// machine/machine_internal.hpp — helpers shared by the machine sources.
//
// Not installed: the synthetic parser, the hwloc reader and JSON use these so
// that the matrix syntax and the default SLIT exist exactly once.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "numaware/machine.hpp"

namespace numaware::detail {

// The SLIT a source gets when it has none: 10 local, 20 remote. These are
// the values the ACPI spec names for "local" and the Linux kernel assumes
// (REMOTE_DISTANCE) when firmware gives no table.
NodeMatrix<unsigned> default_distances(std::size_t node_count);

// "10,21/21,10": rows split by '/', entries by ','. `field` names the key
// in error messages (e.g. "distances").
NodeMatrix<unsigned> parse_unsigned_matrix(std::string_view text, std::string_view field);
NodeMatrix<double> parse_double_matrix(std::string_view text, std::string_view field);

// hwloc sources (hwloc_source.cpp).
Machine machine_from_hwloc_xml_buffer(const std::string& xml, const std::string& name);
// hwloc synthetic syntax, e.g. "Package:2 NUMANode:1 Core:2 PU:1"; the
// "hwloc:" prefix is already stripped and no numaware keys remain.
Machine machine_from_hwloc_synthetic(const std::string& description);

// Throws Error(field, ...) unless `bytes` is a power of two >= 1024: below
// 1 KiB no kernel pages, and a page size is always a power of two.
void check_page_bytes(std::uint64_t bytes, std::string_view field);

// Reads a whole file; throws Error naming the path when it cannot.
std::string read_text_file(const std::string& path);

}  // namespace numaware::detail
