// placement/placed_ranges.hpp — the ranges apply() placed, remembered page
// by page for the process (numaware/placement.hpp: placed_bytes,
// forget_placement).
//
// Ranges are disjoint: remembering or forgetting [start, end) first cuts
// every known range down to its parts outside it. Each range keeps runs of
// pages on one node. Thread-safe (a shared lock: lookups run in parallel).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace numaware::placement_detail {

// Remembers [start, start + page_nodes.size() * page_size): page i on node
// page_nodes[i] (each >= 0). Replaces what was known of those pages.
void remember_placement(std::uintptr_t start, std::size_t page_size, std::span<const int> page_nodes);
// Forgets every page that overlaps [start, start + bytes).
void forget_placement(std::uintptr_t start, std::size_t bytes);
// Bytes of [start, start + bytes) per node, ascending by node, when every
// byte of it lies in remembered pages; nullopt otherwise (bytes == 0 too).
std::optional<std::vector<std::pair<unsigned, std::size_t>>> placed_bytes(std::uintptr_t start, std::size_t bytes);

// The number of remembered ranges, readable without the registry's lock.
inline std::atomic<std::size_t> remembered_ranges{0};
// False when nothing is remembered, so that no lookup can find anything:
// inline, for a caller that asks about many addresses (the task runtime,
// once for each new region) in a process that placed nothing.
inline bool anything_placed() { return remembered_ranges.load(std::memory_order_relaxed) != 0; }

}  // namespace numaware::placement_detail
