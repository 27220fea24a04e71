// tasks/task_pool.hpp — task records and where they come from: a shared
// pool of free tasks and a private cache per worker.
//
// Workers keep a private cache of free tasks. A full cache goes to the
// pool whole, as one chain, and an empty one takes a whole chain back:
// both O(1) under the pool lock, whatever the chain's length. Taking from
// and giving to the cache, the per-task path, is inline here; the refills
// and spills are out of line in task_pool.cpp.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <vector>

#include "numaware/tasks.hpp"
#include "tasks/deps.hpp"
#include "tasks/region_homes.hpp"
#include "tasks/sync.hpp"

#pragma GCC visibility push(hidden)   // library-internal: see executor.hpp

namespace numaware::tasks::detail {

struct Task : DepNode {
    TaskFn fn;
    Task* parent = nullptr;                 // the spawning task, holds a reference of it
    Runtime::Group::State* group = nullptr;
    // Runtime::detach(): 2 (the body and fulfill() each take one off; the
    // last completes the task), 0 for a task that was not detached.
    std::atomic<std::uint32_t> detach_pending{0};
    int hint = -1;
    std::uint32_t depth = 1;                // in the task tree: 1 spawned outside tasks, parent's + 1 inside
    // Children the body has spawned so far: written by the body's thread
    // alone, with no atomic operation, and read after the body by its
    // completion (see refs).
    std::uint64_t children = 0;
    SmallVec<HomeEntry*, 3> homes;          // parallel to deps
    std::exception_ptr error;               // from children, guarded by the executor's error mutex
    std::uint64_t body_ticks = 0;           // for the recorded graph
    Task* next_free = nullptr;
    Task* next_batch = nullptr;             // pool: the next chain of free tasks
    std::size_t batch_count = 0;            // pool: tasks in the chain this one heads
    // References: body_refs for the body, less one per finished child.
    // Spawning a child writes only `children`, on the body's own thread;
    // the body's release gives back body_refs - children, so the count
    // reaches zero when the body and every child are done. A locked
    // increment here per spawn waited, on every spawn of a fan-out, for
    // the line that finishing children write on other workers. The count
    // has a line of its own: sharing one with the fields above measured
    // slower (BENCHMARKS.md).
    alignas(64) std::atomic<std::uint64_t> refs{0};
};

// Whether `c` descends from `a`, a task at depth `a_depth`, in the task
// tree (a child, a grandchild...; not `a` itself). Only `c`'s chain up is
// read: a queued or running task holds a reference of its parent, which
// holds one of its own, so that chain is alive while `c` is; `a` is only
// compared (another worker's, it may have finished meanwhile).
inline bool descends(const Task* c, const Task* a, std::uint32_t a_depth) {
    if (c->depth <= a_depth) return false;
    while (c->depth > a_depth + 1) c = c->parent;
    return c->parent == a;
}
// A filter of the tasks that descend from `within` (a live task that the
// caller may read: its own wait's).
inline auto descendants_of(const Task* within) {
    const std::uint32_t depth = within != nullptr ? within->depth : 0;
    return [within, depth](const Task* c) { return descends(c, within, depth); };
}

// Asks the caches for the lines of `t` that a worker reads to run it (all
// but the last, which holds `refs` alone and is written by finishing
// children), without waiting for them. Called by the worker that makes a
// task ready, as it does: the task was written at its submission, usually
// long before, and its first read by the worker that runs it missed in
// every cache on the critical path of a chain of tasks. The 1000x1000
// OpenMP wavefront under DEP on the Intel host, alternated: 0.78-0.89 s
// without, 0.33-0.55 s with (BENCHMARKS.md, 2026-12-06).
inline void prefetch_for_run(const Task* t) {
    static_assert(alignof(Task) == 64 && sizeof(Task) % 64 == 0);
    const char* at = reinterpret_cast<const char*>(t);
    for (std::size_t line = 0; line + 1 < sizeof(Task) / 64; ++line) __builtin_prefetch(at + 64 * line);
}

// The body's share of Task::refs: more than any task can have children.
inline constexpr std::uint64_t body_refs = std::uint64_t{1} << 62;

// A worker's cache of free tasks, touched only by that worker.
struct PoolCache {
    Task* free = nullptr;
    std::size_t count = 0;
};

class TaskPool {
public:
    static constexpr std::size_t cache_max = 256;   // a fuller cache goes to the pool whole
    static constexpr std::size_t refill_singles = 64;   // single tasks a refill takes when no chain is free
    static constexpr std::size_t chunk = 64;        // tasks made per allocation

    TaskPool() = default;
    TaskPool(const TaskPool&) = delete;
    TaskPool& operator=(const TaskPool&) = delete;

    // A free task, from `cache` (a worker's) or, for a thread that is no
    // worker (cache == nullptr), from the pool.
    Task* alloc(PoolCache* cache) {
        if (cache != nullptr && cache->free == nullptr) refill(*cache);
        if (cache != nullptr && cache->free != nullptr) {
            Task* t = cache->free;
            cache->free = t->next_free;
            --cache->count;
            // The next free task was last written by whichever worker ran
            // it: fetch its link and header now, not at the next spawn.
            if (Task* next = cache->free) {
                const char* line = reinterpret_cast<const char*>(next);
                for (std::size_t at = 0; at < sizeof(Task); at += 64) __builtin_prefetch(line + at, 1);
            }
            return t;
        }
        return alloc_shared();
    }

    // Returns a finished task (or one whose spawn failed) to `cache`, or to
    // the pool for a thread that is no worker.
    void recycle(PoolCache* cache, Task* t) {
        t->fn.reset();
        t->clear_deps();
        t->homes.clear();
        t->error = nullptr;
        t->parent = nullptr;
        t->group = nullptr;
        if (cache != nullptr) {
            t->next_free = cache->free;
            cache->free = t;
            if (++cache->count < cache_max) return;
            spill(*cache);
            return;
        }
        give_back(t);
    }

    // Destroys every task (at shutdown, once no task is in flight).
    void destroy_all() { chunks_.clear(); }

private:
    void refill(PoolCache& cache);   // an empty cache takes a chain, or singles
    void spill(PoolCache& cache);    // a full cache goes to the pool as one chain
    Task* alloc_shared();
    void give_back(Task* t);

    SpinLock lock_;
    Task* free_ = nullptr;      // single tasks, linked by next_free
    Task* batches_ = nullptr;   // whole worker caches, linked by next_batch
    std::vector<std::unique_ptr<Task[]>> chunks_;
};

}  // namespace numaware::tasks::detail

#pragma GCC visibility pop
