// tools/omp/workshare.hpp — worksharing constructs (loops, sections,
// single) shared by a team (workshare.cpp).
//
// Threads meet a team's worksharing constructs in the same order, but not
// at the same time: with `nowait` a fast thread may enter the next
// construct while others are still in this one. Each construct therefore
// has a slot in a ring of `ring_size`; the construct numbered g (counted
// per thread, from 0 in each region) uses slot g mod ring_size, once every
// thread has left construct g - ring_size. The first thread to arrive
// initialises the slot; the last to leave frees it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "tools/omp/settings.hpp"

namespace numaware::omp {

// A loop's iteration space, counted 0 .. count-1 whatever its bounds and
// step, and how it is handed out. Plain data; next_chunk() is the rule.
struct LoopSpace {
    std::uint64_t count = 0;
    Sched kind = Sched::static_;
    std::uint64_t chunk = 0;   // static: 0 = one block a thread; others: at least 1
};

// The iterations [begin, end) of a loop.
struct Chunk {
    std::uint64_t begin = 0, end = 0;
};

// Static schedules: the `trip`-th chunk of thread `num` of `threads`
// (trip counts from 0 per thread). False when the thread has no more.
bool static_chunk(const LoopSpace& loop, unsigned num, unsigned threads, std::uint64_t trip, Chunk& out);

// Dynamic and guided: claim the next chunk from `next`, the first
// iteration nobody has claimed. False when none is left.
bool shared_chunk(const LoopSpace& loop, unsigned threads, std::atomic<std::uint64_t>& next, Chunk& out);

// A doacross loop (`ordered(n)` with `depend(sink: ...)` and
// `depend(source)`): GCC shares out the iterations of its first dimension
// (collapsed loops counted as one) and runs the other dimensions in order
// inside each. So one word per first-dimension iteration says how far it
// got: the flattened index + 1 of its last posted inner iteration; a sink
// waits until its iteration's word passes the index it names. Iteration
// numbers are logical, from 0, as GCC passes them.
class Doacross {
public:
    // Sizes `counts[0..dims)`; throws Error naming the dimension whose
    // sizes overflow a flattened index, or the memory it cannot get.
    void start(unsigned dims, const std::uint64_t* counts);
    void clear();
    unsigned dims() const { return dims_; }
    // depend(source) at iteration `iter[0..dims)`.
    void post(const std::uint64_t* iter);
    // depend(sink: iter): returns once that iteration has been posted; at
    // once for an iteration outside the loop.
    void wait(const std::uint64_t* iter) const;

private:
    unsigned dims_ = 0;
    std::uint64_t outer_ = 0;
    std::vector<std::uint64_t> inner_counts_, strides_;   // dimensions 1..dims-1
    std::unique_ptr<std::atomic<std::uint64_t>[]> posted_;
};

struct WorkShare {
    std::atomic<std::uint64_t> serves{0};   // the construct number this slot may serve next
    std::atomic<int> state{0};              // 0 free, 1 being initialised, 2 ready
    std::atomic<unsigned> left{0};          // threads done with it
    LoopSpace loop;
    std::uint64_t start = 0, incr = 1, end = 0;   // iteration i is the value start + i·incr; `end` as given
    std::atomic<std::uint64_t> next{0};     // dynamic and guided: first unclaimed iteration
    void* copyprivate = nullptr;            // single's copyprivate data
    void* mem = nullptr;                    // GOMP_loop_start's team-shared memory
    std::uintptr_t* task_reductions = nullptr;   // the first thread's registration (task_reduction.hpp)
    Doacross doacross;                      // a doacross loop's progress (dims() 0: none)
    std::atomic<bool> cancelled{false};     // `cancel for` or `cancel sections` met (OMP_CANCELLATION=true)
    bool ordered = false;                   // an `ordered` loop:
    std::atomic<std::uint64_t> ordered_next{0};   // the chunk starting here may run its ordered regions
};

class WorkShares {
public:
    static constexpr unsigned ring_size = 8;
    WorkShares();
    ~WorkShares();
    // Only while no thread of the team is inside a construct.
    void reset();
    // Enters construct g: waits for its slot; true for the thread that
    // must initialise it (then call ready()).
    bool enter(std::uint64_t g, WorkShare*& slot);
    void ready(WorkShare& slot) { slot.state.store(2, std::memory_order_release); }
    // Leaves construct g; the last of `threads` frees the slot.
    void leave(std::uint64_t g, WorkShare& slot, unsigned threads);
    WorkShare& slot(std::uint64_t g) { return slots_[g % ring_size]; }

private:
    std::unique_ptr<WorkShare[]> slots_;
};

// A thread's position among its team's worksharing constructs.
struct WorkShareCursor {
    std::uint64_t entered = 0;     // constructs entered in this region
    WorkShare* current = nullptr;  // the one it is in
    std::uint64_t current_g = 0;
    std::uint64_t static_trip = 0; // chunks of a static schedule taken so far
    Chunk chunk;                   // the chunk it runs (ordered loops pass their turn on by chunks)
    bool holds_chunk = false;
    std::uint64_t singles = 0;     // `single` constructs (without copyprivate) met in this region
};

// Waits (a short spin, then yielding) until `word` holds `value`.
void wait_until_equal(const std::atomic<std::uint64_t>& word, std::uint64_t value);

}  // namespace numaware::omp
