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

struct CacheLine {
    std::uint64_t tag = 0;      // line address + 1; 0: empty
    double ready = 0;           // ns: when its data is there
    std::uint64_t used = 0;     // LRU stamp
    std::uint8_t flags = 0;
    std::uint64_t line() const { return tag - 1; }
};

class Cache {
public:
    Cache() = default;
    Cache(std::uint64_t bytes, unsigned ways, unsigned line_bytes)
        : ways_(ways), sets_(bytes / line_bytes / ways), mask_(is_pow2(sets_) ? sets_ - 1 : 0),
          lines_(static_cast<std::size_t>(sets_ * ways)) {}

    CacheLine* find(std::uint64_t line) {
        CacheLine* s = set_of(line);
        for (unsigned w = 0; w < ways_; ++w)
            if (s[w].tag == line + 1) return &s[w];
        return nullptr;
    }
    void touch(CacheLine* l) { l->used = ++clock_; }
    // Puts `line` in (it must be absent) and returns what it evicted (tag 0:
    // nothing).
    CacheLine insert(std::uint64_t line, double ready, std::uint8_t flags) {
        CacheLine* s = set_of(line);
        CacheLine* v = s;
        for (unsigned w = 0; w < ways_; ++w) {
            if (s[w].tag == 0) {
                v = &s[w];
                break;
            }
            if (s[w].used < v->used) v = &s[w];
        }
        const CacheLine old = *v;
        *v = CacheLine{line + 1, ready, ++clock_, flags};
        return old;
    }
    std::uint64_t sets() const { return sets_; }

private:
    static bool is_pow2(std::uint64_t n) { return n != 0 && (n & (n - 1)) == 0; }
    CacheLine* set_of(std::uint64_t line) {
        const std::uint64_t set = mask_ != 0 || sets_ == 1 ? (line & mask_) : line % sets_;
        return &lines_[static_cast<std::size_t>(set * ways_)];
    }
    unsigned ways_ = 1;
    std::uint64_t sets_ = 1;
    std::uint64_t mask_ = 0;
    std::vector<CacheLine> lines_;
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
