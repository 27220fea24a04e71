// sim/memory/cache.hpp — the set-associative, LRU cache arrays of the
// memory-hierarchy simulator, and the per-core TLB.
//
// A cache holds line addresses and, per line, the simulated time its data
// arrives (a line in flight is present with a later `ready`), whether a
// prefetch brought it and nobody has used it yet, and whether it is dirty.
// The arrival times are doubles kept in the set's block of 64-bit words.
// Sets are indexed by line address modulo the set count (a mask when that
// is a power of two).
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

namespace numaware::sim::memory::detail {

inline constexpr std::uint8_t line_prefetched = 1;
inline constexpr std::uint8_t line_dirty = 2;

// A line as evicted.
struct CacheLine {
    std::uint64_t tag = 0;      // line address + 1; 0: nothing was evicted
    double ready = 0;
    std::uint8_t flags = 0;
    std::uint64_t line() const { return tag - 1; }
};

// A present line: its arrival time and flags, in place.
class LineRef {
public:
    LineRef() = default;
    LineRef(std::uint64_t* ready, std::uint8_t* flags, std::uint64_t* lru, unsigned way)
        : ready_(ready), flags_(flags), lru_(lru), way_(way) {}
    explicit operator bool() const { return ready_ != nullptr; }
    double ready() const { return std::bit_cast<double>(*ready_); }
    std::uint8_t& flags() const { return *flags_; }   // unsigned char: may alias the words

private:
    friend class Cache;
    std::uint64_t* ready_ = nullptr;   // the double's bits
    std::uint8_t* flags_ = nullptr;
    std::uint64_t* lru_ = nullptr;
    unsigned way_ = 0;
};

// Each set is one contiguous block, so a lookup and an insert touch a few
// adjacent host cache lines: an LRU word (4-bit ages, way w at bits 4w, 0
// the most recent), the ways' flags, their tags (line address + 1, 0
// empty) and their arrival times. At most 16 ways.
class Cache {
public:
    static constexpr unsigned max_ways = 16;
    Cache() = default;
    Cache(std::uint64_t bytes, unsigned ways, unsigned line_bytes)
        : ways_(ways), sets_(bytes / line_bytes / ways), mask_(is_pow2(sets_) ? sets_ - 1 : 0),
          tags_at_(3), ready_at_(3 + ways), words_((3 + 2 * ways + 7) / 8 * 8),
          data_(static_cast<std::size_t>(sets_ * words_), 0) {
        for (std::uint64_t s = 0; s < sets_; ++s) {
            std::uint64_t lru = 0;   // initial order: way w has age w
            for (unsigned w = 0; w < ways_; ++w) lru |= std::uint64_t{w} << (4 * w);
            data_[static_cast<std::size_t>(s * words_)] = lru;
        }
    }

    LineRef find(std::uint64_t line) {
        std::uint64_t* set = set_of(line);
        const std::uint64_t* t = set + tags_at_;
        for (unsigned w = 0; w < ways_; ++w)
            if (t[w] == line + 1) return ref(set, w);
        return {};
    }
    void touch(const LineRef& l) { make_recent(*l.lru_, l.way_); }
    // Puts `line` in (it must be absent) and returns what it evicted (tag 0:
    // nothing).
    CacheLine insert(std::uint64_t line, double ready, std::uint8_t flags) {
        std::uint64_t* set = set_of(line);
        std::uint64_t* t = set + tags_at_;
        unsigned v = 0;
        for (unsigned w = 0; w < ways_; ++w)
            if (((set[0] >> (4 * w)) & 15u) == ways_ - 1) v = w;   // the oldest (an empty way ages too)
        const LineRef r = ref(set, v);
        const CacheLine old{t[v], r.ready(), r.flags()};
        t[v] = line + 1;
        *r.ready_ = std::bit_cast<std::uint64_t>(ready);
        r.flags() = flags;
        make_recent(set[0], v);
        return old;
    }
    std::uint64_t sets() const { return sets_; }

private:
    static bool is_pow2(std::uint64_t n) { return n != 0 && (n & (n - 1)) == 0; }
    std::uint64_t* set_of(std::uint64_t line) {
        const std::uint64_t set = mask_ != 0 || sets_ == 1 ? (line & mask_) : line % sets_;
        return &data_[static_cast<std::size_t>(set * words_)];
    }
    LineRef ref(std::uint64_t* set, unsigned w) {
        return LineRef{set + ready_at_ + w, reinterpret_cast<std::uint8_t*>(set + 1) + w, set, w};
    }
    // Way w becomes age 0; the ways younger than it age by one.
    void make_recent(std::uint64_t& lru, unsigned w) const {
        const std::uint64_t age = (lru >> (4 * w)) & 15u;
        for (unsigned k = 0; k < ways_; ++k) {
            const std::uint64_t a = (lru >> (4 * k)) & 15u;
            if (a < age) lru += std::uint64_t{1} << (4 * k);
        }
        lru &= ~(std::uint64_t{15} << (4 * w));
    }
    unsigned ways_ = 1;
    std::uint64_t sets_ = 1;
    std::uint64_t mask_ = 0;
    unsigned tags_at_ = 3, ready_at_ = 4;   // in words: [lru][flags: 2 words][tags][ready]
    std::uint64_t words_ = 8;               // per set, a multiple of 8 (64 bytes)
    std::vector<std::uint64_t> data_;
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
