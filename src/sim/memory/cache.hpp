// sim/memory/cache.hpp — the set-associative, LRU cache arrays of the
// memory-hierarchy simulator, and the per-core TLB.
//
// A cache holds line addresses and, per line, the simulated time its data
// arrives (a line in flight is present with a later `ready`), whether a
// prefetch brought it and nobody has used it yet, and whether it is dirty.
// Sets are indexed by line address modulo the set count (a mask when that
// is a power of two).
#pragma once

#include <cstdint>
#include <vector>

namespace numaware::sim::memory::detail {

inline constexpr std::uint8_t line_prefetched = 1;
inline constexpr std::uint8_t line_dirty = 2;

// What a present line carries besides its tag.
struct LineState {
    double ready = 0;           // ns: when its data is there
    std::uint8_t flags = 0;
};

// A line as evicted.
struct CacheLine {
    std::uint64_t tag = 0;      // line address + 1; 0: nothing was evicted
    double ready = 0;
    std::uint8_t flags = 0;
    std::uint64_t line() const { return tag - 1; }
};

// Tags, LRU stamps and states in three arrays: a lookup reads only the
// set's tags (16 ways: two host cache lines), not every way's state.
class Cache {
public:
    Cache() = default;
    Cache(std::uint64_t bytes, unsigned ways, unsigned line_bytes)
        : ways_(ways), sets_(bytes / line_bytes / ways), mask_(is_pow2(sets_) ? sets_ - 1 : 0),
          tags_(static_cast<std::size_t>(sets_ * ways), 0), used_(tags_.size(), 0), state_(tags_.size()) {}

    LineState* find(std::uint64_t line) {
        const std::size_t base = set_of(line);
        const std::uint64_t* t = &tags_[base];
        for (unsigned w = 0; w < ways_; ++w)
            if (t[w] == line + 1) return &state_[base + w];
        return nullptr;
    }
    void touch(const LineState* l) { used_[static_cast<std::size_t>(l - state_.data())] = ++clock_; }
    // Puts `line` in (it must be absent) and returns what it evicted (tag 0:
    // nothing).
    CacheLine insert(std::uint64_t line, double ready, std::uint8_t flags) {
        const std::size_t base = set_of(line);
        std::size_t v = base;
        for (std::size_t w = base; w < base + ways_; ++w) {
            if (tags_[w] == 0) {
                v = w;
                break;
            }
            if (used_[w] < used_[v]) v = w;
        }
        const CacheLine old{tags_[v], state_[v].ready, state_[v].flags};
        tags_[v] = line + 1;
        used_[v] = ++clock_;
        state_[v] = LineState{ready, flags};
        return old;
    }
    std::uint64_t sets() const { return sets_; }

private:
    static bool is_pow2(std::uint64_t n) { return n != 0 && (n & (n - 1)) == 0; }
    std::size_t set_of(std::uint64_t line) const {
        const std::uint64_t set = mask_ != 0 || sets_ == 1 ? (line & mask_) : line % sets_;
        return static_cast<std::size_t>(set * ways_);
    }
    unsigned ways_ = 1;
    std::uint64_t sets_ = 1;
    std::uint64_t mask_ = 0;
    std::vector<std::uint64_t> tags_;   // line address + 1; 0: empty
    std::vector<std::uint64_t> used_;   // LRU stamps
    std::vector<LineState> state_;
    std::uint64_t clock_ = 0;
};

// A 4-way set-associative TLB of page numbers, LRU.
class Tlb {
public:
    explicit Tlb(unsigned entries = 64) : sets_(entries / 4), slots_(entries) {}
    bool contains(std::uint64_t page) const {
        const Slot* s = &slots_[(page % sets_) * 4];
        for (unsigned w = 0; w < 4; ++w)
            if (s[w].tag == page + 1) return true;
        return false;
    }
    void access(std::uint64_t page) {
        Slot* s = &slots_[(page % sets_) * 4];
        Slot* v = s;
        ++clock_;
        for (unsigned w = 0; w < 4; ++w) {
            if (s[w].tag == page + 1) {
                s[w].used = clock_;
                return;
            }
            if (s[w].used < v->used) v = &s[w];
        }
        *v = Slot{page + 1, clock_};
    }

private:
    struct Slot {
        std::uint64_t tag = 0;
        std::uint64_t used = 0;
    };
    std::uint64_t sets_;
    std::vector<Slot> slots_;
    std::uint64_t clock_ = 0;
};

}  // namespace numaware::sim::memory::detail
