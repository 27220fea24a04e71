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

// An LRU order of up to 16 ways in one word: the ways listed most recent
// first, a nibble each (bits 0-3 the most recent, bits 4(ways-1) up the
// least). A fill takes the last and shifts the list; a hit moves its way
// to the front, nothing to do for the usual hit of the most recent.
struct LruList {
    static constexpr unsigned max_ways = 16;
    static constexpr std::uint64_t ones = 0x1111111111111111ull, highs = 0x8888888888888888ull;
    // Way w first, way `ways`-1 last: the order in which ways are first filled.
    static std::uint64_t identity(unsigned ways) {
        std::uint64_t l = 0;
        for (unsigned w = 0; w < ways; ++w) l |= std::uint64_t{w} << (4 * w);
        return l;
    }
    static unsigned last(std::uint64_t l, unsigned ways) { return static_cast<unsigned>(l >> (4 * (ways - 1))) & 15u; }
    // The nibbles of `ways` ways.
    static std::uint64_t used(unsigned ways) { return ways == 16 ? ~std::uint64_t{0} : (std::uint64_t{1} << (4 * ways)) - 1; }
    // The last way, filled, goes first; the others move down one.
    static std::uint64_t fill_last(std::uint64_t l, unsigned v, std::uint64_t used_bits) { return (l << 4 | v) & used_bits; }
    // Way w goes first; those before it move down one.
    static void make_recent(std::uint64_t& l, unsigned w) {
        if ((l & 15u) == w) return;
        const unsigned p = position(l, w);
        l = (l & above(p)) | (l & below(p)) << 4 | w;
    }
    // Way w goes last; those after it move up one.
    static void make_last(std::uint64_t& l, unsigned w, unsigned ways) {
        const unsigned p = position(l, w);
        l = (l & below(p)) | (l & above(p)) >> 4 | std::uint64_t{w} << (4 * (ways - 1));
    }
    // The place of way w: the lowest nibble of l equal to w (the lowest
    // zero nibble of l ^ w...w is found exactly; higher ones may be false,
    // and nibbles past the ways, all 0, only come higher).
    static unsigned position(std::uint64_t l, unsigned w) {
        const std::uint64_t x = l ^ (w * ones);
        return static_cast<unsigned>(std::countr_zero((x - ones) & ~x & highs)) / 4;
    }
    // The nibbles before place p, and those after it (none after 15).
    static std::uint64_t below(unsigned p) { return (std::uint64_t{1} << (4 * p)) - 1; }
    static std::uint64_t above(unsigned p) { return ~((std::uint64_t{16} << (4 * p)) - 1); }
};

// The ways of W whose tags (at t) hold `key`, one bit each, every way
// compared (the caches' scalar lookup and the TLB's).
template <unsigned W>
[[gnu::always_inline]] inline unsigned ways_holding(const std::uint64_t* t, std::uint64_t key) {
    unsigned match = 0;
#pragma GCC unroll 16
    for (unsigned w = 0; w < W; ++w) match |= static_cast<unsigned>(t[w] == key) << w;
    return match;
}

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
// ways' flags (a byte each) and their arrival times. The blocks are whole
// host cache lines (64 bytes), aligned, so a set of up to 2 ways is one
// host line and one of 8 ways is three.
//
// A cache of 17 to 32 ways (a Sandy Bridge-EP L3 has 20) has more ways
// than the LRU word holds: it keeps, after the flags, a word per way with
// the cache's use count at the way's last fill or hit (0: empty or
// erased), and the least recent way is the one with the smallest count
// (the first of them, an empty way before any other). The same LRU order,
// exactly; one compare per way on a fill.
class Cache {
public:
    static constexpr unsigned max_ways = 32;
    Cache() = default;
    Cache(std::uint64_t bytes, unsigned ways, unsigned line_bytes)
        : ways_(ways), sets_(bytes / line_bytes / ways), mask_(is_pow2(sets_) ? sets_ - 1 : 0), pow2_(is_pow2(sets_)),
          wide_(ways > LruList::max_ways), stamps_at_(ways + 1 + (ways + 7) / 8),
          ready_at_(stamps_at_ + (wide_ ? ways : 0)), words_((ready_at_ + ways + 7) / 8 * 8),
          data_(allocate(static_cast<std::size_t>(sets_ * words_))) {
        if (wide_) return;   // every count 0: way 0 is filled first
        full_ = LruList::used(ways_);
        // Way w the w-th most recent: the last way is filled first.
        for (std::uint64_t s = 0; s < sets_; ++s) data_[static_cast<std::size_t>(s * words_ + ways_)] = LruList::identity(ways_);
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
    void touch(const LineRef& l) {
        if (wide_) [[unlikely]]
            l.set_[stamps_at_ + l.way_] = ++uses_;
        else
            LruList::make_recent(l.lru(), l.way_);
    }
    // Removes a present line (a coherence invalidation): its way becomes
    // empty and the next to be filled in its set.
    void erase(const LineRef& l) {
        std::uint64_t* set = l.set_;
        set[l.way_] = 0;
        l.flags() = 0;
        if (wide_) [[unlikely]]
            set[stamps_at_ + l.way_] = 0;
        else
            LruList::make_last(l.lru(), l.way_, ways_);
    }
    // Puts `line` in (it must be absent) and returns what it evicted (tag 0:
    // nothing).
    CacheLine insert(std::uint64_t line, double ready, std::uint8_t flags) {
        std::uint64_t* set = set_of(line);
        std::uint64_t* t = set;
        std::uint64_t& lru = set[ways_];
        const unsigned v = wide_ ? least_recent_wide(set) : LruList::last(lru, ways_);   // an empty way ages too
        const LineRef r = ref(set, v);
        const CacheLine old{t[v], r.flags()};
        t[v] = line + 1;
        set[ready_at_ + v] = std::bit_cast<std::uint64_t>(ready);
        r.flags() = flags;
        if (wide_) [[unlikely]]
            set[stamps_at_ + v] = ++uses_;
        else
            lru = LruList::fill_last(lru, v, full_);
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
        return {ways_holding<W>(t, key), 0};
    }
    static bool is_pow2(std::uint64_t n) { return n != 0 && (n & (n - 1)) == 0; }
    // A wide set's least recently used way: the smallest use count, the
    // first of equals.
    [[gnu::noinline]] unsigned least_recent_wide(const std::uint64_t* set) const {
        const std::uint64_t* uses = set + stamps_at_;
        unsigned v = 0;
        for (unsigned w = 1; w < ways_; ++w)
            if (uses[w] < uses[v]) v = w;
        return v;
    }
    std::uint64_t* set_of(std::uint64_t line) const {
        const std::uint64_t set = pow2_ ? (line & mask_) : line % sets_;
        return &data_[static_cast<std::size_t>(set * words_)];
    }
    LineRef ref(std::uint64_t* set, unsigned w) const { return LineRef{set, w, ways_, ready_at_}; }
    unsigned ways_ = 1;
    std::uint64_t sets_ = 1;
    std::uint64_t mask_ = 0;
    bool pow2_ = true;   // sets_ is a power of two (1 too): the set is line & mask_
    bool wide_ = false;        // more ways than an LruList holds: use counts per way
    unsigned stamps_at_ = 3;   // in words: a wide set's use counts
    unsigned ready_at_ = 3;    // in words: [tags][lru][flags: a word per 8 ways][wide: use counts][ready]
    std::uint64_t words_ = 8;               // per set, a multiple of 8 (64 bytes)
    std::uint64_t full_ = 0;   // LruList::used(ways_)
    std::uint64_t uses_ = 0;   // a wide cache's fills and hits so far
    Words data_;
};

// A 4-way set-associative TLB of page numbers, LRU: per set its four tags
// (page + 1, 0 empty) and its order of use (LruList), ways filled from 0.
class Tlb {
public:
    explicit Tlb(unsigned entries = 64)
        : sets_(entries / 4), mask_((sets_ & (sets_ - 1)) == 0 ? sets_ - 1 : 0), pow2_((sets_ & (sets_ - 1)) == 0),
          tags_(entries, 0), order_(sets_, first_fill_way_0) {}
    bool contains(std::uint64_t page) const { return ways_holding<4>(&tags_[first_of(page)], page + 1) != 0; }
    void access(std::uint64_t page) {
        const std::size_t first = first_of(page);
        std::uint64_t* t = &tags_[first];
        std::uint64_t& order = order_[first / 4];
        const unsigned m = ways_holding<4>(t, page + 1);
        if (m != 0) {
            LruList::make_recent(order, static_cast<unsigned>(std::countr_zero(m)));
            return;
        }
        const unsigned v = LruList::last(order, 4);
        t[v] = page + 1;
        order = LruList::fill_last(order, v, LruList::used(4));
    }

private:
    // Way 3 the most recent, way 0 the least: the first page goes to way 0.
    static constexpr std::uint64_t first_fill_way_0 = 0x0123;
    // The first slot of the page's set: a mask when the set count is a
    // power of two (every preset's), a division otherwise.
    std::size_t first_of(std::uint64_t page) const {
        return static_cast<std::size_t>((pow2_ ? (page & mask_) : page % sets_) * 4);
    }
    std::uint64_t sets_;
    std::uint64_t mask_;
    bool pow2_;
    std::vector<std::uint64_t> tags_;    // 4 per set
    std::vector<std::uint64_t> order_;   // per set
};

}  // namespace numaware::sim::memory::detail
