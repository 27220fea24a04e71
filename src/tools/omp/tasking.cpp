// tools/omp/tasking.cpp — explicit tasks on a hosted numaware runtime
// (tasking.hpp).
#include "tools/omp/tasking.hpp"

#include <alloca.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "numaware/error.hpp"
#include "numaware/observer.hpp"
#include "numaware/task_policy.hpp"
#include "numaware/tasks.hpp"
#include "tools/omp/depend.hpp"
#include "tools/omp/task_reduction.hpp"

namespace numaware::omp {

struct FreeRecord {
    FreeRecord* next;
};
// The owner's lists and the stacks that other threads push onto are on
// lines of their own: with both on one line, every record freed by another
// thread took the line from the owner, whose next creation waited for it
// (perf: 70% of new_task_record's samples on the load of `local`).
struct alignas(64) RecordCache {
    static constexpr std::size_t classes = 4;
    FreeRecord* local[classes] = {};
    alignas(64) std::atomic<FreeRecord*> returned[classes] = {};
};

namespace {

// The runtime the calling thread has a seat in, if any.
thread_local tasks::Runtime* t_seat = nullptr;

// Records come from the creating thread's cache and go back to it when
// they are freed, by whichever thread that is: onto the cache's shared
// stack (a compare-and-swap), which the owner takes whole when its own list
// runs dry. In steady state no task calls malloc (cross-thread frees into
// malloc's arenas contended on the arena lock: a third of a task's time).
// Caches are never freed: a record may come home after its thread ended.
constexpr std::size_t record_quantum = 128;   // cached sizes: 1 to 4 quanta
constexpr std::size_t cached_classes = RecordCache::classes;
thread_local RecordCache* t_records = nullptr;

OmpTask* new_task_record(long arg_size, long arg_align) {
    const std::size_t align = arg_align > 0 ? static_cast<std::size_t>(arg_align) : 1;
    std::size_t bytes = sizeof(OmpTask) + align + static_cast<std::size_t>(arg_size > 0 ? arg_size : 0);
    const std::size_t cls = (bytes + record_quantum - 1) / record_quantum;
    void* mem = nullptr;
    RecordCache* cache = nullptr;
    if (cls <= cached_classes) {
        if (t_records == nullptr) t_records = new RecordCache;
        cache = t_records;
        bytes = cls * record_quantum;
        FreeRecord*& head = cache->local[cls - 1];
        if (head == nullptr) head = cache->returned[cls - 1].exchange(nullptr, std::memory_order_acquire);
        if (head != nullptr) {
            mem = head;
            head = head->next;
            // The next record's first two lines (a record is at least
            // 128 bytes), asked for now and for writing: a record comes
            // back written by the thread that freed it, so reading its link
            // and writing its fields at the next creation would each wait
            // for that thread's cache.
            if (head != nullptr) {
                __builtin_prefetch(head, 1);
                __builtin_prefetch(reinterpret_cast<char*>(head) + 64, 1);
            }
        }
    }
    // 64-byte aligned, whole lines (OmpTask's layout); freed by std::free.
    if (mem == nullptr) mem = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (mem == nullptr) fatal(fmt::format("out of memory for an explicit task ({} bytes)", bytes));
    auto* t = ::new (mem) OmpTask;
    t->bytes = static_cast<std::uint32_t>(bytes);
    t->home = cache;
    auto tail = reinterpret_cast<std::uintptr_t>(t + 1);
    tail = (tail + align - 1) / align * align;
    t->arg = reinterpret_cast<void*>(tail);
    return t;
}

void destroy(OmpTask* t) noexcept {
    if (t->scope != 0) t->rt->close_scope(t->scope);
    if (!t->on_heap) return;
    RecordCache* home = t->home;
    const std::size_t cls = t->bytes / record_quantum;
    t->~OmpTask();
    if (home == nullptr) {
        std::free(t);
        return;
    }
    auto* f = reinterpret_cast<FreeRecord*>(t);
    if (home == t_records) {
        f->next = home->local[cls - 1];
        home->local[cls - 1] = f;
        return;
    }
    std::atomic<FreeRecord*>& stack = home->returned[cls - 1];
    f->next = stack.load(std::memory_order_relaxed);
    while (!stack.compare_exchange_weak(f->next, f, std::memory_order_release, std::memory_order_relaxed)) {
    }
}

// Children's references are taken this many at a time (ThreadState::spare_refs).
constexpr std::uint32_t ref_batch = 64;

// The spare references of st's thread go back to their task. Its body is
// running on this thread (or suspended lower on its stack) and holds its
// own reference, so this never frees the record; and no other thread waits
// for its children.
void return_spare_refs(ThreadState& st) noexcept {
    if (st.spare_refs != 0) st.spare_task->refs.fetch_sub(st.spare_refs, std::memory_order_acq_rel);
    st.spare_task = nullptr;
    st.spare_refs = 0;
}

// The same for t only: before t's thread waits for t's children
// (refs == 1) and when t's body ends.
void return_spare_refs(ThreadState& st, OmpTask& t) noexcept {
    if (st.spare_task == &t) return_spare_refs(st);
}

// A child of `parent` (whose body runs on st's thread) is being created:
// one reference for it, from the spares.
void count_child(ThreadState& st, OmpTask& parent) noexcept {
    if (st.spare_task != &parent || st.spare_refs == 0) {
        return_spare_refs(st);   // another task's: one suspended below this one
        parent.refs.fetch_add(ref_batch, std::memory_order_relaxed);
        st.spare_task = &parent;
        st.spare_refs = ref_batch;
    }
    --st.spare_refs;
}

// One reference fewer; the last one frees the record (its body and its
// children's have all finished, so its scope is closed) and drops the
// parent's. `rt` is woken when a parent is left with its own reference
// alone: a taskwait's condition.
void release(OmpTask* t, tasks::Runtime* rt) noexcept {
    while (t != nullptr) {
        const std::uint32_t before = t->refs.fetch_sub(1, std::memory_order_acq_rel);
        if (before == 2 && rt != nullptr) rt->wake();
        if (before != 1) return;
        OmpTask* parent = t->parent;
        destroy(t);
        t = parent;
    }
}

// A task's body has finished: its taskgroup and its parent count it done.
void finished(OmpTask* t, tasks::Runtime& rt) noexcept {
    if (TaskGroup* g = t->taskgroup; g != nullptr && g->pending.fetch_sub(1, std::memory_order_acq_rel) == 1)
        rt.wake();
    release(t, &rt);
}

}  // namespace

// The detach clause's event (omp_event_handle_t points at one). A deferred
// task completes at the later of its body's end and omp_fulfill_event:
// for the runtime (its successors, barriers: Runtime::detach/fulfill) and
// for the shim's own count (its parent's taskwait, its taskgroup), each
// with a count of two. The runtime's token exists once the body starts;
// a fulfilment before that is passed on when it does.
struct DetachEvent {
    static constexpr std::uint32_t live = 0x6e776576;   // "nwev"
    static constexpr std::uint32_t token_set = 1, fulfilled = 2;
    std::atomic<std::uint32_t> magic{live};
    OmpTask* task = nullptr;            // null: an undeferred task, waiting for `fulfilled` on its thread
    tasks::Runtime* rt = nullptr;
    std::uintptr_t token = 0;
    std::atomic<std::uint32_t> state{0};
    std::atomic<std::uint32_t> pending{2};   // the body's end and the fulfilment
};

namespace {

// The shim's side of a detached task's completion, once both have happened.
void detached_done(DetachEvent* ev) noexcept {
    if (ev->pending.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    OmpTask* t = ev->task;
    tasks::Runtime& rt = *ev->rt;
    ev->magic.store(0, std::memory_order_relaxed);
    delete ev;
    t->event = nullptr;
    finished(t, rt);
}

// The body of a deferred task, on whichever thread runs it. noexcept: an
// exception leaving an OpenMP task ends the program, as with libgomp.
void run_deferred(OmpTask* t) noexcept {
    ThreadState& st = thread_state();
    tasks::Runtime& rt = *t->rt;
    if (DetachEvent* ev = t->event) {
        ev->token = rt.detach();
        if (ev->state.fetch_or(DetachEvent::token_set, std::memory_order_acq_rel) & DetachEvent::fulfilled)
            rt.fulfill(ev->token);
    }
    // A task of a cancelled region or taskgroup that has not started is
    // discarded (its body does not run; it completes at once). A detached
    // task runs: its event is the program's to fulfil.
    const bool discard = settings().cancellation && t->event == nullptr && task_cancelled(*st.team, t->taskgroup);
    OmpTask* const outer = st.current;
    st.current = t;
    if (!discard) [[likely]]
        t->fn(t->arg);
    st.current = outer;
    return_spare_refs(st, *t);
    if (DetachEvent* ev = t->event) {
        detached_done(ev);
        return;
    }
    finished(t, rt);
}

bool event_fulfilled(void* p) {
    return (static_cast<DetachEvent*>(p)->state.load(std::memory_order_acquire) & DetachEvent::fulfilled) != 0;
}

bool flag_set(void* p) { return static_cast<std::atomic<bool>*>(p)->load(std::memory_order_acquire); }
bool no_children(void* p) { return static_cast<OmpTask*>(p)->refs.load(std::memory_order_acquire) == 1; }
bool group_done(void* p) { return static_cast<TaskGroup*>(p)->pending.load(std::memory_order_acquire) == 0; }

// The dependency scope of `parent`'s children, opened at the first one.
std::uint16_t child_scope(OmpTask& parent, tasks::Runtime& rt) {
    if (parent.scope == 0) {
        try {
            parent.scope = rt.open_scope();
        } catch (const Error& e) {
            fatal(fmt::format("explicit tasks: {}", e.what()));
        }
        parent.rt = &rt;
    }
    return parent.scope;
}

// Waits until the sibling tasks that `deps` depend on have finished: an
// empty task with the same dependencies runs after them.
void wait_for_predecessors(tasks::Runtime& rt, const DependList& deps) {
    std::atomic<bool> flag{false};
    std::atomic<bool>* f = &flag;
    tasks::Runtime* r = &rt;
    try {
        // Nothing of this frame is touched after the flag is set: the
        // waiter may return at once.
        rt.spawn(
            [f, r] {
                f->store(true, std::memory_order_release);
                r->wake();
            },
            deps.span());
    } catch (const Error& e) {
        fatal(fmt::format("explicit tasks: depend: {}", e.what()));
    }
    rt.run_until(flag_set, f);
}

// A team of one runs its tasks at once, without a runtime, until a task
// with the detach clause needs one (create_task); from then on every task
// of the team goes through it, in dependence order with the detached one.
tasks::Runtime* runtime_of(Team& team) {
    return team.size > 1 || team.runtime.load(std::memory_order_acquire) != nullptr ? &team_runtime(team) : nullptr;
}

// NUMAWARE_REPORT: every runtime made, with its trace (never freed: the
// report is written at exit).
struct Reported {
    unsigned threads;
    tasks::Runtime* rt;
    tasks::ChromeTrace* trace;
};
std::mutex g_report_mutex;
std::vector<Reported>* g_reported = nullptr;
// Tasks the throttle ran at once: in no runtime's report, so counted here,
// and only when a report is asked for (g_reported set): a shared counter
// on the path of every throttled task would tie the producing threads'
// cores together for nothing.
std::atomic<std::uint64_t> g_run_at_once{0};
// Its own copy of the path: static objects (the settings) may be gone when
// the exit handler runs.
const std::string* g_report_path = nullptr;

void write_report() {
    if (g_report_path == nullptr) return;   // a fork()'s child (forget_report_after_fork)
    const std::string& path = *g_report_path;
    std::lock_guard g(g_report_mutex);
    std::string runtimes;
    const std::size_t count = g_reported->size();
    for (std::size_t i = 0; i < count; ++i) {
        const Reported& r = (*g_reported)[i];
        const std::string trace = trace_path(path, i, count);
        try {
            r.trace->write(trace);
        } catch (const Error& e) {
            fatal(fmt::format("NUMAWARE_REPORT: cannot write the trace '{}': {}", trace, e.what()));
        }
        runtimes += fmt::format("{}{{\"threads\": {}, \"trace\": {}, \"report\": {}}}", i == 0 ? "" : ", ",
                                r.threads, nlohmann::json(trace).dump(), r.rt->report().to_json());
    }
    const std::string text = fmt::format("{{\"runtimes\": [{}], \"tasks_run_at_once\": {}}}\n", runtimes,
                                         g_run_at_once.load(std::memory_order_relaxed));
    std::FILE* f = std::fopen(path.c_str(), "w");
    const bool ok = f != nullptr && std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (f != nullptr && std::fclose(f) != 0) fatal(fmt::format("NUMAWARE_REPORT: cannot write '{}'", path));
    if (!ok) fatal(fmt::format("NUMAWARE_REPORT: cannot write '{}': {}", path, std::strerror(errno)));
}

}  // namespace

std::string trace_path(const std::string& report, std::size_t index, std::size_t count) {
    std::string base = report;
    if (base.size() > 5 && base.compare(base.size() - 5, 5, ".json") == 0) base.resize(base.size() - 5);
    return count > 1 ? fmt::format("{}.trace.{}.json", base, index) : base + ".trace.json";
}

void prepare_report() {
    const std::string& path = settings().report_path;
    if (path.empty()) return;
    // Fail at start, not after the run, when the file cannot be written.
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) fatal(fmt::format("NUMAWARE_REPORT: cannot write '{}': {}", path, std::strerror(errno)));
    std::fclose(f);
    g_report_path = new std::string(path);
    g_reported = new std::vector<Reported>;
    std::atexit(write_report);
}

// No lock: the child has one thread, and the lock may have been held by
// one of the parent's others when it forked.
void forget_report_after_fork() { g_report_path = nullptr; }

OmpTask& current_task() { return current_task(thread_state()); }

OmpTask& current_task(ThreadState& st) {
    if (st.current != nullptr) return *st.current;
    // The implicit task of this thread in this region.
    OmpTask* t = new_task_record(0, 1);
    t->taskgroup = st.team->initial_taskgroup;
    st.implicit = st.current = t;
    return *t;
}

void take_seat(tasks::Runtime& rt, unsigned num) {
    if (t_seat == &rt) return;
    try {
        if (t_seat != nullptr) t_seat->unhost();
        t_seat = nullptr;
        rt.host(num);
    } catch (const Error& e) {
        fatal(fmt::format("explicit tasks: thread {}: {}", num, e.what()));
    }
    t_seat = &rt;
}

tasks::Runtime& team_runtime(Team& team) {
    tasks::Runtime* rt = team.runtime.load(std::memory_order_acquire);
    if (rt == nullptr) {
        std::lock_guard g(team.runtime_mutex);
        rt = team.runtime.load(std::memory_order_relaxed);
        if (rt == nullptr) {
            std::unique_ptr<tasks::Runtime>& kept = team.runtimes[team.size];
            if (!kept) {
                try {
                    tasks::PolicyOptions options;
                    options.window = settings().rip_window;
                    tasks::RuntimeOptions run_options;
                    tasks::ChromeTrace* trace = nullptr;
                    if (g_reported != nullptr) run_options.observer = trace = new tasks::ChromeTrace;
                    kept = std::make_unique<tasks::Runtime>(team_machine(), task_layout(team.size, team.thread_cpus),
                                                            tasks::make_policy(settings().policy, options),
                                                            run_options);
                    if (trace != nullptr) {
                        std::lock_guard r(g_report_mutex);
                        g_reported->push_back(Reported{team.size, kept.get(), trace});
                    }
                } catch (const Error& e) {
                    fatal(fmt::format("explicit tasks: cannot start the task runtime: {}", e.what()));
                }
            }
            rt = kept.get();
            team.attach(rt);
            team.runtime.store(rt, std::memory_order_release);
        }
    }
    // Every task but a thread's first finds its seat taken already (and
    // needs no thread_state()).
    if (t_seat != rt) take_seat(*rt, thread_state().num);
    return *rt;
}

SeatAside set_seat_aside() {
    SeatAside a{t_seat, tasks::Runtime::set_seat_aside()};
    t_seat = nullptr;
    return a;
}

void restore_seat(const SeatAside& aside) {
    if (!aside.runtime_state) return;
    try {
        if (t_seat != nullptr) t_seat->unhost();
        tasks::Runtime::restore_seat(aside.runtime_state);
    } catch (const Error& e) {
        fatal(fmt::format("nested parallel region: {}", e.what()));
    }
    t_seat = aside.seat;
}

void leave_region(ThreadState& st) {
    if (OmpTask* t = st.implicit) {
        // After the closing barrier every child has finished; a child of an
        // undeferred task may still be dropping its reference.
        st.implicit = st.current = nullptr;
        return_spare_refs(st, *t);
        release(t, nullptr);
    }
    if (t_seat != nullptr && t_seat == st.team->runtime.load(std::memory_order_relaxed)) {
        t_seat->unhost();
        t_seat = nullptr;
    }
}

namespace {

// The task throttle. A thread that creates tasks faster than the team runs
// them would queue them all: a loop of 10^7 empty tasks in one `single`
// held about 1 GB and took 4.7 s (libgomp: 2 MB, 0.34 s). Beyond
// NUMAWARE_TASK_THROTTLE unfinished tasks per thread of the team (default
// 64, libgomp's figure: task.c runs a task at once when more than 64 per
// thread are queued), a new task without `depend` runs at once on its
// creating thread, which the standard allows for any task. Tasks with
// `depend` are always queued: their data is what the locality policies
// place; the creating thread runs some ready ones first instead
// (create_task_depending). The count
// (Runtime::unfinished) reads every worker's line, so a thread reads it
// once every throttle_check_every tasks it creates, and keeps the answer
// in between.
constexpr unsigned throttle_check_every = 16;
// Ready tasks that a thread over the throttle runs before it queues a task
// with `depend`.
constexpr std::size_t throttle_help_tasks = 16;

bool over_throttle(ThreadState& st, const tasks::Runtime& rt) {
    if (st.throttle_rt == &rt && st.throttle_countdown != 0) {   // set only when the throttle is on
        --st.throttle_countdown;
        return st.throttled;
    }
    const unsigned per_thread = settings().task_throttle;
    if (per_thread == 0) return false;
    st.throttle_rt = &rt;
    st.throttle_countdown = throttle_check_every - 1;
    st.throttled = rt.unfinished() > std::uint64_t{per_thread} * rt.workers();
    return st.throttled;
}

// A task's creation once its runtime (null: none, it runs at once) and its
// dependences (null: none named) are known.
void create_task_with(ThreadState& st, OmpTask& parent, tasks::Runtime* rt, const TaskArgs& a,
                      void (*adjust)(void*, void*), void* ctx, const DependList* deps) {
    const bool all_memory = deps != nullptr && deps->all_memory();

    const bool throttled = rt != nullptr && !a.undeferred && a.depend == nullptr && a.detach == nullptr &&
                           over_throttle(st, *rt);
    if (throttled && g_reported != nullptr) g_run_at_once.fetch_add(1, std::memory_order_relaxed);
    if (rt == nullptr || a.undeferred || throttled || all_memory) {
        // Undeferred (or throttled): after its predecessors, at once, on this thread.
        if (rt != nullptr) {
            if (all_memory) {
                OmpTask* p = &parent;
                return_spare_refs(st, parent);
                rt->run_until(no_children, p);
            } else if (deps != nullptr && !deps->empty()) {
                wait_for_predecessors(*rt, *deps);
            }
        }
        alignas(64) OmpTask t;   // the records' alignment (OmpTask's layout)
        t.on_heap = false;
        t.parent = nullptr;   // not counted: it finishes before the parent goes on
        t.taskgroup = parent.taskgroup;
        t.final = parent.final || a.final;
        t.rt = rt;
        void* arg = a.data;
        if (a.cpyfn != nullptr || adjust != nullptr) {
            const std::size_t align = a.arg_align > 0 ? static_cast<std::size_t>(a.arg_align) : 1;
            auto raw = reinterpret_cast<std::uintptr_t>(alloca(static_cast<std::size_t>(a.arg_size) + align));
            arg = reinterpret_cast<void*>((raw + align - 1) / align * align);
            if (a.cpyfn != nullptr) a.cpyfn(arg, a.data);
            else std::memcpy(arg, a.data, static_cast<std::size_t>(a.arg_size));
            if (adjust != nullptr) adjust(arg, ctx);
        }
        // The detach clause: the task completes once fulfilled, and an
        // undeferred task's encountering thread waits for that.
        DetachEvent* ev = nullptr;
        if (a.detach != nullptr) {
            ev = new DetachEvent;
            ev->rt = rt;
            // Released: a thread that watches the handle variable sees the event made.
            __atomic_store_n(static_cast<void**>(a.detach), static_cast<void*>(ev), __ATOMIC_RELEASE);
        }
        OmpTask* const outer = st.current;
        st.current = &t;
        a.fn(arg);
        st.current = outer;
        return_spare_refs(st, t);
        if (ev != nullptr) {
            // Without sleeping: the fulfiller touches nothing after the flag
            // (this region may end and its runtime go at once).
            if (rt != nullptr) rt->run_until(event_fulfilled, ev, tasks::Runtime::Sleep::never);
            else
                while (!event_fulfilled(ev)) std::this_thread::yield();   // only another thread can fulfil it
            ev->magic.store(0, std::memory_order_relaxed);
            delete ev;
        }
        // Its record is on this stack: children it left deferred finish first.
        if (t.refs.load(std::memory_order_acquire) != 1 && rt != nullptr) rt->run_until(no_children, &t);
        if (t.scope != 0) t.rt->close_scope(t.scope);
        return;
    }

    OmpTask* t = new_task_record(a.arg_size, a.arg_align);
    t->parent = &parent;
    t->taskgroup = parent.taskgroup;
    t->final = a.final;
    t->rt = rt;
    t->fn = a.fn;
    if (a.cpyfn != nullptr) a.cpyfn(t->arg, a.data);
    else if (a.arg_size > 0) std::memcpy(t->arg, a.data, static_cast<std::size_t>(a.arg_size));
    if (adjust != nullptr) adjust(t->arg, ctx);
    count_child(st, parent);
    if (t->taskgroup != nullptr) t->taskgroup->pending.fetch_add(1, std::memory_order_relaxed);
    if (a.detach != nullptr) {   // after the copy, as libgomp writes it
        t->event = new DetachEvent;
        t->event->task = t;
        t->event->rt = rt;
        __atomic_store_n(static_cast<void**>(a.detach), static_cast<void*>(t->event), __ATOMIC_RELEASE);
    }
    try {
        rt->spawn([t] { run_deferred(t); }, deps != nullptr ? deps->span() : std::span<const tasks::Dep>{});
    } catch (const Error& e) {
        fatal(fmt::format("explicit tasks: {}", e.what()));
    }
}

// A task with a depend clause: its list is read here, out of the way of
// the many tasks that name none (the list's inline storage is 256 bytes).
[[gnu::noinline]] void create_task_depending(ThreadState& st, OmpTask& parent, tasks::Runtime& rt,
                                             const TaskArgs& a, void (*adjust)(void*, void*), void* ctx) {
    DependList deps;
    read_depend(a.depend, child_scope(parent, rt), deps);
    // Over the throttle a task with `depend` is queued all the same, but
    // the creating thread first runs some ready tasks that its policy lets
    // it take (Runtime::help; none under RIP), so the queue stays short.
    // Where the threads outnumber the CPUs, the thread that would run them
    // waits for this one's CPU anyway; where every thread creates tasks (a
    // `parallel for` whose iterations spawn with `depend`), nobody else
    // runs them before the barrier: 200,000 iterations of two tasks each
    // held 341 MB and took 1.1 s with 2 threads, against libgomp's 3 MB
    // and 0.1 s, before the creating thread helped there too.
    if (!a.undeferred && !deps.all_memory() && over_throttle(st, rt)) rt.help(throttle_help_tasks);
    create_task_with(st, parent, &rt, a, adjust, ctx, &deps);
}

}  // namespace

void create_task(const TaskArgs& a, void (*adjust)(void*, void*), void* ctx) {
    ThreadState& st = thread_state();
    OmpTask& parent = current_task(st);
    // In a cancelled region or taskgroup a new task is discarded at once,
    // as libgomp does: it is not made, and its dependences are not recorded.
    if (settings().cancellation && task_cancelled(*st.team, parent.taskgroup)) [[unlikely]]
        return;
    // A detached task is deferred even in a team of one: its thread goes on
    // and fulfils the event later (included and if(0) tasks wait for it).
    tasks::Runtime* rt = parent.final                            ? nullptr
                         : a.detach != nullptr && !a.undeferred ? &team_runtime(*st.team)
                                                                : runtime_of(*st.team);
    if (a.depend != nullptr && rt != nullptr) create_task_depending(st, parent, *rt, a, adjust, ctx);
    else create_task_with(st, parent, rt, a, adjust, ctx, nullptr);
}

void fulfill_event(void* event) {
    auto* ev = static_cast<DetachEvent*>(event);
    if (ev == nullptr || ev->magic.load(std::memory_order_relaxed) != DetachEvent::live)
        fatal(fmt::format("omp_fulfill_event: {} is not the event of a task with the detach clause, or was "
                          "fulfilled already",
                          event));
    // An undeferred task's thread waits for the flag and then frees the
    // event: nothing of it is read after the flag is set. A deferred task's
    // runtime completion comes last: it may end the last wait on the
    // runtime, after which nothing of the team may be touched.
    OmpTask* const task = ev->task;
    tasks::Runtime* const rt = ev->rt;
    const std::uint32_t before = ev->state.fetch_or(DetachEvent::fulfilled, std::memory_order_acq_rel);
    if (before & DetachEvent::fulfilled) fatal(fmt::format("omp_fulfill_event: event {} was fulfilled already", event));
    if (task == nullptr) return;
    const std::uintptr_t body_token = (before & DetachEvent::token_set) ? ev->token : 0;
    detached_done(ev);   // may free ev
    if (body_token != 0) rt->fulfill(body_token);
}

void wait_children() {
    ThreadState& st = thread_state();
    if (st.current == nullptr) return;   // an implicit task that made no task
    OmpTask& t = *st.current;
    return_spare_refs(st, t);
    if (t.refs.load(std::memory_order_acquire) == 1) return;
    tasks::Runtime& rt = team_runtime(*st.team);
    rt.run_until(no_children, &t);
}

void wait_depend(void** depend) {
    ThreadState& st = thread_state();
    // A team of one without a runtime: every earlier task has finished.
    if ((st.team->size <= 1 && st.team->runtime.load(std::memory_order_acquire) == nullptr) || depend == nullptr)
        return;
    OmpTask& parent = current_task();
    if (parent.final) return;                               // so have the included ones
    tasks::Runtime& rt = team_runtime(*st.team);
    DependList deps;
    read_depend(depend, child_scope(parent, rt), deps);
    if (deps.all_memory()) {
        return_spare_refs(st, parent);
        rt.run_until(no_children, &parent);
        return;
    }
    // The empty task only waits: it has finished before any later sibling
    // exists, so it orders nothing after it.
    if (!deps.empty()) wait_for_predecessors(rt, deps);
}

bool task_cancelled(const Team& team, const TaskGroup* g) {
    if (team.barrier.cancelled()) return true;
    for (; g != nullptr; g = g->outer)
        if (g->cancelled.load(std::memory_order_acquire)) return true;
    return false;
}

void cancel_taskgroup() {
    if (TaskGroup* g = current_task().taskgroup) g->cancelled.store(true, std::memory_order_release);
}

void taskgroup_begin() {
    OmpTask& t = current_task();
    auto* g = new TaskGroup;
    g->outer = t.taskgroup;
    if (g->outer != nullptr) g->reductions = g->outer->reductions;
    t.taskgroup = g;
}

void taskgroup_end() {
    ThreadState& st = thread_state();
    OmpTask& t = current_task();
    TaskGroup* g = t.taskgroup;
    if (g == nullptr) fatal("GOMP_taskgroup_end: no taskgroup is open in this task");
    if (g->pending.load(std::memory_order_acquire) != 0) team_runtime(*st.team).run_until(group_done, g);
    t.taskgroup = g->outer;
    delete g;
}

void register_group_reductions(const char* entry, std::uintptr_t* data, const std::uintptr_t* orig) {
    ThreadState& st = thread_state();
    TaskGroup* g = current_task().taskgroup;
    if (g == nullptr) fatal(fmt::format("{}: no taskgroup is open in this task", entry));
    try {
        register_task_reductions(data, g->reductions, orig, st.team->size);
    } catch (const Error& e) {
        fatal(fmt::format("{}: {}", entry, e.what()));
    }
    g->reductions = data;
}

void remap_group_reductions(std::size_t cnt, std::size_t cntorig, void** ptrs) {
    ThreadState& st = thread_state();
    const TaskGroup* g = current_task().taskgroup;
    try {
        remap_task_reductions(g != nullptr ? g->reductions : nullptr, st.num, cnt, cntorig, ptrs);
    } catch (const Error& e) {
        fatal(fmt::format("GOMP_task_reduction_remap: {}", e.what()));
    }
}

void end_workshare_reductions(bool cancelled) {
    ThreadState& st = thread_state();
    const TaskGroup* g = current_task().taskgroup;
    std::uintptr_t* data = g != nullptr ? g->reductions : nullptr;
    if (data == nullptr)
        fatal("GOMP_workshare_task_reduction_unregister: no worksharing construct with task reductions is open");
    taskgroup_end();
    unregister_task_reductions(data, st.num == 0);
    if (!cancelled) st.team->barrier.wait();
}

}  // namespace numaware::omp
