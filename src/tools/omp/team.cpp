// tools/omp/team.cpp — the pool of pinned threads and the fork-join of a
// parallel region (team.hpp).
#include "tools/omp/team.hpp"

#include "tools/omp/affinity.hpp"
#include "tools/omp/futex.hpp"
#include "tools/omp/launch_cpus.hpp"
#include "tools/omp/libgomp_icv.hpp"
#include "tools/omp/tasking.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "numaware/error.hpp"
#include "numaware/machine.hpp"
#include "numaware/tasks.hpp"
#include "numaware/team.hpp"
#include "os/os.hpp"

namespace numaware::omp {

void fatal(const std::string& message) {
    // One line, however many threads get here: the first one says it and
    // ends the process; the others wait for the end.
    static std::atomic<bool> said{false};
    if (said.exchange(true))
        for (;;) ::pause();
    const std::string line = fmt::format("numaware-omp: {}\n", message);
    (void)!::write(2, line.data(), line.size());
    std::_Exit(2);
}

void unsupported(const char* symbol, const char* what) {
    fatal(std::string(symbol) + ": not supported by libnumaware_omp.so yet (" + what +
          "); run this program without it (unset LD_PRELOAD)");
}

// ---- the barrier ----------------------------------------------------------------

namespace {
struct GenerationWait {
    const std::atomic<std::uint64_t>* state;
    std::uint32_t seen;
    const std::atomic<bool>* cancelled;
};
bool generation_moved(void* p) {
    const auto* w = static_cast<const GenerationWait*>(p);
    return Barrier::generation_of(w->state->load(std::memory_order_acquire)) != w->seen ||
           w->cancelled->load(std::memory_order_acquire);
}
bool runtime_quiescent(void* p) { return static_cast<const tasks::Runtime*>(p)->quiescent(); }
}  // namespace

bool yield_or_sleep_instead() {
    // The process's: the CPUs are shared with other processes for all of
    // its threads at once, and one thread's yields tell the others.
    static std::atomic<std::int64_t> no_yield_until{0};   // steady_clock ns
    static std::atomic<unsigned> slow_in_a_row{0};
    const auto now = [] {
        return std::int64_t{std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::steady_clock::now().time_since_epoch())
                                .count()};
    };
    const std::int64_t before = now();
    if (before < no_yield_until.load(std::memory_order_relaxed)) return false;
    sched_yield();
    const std::int64_t took = now() - before;
    if (took <= slow_yield_ns) {
        if (slow_in_a_row.load(std::memory_order_relaxed) != 0) slow_in_a_row.store(0, std::memory_order_relaxed);
        return true;
    }
    if (slow_in_a_row.fetch_add(1, std::memory_order_relaxed) + 1 >= slow_yields_in_a_row) {
        slow_in_a_row.store(0, std::memory_order_relaxed);
        no_yield_until.store(before + took + yield_pause_ns, std::memory_order_relaxed);
    }
    return false;
}

bool Barrier::wait() {
    // Read before arriving: once every thread has arrived, the last one may
    // leave and reset the barrier for the next region.
    const unsigned parties = parties_;
    const std::uint64_t spin = spin_;
    tasks::Runtime* rt = runtime_.load(std::memory_order_acquire);
    if (parties <= 1) {
        // A team of one has a runtime only for detached tasks (create_task):
        // they, and the tasks after them, finish before the barrier.
        if (rt != nullptr) {
            take_seat(*rt, thread_state().num);
            rt->run_until(runtime_quiescent, rt, tasks::Runtime::Sleep::never);
        }
        return cancelled_.load(std::memory_order_relaxed);
    }
    // A cancelled region: nobody arrives any more (the generation it
    // interrupted is never released).
    if (cancelled_.load(std::memory_order_acquire)) return true;
    if (rt != nullptr) take_seat(*rt, thread_state().num);
    const std::uint64_t arrival = state_.fetch_add(1, std::memory_order_acq_rel);
    const std::uint32_t gen = generation_of(arrival);
    if ((arrival & arrived_mask) + 1 == parties) {
        // Every thread has arrived, so no implicit task makes tasks any
        // more; read again, after the others' arrivals: a runtime attached
        // by the first task of a thread that arrived is seen here.
        rt = runtime_.load(std::memory_order_acquire);
        if (rt != nullptr) {
            take_seat(*rt, thread_state().num);
            rt->run_until(runtime_quiescent, rt, tasks::Runtime::Sleep::never);
        }
        // The next generation with nobody arrived, in one step: nobody
        // else writes the word until it moves (every party has arrived).
        // Sequentially consistent with the sleepers' count: either a waiter
        // counted itself after this load, and then sees the new generation
        // before it sleeps, or this sees it and moves the signal (a sleeper
        // between its look and its futex_wait returns at once) and wakes it.
        // Waiters that only spin cost no second locked instruction here.
        state_.fetch_add((std::uint64_t{1} << 32) - parties, std::memory_order_seq_cst);
        if (sleepers_.load(std::memory_order_seq_cst) != 0) {
            signal_.fetch_add(1, std::memory_order_seq_cst);
            futex_wake_all(signal_);
        }
        if (rt != nullptr) rt->wake();
        return false;
    }
    // Run the team's tasks until the last thread releases the barrier (or
    // the region is cancelled); without a runtime yet, wait, and start
    // helping if one appears (the first task of a `single` is made after
    // the other threads reached its barrier: attach() wakes them).
    const auto help = [&](tasks::Runtime& r) {
        take_seat(r, thread_state().num);
        GenerationWait w{&state_, gen, &cancelled_};
        r.run_until(generation_moved, &w);
        return generation_of(state_.load(std::memory_order_acquire)) == gen;
    };
    const auto released = [&] { return generation_of(state_.load(std::memory_order_acquire)) != gen; };
    if (rt != nullptr) return help(*rt);
    for (std::uint64_t i = 0; i < spin; ++i) {
        if (released()) return false;
        if (cancelled_.load(std::memory_order_acquire)) return true;
        if (tasks::Runtime* r = runtime_.load(std::memory_order_acquire)) return help(*r);
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
    // More threads than CPUs: the CPU goes to the threads waited for a few
    // times before this one sleeps (yields_before_sleep).
    for (unsigned i = 0; spin == 0 && i < yields_before_sleep; ++i) {
        if (released()) return false;
        if (cancelled_.load(std::memory_order_acquire)) return true;
        if (tasks::Runtime* r = runtime_.load(std::memory_order_acquire)) return help(*r);
        if (!yield_or_sleep_instead()) break;
    }
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    tasks::Runtime* appeared = nullptr;
    bool cancelled = false;
    for (;;) {
        // The signal before the looks: a release, an attach() or a cancel()
        // after it moves it, and the futex_wait returns at once.
        const std::uint32_t s = signal_.load(std::memory_order_seq_cst);
        if (generation_of(state_.load(std::memory_order_seq_cst)) != gen) break;
        if ((cancelled = cancelled_.load(std::memory_order_seq_cst))) break;
        if ((appeared = runtime_.load(std::memory_order_seq_cst)) != nullptr) break;
        futex_wait(signal_, s);
    }
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
    if (appeared != nullptr) return help(*appeared);
    return cancelled;
}

void Barrier::cancel() {
    cancelled_.store(true, std::memory_order_seq_cst);
    signal_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) != 0) futex_wake_all(signal_);
    if (tasks::Runtime* rt = runtime_.load(std::memory_order_acquire)) rt->wake();
}

void Barrier::attach(tasks::Runtime* rt) {
    runtime_.store(rt, std::memory_order_seq_cst);
    if (rt == nullptr) return;
    // Waiters asleep without a runtime: they see it once woken (they count
    // themselves in before they look, so either they see it or this sees
    // them; the signal moves so that a sleeper between its look and its
    // futex_wait does not sleep through this wake).
    signal_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) != 0) futex_wake_all(signal_);
}

// ---- settings and the machine ------------------------------------------------------

const Settings& settings() {
    static const Settings s = [] {
        try {
            return read_settings([](const char* name) { return std::getenv(name); },
                                 [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); });
        } catch (const Error& e) {
            fatal(e.what());
        }
    }();
    return s;
}

void member_enter(Team& team, unsigned num, ThreadState& st);
void member_leave(ThreadState& st);
void set_parent(Team& team, const ThreadState& encountering);

namespace {

// The environment is read when the library is loaded, before main: a bad
// NUMAWARE_POLICY stops the program before it starts, and the warnings
// come first, as libgomp's do. OMP_DISPLAY_ENV shows the environment then
// (after libgomp's own display, when libgomp is loaded too).
void after_fork_in_child();

[[gnu::constructor]] void read_environment_at_load() {
    (void)settings();
    (void)initial_cpus();
    prepare_report();
    pthread_atfork(nullptr, nullptr, after_fork_in_child);
    if (settings().display_env != Settings::Display::no)
        std::fputs(display_env_text(settings().display_env == Settings::Display::verbose).c_str(), stderr);
}

// Where pool thread i runs: its CPU set, empty for an unbound thread.
struct Placement {
    std::vector<std::vector<unsigned>> cpus;   // per thread number
};

// The CPUs the process may run on, as it was started (taskset, a cgroup
// cpuset, a batch system's allocation): read once, before any OpenMP
// thread is bound, as libgomp reads its initial affinity mask.
//
// One catch: libgomp is loaded too (the program links it), its constructor
// runs before this library's, and when OMP_PROC_BIND or OMP_PLACES asks for
// binding it has already bound the initial thread to its first place. The
// thread's mask then says nothing about the process's: the mask noted at
// libgomp's pthread_setaffinity_np does (launch_cpus.hpp). Should libgomp
// have bound the thread without that call, the cgroup's cpuset (a
// container's, a batch job's) is taken, and a taskset mask is lost.
std::vector<unsigned> cgroup_cpus() {
    std::ifstream cgroups("/proc/self/cgroup");
    std::string line;
    while (std::getline(cgroups, line)) {
        // "0::/path" (v2) or "N:cpuset:/path" (v1, possibly with other controllers).
        const std::size_t a = line.find(':'), b = line.find(':', a + 1);
        if (a == std::string::npos || b == std::string::npos) continue;
        const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
        std::string file;
        if (controllers.empty()) file = "/sys/fs/cgroup" + path + "/cpuset.cpus.effective";
        else if (("," + controllers + ",").find(",cpuset,") != std::string::npos)
            file = "/sys/fs/cgroup/cpuset" + path + "/cpuset.effective_cpus";
        else continue;
        std::ifstream f(file);
        std::string list;
        if (!std::getline(f, list) || list.empty()) continue;
        try {
            std::vector<unsigned> cpus = parse_cpu_list(list, file);
            std::sort(cpus.begin(), cpus.end());
            return cpus;
        } catch (const Error&) {
            continue;
        }
    }
    return {};
}

}  // namespace

const std::vector<unsigned>& initial_cpus() {
    static const std::vector<unsigned> cpus = [] {
        const Settings& s = settings();
        const bool libgomp_bound = (s.bind_set && s.bind != Bind::false_) || (s.places_set && s.bind != Bind::false_);
        std::vector<unsigned> c;
        // The mask noted before libgomp bound the initial thread; failing
        // that, when binding was asked for (libgomp may have bound it some
        // other way), the cgroup's CPUs.
        if (launch_cpus(c)) return c;
        if (libgomp_bound) return cgroup_cpus();   // empty: unknown, the whole machine
        if (os::linux_os().get_affinity(0, c) != 0) c.clear();
        std::sort(c.begin(), c.end());
        return c;
    }();
    return cpus;
}

namespace {

// The mapping for `threads` ranks on the CPUs the process may use. With
// every CPU of the machine allowed, it is plan_team's own (contiguous or
// scatter); with fewer (taskset, a cpuset), the same rule spelled out over
// the allowed CPUs: node by node in order, or round-robin over the nodes.
TeamMapping allowed_mapping(const Machine& machine, unsigned threads, MappingKind kind) {
    TeamMapping m;
    m.threads = threads;
    m.kind = kind;
    const std::vector<unsigned>& allowed = initial_cpus();
    if (allowed.empty() || allowed.size() >= machine.cpu_count()) return m;
    std::vector<std::vector<unsigned>> per_node;
    for (const Node& n : machine.nodes) {
        std::vector<unsigned> mine;
        for (unsigned c : n.cpus)
            if (std::binary_search(allowed.begin(), allowed.end(), c)) mine.push_back(c);
        if (!mine.empty()) per_node.push_back(std::move(mine));
    }
    std::vector<OrderedCpu> order = team_cpu_order(machine, per_node, kind);
    order.resize(std::min<std::size_t>(order.size(), threads));
    m.threads = static_cast<unsigned>(order.size());
    for (const OrderedCpu& o : order) m.cpus.push_back(o.cpu);
    return m;
}

// An explicit place list (OMP_PLACES, GOMP_CPU_AFFINITY) that names no CPU
// the process may use (taskset, a cpuset): said once, on stderr.
void warn_no_usable_place() {
    static std::atomic<bool> said{false};
    if (said.exchange(true)) return;
    std::fprintf(stderr,
                 "numaware-omp: the place list (OMP_PLACES or GOMP_CPU_AFFINITY) names no CPU this process may use "
                 "(%s); threads are bound over those CPUs as without it\n",
                 initial_cpus().empty() ? "every CPU of the machine" : format_cpu_list(initial_cpus()).c_str());
}

// The places of the team, from a binding policy (OMP_PROC_BIND's, or a
// proc_bind clause's) and OMP_PLACES, through the threads layer's plan for
// the machine model, over the CPUs the process may use. Threads beyond
// those CPUs (OMP_NUM_THREADS larger than them) run unbound, as an
// oversubscribed team must.
Placement plan_places(const Machine& machine, unsigned threads, Bind bind, const Places& places) {
    Placement p;
    p.cpus.resize(threads);
    if (bind == Bind::false_) return p;
    // Places that the threads layer's plan does not give (a CPU or a node
    // per thread): listed ones, last-level caches, a count of places. A
    // listed place keeps only the CPUs the process may use, as the place
    // list reports it (team_places()); a list left with none gives way to
    // the plan below, over those CPUs.
    const PlaceList listed = places.kind == PlaceKind::explicit_list ? usable_listed_places(places, initial_cpus())
                             : places.kind == PlaceKind::ll_caches || places.count != 0
                                 ? place_list(machine, initial_cpus(), places)
                                 : PlaceList{};
    if (listed.empty() && places.kind == PlaceKind::explicit_list) warn_no_usable_place();
    if (!listed.empty()) {
        // Threads over the listed places: close packs them in order, spread
        // strides over them; primary keeps all on the first place.
        const std::size_t count = listed.size();
        for (unsigned t = 0; t < threads; ++t) {
            std::size_t k = t % count;
            if (bind == Bind::primary) k = 0;
            else if (bind == Bind::spread && threads < count) k = t * count / threads;
            p.cpus[t] = listed[k];
        }
        return p;
    }
    // The machine model and the launch mask agree on the CPUs (both read
    // before any thread was bound); the model's count also bounds the plan
    // should they not, so that the plan never asks for more CPUs than the
    // model has.
    const unsigned planned = std::min({threads, available_cpus(), static_cast<unsigned>(machine.cpu_count())});
    const TeamMapping mapping = allowed_mapping(
        machine, planned, bind == Bind::spread ? MappingKind::scatter : MappingKind::contiguous);
    const TeamLayout layout = plan_team(machine, mapping);
    // Places of cores (the default): a thread is bound to its core's
    // hardware threads that the process may use, as libgomp binds a thread
    // to its place; the plan gave each thread a core of its own while
    // there are enough (team_cpu_order()).
    PlaceList cores;
    if (places.kind == PlaceKind::cores) cores = place_list(machine, initial_cpus(), places);
    for (unsigned t = 0; t < planned; ++t) {
        const RankPlace& r = layout.ranks[bind == Bind::primary ? 0 : t];
        if (places.kind == PlaceKind::sockets || places.kind == PlaceKind::numa_domains) {
            p.cpus[t] = machine.node(r.node).cpus;
        } else if (const int k = place_of(cores, {r.cpu}); k >= 0) {
            p.cpus[t] = cores[static_cast<std::size_t>(k)];
        } else {
            p.cpus[t] = {r.cpu};
        }
    }
    return p;
}

}  // namespace

// The machine model, read once from hwloc.
const Machine& team_machine() {
    static const Machine* m = [] {
        try {
            return new Machine(Machine::from_live());   // never destroyed: pools may use it at exit
        } catch (const Error& e) {
            fatal(fmt::format("cannot read this machine's topology: {}", e.what()));
        }
    }();
    return *m;
}

namespace {

// A nested team's places: thread 0 stays where the encountering thread is
// (place `from` of `places`; -1: it is unbound), and thread t goes where
// `bind` puts it, counting from there over the whole list: close (true)
// the next places in turn, spread strided over the list (in turn when the
// threads outnumber the places), primary the same place, as libgomp
// places them when the encountering thread's partition is the whole list
// (numaware does not narrow partitions; docs/OPENMP.md). With
// bind false, an unbound encountering thread or no places, threads 1.. may
// use every CPU in `allowed`. Thread 0's CPUs are left empty: it is not
// moved.
Placement plan_nested_places(unsigned threads, Bind bind, int from, const PlaceList& places,
                             const std::vector<unsigned>& allowed) {
    Placement p;
    p.cpus.resize(threads);
    if (bind == Bind::false_ || from < 0 || places.empty()) {
        for (unsigned t = 1; t < threads; ++t) p.cpus[t] = allowed;
        return p;
    }
    const std::size_t n = places.size();
    for (unsigned t = 1; t < threads; ++t) {
        std::size_t step = t;   // close (true), and spread with more threads than places
        if (bind == Bind::primary) step = 0;
        else if (bind == Bind::spread && threads <= n) step = std::size_t{t} * n / threads;
        p.cpus[t] = places[(static_cast<std::size_t>(from) + step) % n];
    }
    return p;
}

const Machine& machine() { return team_machine(); }

// What parallel_begin decided for a team before its fork.
struct Fork {
    Bind bind = Bind::true_;            // the region's binding policy
    ContentionGroup* group = nullptr;
    unsigned reserved = 0;              // threads added to the group's count
    void apply(Team& team) const {
        set_if_changed(team.bind, bind);
        set_if_changed(team.group, group);
        set_if_changed(team.reserved, reserved);
    }
};

// A pool: worker threads 1..n-1 of the regions that one thread encounters
// at one active nesting level (each thread the program starts is an
// initial thread with a pool of its own, as with libgomp, and each thread
// that encounters a nested active region has one for that level). Each
// worker waits on its own `go` counter; the encountering thread bumps it
// with the team to run.
class Pool {
public:
    // The calling thread's pool for the regions it encounters at active
    // level `level` (0: outside every active region); its threads end when
    // the calling thread does.
    static Pool& of_calling_thread(unsigned level) {
        std::vector<Pool*>& pools = calling_threads();
        if (pools.size() <= level) pools.resize(level + 1, nullptr);
        Pool*& pool = pools[level];
        if (!pool) pool = new Pool(level);
        return *pool;
    }
    // omp_pause_resource from the calling thread: every pool of its own.
    static bool pause_calling_threads() {
        for (Pool* p : calling_threads())
            if (p != nullptr && !p->pause()) return false;
        return true;
    }

    // Starts a region of n threads: pool threads 1..n-1 run it; the
    // calling thread is thread 0 and finishes with end().
    void begin(void (*fn)(void*), void* data, unsigned n, void (*before_fork)(Team&, void*), void* before_arg,
               ThreadState& master, const Fork& fork) {
        if (busy_) fatal("internal error: a pool's region started inside its own region");
        busy_ = true;
        // Thread 0 of a nested team may hold an outer team's seat, even
        // inside one of its tasks: set aside until the region ends.
        aside_ = set_seat_aside();
        Team& team = team_;
        // Waiters spin only while every thread has a CPU of its own (with
        // the enclosing teams' threads counted).
        unsigned threads = n;
        for (unsigned size : master.sizes) threads = size != 0 && threads > UINT_MAX / size ? UINT_MAX : threads * size;
        spin_ = threads <= available_cpus() ? spin_count(settings()) : 0;
        team.start(n, spin_);
        set_if_changed(team.fn, fn);
        set_if_changed(team.data, data);
        set_parent(team, master);
        fork.apply(team);
        if (before_fork) before_fork(team, before_arg);
        if (level_ == 0) {
            grow(team.size, fork.bind);
            pin_master();
        } else {
            plan_nested(team, fork.bind);
        }
        for (unsigned t = 1; t < team.size; ++t) {
            Worker& w = *workers_[t - 1];
            w.team = &team;
            w.nthreads_var = master.nthreads_var;
            w.run_sched_set = master.run_sched_set;
            w.run_sched = master.run_sched;
            w.go.fetch_add(1, std::memory_order_seq_cst);
            if (w.sleeping.load(std::memory_order_seq_cst)) futex_wake(w.go, 1);
        }
        member_enter(team, 0, master);
    }

    void end(ThreadState& master) {
        member_leave(master);
        if (team_.reserved != 0) team_.group->threads.fetch_sub(team_.reserved, std::memory_order_acq_rel);
        restore_seat(aside_);
        aside_ = SeatAside{};
        busy_ = false;
    }

    // omp_pause_resource: ends the pool's threads and waits until none of
    // them touches its Worker any more; the next region starts new ones.
    // False inside the pool's region.
    bool pause() {
        if (busy_) return false;
        stop();
        for (auto& w : workers_)
            while (!w->done.load(std::memory_order_acquire)) sched_yield();
        workers_.clear();
        planned_for_ = 0;
        master_pinned_ = false;
        return true;
    }

    // fork()'s child: of the parent's threads only the one that forked
    // runs here, so the pool has no workers any more; the next region
    // starts new ones and binds the master again.
    void forget_threads_after_fork(std::vector<std::unique_ptr<tasks::Runtime>>& left) {
        workers_.clear();
        planned_for_ = 0;
        master_pinned_ = false;
        team_.leave_runtimes(left);
    }
    static void forget_calling_threads_after_fork(std::vector<std::unique_ptr<tasks::Runtime>>& left) {
        for (Pool* p : calling_threads())
            if (p != nullptr) p->forget_threads_after_fork(left);
        // Its one thread's pool may claim the default pinning anew (grow()).
        g_default_pinned.store(nullptr, std::memory_order_relaxed);
    }

    // Ends the pool's threads (their initial thread is ending).
    void stop() {
        for (auto& w : workers_) {
            w->stop.store(true, std::memory_order_relaxed);
            w->go.fetch_add(1, std::memory_order_seq_cst);
            futex_wake(w->go, 1);
        }
    }

private:
    struct Worker {
        std::atomic<std::uint32_t> go{0};
        std::atomic<bool> sleeping{false};   // may be asleep on `go`
        std::atomic<bool> stop{false};
        std::atomic<bool> done{false};   // its thread no longer reads this
        Team* team = nullptr;
        unsigned nthreads_var = 0;
        bool run_sched_set = false;
        Schedule run_sched;
    };

    explicit Pool(unsigned level) : level_(level) {}

    // Whether this pool pins its threads under numaware's default (see
    // grow()): the first outermost pool to ask gets to, until its thread
    // ends or the process forks.
    bool claim_default_pinning() {
        if (level_ != 0) return false;
        Pool* expected = nullptr;
        return g_default_pinned.compare_exchange_strong(expected, this, std::memory_order_acq_rel) || expected == this;
    }
    static inline std::atomic<Pool*> g_default_pinned{nullptr};
    // The calling thread's pools by level (null: none yet).
    static std::vector<Pool*>& calling_threads() {
        struct Holder {
            std::vector<Pool*> pools;
            ~Holder() {
                for (Pool* p : pools) {
                    if (!p) continue;
                    p->stop();   // the Pool itself stays: a stopping worker may still read it
                    Pool* mine = p;   // its claim on the default pinning goes with its thread
                    g_default_pinned.compare_exchange_strong(mine, nullptr, std::memory_order_acq_rel);
                }
            }
        };
        thread_local Holder holder;
        return holder.pools;
    }

    void grow(unsigned size, Bind bind) {
        if (size <= workers_.size() + 1 && size <= planned_for_ && bind == planned_bind_) return;
        const unsigned target = std::max<unsigned>(size, static_cast<unsigned>(workers_.size()) + 1);
        // Without binding asked for, the pool threads go where `close`
        // would put them (Settings::pin_pool_threads); the plan's thread 0
        // is where the task runtime counts the initial thread. One pool of
        // the process does this, the first initial thread's: the pools of
        // other initial threads (a program's own threads running regions
        // side by side, joblib's threading backend) would be pinned to the
        // same CPUs, one CPU taking a thread of every pool while others
        // idle. Theirs run unbound, as libgomp's default runs them.
        pool_only_ = bind == Bind::false_ && settings().pin_pool_threads && claim_default_pinning();
        placement_ = plan_places(machine(), target, pool_only_ ? Bind::close : bind, settings().places);
        ++plan_;
        planned_for_ = target;
        planned_bind_ = bind;
        team_.thread_cpus = placement_.cpus;   // the task runtime's layout (task_layout)
        start_workers(target);
        master_pinned_ = false;
    }
    // A nested pool: its plan counts from the encountering thread's place
    // and depends on the team's size, so it is made again when either
    // changes; the master is never moved.
    void plan_nested(Team& team, Bind bind) {
        const unsigned size = team.size;
        std::vector<unsigned> here = calling_thread_cpus();
        const int from = place_of(team_places(), here);
        if (size != planned_for_ || from != planned_from_ || bind != planned_bind_) {
            placement_ = plan_nested_places(std::max<unsigned>(size, static_cast<unsigned>(workers_.size()) + 1), bind,
                                            from, team_places(), allowed_cpus(machine(), initial_cpus()));
            ++plan_;
            planned_for_ = size;
            planned_from_ = from;
            planned_bind_ = bind;
            // The team (this pool's, kept region after region) tells its
            // task runtime where its threads are.
            team.thread_cpus.assign(placement_.cpus.begin(), placement_.cpus.begin() + size);
            team.thread_cpus[0] = std::move(here);
            if (bind == Bind::false_ || from < 0)   // unbound: no place to tell
                for (unsigned t = 1; t < size; ++t) team.thread_cpus[t].clear();
        }
        start_workers(size);
    }
    void start_workers(unsigned size) {
        for (unsigned t = static_cast<unsigned>(workers_.size()) + 1; t < size; ++t) {
            workers_.push_back(std::make_unique<Worker>());
            start_worker(*workers_.back(), t);
        }
    }

    void start_worker(Worker& w, unsigned num) {
        // OMP_STACKSIZE applies to the threads the runtime creates.
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        if (settings().stack_bytes) pthread_attr_setstacksize(&attr, settings().stack_bytes);
        struct Start {
            Pool* pool;
            Worker* w;
            unsigned num;
        };
        auto* start = new Start{this, &w, num};
        pthread_t tid;
        const int rc = pthread_create(
            &tid, &attr,
            [](void* arg) -> void* {
                std::unique_ptr<Start> s(static_cast<Start*>(arg));
                s->pool->worker_main(*s->w, s->num);
                return nullptr;
            },
            start);
        pthread_attr_destroy(&attr);
        if (rc != 0) {
            delete start;
            fatal(fmt::format("cannot start OpenMP thread {}: {}", num, std::strerror(rc)));
        }
        pthread_detach(tid);
    }

    void pin(unsigned num) {
        const std::vector<unsigned>& cpus = placement_.cpus[num];
        if (cpus.empty() || binding_refused()) return;
        const int err = os::linux_os().set_affinity(0, cpus);
        if (err == 0) return;
        // Binding nobody asked for (numaware's default) is given up where
        // the system refuses it (a sandbox's seccomp filter, a container
        // without the right): the threads run unbound, said once. Binding
        // asked for through the environment fails as under libgomp.
        const Settings& s = settings();
        if (!s.bind_set && !s.places_set) {
            refuse_binding(err);
            return;
        }
        fatal(fmt::format("cannot bind OpenMP thread {} to CPUs {}: {} (OMP_PROC_BIND=false runs unbound)", num,
                          format_cpu_list(cpus), std::strerror(err)));
    }

    // The initial thread is bound only where binding was asked for: under
    // bind-var false with numaware's own placement of its pool threads
    // (Settings::pin_pool_threads) it keeps its launch mask, as the
    // threads and processes it starts after the region must (a pinned
    // initial thread gave scikit-learn's joblib workers, Python's threads
    // and every child process its one CPU).
    void pin_master() {
        if (master_pinned_) return;
        if (!pool_only_) pin(0);
        master_pinned_ = true;
    }

    void worker_main(Worker& w, unsigned num) {
        pin(num);
        unsigned pinned = plan_;   // the plan it is bound by
        ThreadState& st = thread_state();
        std::uint32_t seen = 0;
        for (;;) {
            const std::uint64_t spin = spin_;   // the last region's: an idle worker's guess at the next
            for (std::uint64_t i = 0; w.go.load(std::memory_order_acquire) == seen; ++i) {
                if (i < spin) {
#if defined(__x86_64__) || defined(__i386__)
                    __builtin_ia32_pause();
#endif
                } else if (spin == 0 && i < yields_before_sleep && yield_or_sleep_instead()) {
                    // yielded: look again
                } else {
                    w.sleeping.store(true, std::memory_order_seq_cst);
                    if (w.go.load(std::memory_order_seq_cst) == seen) futex_wait(w.go, seen);
                    w.sleeping.store(false, std::memory_order_relaxed);
                }
            }
            seen = w.go.load(std::memory_order_acquire);
            if (w.stop.load(std::memory_order_relaxed)) {
                w.done.store(true, std::memory_order_release);
                return;
            }
            if (pinned != plan_) {   // a new plan since (written before `go`)
                pin(num);
                pinned = plan_;
            }
            st.nthreads_var = w.nthreads_var;
            st.run_sched_set = w.run_sched_set;
            st.run_sched = w.run_sched;
            Team& team = *w.team;
            member_enter(team, num, st);
            team.fn(team.data);
            member_leave(st);
        }
    }

    std::atomic<std::uint64_t> spin_{0};
    bool busy_ = false;
    const unsigned level_;   // the active level of the regions it runs (0: the outermost)
    Team team_;   // its regions' team, reused region after region
    Placement placement_;
    unsigned plan_ = 0;   // placement_'s version: a worker bound by an older one binds again
    unsigned planned_for_ = 0;
    int planned_from_ = -1;              // nested pools: the master's place the plan counts from
    Bind planned_bind_ = settings().bind;   // the policy the plan follows
    bool pool_only_ = false;                 // the plan pins the pool threads only (pin_master)
    // A nested region's master: the task runtime seat it set aside
    // (tasking.hpp), taken back at the region's end.
    SeatAside aside_;
    bool master_pinned_ = false;
    std::vector<std::unique_ptr<Worker>> workers_;
};

}  // namespace

Team::Team() = default;
Team::~Team() = default;

void Team::leave_runtimes(std::vector<std::unique_ptr<tasks::Runtime>>& left) {
    for (auto& [threads, rt] : runtimes) left.push_back(std::move(rt));
    runtimes.clear();
    runtime.store(nullptr, std::memory_order_relaxed);
    attach(nullptr);
}

bool pause_pool() {
    if (thread_state().active_level > 0) return false;
    return Pool::pause_calling_threads();
}

namespace {

// The task runtimes that fork()'s children left alone (Team::leave_runtimes):
// reachable from here, so that a leak checker does not count them.
std::vector<std::unique_ptr<tasks::Runtime>>* g_left_by_fork = nullptr;

// pthread_atfork's child handler. libgomp has none, and a child that
// starts a parallel region after its parent ran one waits for the
// parent's pool threads for ever (Python's multiprocessing with fork,
// a server that forks its workers); LLVM's libomp starts afresh. So does
// the shim, when the thread that forked was outside every parallel region:
// its pools and its own team drop the threads and runtimes that stayed in
// the parent. Forked from inside a region, the child is left as it is: the
// region's other threads are not there to finish it (docs/OPENMP.md).
void after_fork_in_child() {
    ThreadState& st = thread_state();
    if (st.level > 0) return;
    if (g_left_by_fork == nullptr) g_left_by_fork = new std::vector<std::unique_ptr<tasks::Runtime>>;
    (void)set_seat_aside();   // the seat was in a runtime that is left
    Pool::forget_calling_threads_after_fork(*g_left_by_fork);
    st.team->leave_runtimes(*g_left_by_fork);
    forget_report_after_fork();
}

}  // namespace

TeamLayout task_layout(unsigned threads, const std::vector<std::vector<unsigned>>& cpus) {
    const Machine& m = machine();
    Placement p;
    if (cpus.empty()) p = plan_places(m, threads, settings().bind, settings().places);
    else p.cpus = cpus;
    p.cpus.resize(threads);
    // Threads without a place: contiguous over the allowed CPUs, cyclically.
    const TeamLayout fallback =
        plan_team(m, allowed_mapping(m, std::min({threads, available_cpus(), static_cast<unsigned>(m.cpu_count())}),
                                     MappingKind::contiguous));
    TeamLayout layout;
    for (unsigned t = 0; t < threads; ++t) {
        const unsigned cpu = !p.cpus[t].empty() ? p.cpus[t].front() : fallback.ranks[t % fallback.size()].cpu;
        layout.ranks.push_back(RankPlace{t, cpu, m.node_of_cpu(cpu)});
    }
    return layout;
}

// The team's view of where it is nested, from the encountering thread.
void set_parent(Team& team, const ThreadState& encountering) {
    set_if_changed(team.parent_level, encountering.level);
    set_if_changed(team.parent_active_level, encountering.active_level);
    set_if_changed(team.parent_ancestors, encountering.ancestors);
    set_if_changed(team.parent_sizes, encountering.sizes);
    set_if_changed(team.parent_league_size, encountering.league_size);
    set_if_changed(team.parent_league_num, encountering.league_num);
    set_if_changed(team.parent_thread_limit, encountering.thread_limit);
}

namespace {

// Each thread's states outside the regions it is in, innermost last, and
// the teams of its serialised regions.
thread_local std::vector<ThreadState> t_outer;
thread_local std::vector<std::unique_ptr<Team>> t_solo_teams;

}  // namespace

// A thread joins a region: its state for the region, the outer one kept.
void member_enter(Team& team, unsigned num, ThreadState& st) {
    t_outer.push_back(st);
    // The spare child references of the task that encountered the region
    // stay in the saved state (tasking.cpp): the region starts with none,
    // so that its own tasks neither use nor give back the outer task's.
    st.spare_task = nullptr;
    st.spare_refs = 0;
    st.team = &team;
    st.num = num;
    st.level = team.parent_level + 1;
    st.active_level = team.parent_active_level + (team.size > 1 ? 1 : 0);
    st.group = team.group;
    // The ICVs of the implicit tasks at this level: OMP_NUM_THREADS' and
    // OMP_PROC_BIND's lists name them (element `level`); else nthreads-var
    // is the encountering thread's and bind-var the region's policy.
    const Settings& s = settings();
    if (st.level <= s.nested_threads.size()) st.nthreads_var = s.nested_threads[st.level - 1];
    st.bind_var = st.level <= s.nested_binds.size() ? s.nested_binds[st.level - 1] : team.bind;
    st.bind_var_set = true;
    st.ancestors = team.parent_ancestors;
    st.ancestors.push_back(num);
    st.sizes = team.parent_sizes;
    st.sizes.push_back(team.size);
    st.league_size = team.parent_league_size;
    st.league_num = team.parent_league_num;
    st.thread_limit = team.parent_thread_limit;
    st.cursor = WorkShareCursor{};
    st.current = st.implicit = nullptr;   // a new implicit task
    if (team.loop_prestarted) {
        // A combined parallel loop: its loop is construct 0, set up already.
        st.cursor.entered = 1;
        st.cursor.current = &team.workshares.slot(0);
        st.cursor.current_g = 0;
    }
    display_affinity_on_entry();
}

// The region's closing barrier, then the thread's outer state back. A
// cancelled region's threads leave its barrier at different generations, or
// without arriving: they meet once more, at the closing barrier, which is
// never cancelled.
void member_leave(ThreadState& st) {
    if (st.team->barrier.wait()) st.team->closing.wait();
    leave_region(st);
    st = std::move(t_outer.back());
    t_outer.pop_back();
}

constinit thread_local ThreadState* t_thread_state __attribute__((tls_model("initial-exec"))) = nullptr;

ThreadState& make_thread_state() {
    thread_local Team solo;
    thread_local ThreadState st = [] {
        ThreadState s;
        s.team = &solo;
        return s;
    }();
    t_thread_state = &st;
    return st;
}

namespace {
std::atomic<long> g_max_active_levels{-1};   // -1: the environment's
}  // namespace

unsigned max_active_levels() {
    const long set = g_max_active_levels.load(std::memory_order_relaxed);
    return set >= 0 ? static_cast<unsigned>(set) : settings().max_active_levels;
}

void set_max_active_levels(unsigned levels) { g_max_active_levels.store(levels, std::memory_order_relaxed); }

namespace {
std::atomic<bool> g_binding_refused{false};
}  // namespace

bool binding_refused() { return g_binding_refused.load(std::memory_order_relaxed); }

void refuse_binding(int err) {
    if (g_binding_refused.exchange(true)) return;
    std::fprintf(stderr,
                 "numaware-omp: the system does not let threads be bound to CPUs (sched_setaffinity: %s); OpenMP "
                 "threads run unbound (set OMP_PROC_BIND=false to say so, or OMP_PROC_BIND/OMP_PLACES to require "
                 "binding)\n",
                 std::strerror(err));
}

Bind bind_var(const ThreadState& st) {
    if (binding_refused()) return Bind::false_;
    return st.bind_var_set ? st.bind_var : settings().bind;
}

ContentionGroup& group_of(ThreadState& st) {
    if (st.group != nullptr) return *st.group;
    thread_local ContentionGroup own;   // the calling thread's, as an initial thread
    return own;
}

Schedule run_schedule() {
    const ThreadState& st = thread_state();
    return st.run_sched_set ? st.run_sched : settings().schedule;
}

unsigned available_cpus() {
    return static_cast<unsigned>(initial_cpus().empty() ? machine().cpu_count() : initial_cpus().size());
}

unsigned thread_limit() {
    const ThreadState& st = thread_state();
    return st.thread_limit ? st.thread_limit : settings().thread_limit;
}

namespace {
std::atomic<unsigned> g_nteams{0};                // 0: OMP_NUM_TEAMS's
std::atomic<unsigned> g_teams_thread_limit{0};    // 0: OMP_TEAMS_THREAD_LIMIT's
}  // namespace

unsigned nteams_var() {
    if (const unsigned set = g_nteams.load(std::memory_order_relaxed)) return set;
    return settings().num_teams;
}

namespace {
// The teams a teams construct makes while nteams-var is 0 (the standard
// leaves the number to the implementation): one per node the process may
// run on.
unsigned teams_by_default() {
    const std::vector<unsigned>& allowed = initial_cpus();
    unsigned nodes = 0;
    for (const Node& n : machine().nodes) {
        const bool usable = allowed.empty() ? !n.cpus.empty()
                                            : std::any_of(n.cpus.begin(), n.cpus.end(), [&](unsigned c) {
                                                  return std::binary_search(allowed.begin(), allowed.end(), c);
                                              });
        nodes += usable ? 1 : 0;
    }
    return std::max(nodes, 1u);
}
}  // namespace

void set_nteams_var(unsigned teams) { g_nteams.store(teams, std::memory_order_relaxed); }
unsigned teams_thread_limit_var() {
    const unsigned set = g_teams_thread_limit.load(std::memory_order_relaxed);
    return set ? set : settings().teams_thread_limit;
}
void set_teams_thread_limit_var(unsigned limit) { g_teams_thread_limit.store(limit, std::memory_order_relaxed); }

void run_teams(void (*fn)(void*), void* data, unsigned num_teams, unsigned limit) {
    ThreadState& st = thread_state();
    const unsigned set = nteams_var();
    const unsigned teams = num_teams ? num_teams : set ? set : teams_by_default();
    if (limit == 0) limit = teams_thread_limit_var();
    const unsigned outer_size = st.league_size, outer_num = st.league_num, outer_limit = st.thread_limit;
    st.league_size = teams;
    if (limit) st.thread_limit = limit;
    for (unsigned t = 0; t < teams; ++t) {
        st.league_num = t;
        fn(data);
    }
    st.league_size = outer_size;
    st.league_num = outer_num;
    st.thread_limit = outer_limit;
}

unsigned nthreads_var() {
    ThreadState& st = thread_state();
    if (st.level == 0 && st.nthreads_in_libgomp)
        if (const int v = libgomp_max_threads(); v > 0) st.nthreads_var = static_cast<unsigned>(v);
    if (st.nthreads_var) return st.nthreads_var;
    return settings().num_threads ? settings().num_threads : available_cpus();
}

void set_nthreads_var(unsigned n) {
    ThreadState& st = thread_state();
    st.nthreads_var = n;
    if (st.level == 0 && st.nthreads_in_libgomp) libgomp_set_num_threads(static_cast<int>(n));
}

unsigned team_size_for(unsigned requested) {
    const ThreadState& st = thread_state();
    // Beyond max-active-levels-var a region is inactive (one thread);
    // OMP_MAX_ACTIVE_LEVELS=0 serialises them all.
    if (st.active_level >= max_active_levels() || st.serial_regions) return 1;
    unsigned n = requested ? requested : nthreads_var();
    if (dyn_var()) {
        double load[3];
        n = std::min(n, dynamic_threads(available_cpus(), nthreads_var(), getloadavg(load, 3) == 3 ? load[2] : -1.0));
    }
    if (const unsigned limit = thread_limit()) n = std::min(n, limit);
    return std::max(n, 1u);
}

void parallel_begin(void (*fn)(void*), void* data, unsigned requested, void (*before_fork)(Team&, void*),
                    void* before_arg, unsigned proc_bind) {
    ThreadState& st = thread_state();
    // The region's binding policy and its implicit tasks' bind-var.
    const Bind encountering = bind_var(st);
    const bool clause = proc_bind >= static_cast<unsigned>(Bind::primary) &&
                        proc_bind <= static_cast<unsigned>(Bind::spread) && encountering != Bind::false_;
    Fork fork;
    fork.bind = clause ? static_cast<Bind>(proc_bind) : encountering;
    fork.group = &group_of(st);
    // Read once, also under a num_threads clause: where libgomp holds the
    // ICV this brings its value into the state the implicit tasks inherit.
    const unsigned icv = nthreads_var();
    unsigned n = team_size_for(requested ? requested : icv);
    if (n > 1) {
        // thread-limit-var bounds the contention group's threads in use:
        // the team gets those still free (libgomp's rule).
        // Without a limit (the group's for its whole life: OMP_THREAD_LIMIT
        // or a teams construct's clause) nobody reads the count, and it is
        // not kept: a locked instruction per region.
        if (const unsigned limit = thread_limit(); limit != 0) {
            std::atomic<unsigned>& used = fork.group->threads;
            unsigned now = used.load(std::memory_order_relaxed), more;
            do {
                more = std::min(n - 1, limit > now ? limit - now : 0u);
            } while (!used.compare_exchange_weak(now, now + more, std::memory_order_acq_rel, std::memory_order_relaxed));
            fork.reserved = more;
            n = more + 1;
        }
    }
    if (n == 1) {
        // A serialised region: a team of one on this thread.
        t_solo_teams.push_back(std::make_unique<Team>());
        Team& team = *t_solo_teams.back();
        team.start(1);
        team.fn = fn;
        team.data = data;
        set_parent(team, st);
        fork.apply(team);
        if (before_fork) before_fork(team, before_arg);
        member_enter(team, 0, st);
        return;
    }
    Pool::of_calling_thread(st.active_level).begin(fn, data, n, before_fork, before_arg, st, fork);
}

void parallel_end() {
    ThreadState& st = thread_state();
    if (st.team->size == 1) {
        Team* solo = st.team;
        member_leave(st);
        if (!t_solo_teams.empty() && t_solo_teams.back().get() == solo) t_solo_teams.pop_back();
        return;
    }
    Pool::of_calling_thread(st.active_level - 1).end(st);
}

void parallel(void (*fn)(void*), void* data, unsigned requested, void (*before_fork)(Team&, void*), void* before_arg,
              unsigned proc_bind) {
    parallel_begin(fn, data, requested, before_fork, before_arg, proc_bind);
    fn(data);
    parallel_end();
}

}  // namespace numaware::omp
