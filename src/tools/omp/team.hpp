// tools/omp/team.hpp — the fork-join machinery of libnumaware_omp.so: the
// pool of pinned threads, the team of a parallel region, its barrier, and
// what each thread knows about the region it runs in (team.cpp).
//
// The encountering thread is thread 0 of the team it forks, as OpenMP
// requires (its thread-local data, threadprivate variables included, stay
// its own). The other threads come from a pool started at the first
// parallel region and kept for the process's life. Where they run is the
// threads layer's decision: plan_team() on the machine model, from
// OMP_PROC_BIND and OMP_PLACES (docs/OPENMP.md); the pool only carries it
// out through the os layer.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "numaware/machine.hpp"
#include "numaware/team.hpp"
#include "tools/omp/affinity.hpp"
#include "tools/omp/set_if_changed.hpp"
#include "tools/omp/settings.hpp"
#include "tools/omp/workshare.hpp"

namespace numaware::tasks {
class Runtime;
}

namespace numaware::omp {

struct OmpTask;

// A team barrier: a counter and a generation in one word, so that a
// thread arrives and learns the generation it waits out in one
// read-modify-write (reading the generation first, then adding, took the
// word's line from the other CPU twice); waiters spin briefly, then sleep
// on a futex word. What a region does not change (the party count, the
// spin, the runtime, the cancel flag) is on a line of its own, which the
// spinning waiters read without taking it from anyone.
// A waiter in a team with more threads than CPUs does not spin: it yields
// its CPU this many times, then sleeps on a futex. A sleep and its wake cost
// two system calls and a context switch each; a yield hands the CPU to a
// thread that is runnable and is likely the one waited for (BENCHMARKS.md,
// 2026-12-05 16:32 UTC: four threads on two CPUs).
inline constexpr unsigned yields_before_sleep = 16;
// But where other processes keep the CPUs busy, the scheduler gives a
// yielding thread's CPU to one of them for a whole time slice: 300 regions
// with a barrier each took 1.5 s with 3-8 threads on the 2 CPUs while a
// build ran beside them, against libgomp's 0.01-0.1 s (BENCHMARKS.md,
// 2026-12-07). So once the process's last slow_yields_in_a_row yields (of
// any of its threads) each took longer than slow_yield_ns (the CPU went to
// someone else for a slice: Linux's base slice is 0.75 ms), its threads
// stop yielding for yield_pause_ns and sleep at once meanwhile. One slow
// yield is not enough: in a quiet oversubscribed team a yield now and then
// runs a sibling for longer, and pausing on each of those made a barrier
// of four threads on the two CPUs cost 8 µs instead of 3.4.
inline constexpr std::int64_t slow_yield_ns = 200'000;
inline constexpr unsigned slow_yields_in_a_row = 3;
inline constexpr std::int64_t yield_pause_ns = 1'000'000'000;
// One yield of a waiter's: sched_yield(), unless this thread's yields have
// been slow lately. False when it did not yield, or the yield was slow:
// the caller then sleeps instead.
bool yield_or_sleep_instead();

class Barrier {
public:
    explicit Barrier(unsigned parties = 1) : parties_(parties) {}
    // `spin`: pause iterations before sleeping; 0 for a team with more
    // threads than CPUs, whose spinning waiters would take the CPU from the
    // threads they wait for.
    // Before a region's threads are started (their start publishes it),
    // with the team's task runtime as it is then (attach() for one made
    // during the region). Writes only what changes: the waiters of the
    // last region read these lines, and a write takes them back.
    void reset(unsigned parties, std::uint64_t spin, tasks::Runtime* rt) {
        set_if_changed(parties_, parties);
        set_if_changed(spin_, spin);
        set_if_changed(runtime_, rt);
        // A released generation has nobody arrived; a cancelled one may.
        set_if_changed(state_, state_.load(std::memory_order_relaxed) & ~arrived_mask);
        set_if_changed(cancelled_, false);
    }
    // Explicit tasks (tasking.hpp): once the team has a task runtime, the
    // waiters run its tasks, and the last to arrive releases the others
    // only when every task has finished.
    void attach(tasks::Runtime* rt);
    // Waits for the team. True when the barrier was cancelled (cancel()):
    // the waiters leave without the others, and a thread that comes to it
    // afterwards does not wait at all.
    bool wait();
    // `cancel parallel` (OMP_CANCELLATION=true): every waiter leaves now,
    // and so will every later wait() until reset(). Nothing releases the
    // generation it interrupts: a cancelled region ends at a barrier of its
    // own (Team::closing). Only the region's own implicit tasks cancel it,
    // so a generation whose threads have all arrived is never cancelled.
    void cancel();
    bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }

    // The generation of a state word.
    static std::uint32_t generation_of(std::uint64_t state) { return static_cast<std::uint32_t>(state >> 32); }

private:
    static constexpr std::uint64_t arrived_mask = 0xFFFFFFFFu;
    // Set per region, read at every wait.
    alignas(64) std::atomic<tasks::Runtime*> runtime_{nullptr};
    unsigned parties_;
    std::uint64_t spin_ = 0;
    std::atomic<bool> cancelled_{false};
    // The generation (high 32 bits) and the threads arrived in it (low).
    alignas(64) std::atomic<std::uint64_t> state_{0};
    // The word sleepers wait on: bumped by a release, by attach() and by
    // cancel(), so that a wake between a sleeper's last look and its
    // futex_wait is not lost (the wait returns at once when the word has
    // moved).
    std::atomic<std::uint32_t> signal_{0};
    std::atomic<unsigned> sleepers_{0};   // waiters that may be asleep on signal_
};

struct TaskGroup;   // tasking.hpp

// A contention group (an initial thread and the threads of the teams it and
// they start): its threads in use, which thread-limit-var bounds (kept only
// when the group has a limit: parallel_begin).
struct ContentionGroup {
    std::atomic<unsigned> threads{1};
};

// One parallel region's team. A pool's team is reused region after region;
// a serialised region (one thread: beyond max-active-levels-var, or asked
// for) has its own, kept by the encountering thread.
struct Team {
    unsigned size = 1;
    Barrier barrier;
    // Where a region whose barrier was cancelled ends: every thread meets
    // here once, after leaving `barrier` cancelled (member_leave).
    Barrier closing;
    WorkShares workshares;
    void (*fn)(void*) = nullptr;
    void* data = nullptr;
    bool loop_prestarted = false;   // construct 0 is a combined parallel loop's, set up before the fork
    // `single` constructs (without copyprivate) taken so far: the first
    // thread at single k moves it from k to k + 1 (GOMP_single_start), with
    // no construct slot to enter and leave.
    std::atomic<std::uint64_t> singles{0};
    // Where the region is nested: the encountering thread's levels and
    // ancestors, which every thread of the team extends.
    unsigned parent_level = 0, parent_active_level = 0;
    std::vector<unsigned> parent_ancestors, parent_sizes;
    unsigned parent_league_size = 1, parent_league_num = 0, parent_thread_limit = 0;   // a teams region's
    // Its threads' CPUs (its pool's plan, at least a thread each; empty for
    // a team of one), for the task runtime's layout.
    std::vector<std::vector<unsigned>> thread_cpus;
    Bind bind = Bind::true_;   // the region's binding policy (set before the fork)
    ContentionGroup* group = nullptr;   // its threads' contention group
    unsigned reserved = 0;              // the threads it added to the group's count (given back at its end)

    // Explicit tasks: the hosted runtime of this team size, made at the
    // first task (team_runtime()) and kept for the next regions of the
    // size (a thread may still be leaving a wait in it when the next
    // region starts).
    std::atomic<tasks::Runtime*> runtime{nullptr};
    std::mutex runtime_mutex;
    // The taskgroup every implicit task of the region starts in: a
    // parallel construct's task reductions (GOMP_parallel_reductions); null
    // for none. Set before the fork, reset by start().
    TaskGroup* initial_taskgroup = nullptr;
    std::map<unsigned, std::unique_ptr<tasks::Runtime>> runtimes;

    Team();
    ~Team();

    void start(unsigned threads, std::uint64_t spin = 0) {
        set_if_changed(size, threads);
        set_if_changed(loop_prestarted, false);
        set_if_changed(singles, std::uint64_t{0});
        set_if_changed(initial_taskgroup, nullptr);
        const auto kept = runtimes.find(threads);
        tasks::Runtime* rt = kept == runtimes.end() ? nullptr : kept->second.get();
        barrier.reset(threads, spin, rt);
        closing.reset(threads, spin, rt);
        workshares.reset();
        set_if_changed(runtime, rt);
    }
    // The team's task runtime, to both barriers.
    void attach(tasks::Runtime* rt) {
        barrier.attach(rt);
        closing.attach(rt);
    }
    // fork()'s child: the runtimes' threads (a RIP policy's partitioning
    // thread) did not come along, and a runtime's destructor would wait
    // for them. They move to `left` and are never destroyed; the next
    // region that makes a task starts a new one.
    void leave_runtimes(std::vector<std::unique_ptr<tasks::Runtime>>& left);
};

// What a thread knows about the region it runs in. Outside every parallel
// region a thread is the only thread of its own implicit team (`team` is
// then its solo team).
struct ThreadState {
    Team* team = nullptr;
    unsigned num = 0;             // omp_get_thread_num()
    unsigned level = 0;           // omp_get_level(): enclosing parallel regions
    unsigned active_level = 0;    // omp_get_active_level(): those with more than one thread
    std::vector<unsigned> ancestors;   // thread numbers at levels 1..level (omp_get_ancestor_thread_num)
    std::vector<unsigned> sizes;       // team sizes at levels 1..level (omp_get_team_size)
    WorkShareCursor cursor;       // this thread's place in the team's worksharing constructs
    unsigned nthreads_var = 0;    // the nthreads-var ICV of this thread's data environment
    // At level 0 the program's libgomp holds nthreads-var (libgomp_icv.hpp);
    // not in a target region's new contention group, whose ICVs start anew.
    bool nthreads_in_libgomp = true;
    bool run_sched_set = false;   // run-sched-var set by omp_set_schedule (else OMP_SCHEDULE's)
    // bind-var of its data environment, once a region set it (else
    // OMP_PROC_BIND's first value): bind_var().
    bool bind_var_set = false;
    Bind bind_var = Bind::true_;
    ContentionGroup* group = nullptr;   // null: its own, as an initial thread
    Schedule run_sched;
    // The host teams construct (GOMP_teams_reg): the league's size and this
    // thread's team in it (1 and 0 outside one), and the thread-limit-var
    // ICV its thread_limit clause sets (0: OMP_THREAD_LIMIT's).
    unsigned league_size = 1, league_num = 0;
    unsigned thread_limit = 0;
    // A target region met inside an active parallel region (target.cpp):
    // its parallel regions, and those nested in them, get one thread.
    bool serial_regions = false;
    OmpTask* current = nullptr;   // the task whose body runs (tasking.hpp); null: the implicit task, not made yet
    OmpTask* implicit = nullptr;  // this region's implicit task's record, once made
    // References to spare_task (a task whose body runs on this thread) taken
    // ahead, in one atomic addition, for children not yet created
    // (tasking.cpp): a child's creation takes one instead of writing the
    // line that the threads finishing its siblings write. Kept here, not in
    // the task, so that creating a child writes nothing of its parent.
    OmpTask* spare_task = nullptr;
    std::uint32_t spare_refs = 0;
    // The task throttle (tasking.cpp): the runtime last checked, tasks to
    // create before the next check, and the last check's answer.
    const void* throttle_rt = nullptr;
    unsigned throttle_countdown = 0;
    bool throttled = false;
};

// run-sched-var of the calling thread's data environment.
Schedule run_schedule();

// thread-limit-var of the calling thread's data environment (0: none).
unsigned thread_limit();

// The host teams construct: fn(data) once per team of a league of
// `num_teams` (0: nteams-var), one team after another on the calling
// thread, as libgomp runs them (nothing lets teams wait for each other),
// each team's parallel regions at most `limit` threads (0:
// teams-thread-limit-var, then thread-limit-var).
void run_teams(void (*fn)(void*), void* data, unsigned num_teams, unsigned limit);
// nteams-var and teams-thread-limit-var (omp_set_num_teams,
// omp_set_teams_thread_limit; OMP_NUM_TEAMS, OMP_TEAMS_THREAD_LIMIT).
// nteams-var is 0 until set, as the standard and libgomp have it: a
// teams construct then makes one team per node the process may run on.
unsigned nteams_var();
void set_nteams_var(unsigned teams);
unsigned teams_thread_limit_var();
void set_teams_thread_limit_var(unsigned limit);

// max-active-levels-var (device-wide): OMP_MAX_ACTIVE_LEVELS or OMP_NESTED
// until omp_set_max_active_levels or omp_set_nested.
unsigned max_active_levels();
void set_max_active_levels(unsigned levels);

// bind-var of a thread's data environment: the binding policy of the
// regions it encounters without a proc_bind clause (omp_get_proc_bind).
// Outside every region OMP_PROC_BIND's first value; an implicit task at
// level L gets the list's element L, else the proc_bind clause of its
// region, else its encountering thread's.
Bind bind_var(const ThreadState& st);
// Binding that the system refused (refuse_binding, from the pool): every
// later region runs unbound and bind-var reads false.
bool binding_refused();
void refuse_binding(int err);
// The contention group of the calling thread's state.
ContentionGroup& group_of(ThreadState& st);

// The calling thread's state (its solo team set up on first use). Every
// construct and task asks for it: once made, it is one thread-local load
// (the state itself has a destructor, so reaching it directly costs two
// initialisation checks per call: 32 host instructions per explicit task
// by callgrind, of about 240).
extern constinit thread_local ThreadState* t_thread_state __attribute__((tls_model("initial-exec")));
ThreadState& make_thread_state();
inline ThreadState& thread_state() {
    if (ThreadState* st = t_thread_state) [[likely]]
        return *st;
    return make_thread_state();
}

// The process-wide settings (OMP_* read once, at the first call).
const Settings& settings();

// The CPUs the process may run on, as it was started, ascending (empty:
// unknown, the whole machine).
const std::vector<unsigned>& initial_cpus();

// ---- places and affinity (omp_api_affinity.cpp) ----
// OMP_PLACES over the machine model and initial_cpus() (affinity.hpp).
const PlaceList& team_places();
// The calling thread's CPU mask, ascending; empty when it cannot be read.
std::vector<unsigned> calling_thread_cpus();
// The calling thread's affinity line in `format`.
std::string affinity_line(std::string_view format);
// OMP_DISPLAY_AFFINITY: the calling thread's line on stderr, on its first
// region and whenever the line changes. Called as a thread enters a region.
void display_affinity_on_entry();
// omp_display_env's text (OMP_DISPLAY_ENV at load).
std::string display_env_text(bool verbose);
// omp_pause_resource: ends the calling initial thread's pool threads
// (later regions start new ones); false inside a parallel region.
bool pause_pool();

// Runs fn(data) as a parallel region of `requested` threads (0: the
// nthreads-var ICV), the calling thread as thread 0, and returns after the
// region's closing barrier. `before_fork`, if given, runs on the
// calling thread once the team is set up and before any other thread
// starts (the combined parallel loops initialise their loop there).
// `proc_bind`: the construct's proc_bind clause as GCC passes it in the
// low bits of GOMP_parallel's flags (omp_proc_bind_t: 2 primary, 3 close,
// 4 spread; 0 none); ignored where bind-var is false, as the standard says.
void parallel(void (*fn)(void*), void* data, unsigned requested,
              void (*before_fork)(Team&, void*) = nullptr, void* before_arg = nullptr, unsigned proc_bind = 0);

// The same in two halves, for GOMP_parallel_start/_end: parallel_begin
// returns on thread 0 once the others run fn(data); thread 0 then runs the
// body itself and calls parallel_end, which waits at the closing barrier.
void parallel_begin(void (*fn)(void*), void* data, unsigned requested,
                    void (*before_fork)(Team&, void*) = nullptr, void* before_arg = nullptr,
                    unsigned proc_bind = 0);
void parallel_end();

// The threads a region of `requested` threads gets from here, as
// omp_get_max_threads and the `num_threads` clause decide it.
unsigned team_size_for(unsigned requested);

// The number of CPUs the process may use (omp_get_num_procs; the default
// team size).
unsigned available_cpus();

// The calling thread's nthreads-var ICV (omp_get_max_threads): what
// omp_set_num_threads set, else OMP_NUM_THREADS, else available_cpus();
// outside every region, libgomp's value when the process has libgomp
// (libgomp_icv.hpp).
unsigned nthreads_var();
// dyn-var: OMP_DYNAMIC, or what omp_set_dynamic set (omp_api.cpp).
bool dyn_var();
// omp_set_num_threads: sets it (passed on to libgomp outside every region).
void set_nthreads_var(unsigned n);

// The machine model (hwloc's view of this machine, read once).
const Machine& team_machine();

// Where the threads of a team of `threads` run, as the task runtime sees
// them: thread t on its place's first CPU and that CPU's node; a thread
// without a place (OMP_PROC_BIND=false, or more threads than CPUs) on the
// CPU that a contiguous plan over the allowed CPUs gives it. `cpus`: each
// thread's CPUs as its pool bound them (Team::thread_cpus); empty: the
// plan OMP_PROC_BIND and OMP_PLACES make for the outermost teams.
TeamLayout task_layout(unsigned threads, const std::vector<std::vector<unsigned>>& cpus = {});

// fatal() for an entry point (or a clause of one) the shim does not
// implement: "SYMBOL: not supported by libnumaware_omp.so yet (WHAT); run
// this program without it (unset LD_PRELOAD)".
[[noreturn]] void unsupported(const char* symbol, const char* what);

// Writes "numaware-omp: MESSAGE" to stderr and ends the process with
// status 2: for what the shim cannot do (an unsupported entry point,
// NUMAWARE_POLICY that names no policy).
[[noreturn]] void fatal(const std::string& message);

}  // namespace numaware::omp
