// sim/memory/directory.hpp — the memory-hierarchy simulator's coherence
// directory: for each line, which caches may hold a copy and which core
// owns it (hierarchy.cpp, "Coherence").
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/memory/page_table.hpp"

namespace numaware::sim::memory::detail {

// Where copies of a line may be, for write-invalidate coherence: the cores
// whose L2 it was filled into and the sockets whose L3 it was filled into
// (core i is bit i % 64, socket i bit i % 32: past those, a bit stands for
// every index congruent to it, and an invalidation looks in each), and the
// core that may write it without telling the others (`owner`, -1 for
// none). Copies evicted silently keep their bits; an invalidation then
// finds nothing. The entries of a page's lines are one block, so a
// stream's lines share host cache lines; the last page's block is kept.
class Directory {
public:
    struct Entry {
        std::uint64_t cores = 0;
        std::uint32_t sockets = 0;
        std::int32_t owner = -1;
    };
    explicit Directory(unsigned lines_per_page_shift = 6) : shift_lines_(lines_per_page_shift) {}
    Entry& at(std::uint64_t line) {
        const std::uint64_t page = line >> shift_lines_;
        if (page != last_page_) {
            last_page_ = page;
            last_block_ = block_of(page);
        }
        return entries_[last_block_ + (line & ((std::size_t{1} << shift_lines_) - 1))];
    }
    static std::uint64_t core_bit(std::size_t index) { return std::uint64_t{1} << (index & 63u); }
    static std::uint32_t socket_bit(std::size_t index) { return std::uint32_t{1} << (index & 31u); }

private:
    std::size_t block_of(std::uint64_t page) {
        std::size_t& block = blocks_.at(page);
        if (block == no_block) {
            block = entries_.size();
            entries_.resize(entries_.size() + (std::size_t{1} << shift_lines_));
        }
        return block;
    }
    static constexpr std::size_t no_block = ~std::size_t{0};
    unsigned shift_lines_;
    PageTable<std::size_t> blocks_{no_block};   // page -> its first entry
    std::vector<Entry> entries_;
    std::uint64_t last_page_ = ~std::uint64_t{0};
    std::size_t last_block_ = 0;
};

}  // namespace numaware::sim::memory::detail
