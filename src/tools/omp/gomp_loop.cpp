// tools/omp/gomp_loop.cpp — the worksharing entry points that GCC emits
// for `for`, `parallel for`, `sections`, `parallel sections` and `scope`
// (OpenMP 4.5/5.1 host code, both the `long` and the `unsigned long long`
// loop ABIs), with their task reductions (`reduction(task, ...)`).
#include <cstdarg>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "numaware/error.hpp"
#include "tools/omp/loops.hpp"
#include "tools/omp/tasking.hpp"
#include "tools/omp/team.hpp"

namespace numaware::omp {

namespace {

__extension__ typedef unsigned __int128 u128;

std::uint64_t trips(std::uint64_t distance, std::uint64_t step) {
    return static_cast<std::uint64_t>((u128{distance} + step - 1) / step);
}

}  // namespace

LoopBounds long_loop(long start, long end, long incr) {
    LoopBounds b{static_cast<std::uint64_t>(start), static_cast<std::uint64_t>(incr), static_cast<std::uint64_t>(end), 0};
    if (incr > 0 && start < end)
        b.count = trips(static_cast<std::uint64_t>(end) - static_cast<std::uint64_t>(start), static_cast<std::uint64_t>(incr));
    else if (incr < 0 && start > end)
        b.count = trips(static_cast<std::uint64_t>(start) - static_cast<std::uint64_t>(end), -static_cast<std::uint64_t>(incr));
    return b;
}

LoopBounds ull_loop(bool up, unsigned long long start, unsigned long long end, unsigned long long incr) {
    LoopBounds b{start, incr, end, 0};
    if (up && start < end) b.count = trips(end - start, incr);
    else if (!up && start > end) b.count = trips(start - end, -incr);
    return b;
}

LoopSpace resolve_schedule(long sched, long chunk, std::uint64_t count) {
    LoopSpace s;
    s.count = count;
    long kind = sched & 0x7fffffffL;   // GFS_MONOTONIC is the top bit of the int
    if (kind == 0) {                    // runtime: run-sched-var
        const Schedule r = run_schedule();
        kind = static_cast<long>(r.kind);
        chunk = r.chunk;
    }
    switch (kind) {
        case 2: s.kind = Sched::dynamic; break;
        case 3: s.kind = Sched::guided; break;
        case 1:
        case 4:   // auto: the implementation's choice, a static block a thread
        default: s.kind = Sched::static_; break;
    }
    if (s.kind == Sched::static_) s.chunk = chunk > 0 ? static_cast<std::uint64_t>(chunk) : 0;
    else s.chunk = chunk > 0 ? static_cast<std::uint64_t>(chunk) : 1;
    return s;
}

void set_loop(WorkShare& slot, const LoopBounds& bounds, const LoopSpace& space) {
    slot.loop = space;
    slot.start = bounds.start;
    slot.incr = bounds.incr;
    slot.end = bounds.end;
}

namespace {

// An ordered loop hands the turn to run `ordered` regions from chunk to
// chunk in iteration order: a thread whose chunk is done waits for its
// turn, then passes it to the chunk that starts where its own ends.
void release_ordered(ThreadState& st) {
    WorkShare& w = *st.cursor.current;
    if (!w.ordered || !st.cursor.holds_chunk) return;
    wait_until_equal(w.ordered_next, st.cursor.chunk.begin);
    w.ordered_next.store(st.cursor.chunk.end, std::memory_order_release);
    st.cursor.holds_chunk = false;
}

}  // namespace

void ordered_region_start() {
    ThreadState& st = thread_state();
    if (!st.cursor.current || !st.cursor.current->ordered || !st.cursor.holds_chunk) return;
    wait_until_equal(st.cursor.current->ordered_next, st.cursor.chunk.begin);
}

void leave_current() {
    ThreadState& st = thread_state();
    release_ordered(st);
    st.team->workshares.leave(st.cursor.current_g, *st.cursor.current, st.team->size);
    st.cursor.current = nullptr;
}

bool next_chunk(std::uint64_t& begin, std::uint64_t& end) {
    ThreadState& st = thread_state();
    release_ordered(st);
    WorkShare& w = *st.cursor.current;
    Chunk c;
    const bool got = w.loop.kind == Sched::static_
                         ? static_chunk(w.loop, st.num, st.team->size, st.cursor.static_trip++, c)
                         : shared_chunk(w.loop, st.team->size, w.next, c);
    if (!got) return false;
    st.cursor.chunk = c;
    st.cursor.holds_chunk = true;
    begin = w.start + c.begin * w.incr;
    end = c.end == w.loop.count ? w.end : w.start + c.end * w.incr;
    return true;
}

namespace {

// The team-shared memory GOMP_loop_start and GOMP_sections2_start hand out
// (`mem`: its size in, the block out), zeroed, one block per construct.
// Called by the thread that initialises the construct.
void share_memory(WorkShare& slot, void** mem) {
    if (!mem) return;
    const std::size_t size = reinterpret_cast<std::uintptr_t>(*mem);
    void* p = nullptr;
    if (posix_memalign(&p, 64, size ? size : 1) != 0)
        fatal(fmt::format("out of memory for a worksharing construct's {} bytes", size));
    std::memset(p, 0, size);
    slot.mem = p;
}

// Enters a worksharing construct whose `reduction(task, ...)` clauses GCC
// describes in `reductions` (null: none; task_reduction.hpp): the calling
// thread's taskgroup for the construct, the first thread registering (and
// allocating the copies) before the others see the construct, the others
// sharing its copies. GOMP_workshare_task_reduction_unregister ends it.
template <class Init>
WorkShare& enter_with_reductions(const char* entry, std::uintptr_t* reductions, Init init, bool* first = nullptr) {
    if (reductions == nullptr) return enter_construct(init, first);
    taskgroup_begin();
    bool initialiser = false;
    WorkShare& slot = enter_construct(
        [&](WorkShare& s) {
            init(s);
            register_group_reductions(entry, reductions);
            s.task_reductions = reductions;
        },
        &initialiser);
    if (!initialiser) register_group_reductions(entry, reductions, slot.task_reductions);
    if (first) *first = initialiser;
    return slot;
}

bool next_long(long* istart, long* iend) {
    std::uint64_t lo = 0, hi = 0;
    if (!next_chunk(lo, hi)) return false;
    *istart = static_cast<long>(lo);
    *iend = static_cast<long>(hi);
    return true;
}

bool next_ull(unsigned long long* istart, unsigned long long* iend) {
    std::uint64_t lo = 0, hi = 0;
    if (!next_chunk(lo, hi)) return false;
    *istart = lo;
    *iend = hi;
    return true;
}

// A doacross loop's progress words, set up by the construct's first thread.
void start_doacross(WorkShare& s, const char* entry, unsigned dims, const std::uint64_t* counts) {
    if (dims == 0) return;
    try {
        s.doacross.start(dims, counts);
    } catch (const Error& e) {
        fatal(fmt::format("{}: {}", entry, e.what()));
    }
}

// Enters a loop construct, the first thread setting it up (with the
// team-shared `mem` of GOMP_loop_start, when given), then takes the
// calling thread's first chunk; with a null `istart` only enters.
bool start_long(long start, long end, long incr, long sched, long chunk, long* istart, long* iend,
                bool ordered = false, const char* entry = nullptr, std::uintptr_t* reductions = nullptr,
                void** mem = nullptr, unsigned doacross_dims = 0, const std::uint64_t* doacross_counts = nullptr) {
    const LoopBounds b = long_loop(start, end, incr);
    WorkShare& slot = enter_with_reductions(entry, reductions, [&](WorkShare& s) {
        set_loop(s, b, resolve_schedule(sched, chunk, b.count));
        s.ordered = ordered;
        share_memory(s, mem);
        start_doacross(s, entry, doacross_dims, doacross_counts);
    });
    if (mem) *mem = slot.mem;
    if (!istart) return true;
    return next_long(istart, iend);
}

bool start_ull(bool up, unsigned long long start, unsigned long long end, unsigned long long incr, long sched,
               unsigned long long chunk, unsigned long long* istart, unsigned long long* iend, bool ordered = false,
               const char* entry = nullptr, std::uintptr_t* reductions = nullptr, void** mem = nullptr,
               unsigned doacross_dims = 0, const std::uint64_t* doacross_counts = nullptr) {
    const LoopBounds b = ull_loop(up, start, end, incr);
    const long c = chunk > static_cast<unsigned long long>(INT64_MAX) ? INT64_MAX : static_cast<long>(chunk);
    WorkShare& slot = enter_with_reductions(entry, reductions, [&](WorkShare& s) {
        set_loop(s, b, resolve_schedule(sched, c, b.count));
        s.ordered = ordered;
        share_memory(s, mem);
        start_doacross(s, entry, doacross_dims, doacross_counts);
    });
    if (mem) *mem = slot.mem;
    if (!istart) return true;
    return next_ull(istart, iend);
}

// The loops of a doacross nest: GCC shares out the first dimension's
// iterations, numbered from 0 (long counts are never negative).
template <class Count>
std::vector<std::uint64_t> doacross_counts(unsigned dims, const Count* counts) {
    std::vector<std::uint64_t> c(dims);
    for (unsigned k = 0; k < dims; ++k) c[k] = counts[k] > 0 ? static_cast<std::uint64_t>(counts[k]) : 0;
    return c;
}

bool doacross_long(const char* entry, unsigned dims, const long* counts, long sched, long chunk, long* istart,
                   long* iend, std::uintptr_t* reductions = nullptr, void** mem = nullptr) {
    if (dims == 0) fatal(fmt::format("{}: a doacross loop has at least one dimension", entry));
    const std::vector<std::uint64_t> c = doacross_counts(dims, counts);
    return start_long(0, static_cast<long>(c[0]), 1, sched, chunk, istart, iend, false, entry, reductions, mem, dims,
                      c.data());
}

bool doacross_ull(const char* entry, unsigned dims, const unsigned long long* counts, long sched,
                  unsigned long long chunk, unsigned long long* istart, unsigned long long* iend,
                  std::uintptr_t* reductions = nullptr, void** mem = nullptr) {
    if (dims == 0) fatal(fmt::format("{}: a doacross loop has at least one dimension", entry));
    const std::vector<std::uint64_t> c = doacross_counts(dims, counts);
    return start_ull(true, 0, c[0], 1, sched, chunk, istart, iend, false, entry, reductions, mem, dims, c.data());
}

// The current loop's doacross progress; fatal outside one.
Doacross& current_doacross(const char* entry) {
    ThreadState& st = thread_state();
    if (st.cursor.current == nullptr || st.cursor.current->doacross.dims() == 0)
        fatal(fmt::format("{}: not inside a doacross loop (ordered(n) with depend(sink/source))", entry));
    return st.cursor.current->doacross;
}

// A doacross iteration vector (on the stack up to 16 dimensions).
class Iteration {
public:
    explicit Iteration(unsigned dims) : heap_(dims > 16 ? dims : 0) {}
    std::uint64_t* data() { return heap_.empty() ? stack_ : heap_.data(); }

private:
    std::uint64_t stack_[16];
    std::vector<std::uint64_t> heap_;
};

// depend(source): GCC's iteration vector of the loop's dims().
template <class T>
void post_iteration(const char* entry, const T* counts) {
    Doacross& d = current_doacross(entry);
    Iteration it(d.dims());
    for (unsigned k = 0; k < d.dims(); ++k) it.data()[k] = static_cast<std::uint64_t>(counts[k]);
    d.post(it.data());
}

// depend(sink: first, rest...).
template <class T>
void wait_iteration(const char* entry, T first, va_list rest) {
    const Doacross& d = current_doacross(entry);
    Iteration it(d.dims());
    it.data()[0] = static_cast<std::uint64_t>(first);
    for (unsigned k = 1; k < d.dims(); ++k) it.data()[k] = static_cast<std::uint64_t>(va_arg(rest, T));
    d.wait(it.data());
}

// A combined `parallel for`: the loop is set up as construct 0 before the
// other threads start, and the outlined body only asks for chunks.
struct Prestart {
    LoopBounds bounds;
    LoopSpace space;
};

void prestart(Team& team, void* arg) {
    const auto* p = static_cast<const Prestart*>(arg);
    WorkShare* slot = nullptr;
    team.workshares.enter(0, slot);
    set_loop(*slot, p->bounds, p->space);
    team.workshares.ready(*slot);
    team.loop_prestarted = true;
}

// `split`: the older GOMP_parallel_loop_*_start form, whose caller runs the
// body itself and then GOMP_parallel_end.
// `flags`: GCC's, the proc_bind clause in the low three bits.
void parallel_loop(void (*fn)(void*), void* data, unsigned num_threads, long start, long end, long incr, long sched,
                   long chunk, bool split = false, unsigned flags = 0) {
    Prestart p;
    p.bounds = long_loop(start, end, incr);
    p.space = resolve_schedule(sched, chunk, p.bounds.count);
    if (split) parallel_begin(fn, data, num_threads, prestart, &p);
    else parallel(fn, data, num_threads, prestart, &p, flags & 7);
}

unsigned next_section() {
    std::uint64_t lo = 0, hi = 0;
    if (!next_chunk(lo, hi)) return 0;
    return static_cast<unsigned>(lo);
}

// Sections 1..count are a dynamic loop with chunks of one.
unsigned start_sections(unsigned count, const char* entry = nullptr, std::uintptr_t* reductions = nullptr,
                        void** mem = nullptr) {
    long first = 0, end = 0;
    if (!start_long(1, static_cast<long>(count) + 1, 1, 2, 1, &first, &end, false, entry, reductions, mem)) return 0;
    return static_cast<unsigned>(first);
}

}  // namespace

}  // namespace numaware::omp

using namespace numaware::omp;

#pragma GCC visibility push(default)   // the entry points: exports.map keeps only these
extern "C" {

// ---- long loops ----
bool GOMP_loop_static_start(long s, long e, long i, long c, long* is, long* ie) { return start_long(s, e, i, 1, c, is, ie); }
bool GOMP_loop_dynamic_start(long s, long e, long i, long c, long* is, long* ie) { return start_long(s, e, i, 2, c, is, ie); }
bool GOMP_loop_guided_start(long s, long e, long i, long c, long* is, long* ie) { return start_long(s, e, i, 3, c, is, ie); }
bool GOMP_loop_runtime_start(long s, long e, long i, long* is, long* ie) { return start_long(s, e, i, 0, 0, is, ie); }
bool GOMP_loop_nonmonotonic_dynamic_start(long s, long e, long i, long c, long* is, long* ie) {
    return start_long(s, e, i, 2, c, is, ie);
}
bool GOMP_loop_nonmonotonic_guided_start(long s, long e, long i, long c, long* is, long* ie) {
    return start_long(s, e, i, 3, c, is, ie);
}
bool GOMP_loop_nonmonotonic_runtime_start(long s, long e, long i, long* is, long* ie) { return start_long(s, e, i, 0, 0, is, ie); }
bool GOMP_loop_maybe_nonmonotonic_runtime_start(long s, long e, long i, long* is, long* ie) {
    return start_long(s, e, i, 0, 0, is, ie);
}

bool GOMP_loop_start(long start, long end, long incr, long sched, long chunk, long* istart, long* iend,
                     std::uintptr_t* reductions, void** mem) {
    return start_long(start, end, incr, sched, chunk, istart, iend, false, "GOMP_loop_start", reductions, mem);
}

bool GOMP_loop_static_next(long* is, long* ie) { return next_long(is, ie); }
bool GOMP_loop_dynamic_next(long* is, long* ie) { return next_long(is, ie); }
bool GOMP_loop_guided_next(long* is, long* ie) { return next_long(is, ie); }
bool GOMP_loop_runtime_next(long* is, long* ie) { return next_long(is, ie); }
bool GOMP_loop_nonmonotonic_dynamic_next(long* is, long* ie) { return next_long(is, ie); }
bool GOMP_loop_nonmonotonic_guided_next(long* is, long* ie) { return next_long(is, ie); }
bool GOMP_loop_nonmonotonic_runtime_next(long* is, long* ie) { return next_long(is, ie); }
bool GOMP_loop_maybe_nonmonotonic_runtime_next(long* is, long* ie) { return next_long(is, ie); }

// The end of a loop in a region that may be cancelled: true when the
// region is (`cancel for` ends at this barrier as any loop does).
bool GOMP_loop_end_cancel(void) {
    leave_current();
    return thread_state().team->barrier.wait();
}
void GOMP_loop_end(void) { (void)GOMP_loop_end_cancel(); }
void GOMP_loop_end_nowait(void) { leave_current(); }

// ---- unsigned long long loops ----
bool GOMP_loop_ull_static_start(bool up, unsigned long long s, unsigned long long e, unsigned long long i,
                                unsigned long long c, unsigned long long* is, unsigned long long* ie) {
    return start_ull(up, s, e, i, 1, c, is, ie);
}
bool GOMP_loop_ull_dynamic_start(bool up, unsigned long long s, unsigned long long e, unsigned long long i,
                                 unsigned long long c, unsigned long long* is, unsigned long long* ie) {
    return start_ull(up, s, e, i, 2, c, is, ie);
}
bool GOMP_loop_ull_guided_start(bool up, unsigned long long s, unsigned long long e, unsigned long long i,
                                unsigned long long c, unsigned long long* is, unsigned long long* ie) {
    return start_ull(up, s, e, i, 3, c, is, ie);
}
bool GOMP_loop_ull_nonmonotonic_dynamic_start(bool up, unsigned long long s, unsigned long long e, unsigned long long i,
                                              unsigned long long c, unsigned long long* is, unsigned long long* ie) {
    return start_ull(up, s, e, i, 2, c, is, ie);
}
bool GOMP_loop_ull_nonmonotonic_guided_start(bool up, unsigned long long s, unsigned long long e, unsigned long long i,
                                             unsigned long long c, unsigned long long* is, unsigned long long* ie) {
    return start_ull(up, s, e, i, 3, c, is, ie);
}
bool GOMP_loop_ull_runtime_start(bool up, unsigned long long s, unsigned long long e, unsigned long long i,
                                 unsigned long long* is, unsigned long long* ie) {
    return start_ull(up, s, e, i, 0, 0, is, ie);
}
bool GOMP_loop_ull_nonmonotonic_runtime_start(bool up, unsigned long long s, unsigned long long e, unsigned long long i,
                                              unsigned long long* is, unsigned long long* ie) {
    return start_ull(up, s, e, i, 0, 0, is, ie);
}
bool GOMP_loop_ull_maybe_nonmonotonic_runtime_start(bool up, unsigned long long s, unsigned long long e,
                                                    unsigned long long i, unsigned long long* is, unsigned long long* ie) {
    return start_ull(up, s, e, i, 0, 0, is, ie);
}
bool GOMP_loop_ull_start(bool up, unsigned long long start, unsigned long long end, unsigned long long incr, long sched,
                         unsigned long long chunk, unsigned long long* istart, unsigned long long* iend,
                         std::uintptr_t* reductions, void** mem) {
    return start_ull(up, start, end, incr, sched, chunk, istart, iend, false, "GOMP_loop_ull_start", reductions, mem);
}
bool GOMP_loop_ull_static_next(unsigned long long* is, unsigned long long* ie) { return next_ull(is, ie); }
bool GOMP_loop_ull_dynamic_next(unsigned long long* is, unsigned long long* ie) { return next_ull(is, ie); }
bool GOMP_loop_ull_guided_next(unsigned long long* is, unsigned long long* ie) { return next_ull(is, ie); }
bool GOMP_loop_ull_runtime_next(unsigned long long* is, unsigned long long* ie) { return next_ull(is, ie); }
bool GOMP_loop_ull_nonmonotonic_dynamic_next(unsigned long long* is, unsigned long long* ie) { return next_ull(is, ie); }
bool GOMP_loop_ull_nonmonotonic_guided_next(unsigned long long* is, unsigned long long* ie) { return next_ull(is, ie); }
bool GOMP_loop_ull_nonmonotonic_runtime_next(unsigned long long* is, unsigned long long* ie) { return next_ull(is, ie); }
bool GOMP_loop_ull_maybe_nonmonotonic_runtime_next(unsigned long long* is, unsigned long long* ie) {
    return next_ull(is, ie);
}

// ---- ordered loops ----
bool GOMP_loop_ordered_static_start(long s, long e, long i, long c, long* is, long* ie) {
    return start_long(s, e, i, 1, c, is, ie, true);
}
bool GOMP_loop_ordered_dynamic_start(long s, long e, long i, long c, long* is, long* ie) {
    return start_long(s, e, i, 2, c, is, ie, true);
}
bool GOMP_loop_ordered_guided_start(long s, long e, long i, long c, long* is, long* ie) {
    return start_long(s, e, i, 3, c, is, ie, true);
}
bool GOMP_loop_ordered_runtime_start(long s, long e, long i, long* is, long* ie) {
    return start_long(s, e, i, 0, 0, is, ie, true);
}
bool GOMP_loop_ordered_start(long start, long end, long incr, long sched, long chunk, long* istart, long* iend,
                             std::uintptr_t* reductions, void** mem) {
    return start_long(start, end, incr, sched, chunk, istart, iend, true, "GOMP_loop_ordered_start", reductions, mem);
}
bool GOMP_loop_ordered_static_next(long* is, long* ie) { return next_long(is, ie); }
bool GOMP_loop_ordered_dynamic_next(long* is, long* ie) { return next_long(is, ie); }
bool GOMP_loop_ordered_guided_next(long* is, long* ie) { return next_long(is, ie); }
bool GOMP_loop_ordered_runtime_next(long* is, long* ie) { return next_long(is, ie); }
bool GOMP_loop_ull_ordered_static_start(bool up, unsigned long long s, unsigned long long e, unsigned long long i,
                                        unsigned long long c, unsigned long long* is, unsigned long long* ie) {
    return start_ull(up, s, e, i, 1, c, is, ie, true);
}
bool GOMP_loop_ull_ordered_dynamic_start(bool up, unsigned long long s, unsigned long long e, unsigned long long i,
                                         unsigned long long c, unsigned long long* is, unsigned long long* ie) {
    return start_ull(up, s, e, i, 2, c, is, ie, true);
}
bool GOMP_loop_ull_ordered_guided_start(bool up, unsigned long long s, unsigned long long e, unsigned long long i,
                                        unsigned long long c, unsigned long long* is, unsigned long long* ie) {
    return start_ull(up, s, e, i, 3, c, is, ie, true);
}
bool GOMP_loop_ull_ordered_runtime_start(bool up, unsigned long long s, unsigned long long e, unsigned long long i,
                                         unsigned long long* is, unsigned long long* ie) {
    return start_ull(up, s, e, i, 0, 0, is, ie, true);
}
bool GOMP_loop_ull_ordered_start(bool up, unsigned long long start, unsigned long long end, unsigned long long incr,
                                 long sched, unsigned long long chunk, unsigned long long* istart,
                                 unsigned long long* iend, std::uintptr_t* reductions, void** mem) {
    return start_ull(up, start, end, incr, sched, chunk, istart, iend, true, "GOMP_loop_ull_ordered_start", reductions,
                     mem);
}
bool GOMP_loop_ull_ordered_static_next(unsigned long long* is, unsigned long long* ie) { return next_ull(is, ie); }
bool GOMP_loop_ull_ordered_dynamic_next(unsigned long long* is, unsigned long long* ie) { return next_ull(is, ie); }
bool GOMP_loop_ull_ordered_guided_next(unsigned long long* is, unsigned long long* ie) { return next_ull(is, ie); }
bool GOMP_loop_ull_ordered_runtime_next(unsigned long long* is, unsigned long long* ie) { return next_ull(is, ie); }
void GOMP_ordered_start(void) { ordered_region_start(); }
void GOMP_ordered_end(void) {}   // the turn passes on when the chunk is done

// ---- doacross loops: ordered(n) with depend(sink: ...) and depend(source) ----
bool GOMP_loop_doacross_static_start(unsigned n, long* counts, long chunk, long* is, long* ie) {
    return doacross_long("GOMP_loop_doacross_static_start", n, counts, 1, chunk, is, ie);
}
bool GOMP_loop_doacross_dynamic_start(unsigned n, long* counts, long chunk, long* is, long* ie) {
    return doacross_long("GOMP_loop_doacross_dynamic_start", n, counts, 2, chunk, is, ie);
}
bool GOMP_loop_doacross_guided_start(unsigned n, long* counts, long chunk, long* is, long* ie) {
    return doacross_long("GOMP_loop_doacross_guided_start", n, counts, 3, chunk, is, ie);
}
bool GOMP_loop_doacross_runtime_start(unsigned n, long* counts, long* is, long* ie) {
    return doacross_long("GOMP_loop_doacross_runtime_start", n, counts, 0, 0, is, ie);
}
bool GOMP_loop_doacross_start(unsigned n, long* counts, long sched, long chunk, long* is, long* ie,
                              std::uintptr_t* reductions, void** mem) {
    return doacross_long("GOMP_loop_doacross_start", n, counts, sched, chunk, is, ie, reductions, mem);
}
bool GOMP_loop_ull_doacross_static_start(unsigned n, unsigned long long* counts, unsigned long long chunk,
                                         unsigned long long* is, unsigned long long* ie) {
    return doacross_ull("GOMP_loop_ull_doacross_static_start", n, counts, 1, chunk, is, ie);
}
bool GOMP_loop_ull_doacross_dynamic_start(unsigned n, unsigned long long* counts, unsigned long long chunk,
                                          unsigned long long* is, unsigned long long* ie) {
    return doacross_ull("GOMP_loop_ull_doacross_dynamic_start", n, counts, 2, chunk, is, ie);
}
bool GOMP_loop_ull_doacross_guided_start(unsigned n, unsigned long long* counts, unsigned long long chunk,
                                         unsigned long long* is, unsigned long long* ie) {
    return doacross_ull("GOMP_loop_ull_doacross_guided_start", n, counts, 3, chunk, is, ie);
}
bool GOMP_loop_ull_doacross_runtime_start(unsigned n, unsigned long long* counts, unsigned long long* is,
                                          unsigned long long* ie) {
    return doacross_ull("GOMP_loop_ull_doacross_runtime_start", n, counts, 0, 0, is, ie);
}
bool GOMP_loop_ull_doacross_start(unsigned n, unsigned long long* counts, long sched, unsigned long long chunk,
                                  unsigned long long* is, unsigned long long* ie, std::uintptr_t* reductions,
                                  void** mem) {
    return doacross_ull("GOMP_loop_ull_doacross_start", n, counts, sched, chunk, is, ie, reductions, mem);
}

void GOMP_doacross_post(long* counts) { post_iteration("GOMP_doacross_post", counts); }
void GOMP_doacross_ull_post(unsigned long long* counts) { post_iteration("GOMP_doacross_ull_post", counts); }
// The sink's iteration: `first`, then dims() - 1 more of the same type.
void GOMP_doacross_wait(long first, ...) {
    va_list rest;
    va_start(rest, first);
    wait_iteration("GOMP_doacross_wait", first, rest);
    va_end(rest);
}
void GOMP_doacross_ull_wait(unsigned long long first, ...) {
    va_list rest;
    va_start(rest, first);
    wait_iteration("GOMP_doacross_ull_wait", first, rest);
    va_end(rest);
}

// ---- combined parallel loops ----
void GOMP_parallel_loop_static(void (*fn)(void*), void* data, unsigned nt, long s, long e, long i, long c, unsigned flags) {
    parallel_loop(fn, data, nt, s, e, i, 1, c, false, flags);
}
void GOMP_parallel_loop_dynamic(void (*fn)(void*), void* data, unsigned nt, long s, long e, long i, long c, unsigned flags) {
    parallel_loop(fn, data, nt, s, e, i, 2, c, false, flags);
}
void GOMP_parallel_loop_guided(void (*fn)(void*), void* data, unsigned nt, long s, long e, long i, long c, unsigned flags) {
    parallel_loop(fn, data, nt, s, e, i, 3, c, false, flags);
}
void GOMP_parallel_loop_runtime(void (*fn)(void*), void* data, unsigned nt, long s, long e, long i, unsigned flags) {
    parallel_loop(fn, data, nt, s, e, i, 0, 0, false, flags);
}
void GOMP_parallel_loop_nonmonotonic_dynamic(void (*fn)(void*), void* data, unsigned nt, long s, long e, long i, long c,
                                             unsigned flags) {
    parallel_loop(fn, data, nt, s, e, i, 2, c, false, flags);
}
void GOMP_parallel_loop_nonmonotonic_guided(void (*fn)(void*), void* data, unsigned nt, long s, long e, long i, long c,
                                            unsigned flags) {
    parallel_loop(fn, data, nt, s, e, i, 3, c, false, flags);
}
void GOMP_parallel_loop_nonmonotonic_runtime(void (*fn)(void*), void* data, unsigned nt, long s, long e, long i, unsigned flags) {
    parallel_loop(fn, data, nt, s, e, i, 0, 0, false, flags);
}
void GOMP_parallel_loop_maybe_nonmonotonic_runtime(void (*fn)(void*), void* data, unsigned nt, long s, long e, long i,
                                                   unsigned flags) {
    parallel_loop(fn, data, nt, s, e, i, 0, 0, false, flags);
}

// The older split form (GCC before 4.9, and objects built with it): the
// encountering thread runs the body itself, then GOMP_parallel_end.
void GOMP_parallel_loop_static_start(void (*fn)(void*), void* data, unsigned nt, long s, long e, long i, long c) {
    parallel_loop(fn, data, nt, s, e, i, 1, c, true);
}
void GOMP_parallel_loop_dynamic_start(void (*fn)(void*), void* data, unsigned nt, long s, long e, long i, long c) {
    parallel_loop(fn, data, nt, s, e, i, 2, c, true);
}
void GOMP_parallel_loop_guided_start(void (*fn)(void*), void* data, unsigned nt, long s, long e, long i, long c) {
    parallel_loop(fn, data, nt, s, e, i, 3, c, true);
}
void GOMP_parallel_loop_runtime_start(void (*fn)(void*), void* data, unsigned nt, long s, long e, long i) {
    parallel_loop(fn, data, nt, s, e, i, 0, 0, true);
}

// ---- sections ----
unsigned GOMP_sections_start(unsigned count) { return start_sections(count); }
unsigned GOMP_sections2_start(unsigned count, std::uintptr_t* reductions, void** mem) {
    return start_sections(count, "GOMP_sections2_start", reductions, mem);
}
unsigned GOMP_sections_next(void) { return next_section(); }

// ---- scope (OpenMP 5.1) ----
// GCC calls this only for a scope with task reductions; the construct
// serves to pick the thread that allocates the copies, and is left at
// once (the barrier and GOMP_workshare_task_reduction_unregister follow
// the body).
void GOMP_scope_start(std::uintptr_t* reductions) {
    enter_with_reductions("GOMP_scope_start", reductions, [](WorkShare&) {});
    leave_current();
}

// The end of a worksharing construct with task reductions.
void GOMP_workshare_task_reduction_unregister(bool cancelled) { end_workshare_reductions(cancelled); }
bool GOMP_sections_end_cancel(void) { return GOMP_loop_end_cancel(); }
void GOMP_sections_end(void) { (void)GOMP_loop_end_cancel(); }
void GOMP_sections_end_nowait(void) { leave_current(); }
void GOMP_parallel_sections(void (*fn)(void*), void* data, unsigned nt, unsigned count, unsigned flags) {
    parallel_loop(fn, data, nt, 1, static_cast<long>(count) + 1, 1, 2, 1, false, flags);
}
void GOMP_parallel_sections_start(void (*fn)(void*), void* data, unsigned nt, unsigned count) {
    parallel_loop(fn, data, nt, 1, static_cast<long>(count) + 1, 1, 2, 1, true);
}

}  // extern "C"
#pragma GCC visibility pop
