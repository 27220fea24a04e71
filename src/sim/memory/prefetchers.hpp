// sim/memory/prefetchers.hpp — the prefetcher modules of the memory-
// hierarchy simulator, each behind one hook, as in ChampSim: on every
// demand access at its level (hit or miss) it predicts lines and names the
// level each should go to. The simulator decides what happens to a
// prediction: it drops one already present or refused by a full queue or
// the TLB, and resolves `l3_if_remote` from the line's home node. So the
// modules are pure and tested on hand-made access streams alone.
#pragma once

#include <array>
#include <bit>
#include <deque>
#include <cstdint>
#include <memory>
#include <vector>

#include "numaware/memory_sim.hpp"
#include "sim/memory/cache.hpp"

namespace numaware::sim::memory::detail {

inline constexpr unsigned ampm_max_degree = 16;    // AMPM's adaptive degree: at most (assumption)
inline constexpr unsigned streamer_degree = 2;     // Intel-like L2 streamer: lines per access (assumption)
inline constexpr unsigned streamer_distance = 20;  // and at most this far ahead (Intel Optimization Manual)

enum class Target : std::uint8_t {
    l1,             // the requesting core's L1D
    l2,             // its L2
    l3,             // its socket's L3 (the slice owning the line)
    l3_if_remote,   // the L3, only when the line's home is another socket; else dropped
};

// `count` lines, `line`, `line + stride`, ... (nearest first, line
// addresses wrapping as unsigned), all for `target`. A stride prefetcher
// states its whole degree in one or two of these, so the simulator can
// settle the lines of a page that all drop (TLB, unmapped, local) at once.
struct Prediction {
    std::uint64_t line = 0;   // line address (byte address / line size)
    Target target = Target::l1;
    std::int64_t stride = 0;   // in lines; irrelevant when count is 1
    std::uint32_t count = 1;
    std::uint64_t at(std::uint32_t i) const { return line + static_cast<std::uint64_t>(stride * static_cast<std::int64_t>(i)); }
};

struct Trigger {
    std::uint64_t pc = 0;
    std::uint64_t line = 0;
    bool hit = false;            // at the prefetcher's level
    bool prefetch_hit = false;   // the hit was the first use of a prefetched line
    double now = 0;              // ns: the access's issue time
};

enum class Level : std::uint8_t { l1, l2 };

class Prefetcher {
public:
    virtual ~Prefetcher() = default;
    // The level whose demand accesses it sees: every L1D access, or every
    // L2 access (an L1D miss).
    virtual Level level() const { return Level::l1; }
    // Appends its predictions for this access to `out`, nearest first.
    virtual void on_access(const Trigger& t, std::vector<Prediction>& out) = 0;
    // The simulator issued one of its predictions; its data arrives at
    // `ready` (ns).
    virtual void on_issued(std::uint64_t /*line*/, double /*ready*/) {}
};

// The PC-indexed stride table: 64 entries, 4-way (16 sets by PC), LRU;
// per entry the last line, the stride in lines and a 3-bit confidence that
// starts at 4. A matching stride raises it, another lowers it and, below
// the threshold (4 of 7: 50%), replaces the stride. An access to the same
// line as the previous one of its PC changes nothing.
class StrideTable {
public:
    static constexpr unsigned sets = 16, ways = 4;
    static constexpr int conf_start = 4, conf_max = 7, conf_threshold = 4;
    // The confident stride (in lines) after this access, or 0 (also for an
    // access to the line its PC touched last: nothing new to predict).
    std::int64_t observe(std::uint64_t pc, std::uint64_t line);

private:
    // One way, half a host line.
    struct alignas(32) Entry {
        std::uint64_t pc = 0;
        std::uint64_t last_line = 0;
        std::int64_t stride = 0;
        int conf = conf_start;
    };
    // A set's bookkeeping, four bytes: the 16 sets' share one host line,
    // so that an access that finds its PC in the way its set found last
    // reads that line (kept warm by every access) and its entry alone.
    struct Head {
        std::uint8_t last_way = 0;   // the way found last (a PC is in one way at most)
        std::uint8_t valid = 0;      // a bit per way holding a PC
        std::uint16_t order = static_cast<std::uint16_t>(LruList::identity(ways));   // ways by use (LruList)
    };
    // The valid ways of a set that hold `pc`, one bit each (every way
    // compared, written out: no early exit to mispredict).
    static unsigned matching(const std::array<Entry, ways>& set, unsigned valid, std::uint64_t pc) {
        static_assert(ways == 4);
        const auto same = [&](unsigned w) { return static_cast<unsigned>(set[w].pc == pc) << w; };
        return (same(0) | same(1) | same(2) | same(3)) & valid;
    }
    alignas(64) std::array<Head, sets> heads_{};
    alignas(64) std::array<std::array<Entry, ways>, sets> entries_{};
};

inline std::int64_t StrideTable::observe(std::uint64_t pc, std::uint64_t line) {
    const std::size_t at = pc * 0x9E3779B97F4A7C15ull >> 60;
    Head& h = heads_[at];
    std::array<Entry, ways>& set = entries_[at];
    unsigned w = h.last_way;
    // Most sets serve one PC at a time: the way found last, checked first.
    if (set[w].pc != pc || (h.valid >> w & 1u) == 0) {
        const unsigned match = matching(set, h.valid, pc);
        if (match == 0) {
            // The least recently used way (an empty one before any other).
            const std::uint64_t order = h.order;
            const unsigned v = LruList::last(order, ways);
            set[v] = Entry{pc, line, 0, conf_start};
            h.valid = static_cast<std::uint8_t>(h.valid | 1u << v);
            h.order = static_cast<std::uint16_t>(LruList::fill_last(order, v, LruList::used(ways)));
            h.last_way = static_cast<std::uint8_t>(v);
            return 0;
        }
        w = static_cast<unsigned>(std::countr_zero(match));
        h.last_way = static_cast<std::uint8_t>(w);
    }
    std::uint64_t order = h.order;
    LruList::make_recent(order, w);
    h.order = static_cast<std::uint16_t>(order);
    Entry& e = set[w];
    const std::int64_t d = static_cast<std::int64_t>(line - e.last_line);
    if (d == 0) return 0;   // the same line again: nothing new to predict
    if (d == e.stride) {
        if (e.conf < conf_max) ++e.conf;
    } else {
        if (e.conf > 0) --e.conf;
        if (e.conf < conf_threshold) e.stride = d;
    }
    e.last_line = line;
    return e.conf >= conf_threshold && e.stride != 0 ? e.stride : 0;
}

// Stride predictions of orders 1..far: order <= near goes to the L1; the
// rest to `far_target` (none: stride k, where far == near). In the header
// (and final): the simulator calls it directly, the usual L1 prefetcher.
class StridePrefetcher final : public Prefetcher {
public:
    StridePrefetcher(unsigned near, unsigned far, Target far_target) : near_(near), far_(far), far_target_(far_target) {}
    void on_access(const Trigger& t, std::vector<Prediction>& out) override {
        const std::int64_t s = table_.observe(t.pc, t.line);
        if (s == 0) return;
        const auto order = [&](unsigned i) { return t.line + static_cast<std::uint64_t>(s * static_cast<std::int64_t>(i)); };
        if (near_ > 0) out.push_back({order(1), Target::l1, s, near_});
        if (far_ > near_) out.push_back({order(near_ + 1), far_target_, s, far_ - near_});
    }

private:
    StrideTable table_;
    unsigned near_, far_;
    Target far_target_;
};

// The modules a spec names (the Intel-like set is up to four), each with
// its level; `lines_per_page` bounds the streamer.
std::vector<std::unique_ptr<Prefetcher>> make_prefetchers(const PrefetchSpec& spec, unsigned lines_per_page);

// Best-offset's offsets: every n in 1..256 of the form 2^i 3^j 5^k, ascending.
std::vector<unsigned> best_offset_list();

}  // namespace numaware::sim::memory::detail
