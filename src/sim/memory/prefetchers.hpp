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
    // An empty entry's pc, so that only a pc of that value needs `used`
    // to tell an entry from an empty one.
    static constexpr std::uint64_t empty_pc = ~std::uint64_t{0};
    // A set's fields way by way (its four PCs in one host line).
    struct alignas(64) Set {
        std::array<std::uint64_t, ways> pc{empty_pc, empty_pc, empty_pc, empty_pc};
        std::array<std::uint64_t, ways> used{};   // LRU stamp; 0: empty
        std::array<std::uint64_t, ways> last_line{};
        std::array<std::int64_t, ways> stride{};
        std::array<int, ways> conf{conf_start, conf_start, conf_start, conf_start};
        unsigned last_way = 0;   // the way found last (a PC is in one way at most)
    };
    // The ways of `s` that hold `pc`, one bit each (every way compared,
    // written out: no early exit to mispredict).
    static unsigned matching(const Set& s, std::uint64_t pc) {
        const auto same = [&](unsigned w) { return static_cast<unsigned>(s.pc[w] == pc) << w; };
        const auto hit = [&](unsigned w) { return static_cast<unsigned>((s.used[w] != 0) & (s.pc[w] == pc)) << w; };
        static_assert(ways == 4);
        return pc != empty_pc ? same(0) | same(1) | same(2) | same(3) : hit(0) | hit(1) | hit(2) | hit(3);
    }
    std::array<Set, sets> table_{};
    std::uint64_t clock_ = 0;
};

inline std::int64_t StrideTable::observe(std::uint64_t pc, std::uint64_t line) {
    Set& s = table_[pc * 0x9E3779B97F4A7C15ull >> 60];
    ++clock_;
    // Most sets serve one PC at a time: the way found last, checked first.
    const unsigned last = s.last_way;
    const unsigned match =
        s.pc[last] == pc && (pc != empty_pc || s.used[last] != 0) ? 1u << last : matching(s, pc);
    if (match == 0) {
        // The least recently used way (the first of equals), the four
        // compared written out.
        const unsigned a = s.used[1] < s.used[0] ? 1 : 0, b = s.used[3] < s.used[2] ? 3 : 2;
        const unsigned v = s.used[b] < s.used[a] ? b : a;
        s.pc[v] = pc;
        s.used[v] = clock_;
        s.last_line[v] = line;
        s.stride[v] = 0;
        s.conf[v] = conf_start;
        s.last_way = v;
        return 0;
    }
    const unsigned w = static_cast<unsigned>(std::countr_zero(match));
    s.last_way = w;
    s.used[w] = clock_;
    const std::int64_t d = static_cast<std::int64_t>(line - s.last_line[w]);
    if (d == 0) return 0;   // the same line again: nothing new to predict
    int& conf = s.conf[w];
    if (d == s.stride[w]) {
        if (conf < conf_max) ++conf;
    } else {
        if (conf > 0) --conf;
        if (conf < conf_threshold) s.stride[w] = d;
    }
    s.last_line[w] = line;
    return conf >= conf_threshold && s.stride[w] != 0 ? s.stride[w] : 0;
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
