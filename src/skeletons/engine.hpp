// skeletons/engine.hpp — the mechanism shared by every skeleton kind
// (internal): placed arrays, balancing for a run, timed phases on a team.
// The decisions (layout, cuts, weights, accounting) are the pure functions
// of numaware/stencil.hpp; this file only carries them out.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "numaware/placement.hpp"
#include "numaware/stencil.hpp"
#include "numaware/team.hpp"

namespace numaware::os {
class Os;
}

namespace numaware::stencil::detail {

// The os layer to use: options.os or the real kernel.
os::Os& os_of(const Options& options);

// The checks every skeleton kind makes on Options: explicit_policy is
// given exactly when the placement is explicit (Error("explicit_policy")),
// and, for kinds whose cut is fixed (`static_only` names the kind), the
// distribution is static (Error("distribution")).
void check_options(const Options& options, const char* static_only = nullptr);

// One page-aligned anonymous mapping of doubles (mmap, MADV_NOHUGEPAGE so
// that page-granular placement holds). Nothing is touched by the
// constructor. Throws Error("grid", ..., ENOMEM) when mmap fails.
class PlacedArray {
public:
    explicit PlacedArray(std::size_t bytes);
    ~PlacedArray();
    PlacedArray(const PlacedArray&) = delete;
    PlacedArray& operator=(const PlacedArray&) = delete;
    PlacedArray(PlacedArray&& other) noexcept;
    PlacedArray& operator=(PlacedArray&& other) noexcept;

    double* data() const { return data_; }
    std::size_t bytes() const { return bytes_; }
    // The kernel's node of every page (move_pages with nodes == NULL,
    // through the os layer); -1 for absent pages.
    std::vector<int> page_nodes(os::Os& os) const;

private:
    double* data_ = nullptr;
    std::size_t bytes_ = 0;
    std::size_t mapped_ = 0;   // bytes_ rounded up to 2 MiB (os::sys::map_for_placement)
};

// A byte range [lo, hi) of an array that one rank owns.
using ByteRange = std::pair<std::size_t, std::size_t>;

// Places `array` as `mode` says and initialises it:
//  - serial_first_touch: rank 0 runs init for every rank's range, in rank order;
//  - parallel_first_touch: each rank runs init for its own range on its thread;
//  - interleave: placement plan interleave over every node with memory,
//    applied (mbind + populate), then each rank inits its range;
//  - stencil_aware: a page_map plan putting owned[r] on rank r's node,
//    applied, then each rank inits its range;
//  - explicit_plan: plan(explicit_policy) applied, then each rank inits.
// init(rank, lo, hi) writes the values of bytes [lo, hi) (page-aligned,
// may be empty). owned must cover [0, array.bytes()) in rank order.
// With verify, the kernel is asked for every page and the report says how
// many are where the mode intends (serial: rank 0's node; parallel and
// stencil-aware: the owner's node; interleave / explicit: the plan's node).
PlacementReport place(Team& team, PlacedArray& array, PagePlacement mode,
                      const std::optional<PlacementPolicy>& explicit_policy, const std::vector<ByteRange>& owned,
                      const std::function<void(unsigned rank, std::size_t lo, std::size_t hi)>& init, bool verify,
                      os::Os& os);
// Adds b into a (several arrays in one report).
void merge(PlacementReport& a, const PlacementReport& b);

// Automatic NUMA balancing for one run: reads the state, switches it off
// when `want_off` (and it is on), restores it on destruction (or finish()).
// Never throws: a refusal (EPERM) or a kernel without balancing becomes
// report().note, and the run goes on.
class BalancingScope {
public:
    BalancingScope(bool want_off, os::Os& os);
    ~BalancingScope();
    BalancingScope(const BalancingScope&) = delete;
    BalancingScope& operator=(const BalancingScope&) = delete;
    // Resolves the balancing hints already set on the array's pages, each
    // page where it is (placement/page_locations.hpp): switching balancing
    // off stops new hints, not the faults on old ones, which would move a
    // page to the node of the first rank that reads it (a neighbour's halo
    // read, say). Nothing to do unless this scope switched balancing off.
    void hold_still(const PlacedArray& array);
    // Restores now and returns the final report (restored set).
    BalancingReport finish();
    const BalancingReport& report() const { return report_; }

private:
    os::Os* os_;
    BalancingReport report_;
    int previous_ = -1;
    bool done_ = false;
};

// Runs `phases` phases on the team: body(ctx, phase) on every rank, a
// team barrier after each phase, then on_phase(phase) on rank 0 (if set)
// and another barrier. Busy time per rank is the time inside body.
struct Timing {
    double seconds = 0;                // wall time, first phase start to last barrier
    std::vector<double> busy_seconds;  // per rank
};
Timing run_phases(Team& team, std::size_t phases,
                  const std::function<void(TeamContext& ctx, std::size_t phase)>& body,
                  const std::function<void(std::size_t phase)>& on_phase);

// The node of each rank of the team (its CPU's), rank order.
std::vector<unsigned> rank_nodes(const Team& team);
// The node whose memory takes each rank's pages, rank order: the rank's own
// node, or, for a node without memory (or whose memory is outside the
// process's cpuset), the nearest node whose memory may hold pages
// (Machine::memory_node_near), where the kernel puts that CPU's first
// touches. What placement binds a rank's block to.
std::vector<unsigned> rank_memory_nodes(const Team& team);

}  // namespace numaware::stencil::detail
