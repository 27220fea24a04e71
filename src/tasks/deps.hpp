// tasks/deps.hpp — the dependency tracker of the task runtime.
//
// Single-threaded: the caller serialises every call (the executor holds its
// scheduler lock; the simulator is single-threaded anyway).
//
// A region is an address range named by a dependency, keyed by its start
// address. Ranges that tasks name must be identical or disjoint: a new range
// that partially overlaps a region already known is rejected. Per region the
// tracker keeps the last writer and the readers since that write, and gives
// a new task its predecessor edges:
//   in         -> read-after-write on the last writer;
//   out/inout  -> write-after-read on every reader since the last write, or,
//                 with no such reader, write-after-write on the last writer.
// Only unfinished tasks are predecessors: a finished task leaves every
// region it was named in when complete() runs, so an edge is never reported
// to a task that has already finished, and a region that no unfinished task
// names any more is idle. Idle regions are forgotten in batches so long runs
// over ever-new addresses do not grow memory.
//
// Tasks are DepNode objects owned by the caller (the executor pools them);
// a node must stay alive from add() until complete() has returned.
#pragma once

#include <cstdint>
#include <map>
#include <memory_resource>
#include <span>
#include <unordered_map>
#include <vector>

#include "numaware/task_policy.hpp"
#include "numaware/tasks.hpp"

namespace numaware::tasks::detail {

struct DepNode;

inline constexpr std::uint32_t no_position = 0xffffffffu;

struct Region {
    explicit Region(std::pmr::memory_resource* mr) : readers(mr) {}
    std::uint64_t start = 0;
    std::uint64_t bytes = 0;
    DepNode* writer = nullptr;   // last writer, while unfinished
    struct Reader {
        DepNode* task;
        std::uint32_t dep;   // index into task->deps
    };
    std::pmr::vector<Reader> readers;   // unfinished readers since the last write
    void* cache = nullptr;         // the caller's per-region data (e.g. a home entry)
    bool idle = false;
    bool unused() const { return writer == nullptr && readers.empty(); }
};

// One dependency of a task after validation: deduplicated, never null.
struct TrackedDep {
    std::uint64_t region = 0;   // start address
    std::uint64_t bytes = 0;
    Access access = Access::in;
    Region* reg = nullptr;                      // set by add()
    std::uint32_t reader_pos = no_position;     // position in reg->readers
};

struct DepNode {
    TaskId id = 0;
    std::uint32_t pending = 0;          // unfinished predecessors
    std::vector<TrackedDep> deps;
    std::vector<Edge> preds;            // one per distinct predecessor, bytes summed
    std::vector<DepNode*> succ;         // tasks waiting for this one
    void clear_deps() {
        deps.clear();
        preds.clear();
        succ.clear();
        pending = 0;
    }
};

class DepTracker {
public:
    // Checks `deps` and writes them, with exact duplicates (same range and
    // access) merged, to `out`. Throws Error("deps[i]", ...) for a null
    // address, zero bytes, a range that wraps the address space, a range
    // that partially overlaps a known region or another dependency of the
    // same task, or the same range named twice with different access.
    // Changes nothing in the tracker; `out` is cleared first.
    void prepare(std::span<const Dep> deps, std::vector<TrackedDep>& out) const;

    // Registers a prepared node (node.deps from prepare(), node.id set):
    // fills node.preds and node.pending and records the node as reader or
    // writer of its regions. Returns true when the node is ready (no
    // unfinished predecessor).
    bool add(DepNode& node);

    // The node has finished: it leaves its regions, and successors whose
    // last predecessor it was are appended to `ready`. node.succ is cleared.
    void complete(DepNode& node, std::vector<DepNode*>& ready);

    std::size_t regions() const { return regions_.size(); }   // known, idle included
    std::size_t idle_regions() const { return idle_; }
    // Forgets every idle region now (complete() does it in batches).
    void forget_idle();

private:
    Region& region_for(const TrackedDep& d);
    static void add_edge(DepNode& node, DepNode& pred, std::uint64_t bytes);

    // Regions come and go with the tasks that name them: their nodes come
    // from a pool, so steady state allocates nothing.
    std::pmr::unsynchronized_pool_resource pool_;
    std::pmr::unordered_map<std::uint64_t, Region> regions_{&pool_};   // by start address
    std::pmr::map<std::uint64_t, std::uint64_t> ordered_{&pool_};      // start -> bytes, for overlap checks
    std::size_t idle_ = 0;
};

}  // namespace numaware::tasks::detail
