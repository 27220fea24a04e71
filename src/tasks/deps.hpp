// tasks/deps.hpp — the dependency tracker of the task runtime.
//
// Threading: add(), commit(), prepare() and everything else but complete()
// are called one at a time (the executor holds its scheduler lock).
// complete() may run on any thread, concurrently with those calls and with
// other complete() calls, each for its own node: a finishing task needs no
// lock. (The task simulator does not use the tracker: it orders a graph
// whose regions it knows by the edges the graph keeps, Graph::preds_of(),
// which a unit test holds equal to the tracker's.)
//
// A region is an address range named by a dependency, keyed by its start
// address and its scope (Dep::scope: the scope goes in the key's bits
// 48-63, so regions of different scopes never meet). Ranges that tasks name must be identical or disjoint: a new range
// that partially overlaps a region already known is rejected. Per region the
// tracker keeps the last writer and the readers since that write, and gives
// a new task its predecessor edges:
//   in         -> read-after-write on the last writer;
//   out/inout  -> write-after-read on every reader since the last write, or,
//                 with no such reader, write-after-write on the last writer.
// Only unfinished tasks are predecessors: an edge is never reported to a
// task that has already finished, and a region that no unfinished task
// names any more is idle. Idle regions are forgotten in batches so long runs
// over ever-new addresses do not grow memory (an idle region still counts
// as known for the overlap check until then).
//
// Tasks are DepNode objects owned by the caller (the executor pools them);
// a node must stay alive from add() until complete() has returned. What the
// tracker needs of an unfinished task is its own, indexed by a slot that
// add() gives the node and complete() takes back: a record of one cache
// line (state, id, node, the first successors; longer successor lists go on
// in 64-byte overflow blocks) and, in a dense array beside the records, its
// count of unfinished predecessors. Records, counts and blocks live in
// chunks that never move. Completing a task touches its own record and one
// 32-bit count per successor, never another task's node or a region.
//
// A slot's state word holds its generation (bumped when its task finishes)
// and its count of successors. Regions name their writer and readers by
// (slot, generation): a task is unfinished exactly while its slot's
// generation is the one it was added with, so complete() leaves every
// region as it is and add() skips finished tasks as it meets them. add()
// links an edge without a lock: it writes the successor past the count,
// then raises the count with one compare-and-swap that expects the
// generation it read; complete() swaps in the next generation and a count
// of zero, and reads as many successors as the word it took held. So an
// edge is either linked before the predecessor finishes (and counted down
// by it) or not at all, and the predecessor's line moves between the two
// CPUs once per edge, not once per access. A node's count starts at a hold
// that add() keeps until commit(), which takes it back less the edges
// linked: a task whose predecessors finish while it is still being
// submitted becomes ready at commit(), never earlier. complete() marks the
// record released when it has read it for the last time; add() reuses
// released records (and their overflow blocks) itself, so finishing
// threads share no free list.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <type_traits>
#include <vector>

#include "numaware/task_policy.hpp"
#include "util/debug_assert.hpp"
#include "util/small_vec.hpp"
#include "numaware/tasks.hpp"

namespace numaware::tasks::detail {

struct DepNode;

inline constexpr std::uint32_t no_slot = 0xffffffffu;

// Fibonacci hashing of an address into a table of 2^(64 - shift) slots:
// consecutive addresses land far apart, so linear probing sees no runs.
inline std::size_t address_slot(std::uint64_t a, unsigned shift) {
    return static_cast<std::size_t>((a * 0x9E3779B97F4A7C15ull) >> shift);
}

// A set of records keyed by their `start` address, in two levels so a run
// over an array stays in cache: the pages (4 KiB of address space) that hold
// starts, in a small open-addressing table, and per page an open-addressing
// table of its records. Both probe linearly, at most half full, with
// Fibonacci hashing. Records are the caller's; this holds pointers.
template <class T>
class PagedTable {
public:
    PagedTable() = default;
    PagedTable(const PagedTable&) = delete;
    PagedTable& operator=(const PagedTable&) = delete;

    std::size_t size() const { return count_; }

    T* find(std::uint64_t start) const {
        const Page* pg = find_page(start >> page_bits);
        if (pg == nullptr) return nullptr;
        const std::size_t mask = pg->slots.size() - 1;
        for (std::size_t i = address_slot(start, pg->shift);; i = (i + 1) & mask) {
            const Slot& x = pg->slots[i];
            if (x.ptr == nullptr || x.key == start) return x.ptr;
        }
    }
    // `x->start` must not be present.
    void insert(T* x) {
        Page& pg = page_for_insert(x->start >> page_bits);
        if ((pg.count + 1) * 2 > pg.slots.size()) rebuild(pg.slots, pg.shift, pg.slots.empty() ? 8 : pg.slots.size() * 2);
        place(pg.slots, pg.shift, Slot{x->start, x});
        ++pg.count;
        ++count_;
    }
    template <class F>
    void for_each(F f) const {
        for (const auto& pg : pages_)
            if (pg)
                for (const Slot& x : pg->slots)
                    if (x.ptr != nullptr) f(x.ptr);
    }
    // Removes these records (each present, once): each is found by its
    // key and its slot marked; then only the pages that lost one are
    // rebuilt, from their slots' keys, so no record that stays is read.
    void erase(std::span<T* const> gone) {
        T* const tomb = reinterpret_cast<T*>(alignof(T));   // no record's address
        touched_.clear();
        for (T* x : gone) {
            Page& pg = *const_cast<Page*>(find_page(x->start >> page_bits));
            const std::size_t mask = pg.slots.size() - 1;
            std::size_t i = address_slot(x->start, pg.shift);
            while (pg.slots[i].ptr != x) i = (i + 1) & mask;
            pg.slots[i].ptr = tomb;   // later probes go on past it
            if (!pg.touched) {
                pg.touched = true;
                touched_.push_back(&pg);
            }
            --pg.count;
            --count_;
        }
        bool emptied = false;
        for (Page* pg : touched_) {
            pg->touched = false;
            if (pg->count == 0) {
                emptied = true;
                continue;
            }
            std::size_t cap = pg->slots.size();
            while (cap > 8 && pg->count * 4 < cap) cap /= 2;
            rebuild(pg->slots, pg->shift, cap, tomb);
        }
        if (!emptied) return;
        std::vector<std::unique_ptr<Page>> old;
        old.swap(pages_);
        page_shift_ = 64;
        page_count_ = 0;
        last_ = nullptr;
        for (auto& pg : old)
            if (pg && pg->count != 0) place_page(std::move(pg));
    }

private:
    static constexpr unsigned page_bits = 12;
    struct Slot {
        std::uint64_t key = 0;   // the record's start: probes read no record
        T* ptr = nullptr;        // nullptr: empty
    };
    struct Page {
        std::uint64_t number = 0;
        std::size_t count = 0;
        unsigned shift = 64;
        bool touched = false;   // erase(): in touched_
        std::vector<Slot> slots;
    };
    static unsigned shift_for(std::size_t capacity) {
        unsigned shift = 64;
        for (std::size_t c = capacity; c > 1; c /= 2) --shift;
        return shift;
    }
    static void place(std::vector<Slot>& slots, unsigned shift, Slot x) {
        const std::size_t mask = slots.size() - 1;
        std::size_t i = address_slot(x.key, shift);
        while (slots[i].ptr != nullptr) i = (i + 1) & mask;
        slots[i] = x;
    }
    // Into `capacity` slots, leaving out the empty ones and those that
    // hold `skip` (erase()'s mark).
    static void rebuild(std::vector<Slot>& slots, unsigned& shift, std::size_t capacity, const T* skip = nullptr) {
        std::vector<Slot> old(capacity);
        old.swap(slots);
        shift = shift_for(capacity);
        for (const Slot& x : old)
            if (x.ptr != nullptr && x.ptr != skip) place(slots, shift, x);
    }
    const Page* find_page(std::uint64_t number) const {
        if (last_ != nullptr && last_->number == number) return last_;
        if (pages_.empty()) return nullptr;
        const std::size_t mask = pages_.size() - 1;
        for (std::size_t i = address_slot(number, page_shift_);; i = (i + 1) & mask) {
            Page* pg = pages_[i].get();
            if (pg == nullptr) return nullptr;
            if (pg->number == number) return last_ = pg;
        }
    }
    void place_page(std::unique_ptr<Page> pg) {
        if ((page_count_ + 1) * 2 > pages_.size()) {
            std::vector<std::unique_ptr<Page>> old(pages_.empty() ? 16 : pages_.size() * 2);
            old.swap(pages_);
            page_shift_ = shift_for(pages_.size());
            page_count_ = 0;
            for (auto& q : old)
                if (q) place_page(std::move(q));
        }
        const std::size_t mask = pages_.size() - 1;
        std::size_t i = address_slot(pg->number, page_shift_);
        while (pages_[i]) i = (i + 1) & mask;
        pages_[i] = std::move(pg);
        ++page_count_;
    }
    Page& page_for_insert(std::uint64_t number) {
        if (const Page* pg = find_page(number)) return *const_cast<Page*>(pg);
        auto pg = std::make_unique<Page>();
        pg->number = number;
        Page* raw = pg.get();
        place_page(std::move(pg));
        return *(last_ = raw);
    }

    std::vector<std::unique_ptr<Page>> pages_;   // a power of two slots, or empty
    unsigned page_shift_ = 64;
    std::size_t page_count_ = 0;
    std::size_t count_ = 0;
    mutable Page* last_ = nullptr;   // the page of the last access
    std::vector<Page*> touched_;     // erase(): pages that lost a record
};

struct Region {
    std::uint64_t start = 0;
    std::uint64_t bytes = 0;
    std::uint32_t writer = no_slot;   // the last writer's slot, or no_slot
    std::uint32_t writer_gen = 0;     // its generation: the writer is unfinished while the slot has it
    std::uint32_t compact_at = 16;    // readers' length at which finished ones are dropped
    struct Reader {
        std::uint32_t slot;
        std::uint32_t gen;   // the slot's generation when it read: finished once the slot's moved on
    };
    SmallVec<Reader, 2> readers;   // readers since the last write, finished ones until compacted (capacity kept)
    void* cache = nullptr;         // the caller's per-region data (e.g. a home entry)
    std::uint32_t named = 0;       // the tracker's sweep count when add() last named it
    bool live = false;             // in the tracker (records are pooled and reused)
    Region* next_free = nullptr;
};

// One dependency of a task after validation: deduplicated, never null.
struct TrackedDep {
    std::uint64_t region = 0;   // the key: the start address, with the scope in bits 48-63 (Dep::scope)
    std::uint64_t bytes = 0;
    Region* reg = nullptr;      // set by add(); before, a hint that add() checks (from prepare())
    AccessMode access = AccessMode::in;
    bool unknown = false;       // prepare() found no region at `region`: add() need not look again
    std::uint16_t scope = 0;    // Dep::scope

    // The range's start address, the key without its scope.
    std::uint64_t address() const { return scope == 0 ? region : region & (scope_key_limit - 1); }
    static constexpr unsigned scope_shift = 48;
    static constexpr std::uint64_t scope_key_limit = std::uint64_t{1} << scope_shift;
};
static_assert(sizeof(TrackedDep) == 32, "four dependencies in two cache lines");

using DepList = SmallVec<TrackedDep, 4>;

struct DepNode {
    TaskId id = 0;
    std::uint32_t slot = no_slot;       // the tracker's record, from add() until complete()
    DepList deps;
    void clear_deps() { deps.clear(); }
};

// The predecessors that add() found for one task: one edge per distinct
// predecessor, bytes summed.
using EdgeList = SmallVec<Edge, 8>;

// A task that a completion made ready.
struct ReadyNode {
    DepNode* node;
    TaskId id;
};

// The start addresses of the known regions in order, with their ends, for
// the overlap check of a range that is not a known region: a B+-tree of
// one level (sorted leaves of up to leaf_cap entries, and the sorted first
// keys of the leaves). Appending in address order, the usual case, costs a
// binary search in a short array and a store.
class RangeIndex {
public:
    RangeIndex() = default;
    RangeIndex(const RangeIndex&) = delete;
    RangeIndex& operator=(const RangeIndex&) = delete;

    struct Entry {
        std::uint64_t start;
        std::uint64_t end;
    };
    // A known range overlapping [start, end), or nullptr. `start` itself
    // must not be a known start.
    const Entry* overlapping(std::uint64_t start, std::uint64_t end) const;
    void insert(std::uint64_t start, std::uint64_t end);   // start not yet present
    void erase(std::uint64_t start);                       // start present
    // Replaces the contents with `sorted` (ascending starts, disjoint).
    void assign(std::span<const Entry> sorted);
    // Calls f(entry) for every entry, in ascending order of start.
    template <class F>
    void for_each(F f) const {
        for (const auto& l : leaves_)
            for (std::uint32_t i = 0; i < l->n; ++i) f(l->e[i]);
    }
    std::size_t size() const { return size_; }

private:
    static constexpr std::uint32_t leaf_cap = 64;
    struct Leaf {
        std::uint32_t n = 0;
        Entry e[leaf_cap];
    };
    std::size_t leaf_of(std::uint64_t start) const;   // the leaf whose range holds start (0 if before all)
    std::vector<std::uint64_t> firsts_;                // first start of each leaf
    std::vector<std::unique_ptr<Leaf>> leaves_;
    std::vector<std::unique_ptr<Leaf>> spare_;         // emptied leaves, for reuse
    std::size_t size_ = 0;
};

// An array that grows by whole chunks that never move, so that one thread
// may append while others read elements they were handed (a slot that was
// published to them). Up to max_chunks chunks of 2^chunk_bits elements.
template <class T>
class ChunkedArray {
public:
    static constexpr unsigned chunk_bits = 12;
    static constexpr std::size_t chunk_size = std::size_t{1} << chunk_bits;
    static constexpr std::size_t max_chunks = std::size_t{1} << 14;
    static constexpr std::size_t max_size = chunk_size * max_chunks;

    ChunkedArray() : chunks_(new std::unique_ptr<T[]>[max_chunks]) {}
    ChunkedArray(const ChunkedArray&) = delete;
    ChunkedArray& operator=(const ChunkedArray&) = delete;

    T& operator[](std::uint32_t i) const { return chunks_[i >> chunk_bits][i & (chunk_size - 1)]; }
    // Appends a default element; returns its index, or no_slot when full.
    std::uint32_t append() {
        if (size_ == max_size) return no_slot;
        if ((size_ & (chunk_size - 1)) == 0) chunks_[size_ >> chunk_bits] = std::make_unique<T[]>(chunk_size);
        return static_cast<std::uint32_t>(size_++);
    }

private:
    std::unique_ptr<std::unique_ptr<T[]>[]> chunks_;
    std::size_t size_ = 0;
};

// A FIFO of slot numbers in a growable ring buffer.
class SlotRing {
public:
    bool empty() const { return count_ == 0; }
    std::size_t size() const { return count_; }
    std::uint32_t front() const { return buf_[head_]; }
    std::uint32_t pop_front() {
        const std::uint32_t s = buf_[head_];
        head_ = (head_ + 1) & (buf_.size() - 1);
        --count_;
        return s;
    }
    void push_back(std::uint32_t s) {
        if (count_ == buf_.size()) grow();
        buf_[(head_ + count_) & (buf_.size() - 1)] = s;
        ++count_;
    }

private:
    void grow() {
        std::vector<std::uint32_t> bigger(buf_.empty() ? 64 : buf_.size() * 2);
        for (std::size_t i = 0; i < count_; ++i) bigger[i] = buf_[(head_ + i) & (buf_.size() - 1)];
        buf_.swap(bigger);
        head_ = 0;
    }
    std::vector<std::uint32_t> buf_;   // a power of two, or empty
    std::size_t head_ = 0;
    std::size_t count_ = 0;
};

class DepTracker {
public:
    DepTracker();
    DepTracker(const DepTracker&) = delete;
    DepTracker& operator=(const DepTracker&) = delete;

    // Checks `deps` and writes them, with exact duplicates (same range and
    // access) merged, to `out`. Throws Error("deps[i]", ...) for a null
    // address, zero bytes, a range that wraps the address space, a range
    // that partially overlaps a known region or another dependency of the
    // same task, or the same range named twice with different access.
    // Changes nothing in the tracker; `out` is cleared first. What it
    // learns of the known regions holds for the next add() only.
    void prepare(std::span<const Dep> deps, DepList& out) const;

    // Registers a prepared node (node.deps from prepare(), node.id set):
    // gives it a slot, finds its predecessors (preds()) and records the
    // node as reader or writer of its regions. The node cannot become ready
    // before commit().
    void add(DepNode& node);
    // Ends the node's submission: true when no predecessor is unfinished
    // (then no complete() will report it), false when the last one to
    // finish will. Once per add(), for the node that add() registered,
    // before the next add().
    bool commit(DepNode& node);
    // The predecessors of the node that the last add() registered, valid
    // until the next add(). Callers use them at once (a policy's on_submit,
    // a recorded graph); a task keeps no copy, so a million tasks in
    // flight carry no edge lists.
    std::span<const Edge> preds() const { return preds_; }

    // The node has finished: successors whose last predecessor it was are
    // appended to `ready` (with their ids, so a caller that needs only the
    // id does not touch the node), and its slot is freed. Thread-safe (see
    // the top of this file); a node that add() never registered is ignored.
    void complete(DepNode& node, std::vector<ReadyNode>& ready) {
        const std::uint32_t slot = node.slot;
        if (slot == no_slot) return;
        node.slot = no_slot;
        complete_slot(slot, ready);
    }

    // Unfinished predecessors of an added, committed, unfinished node.
    std::uint32_t pending(const DepNode& node) const {
        return pending_[node.slot].load(std::memory_order_acquire);
    }
    std::size_t regions() const { return table_.size(); }   // known, idle included
    // Known regions that no unfinished task names (counted by a scan).
    std::size_t idle_regions() const;
    // Forgets every idle region now. add() does it in batches, and there
    // only for regions that no task has named since the batch before: a
    // region written and then read a little later (a wavefront's row by
    // the next row) is not forgotten between the two and made again.
    void forget_idle();
    // The caller's per-region data (Region::cache, non-null only) of the
    // regions forgotten since the last call, moved to `out` (cleared
    // first): no unfinished task names those regions, so the caller may
    // drop what it keeps for them.
    void take_forgotten(std::vector<void*>& out) {
        out.clear();
        out.swap(forgotten_);
    }
    bool has_forgotten() const { return !forgotten_.empty(); }

private:
    // One unfinished task's record: a cache line, the first successors
    // inline, the rest in overflow blocks chained from it.
    struct alignas(64) SlotRecord {
        static constexpr std::uint32_t inline_cap = 8;
        std::atomic<std::uint64_t> state{0};     // generation << 32 | successors linked
        std::uint32_t first_block = no_slot;
        std::uint32_t last_block = no_slot;
        std::uint32_t items[inline_cap] = {};
        TaskId id = 0;
        DepNode* node = nullptr;
    };
    static constexpr std::uint32_t released = 0xffffffffu;
    // A new slot's pending count until commit(): above any number of
    // predecessors, so that none counts it down to zero before then.
    static constexpr std::uint32_t adding_hold = 0x80000000u;
    static std::uint32_t generation_of(std::uint64_t state) { return static_cast<std::uint32_t>(state >> 32); }
    static std::uint32_t successors_of(std::uint64_t state) { return static_cast<std::uint32_t>(state); }
    struct SuccBlock {
        static constexpr std::uint32_t cap = 15;
        std::uint32_t items[cap];
        std::uint32_t next;
    };
    static_assert(sizeof(SlotRecord) == 64 && sizeof(SuccBlock) == 64);

    // A slot that add() has given out again since `gen` was given is
    // finished for sure (it was reused only once released), and no record
    // is read for it; otherwise its record says.
    bool alive(std::uint32_t slot, std::uint32_t gen) const {
        return given_gen_[slot] == gen && generation_of(slots_[slot].state.load(std::memory_order_acquire)) == gen;
    }
    bool given_again(std::uint32_t slot, std::uint32_t gen) const { return given_gen_[slot] != gen; }
    bool idle(const Region& r) const;
    // forget_idle(), of every idle region or, `aged`, of those not named
    // since the last sweep.
    [[gnu::visibility("hidden")]] void sweep(bool aged);
    Region& region_for(const TrackedDep& d);
    // The helpers below are called only from deps.cpp: hidden, so add()
    // calls them directly, not through the library's PLT.
    [[gnu::visibility("hidden")]] Region& region_lookup(const TrackedDep& d);   // region_for() past its hint
    [[gnu::visibility("hidden")]] Region* new_region();
    // complete() for the task that add() gave `slot`.
    void complete_slot(std::uint32_t slot, std::vector<ReadyNode>& ready);
    [[gnu::visibility("hidden")]] std::uint32_t new_slot(DepNode& node);
    [[gnu::visibility("hidden")]] std::uint32_t new_block();
    // Links `node` after the task in (pred, gen) if that one is unfinished;
    // returns whether it was.
    bool add_edge(DepNode& node, std::uint32_t pred, std::uint32_t gen, std::uint64_t bytes);
    [[gnu::visibility("hidden")]] void compact_readers(Region& r);

    // One count down; returns the count left.
    // A pending count never goes below zero, and a released record is
    // never counted down.
    std::uint32_t count_down(std::atomic<std::uint32_t>& a) const {
        const std::uint32_t before = a.fetch_sub(1, std::memory_order_acq_rel);
        NW_DEBUG_ASSERT(before != 0 && before != released);
        return before - 1;
    }
    bool reusable(std::uint32_t slot) const {
        return pending_[slot].load(std::memory_order_acquire) == released;
    }

    ChunkedArray<SlotRecord> slots_;
    // Per slot, beside the records: unfinished predecessors, +1 from add()
    // to commit(); `released` once complete() has read the slot's record
    // for the last time. Dense, so that counting down the successors of a
    // task touches few lines when many tasks are in flight.
    ChunkedArray<std::atomic<std::uint32_t>> pending_;
    ChunkedArray<SuccBlock> blocks_;
    // Per slot, the generation add() gave it last. Written and read only by
    // the thread that adds (under the executor's lock), so that a
    // predecessor whose slot add() has given out again is known finished
    // without reading its record, which a finishing worker on another CPU
    // wrote last. (A slot is reused only after an acquiring read of its
    // release, so the predecessor's effects are visible to this thread.)
    ChunkedArray<std::uint32_t> given_gen_;
    // Slots are taken back by add(), not handed back by complete(): the
    // slots given out and not known to be released, oldest first. Tasks
    // mostly finish in about the order they were added, so the oldest is
    // usually reusable; a busy one goes to the back, and when the ring has
    // doubled since the last time, all of it is searched.
    SlotRing given_;
    std::size_t next_scan_ = 64;
    std::vector<std::uint32_t> free_slots_;   // found released by a search of given_
    std::uint32_t free_block_ = no_slot;      // blocks of reused slots, linked by next
    EdgeList preds_;                          // the last add()'s predecessors
    std::uint32_t adding_gen_ = 0;            // the generation of the slot add() gave the last node

    // The known regions by start address. Region records come from chunks
    // and are reused, so steady state allocates nothing.
    PagedTable<Region> table_;
    std::size_t next_sweep_;   // add() forgets idle regions once this many are known
    std::uint32_t sweeps_ = 0;  // batches so far (Region::named)
    // Every known region is in one of these (and may linger, named again,
    // in old_): young_, those named since the last batch (named ==
    // sweeps_); old_, those named in the batch before, or kept busy by it
    // (named == sweeps_ - 1). A batch judges old_ alone.
    std::vector<Region*> young_;
    std::vector<Region*> old_;
    std::vector<std::unique_ptr<Region[]>> chunks_;
    Region* free_ = nullptr;
    RangeIndex ordered_;   // for overlap checks of new ranges
    std::vector<RangeIndex::Entry> scratch_;   // forget_idle(): the survivors
    std::vector<Region*> sweep_scratch_;       // sweep(): the regions judged
    std::vector<void*> forgotten_;             // caches of forgotten regions, for take_forgotten()
};

}  // namespace numaware::tasks::detail
