// tools/omp/loops.hpp — the worksharing entry points' common steps (the
// GOMP_loop_*, GOMP_sections_* and GOMP_parallel_loop_* entry points in
// gomp_loop.cpp, GOMP_single_* in gomp_parallel.cpp).
#pragma once

#include <cstdint>

#include "tools/omp/team.hpp"

namespace numaware::omp {

// A loop `for (v = start; v < end (or > end); v += incr)` of any integer
// type, in the unsigned 64-bit arithmetic that both GCC ABIs (long and
// unsigned long long) reduce to: iteration i has the value start + i·incr
// (mod 2⁶⁴).
struct LoopBounds {
    std::uint64_t start = 0;
    std::uint64_t incr = 1;
    std::uint64_t end = 0;
    std::uint64_t count = 0;
};

// GCC's `long` loops: `incr` says the direction.
LoopBounds long_loop(long start, long end, long incr);
// GCC's `unsigned long long` loops: `up` says the direction, `incr` is
// negative in two's complement when down.
LoopBounds ull_loop(bool up, unsigned long long start, unsigned long long end, unsigned long long incr);

// The schedule a GOMP entry point names (GCC's GFS_* numbers: 0 runtime,
// 1 static, 2 dynamic, 3 guided, 4 auto; the monotonic bit ignored) with
// its chunk, resolved against run-sched-var for `runtime`.
LoopSpace resolve_schedule(long sched, long chunk, std::uint64_t count);

// Enters the calling thread's next worksharing construct; the thread that
// arrives first runs init(slot) before the others may use it. Returns the
// slot; the construct is the thread's current one until leave_current().
template <class Init>
WorkShare& enter_construct(Init init, bool* first = nullptr) {
    ThreadState& st = thread_state();
    const std::uint64_t g = st.cursor.entered++;
    WorkShare* slot = nullptr;
    const bool initialiser = st.team->workshares.enter(g, slot);
    if (initialiser) {
        init(*slot);
        st.team->workshares.ready(*slot);
    }
    st.cursor.current = slot;
    st.cursor.current_g = g;
    st.cursor.static_trip = 0;
    st.cursor.holds_chunk = false;
    if (first) *first = initialiser;
    return *slot;
}

void leave_current();

// An `ordered` region of the current loop: waits for the calling thread's
// chunk's turn.
void ordered_region_start();

// The next chunk of the current loop for the calling thread, as values of
// the loop variable: [*begin, *end). False when it has no more.
bool next_chunk(std::uint64_t& begin, std::uint64_t& end);

// The bounds a slot's loop was set up with (the values next_chunk maps to).
void set_loop(WorkShare& slot, const LoopBounds& bounds, const LoopSpace& space);

}  // namespace numaware::omp
