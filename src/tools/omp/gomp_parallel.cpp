// tools/omp/gomp_parallel.cpp — the entry points GCC emits for `parallel`,
// `barrier`, `single`, `critical`, `atomic` and the cancellation checks.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "tools/omp/lock.hpp"
#include "tools/omp/loops.hpp"
#include "numaware/error.hpp"
#include "tools/omp/task_reduction.hpp"
#include "tools/omp/tasking.hpp"
#include "tools/omp/team.hpp"

namespace numaware::omp {
namespace {

// GOMP_cancel's `which`, as GCC passes it (GOMP_CANCEL_* in its gomp-constants.h).
constexpr int cancel_for = 2, cancel_sections = 4, cancel_taskgroup_kind = 8;

Lock g_default_critical;   // trivially destroyed: a thread may hold it at exit
Lock g_atomic;

// A named critical section's lock: GCC gives each name one pointer-sized
// common symbol, null at first; the first thread to get here puts a lock
// there.
Lock& named_critical(void** pptr) {
    auto* slot = reinterpret_cast<std::atomic<Lock*>*>(pptr);
    Lock* m = slot->load(std::memory_order_acquire);
    if (m) return *m;
    auto* fresh = new Lock;
    if (slot->compare_exchange_strong(m, fresh, std::memory_order_acq_rel)) return *fresh;
    delete fresh;
    return *m;
}

}  // namespace
}  // namespace numaware::omp

using namespace numaware::omp;

#pragma GCC visibility push(default)   // the entry points: exports.map keeps only these
extern "C" {

// flags: the proc_bind clause in the low three bits (team.hpp).
void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags) {
    parallel(fn, data, num_threads, nullptr, nullptr, flags & 7);
}
void GOMP_parallel_start(void (*fn)(void*), void* data, unsigned num_threads) { parallel_begin(fn, data, num_threads); }

// `parallel reduction(task, ...)`: the first word of `data` is GCC's
// descriptor (task_reduction.hpp), registered for the team before the
// fork; every implicit task starts in a taskgroup that holds it. Returns
// the team's size, which GCC's code needs to combine the copies (and then
// unregisters).
unsigned GOMP_parallel_reductions(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags) {
    struct Fork {
        std::uintptr_t* reductions;
        TaskGroup group;
        unsigned threads = 0;
    } fork{*static_cast<std::uintptr_t**>(data), {}, 0};
    parallel(
        fn, data, num_threads,
        [](Team& team, void* arg) {
            auto* f = static_cast<Fork*>(arg);
            try {
                register_task_reductions(f->reductions, nullptr, nullptr, team.size);
            } catch (const numaware::Error& e) {
                fatal(std::string("GOMP_parallel_reductions: ") + e.what());
            }
            f->group.reductions = f->reductions;
            f->threads = team.size;
            team.initial_taskgroup = &f->group;
        },
        &fork, flags & 7);
    return fork.threads;
}
void GOMP_parallel_end(void) { parallel_end(); }

// The host teams construct (OpenMP 5.0): the teams one after another on
// this thread, as libgomp runs them (team.hpp).
void GOMP_teams_reg(void (*fn)(void*), void* data, unsigned num_teams, unsigned thread_limit, unsigned /*flags*/) {
    run_teams(fn, data, num_teams, thread_limit);
}

void GOMP_barrier(void) { (void)thread_state().team->barrier.wait(); }
// A barrier in a region that may be cancelled: true when it is (the code
// then goes to the region's end).
bool GOMP_barrier_cancel(void) { return thread_state().team->barrier.wait(); }

// Cancellation. With cancel-var false (OMP_CANCELLATION unset or false, the
// default) `cancel` and `cancellation point` do nothing and return false,
// as the standard says. Otherwise, `which` as GCC passes it:
//   1 parallel: the team's barrier is cancelled (Barrier::cancel): waiters
//     leave, every later barrier of the region returns at once, and tasks
//     not started are discarded;
//   2 for, 4 sections: the worksharing construct the thread is in;
//   8 taskgroup: the current task's innermost taskgroup.
// True tells the caller's code to go to the end of the construct. A
// cancellation point (or `cancel` with a false if clause) answers whether
// the construct is cancelled; for a taskgroup, also a cancelled region.
bool GOMP_cancellation_point(int which) {
    if (!settings().cancellation) return false;
    ThreadState& st = thread_state();
    if (which & (cancel_for | cancel_sections))
        return st.cursor.current != nullptr && st.cursor.current->cancelled.load(std::memory_order_acquire);
    if (which & cancel_taskgroup_kind) return task_cancelled(*st.team, current_task(st).taskgroup);
    return st.team->barrier.cancelled();
}
bool GOMP_cancel(int which, bool do_cancel) {
    if (!settings().cancellation) return false;
    if (!do_cancel) return GOMP_cancellation_point(which);
    ThreadState& st = thread_state();
    if (which & (cancel_for | cancel_sections)) {
        if (st.cursor.current != nullptr) st.cursor.current->cancelled.store(true, std::memory_order_release);
    } else if (which & cancel_taskgroup_kind) {
        cancel_taskgroup();
    } else {
        st.team->barrier.cancel();
    }
    return true;
}

// The first thread to reach a `single` runs it. Threads meet the team's
// singles in the same order, so the team's count of singles taken says
// whether this one (the thread's own count) is taken yet; with `nowait` a
// thread may be several singles ahead of another, and the count only moves
// on from the single its winner met.
bool GOMP_single_start(void) {
    ThreadState& st = thread_state();
    std::uint64_t mine = st.cursor.singles++;
    std::atomic<std::uint64_t>& taken = st.team->singles;
    return taken.load(std::memory_order_relaxed) == mine &&
           taken.compare_exchange_strong(mine, mine + 1, std::memory_order_acq_rel, std::memory_order_relaxed);
}

void* GOMP_single_copy_start(void) {
    bool first = false;
    WorkShare& slot = enter_construct([](WorkShare&) {}, &first);
    if (first) return nullptr;   // this thread runs the block, then GOMP_single_copy_end
    thread_state().team->barrier.wait();
    void* data = slot.copyprivate;
    leave_current();
    return data;
}

void GOMP_single_copy_end(void* data) {
    ThreadState& st = thread_state();
    st.cursor.current->copyprivate = data;
    st.team->barrier.wait();
    leave_current();
}

void GOMP_critical_start(void) { g_default_critical.lock(); }
void GOMP_critical_end(void) { g_default_critical.unlock(); }
void GOMP_critical_name_start(void** pptr) { named_critical(pptr).lock(); }
void GOMP_critical_name_end(void** pptr) { named_critical(pptr).unlock(); }
void GOMP_atomic_start(void) { g_atomic.lock(); }
void GOMP_atomic_end(void) { g_atomic.unlock(); }

}  // extern "C"
#pragma GCC visibility pop

// ---- the error directive (OpenMP 5.1): at(execution) reaches these ----
namespace {
void error_directive(const char* kind, const char* msg, std::size_t len) {
    std::string line = std::string("numaware-omp: ") + kind + ": error directive encountered";
    if (msg) line += ": " + (len == static_cast<std::size_t>(-1) ? std::string(msg) : std::string(msg, len));
    line += '\n';
    (void)!::write(2, line.data(), line.size());
}
}  // namespace

#pragma GCC visibility push(default)   // the entry points: exports.map keeps only these
extern "C" {
void GOMP_warning(const char* msg, std::size_t len) { error_directive("warning", msg, len); }
void GOMP_error(const char* msg, std::size_t len) {
    error_directive("error", msg, len);
    std::exit(EXIT_FAILURE);
}
}  // extern "C"
#pragma GCC visibility pop
