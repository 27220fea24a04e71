// tools/omp/tasking.hpp — OpenMP explicit tasks on numaware's task runtime
// (tasking.cpp; the entry points are in gomp_task.cpp).
//
// A team of more than one thread gets, at its first explicit task, a hosted
// tasks::Runtime whose workers are the team's threads: thread k takes worker
// k's seat, on the node of its place. Threads run tasks where OpenMP lets
// them: at barriers, at taskwait and at the end of a taskgroup
// (Runtime::run_until). The policy is NUMAWARE_POLICY's.
//
// What the runtime does not know of OpenMP is kept here, per task, in an
// OmpTask record: the parent, the children not finished (taskwait), the
// taskgroup the task belongs to (its descendants belong to it too), the
// final flag, and the dependency scope of its children: OpenMP orders only
// sibling tasks, so each parent's children get a scope of their own
// (Runtime::open_scope).
//
// Undeferred tasks (if(0), the descendants of a final task, and every task
// of a team of one thread) run at once on the encountering thread, after
// the sibling tasks they depend on have finished.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "numaware/tasks.hpp"
#include "tools/omp/team.hpp"

namespace numaware::omp {

struct RecordCache;   // tasking.cpp

struct TaskGroup {
    TaskGroup* outer = nullptr;               // the enclosing taskgroup of the same task region
    std::atomic<std::uint32_t> pending{0};    // its tasks and their descendants not finished
    // The innermost task reduction registration (task_reduction.hpp) its
    // tasks remap into: its own, or the enclosing taskgroup's.
    std::uintptr_t* reductions = nullptr;
    // `cancel taskgroup` met in one of its tasks (OMP_CANCELLATION=true):
    // its tasks, and those of the taskgroups inside it, that have not
    // started are discarded.
    std::atomic<bool> cancelled{false};
};

// Records are 64-byte aligned (tasking.cpp, new_task_record). The first
// line holds what the thread creating the task's children reads at each
// creation; `refs`, which every thread finishing one of those children
// writes, is alone on the second, so that a creation does not wait for
// those threads' caches.
struct OmpTask {
    OmpTask* parent = nullptr;                // null: an implicit task
    TaskGroup* taskgroup = nullptr;           // the innermost taskgroup now, inherited at creation
    RecordCache* home = nullptr;              // the cache it came from (tasking.cpp); null: malloc's
    tasks::Runtime* rt = nullptr;             // the runtime its children run on (opened `scope`)
    void (*fn)(void*) = nullptr;
    void* arg = nullptr;
    struct DetachEvent* event = nullptr;      // the detach clause's event; null: none
    std::uint32_t bytes = 0;                  // the record's allocation, argument block included
    std::uint16_t scope = 0;                  // its children's dependency scope; 0: none opened yet
    bool final = false;                       // omp_in_final(); its children are included
    bool on_heap = true;                      // false: an undeferred task's record, on its thread's stack
    // 1 while the body runs (or the implicit task's region lasts) + 1 per
    // child whose body has not finished + the spares its thread holds
    // (ThreadState::spare_refs): the record lives while it is not 0, and 1
    // is taskwait's condition (all children finished, spares given back).
    std::atomic<std::uint32_t> refs{1};
};
static_assert(offsetof(OmpTask, refs) == 64, "OmpTask: refs must start the record's second 64-byte line");

// The calling thread's current task: an explicit task's record, or its
// implicit task's (made at first use in each region).
OmpTask& current_task();
OmpTask& current_task(ThreadState& st);   // the same, for a caller that has thread_state()

// The team's runtime, made at the first explicit task of a team of this
// size; the calling thread takes its seat.
tasks::Runtime& team_runtime(Team& team);

// NUMAWARE_REPORT=FILE: checks at load that FILE can be written, and
// writes the run report there when the process exits: per task runtime
// (one per team size) its RunReport (cross-node bytes, tasks per node, load
// balance, overheads), and beside it the Chrome trace of its tasks
// (trace_path()). A no-op without the variable.
void prepare_report();
// fork()'s child writes no report: the file is its parent's, written when
// the parent exits.
void forget_report_after_fork();
// Where runtime `index` of `count` puts its trace: FILE without a final
// ".json", then ".trace.json" (".trace.INDEX.json" when there are several).
std::string trace_path(const std::string& report, std::size_t index, std::size_t count);

// The calling thread takes worker `num`'s seat in `rt` (a no-op when it has it).
void take_seat(tasks::Runtime& rt, unsigned num);

// Nested parallelism: thread 0 of a nested team sets aside the seat it
// holds in an outer team's runtime (possibly inside one of its tasks), and
// takes it back once the nested region is over (after leave_region).
struct SeatAside {
    tasks::Runtime* seat = nullptr;
    tasks::Runtime::SetAside runtime_state;
};
SeatAside set_seat_aside();
void restore_seat(const SeatAside& aside);

// A thread leaves its team's region (after the closing barrier): its
// implicit task's record goes, and it leaves its seat in the team's runtime.
void leave_region(ThreadState& st);

// Explicit tasks: create one (deferred, or run at once when undeferred).
struct TaskArgs {
    void (*fn)(void*);
    void* data;
    void (*cpyfn)(void*, void*);
    long arg_size;
    long arg_align;
    bool undeferred;   // if(0)
    bool final;        // final(true)
    void** depend;     // GCC's dependence array, or null
    void* detach = nullptr;   // the detach clause: where the event handle goes; null: none
};
// `adjust`, if given, edits the argument block after the copy (taskloop
// writes each task's iteration range there).
void create_task(const TaskArgs& a, void (*adjust)(void* arg, void* ctx) = nullptr, void* ctx = nullptr);

// omp_fulfill_event: `event` is a handle that a task with the detach
// clause got; a handle fulfilled twice, or none, stops the program.
void fulfill_event(void* event);

// Cancellation (OMP_CANCELLATION=true). Whether a task of `team` in
// taskgroup `g` is cancelled: the region's barrier is (`cancel parallel`),
// or `g` or a taskgroup around it is (`cancel taskgroup`).
bool task_cancelled(const Team& team, const TaskGroup* g);
// `cancel taskgroup` from the current task: its innermost taskgroup (none:
// nothing to cancel).
void cancel_taskgroup();

// Waits for the current task's children (taskwait).
void wait_children();
// Waits for the sibling tasks that `depend` depends on (taskwait depend).
void wait_depend(void** depend);
// Taskgroups of the current task region.
void taskgroup_begin();
void taskgroup_end();

// Task reductions (task_reduction.hpp) of the current task's innermost
// taskgroup: registers `data` for the team's threads there (with `orig`,
// the copies of a worksharing construct's first thread); `entry` names the
// entry point in the fatal message when no taskgroup is open.
void register_group_reductions(const char* entry, std::uintptr_t* data, const std::uintptr_t* orig = nullptr);
// GOMP_task_reduction_remap for the calling thread, from the current
// task's innermost taskgroup.
void remap_group_reductions(std::size_t cnt, std::size_t cntorig, void** ptrs);
// GOMP_workshare_task_reduction_unregister: the worksharing construct's
// taskgroup ends, thread 0 frees the copies, and unless `cancelled` the
// team meets at a barrier.
void end_workshare_reductions(bool cancelled);

}  // namespace numaware::omp
