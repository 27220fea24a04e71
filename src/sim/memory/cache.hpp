// sim/memory/cache.hpp — the set-associative, LRU cache arrays of the
// memory-hierarchy simulator, and the per-core TLB.
//
// A cache holds line addresses and, per line, the simulated time its data
// arrives (a line in flight is present with a later `ready`), whether a
// prefetch brought it and nobody has used it yet, whether it is dirty, and
// (in an L1) whether its core may write it without telling the others.
// The arrival times are doubles kept in the set's block of 64-bit words.
// Sets are indexed by line address modulo the set count (a mask when that
// is a power of two).
#pragma once

#include <bit>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace numaware::sim::memory::detail {

inline constexpr std::uint8_t line_prefetched = 1;
inline constexpr std::uint8_t line_dirty = 2;
// The core holds the only valid copy of the line among the private caches
// (MESI's E or M): a store to it needs no invalidation (hierarchy.cpp).
inline constexpr std::uint8_t line_exclusive = 4;

// A line as evicted (two words: returned in registers).
struct CacheLine {
    std::uint64_t tag = 0;      // line address + 1; 0: nothing was evicted
    std::uint8_t flags = 0;
    std::uint64_t line() const { return tag - 1; }
};

// A present line: its arrival time and flags, in place. Two words (its
// set, its way, the set's way count and where its arrival times start),
// so that a lookup returns it in registers.
class LineRef {
public:
    LineRef() = default;
    LineRef(std::uint64_t* set, unsigned way, unsigned ways, unsigned ready_at)
        : set_(set), way_(static_cast<std::uint16_t>(way)), ways_(static_cast<std::uint16_t>(ways)), ready_at_(ready_at) {}
    explicit operator bool() const { return set_ != nullptr; }
    double ready() const { return std::bit_cast<double>(set_[ready_at_ + way_]); }
    // unsigned char: may alias the words
    std::uint8_t& flags() const { return reinterpret_cast<std::uint8_t*>(set_ + ways_ + 1)[way_]; }

private:
    friend class Cache;
    std::uint64_t& lru() const { return set_[ways_]; }
    std::uint64_t* set_ = nullptr;   // its first words are the tags
    std::uint16_t way_ = 0, ways_ = 0;
    std::uint32_t ready_at_ = 0;
};

// Each set is one contiguous block, so a lookup and an insert touch a few
// adjacent host cache lines: the ways' tags (line address + 1, 0 empty)
// first, so that a lookup that misses reads them alone (one host line for
// up to 8 ways, two for 16), then an LRU word (the ways in order of use,
// 4 bits each: bits 0-3 the most recent, bits 4(ways-1) up the least), the
// ways' flags (a byte each) and their arrival times. At most 16 ways. The blocks are whole host cache lines (64
// bytes), aligned, so a set of up to 2 ways is one host line and one of 8
// ways is three.
class Cache {
public:
    static constexpr unsigned max_ways = 16;
    Cache() = default;
    Cache(std::uint64_t bytes, unsigned ways, unsigned line_bytes)
        : ways_(ways), sets_(bytes / line_bytes / ways), mask_(is_pow2(sets_) ? sets_ - 1 : 0), pow2_(is_pow2(sets_)),
          ready_at_(ways + 1 + (ways + 7) / 8), words_((ready_at_ + ways + 7) / 8 * 8),
          data_(allocate(static_cast<std::size_t>(sets_ * words_))) {
        full_ = ways_ == 16 ? ~std::uint64_t{0} : (std::uint64_t{1} << (4 * ways_)) - 1;
        for (std::uint64_t s = 0; s < sets_; ++s) {
            std::uint64_t lru = 0;   // initial order: way w is w-th most recent
            for (unsigned w = 0; w < ways_; ++w) lru |= std::uint64_t{w} << (4 * w);
            data_[static_cast<std::size_t>(s * words_ + ways_)] = lru;
        }
    }

    [[gnu::always_inline]] LineRef find(std::uint64_t line) {
        std::uint64_t* set = set_of(line);
        const std::uint64_t* t = set;
        const std::uint64_t key = line + 1;
        // Every way is compared (no early exit): which way holds a line
        // is unpredictable, a fixed trip count per cache is not. The way
        // counts of the presets have their compares written out.
        // The presets' way counts, the L1's first (most lookups), tested
        // in turn: a compare each, where a switch took a tree of them.
        Match m;
        if (ways_ == 2) m = match_of<2>(t, key);
        else if (ways_ == 8) m = match_of<8>(t, key);
        else if (ways_ == 16) m = match_of<16>(t, key);
        else if (ways_ == 4) m = match_of<4>(t, key);
        else
            for (unsigned w = 0; w < ways_; ++w) m.bits |= static_cast<unsigned>(t[w] == key) << w;
        return m.bits == 0 ? LineRef{} : ref(set, static_cast<unsigned>(std::countr_zero(m.bits)) >> m.shift);
    }
    // Asks the host for the host lines of `line`'s set that a lookup reads,
    // so that a lookup that comes later does not wait for them.
    void prefetch(std::uint64_t line) const {
        const std::uint64_t* set = set_of(line);
        for (std::uint64_t k = 0; k < ready_at_; k += 8) __builtin_prefetch(set + k);
    }
    void touch(const LineRef& l) { make_recent(l.lru(), l.way_); }
    // Removes a present line (a coherence invalidation): its way becomes
    // empty and the next to be filled in its set.
    void erase(const LineRef& l) {
        std::uint64_t* set = l.set_;
        set[l.way_] = 0;
        l.flags() = 0;
        // The ways less recent than it move up one; it goes last.
        std::uint64_t& lru = l.lru();
        const unsigned p = position(lru, l.way_);
        lru = (lru & below(p)) | (lru & above(p)) >> 4 | std::uint64_t{l.way_} << (4 * (ways_ - 1));
    }
    // Puts `line` in (it must be absent) and returns what it evicted (tag 0:
    // nothing).
    CacheLine insert(std::uint64_t line, double ready, std::uint8_t flags) {
        std::uint64_t* set = set_of(line);
        std::uint64_t* t = set;
        std::uint64_t& lru = set[ways_];
        const unsigned v = static_cast<unsigned>(lru >> (4 * (ways_ - 1))) & 15u;   // the least recent (an empty way ages too)
        const LineRef r = ref(set, v);
        const CacheLine old{t[v], r.flags()};
        t[v] = line + 1;
        set[ready_at_ + v] = std::bit_cast<std::uint64_t>(ready);
        r.flags() = flags;
        lru = (lru << 4 | v) & full_;   // v goes first, the others move down one
        return old;
    }
    std::uint64_t sets() const { return sets_; }

private:
    struct Free {
        void operator()(std::uint64_t* p) const { ::operator delete[](p, std::align_val_t{64}); }
    };
    using Words = std::unique_ptr<std::uint64_t[], Free>;
    static Words allocate(std::size_t words) {
        auto* p = static_cast<std::uint64_t*>(::operator new[](words * sizeof(std::uint64_t), std::align_val_t{64}));
        std::uninitialized_fill_n(p, words, std::uint64_t{0});
        return Words(p);
    }
    // The ways of W that hold `key`, one bit each.
    template <unsigned W>
    [[gnu::always_inline]] static unsigned matching(const std::uint64_t* t, std::uint64_t key) {
        unsigned match = 0;
#pragma GCC unroll 16
        for (unsigned w = 0; w < W; ++w) match |= static_cast<unsigned>(t[w] == key) << w;
        return match;
    }
#if defined(__SSE2__)
    // The same with SSE2, four ways to a step: its 32-bit halves compared,
    // packed to bytes, one mask bit each; way w matches when bits 2w and
    // 2w + 1 both do. Returns bit 2w for a match of way w.
    template <unsigned W>
    [[gnu::always_inline]] static unsigned matching_halves(const std::uint64_t* t, std::uint64_t key) {
        static_assert(W % 4 == 0 && W <= 16);
        const __m128i k = _mm_set1_epi64x(static_cast<long long>(key));
        const auto halves = [&](unsigned w) {
            return _mm_cmpeq_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(t + w)), k);
        };
        unsigned m = 0;
#pragma GCC unroll 4
        for (unsigned w = 0; w < W; w += 8) {
            const __m128i low = _mm_packs_epi32(halves(w), halves(w + 2));
            const __m128i high = W - w >= 8 ? _mm_packs_epi32(halves(w + 4), halves(w + 6)) : low;
            const unsigned bytes = static_cast<unsigned>(_mm_movemask_epi8(_mm_packs_epi16(low, high)));
            m |= (W - w >= 8 ? bytes : bytes & 0xFFu) << (2 * w);
        }
        return m & (m >> 1) & 0x55555555u;
    }
#endif
    // The ways of W that hold `key`: bit w << shift for way w (SSE2's
    // compares for 4 ways and more, where the host has them).
    struct Match {
        unsigned bits = 0, shift = 0;
    };
    template <unsigned W>
    [[gnu::always_inline]] static Match match_of(const std::uint64_t* t, std::uint64_t key) {
#if defined(__SSE2__)
        if constexpr (W >= 4) return {matching_halves<W>(t, key), 1};
#endif
        return {matching<W>(t, key), 0};
    }
    static bool is_pow2(std::uint64_t n) { return n != 0 && (n & (n - 1)) == 0; }
    std::uint64_t* set_of(std::uint64_t line) const {
        const std::uint64_t set = pow2_ ? (line & mask_) : line % sets_;
        return &data_[static_cast<std::size_t>(set * words_)];
    }
    LineRef ref(std::uint64_t* set, unsigned w) const { return LineRef{set, w, ways_, ready_at_}; }
    // The LRU word lists the ways, most recent first, a nibble each.
    static constexpr std::uint64_t ones = 0x1111111111111111ull, highs = 0x8888888888888888ull;
    // The place of way w in the list: its lowest nibble equal to w (the
    // lowest zero nibble of lru ^ w...w is found exactly; the higher ones
    // may be false, and nibbles past the ways, all 0, only come higher).
    static unsigned position(std::uint64_t lru, unsigned w) {
        const std::uint64_t x = lru ^ (w * ones);
        return static_cast<unsigned>(std::countr_zero((x - ones) & ~x & highs)) / 4;
    }
    // The nibbles before place p, and those after it.
    static std::uint64_t below(unsigned p) { return (std::uint64_t{1} << (4 * p)) - 1; }
    static std::uint64_t above(unsigned p) { return ~((std::uint64_t{16} << (4 * p)) - 1); }   // 0 for p = 15
    // Way w goes first; the ways before it move down one.
    void make_recent(std::uint64_t& lru, unsigned w) const {
        // Already the most recent (a line used again before its set saw
        // another, the usual hit): nothing moves.
        if ((lru & 15u) == w) return;
        const unsigned p = position(lru, w);
        lru = (lru & above(p)) | (lru & below(p)) << 4 | w;
    }
    unsigned ways_ = 1;
    std::uint64_t sets_ = 1;
    std::uint64_t mask_ = 0;
    bool pow2_ = true;   // sets_ is a power of two (1 too): the set is line & mask_
    unsigned ready_at_ = 3;   // in words: [tags][lru][flags: a word per 8 ways][ready]
    std::uint64_t words_ = 8;               // per set, a multiple of 8 (64 bytes)
    std::uint64_t full_ = 0;   // the LRU word's nibbles in use
    Words data_;
};

// A 4-way set-associative TLB of page numbers, LRU.
class Tlb {
public:
    explicit Tlb(unsigned entries = 64)
        : sets_(entries / 4), mask_((sets_ & (sets_ - 1)) == 0 ? sets_ - 1 : 0),
          pow2_((sets_ & (sets_ - 1)) == 0), slots_(entries) {}
    bool contains(std::uint64_t page) const {
        return matching(first_of(page), page) != 0;
    }
    void access(std::uint64_t page) {
        ++clock_;
        // Most accesses stay in the page of the one before (slot 0 before
        // the first: its tag 0 is no page's).
        if (slots_[last_].tag == page + 1) {
            slots_[last_].used = clock_;
            return;
        }
        const std::size_t first = first_of(page);
        Slot* s = &slots_[first];
        const unsigned m = matching(first, page);
        if (m != 0) {
            last_ = first + static_cast<unsigned>(std::countr_zero(m));
            slots_[last_].used = clock_;
            return;
        }
        // The least recently used (the first of equals), the four compared
        // written out.
        const unsigned a = s[1].used < s[0].used ? 1 : 0, b = s[3].used < s[2].used ? 3 : 2;
        const unsigned v = s[b].used < s[a].used ? b : a;
        s[v] = Slot{page + 1, clock_};
        last_ = first + v;
    }

private:
    struct Slot {
        std::uint64_t tag = 0;
        std::uint64_t used = 0;
    };
    // The first slot of the page's set: a mask when the set count is a
    // power of two (every preset's), a division otherwise.
    std::size_t first_of(std::uint64_t page) const {
        return static_cast<std::size_t>((pow2_ ? (page & mask_) : page % sets_) * 4);
    }
    // The ways of the set at `first` that hold `page`, one bit each (the
    // four compared written out).
    unsigned matching(std::size_t first, std::uint64_t page) const {
        const Slot* s = &slots_[first];
        const std::uint64_t key = page + 1;
        return static_cast<unsigned>(s[0].tag == key) | static_cast<unsigned>(s[1].tag == key) << 1 |
               static_cast<unsigned>(s[2].tag == key) << 2 | static_cast<unsigned>(s[3].tag == key) << 3;
    }
    std::uint64_t sets_;
    std::uint64_t mask_;
    bool pow2_;
    std::vector<Slot> slots_;
    std::uint64_t clock_ = 0;
    std::size_t last_ = 0;   // the slot of the last access
};

}  // namespace numaware::sim::memory::detail
