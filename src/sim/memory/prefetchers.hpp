// sim/memory/prefetchers.hpp — the prefetcher modules of the memory-
// hierarchy simulator, each behind one hook, as in ChampSim: on every
// demand access at its level (hit or miss) it predicts lines and names the
// level each should go to. The simulator decides what happens to a
// prediction: it drops one already present or refused by a full queue or
// the TLB, and resolves `l3_if_remote` from the line's home node. So the
// modules are pure and tested on hand-made access streams alone.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "numaware/memory_sim.hpp"

namespace numaware::sim::memory::detail {

enum class Target : std::uint8_t {
    l1,             // the requesting core's L1D
    l2,             // its L2
    l3,             // its socket's L3 (the slice owning the line)
    l3_if_remote,   // the L3, only when the line's home is another socket; else dropped
};

struct Prediction {
    std::uint64_t line = 0;   // line address (byte address / line size)
    Target target = Target::l1;
};

struct Trigger {
    std::uint64_t pc = 0;
    std::uint64_t line = 0;
    bool hit = false;         // at the prefetcher's level
};

class Prefetcher {
public:
    virtual ~Prefetcher() = default;
    // Appends its predictions for this access to `out`, nearest first.
    virtual void on_access(const Trigger& t, std::vector<Prediction>& out) = 0;
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
    struct Entry {
        std::uint64_t pc = 0;
        std::uint64_t last_line = 0;
        std::int64_t stride = 0;
        int conf = conf_start;
        std::uint64_t used = 0;   // LRU stamp; 0: empty
    };
    std::array<Entry, sets * ways> table_{};
    std::uint64_t clock_ = 0;
};

std::unique_ptr<Prefetcher> make_prefetcher(const PrefetchSpec& spec);

}  // namespace numaware::sim::memory::detail
