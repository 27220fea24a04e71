// tools/omp/gomp_task.cpp — the entry points GCC emits for `task`,
// `taskwait`, `taskyield`, `taskgroup` and `taskloop`, with their task
// reductions (tasking.hpp and task_reduction.hpp do the work).
#include <cstdint>


#include "tools/omp/task_reduction.hpp"
#include "tools/omp/tasking.hpp"

namespace numaware::omp {
namespace {

// GCC's task flags (the GOMP_TASK_FLAG_* values its code passes).
constexpr unsigned flag_final = 1u << 1;
constexpr unsigned flag_up = 1u << 8;          // taskloop: the iteration variable grows
constexpr unsigned flag_grainsize = 1u << 9;   // taskloop: num_tasks holds a grainsize
constexpr unsigned flag_if = 1u << 10;         // taskloop: its if clause holds
constexpr unsigned flag_nogroup = 1u << 11;
constexpr unsigned flag_reduction = 1u << 12;
constexpr unsigned flag_detach = 1u << 13;
constexpr unsigned flag_strict = 1u << 14;     // taskloop: grainsize(strict:) or num_tasks(strict:)

// One task of a taskloop: its range goes in the first two words of its
// argument block, where GCC's outlined body reads it.
template <class T>
struct Chunk {
    T start, end;
};
template <class T>
void write_chunk(void* arg, void* ctx) {
    const auto* c = static_cast<const Chunk<T>*>(ctx);
    static_cast<T*>(arg)[0] = c->start;
    static_cast<T*>(arg)[1] = c->end;
}

// The taskloop construct: the iterations [start, end) by `step` in tasks of
// the grainsize or number asked (OpenMP 5.1, 2.12.2): with a grainsize g,
// n / g tasks of at least g iterations each (exactly g, the last one
// excepted, when strict); with num_tasks k, min(k, n) tasks; with neither,
// one per thread of the team.
template <class T>
void taskloop(const char* symbol, void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size,
              long arg_align, unsigned flags, unsigned long num_tasks, T start, T end, T step) {
    // The iteration count, in the type's own arithmetic (step < 0 for a
    // signed loop going down; GCC passes unsigned loops going down with
    // a step that wraps, and flag_up clear).
    using U = std::make_unsigned_t<T>;
    std::uint64_t n = 0;
    if (flags & flag_up) {
        if (start < end) n = (static_cast<U>(end - start) + static_cast<U>(step) - 1) / static_cast<U>(step);
    } else {
        if (start > end) {
            const U down = static_cast<U>(0) - static_cast<U>(step);
            n = (static_cast<U>(start - end) + down - 1) / down;
        }
    }
    if (n == 0) return;
    std::uint64_t tasks = 0, per = 0, extra = 0;
    if ((flags & flag_grainsize) != 0 && num_tasks > 0) {
        const std::uint64_t g = num_tasks;
        if (flags & flag_strict) {
            tasks = (n + g - 1) / g;
        } else {
            tasks = n / g;
            if (tasks == 0) tasks = 1;
        }
    } else {
        tasks = num_tasks > 0 ? num_tasks : thread_state().team->size;
        if (tasks > n) tasks = n;
    }
    const bool strict_grain = (flags & flag_grainsize) != 0 && (flags & flag_strict) != 0 && num_tasks > 0;
    per = strict_grain ? num_tasks : n / tasks;
    extra = strict_grain ? 0 : n % tasks;   // the first `extra` tasks take one more

    if ((flags & flag_nogroup) == 0) {
        taskgroup_begin();
        if (flags & flag_reduction) {
            // reduction clauses: GCC's descriptor (task_reduction.hpp) is the
            // third word of the argument block, after the range.
            struct Head {
                T start, end;
                std::uintptr_t* reductions;
            };
            register_group_reductions(symbol, static_cast<const Head*>(data)->reductions);
        }
    }
    T at = start;
    std::uint64_t left = n;
    for (std::uint64_t k = 0; k < tasks && left > 0; ++k) {
        std::uint64_t its = per + (k < extra ? 1 : 0);
        if (its > left) its = left;
        left -= its;
        Chunk<T> c{at, static_cast<T>(at + static_cast<T>(its) * step)};
        if (left == 0) c.end = end;
        at = c.end;
        create_task(TaskArgs{fn, data, cpyfn, arg_size, arg_align, (flags & flag_if) == 0, (flags & flag_final) != 0,
                             nullptr},
                    write_chunk<T>, &c);
    }
    if ((flags & flag_nogroup) == 0) taskgroup_end();
}

}  // namespace
}  // namespace numaware::omp

using namespace numaware::omp;

#pragma GCC visibility push(default)   // the entry points: exports.map keeps only these
extern "C" {

void GOMP_task(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size, long arg_align,
               bool if_clause, unsigned flags, void** depend, int /*priority: a hint, not used*/, void* detach) {
    // untied and mergeable are allowed to run as tied, unmerged tasks.
    create_task(TaskArgs{fn, data, cpyfn, arg_size, arg_align, !if_clause, (flags & flag_final) != 0, depend,
                         (flags & flag_detach) != 0 ? detach : nullptr});
}

void GOMP_taskwait(void) { wait_children(); }
void GOMP_taskwait_depend(void** depend) { wait_depend(depend); }
void GOMP_taskyield(void) {}   // a scheduling point the runtime may skip
void GOMP_taskgroup_start(void) { taskgroup_begin(); }
void GOMP_taskgroup_end(void) { taskgroup_end(); }

// Task reductions: `taskgroup task_reduction(...)` registers after
// GOMP_taskgroup_start and unregisters after GOMP_taskgroup_end, once
// GCC's code has combined the copies; `in_reduction` tasks remap.
void GOMP_taskgroup_reduction_register(std::uintptr_t* data) {
    register_group_reductions("GOMP_taskgroup_reduction_register", data);
}
void GOMP_taskgroup_reduction_unregister(std::uintptr_t* data) { unregister_task_reductions(data, true); }
void GOMP_task_reduction_remap(std::size_t cnt, std::size_t cntorig, void** ptrs) {
    remap_group_reductions(cnt, cntorig, ptrs);
}

void GOMP_taskloop(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size, long arg_align,
                   unsigned flags, unsigned long num_tasks, int /*priority*/, long start, long end, long step) {
    taskloop<long>("GOMP_taskloop", fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, start, end, step);
}

void GOMP_taskloop_ull(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size, long arg_align,
                       unsigned flags, unsigned long num_tasks, int /*priority*/, unsigned long long start,
                       unsigned long long end, unsigned long long step) {
    taskloop<unsigned long long>("GOMP_taskloop_ull", fn, data, cpyfn, arg_size, arg_align, flags, num_tasks,
                                 start, end, step);
}

int omp_in_final(void) {
    const ThreadState& st = thread_state();
    return st.current != nullptr && st.current->final ? 1 : 0;
}

// The detach clause's event (the handle GOMP_task wrote).
void omp_fulfill_event(std::uintptr_t event) { fulfill_event(reinterpret_cast<void*>(event)); }   // omp.h: omp_event_handle_t, a uintptr_t enum

}  // extern "C"
#pragma GCC visibility pop
