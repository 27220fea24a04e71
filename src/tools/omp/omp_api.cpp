// tools/omp/omp_api.cpp — the omp_* routines (OpenMP 5.2, chapter 18) that
// host programs call: threads and teams, the ICVs, timing, locks.
#include <time.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>

#include "tools/omp/lock.hpp"
#include "tools/omp/team.hpp"

namespace numaware::omp {
namespace {

// dynamic-var as omp_set_dynamic leaves it.
std::atomic<bool> g_dynamic{false};
std::atomic<bool> g_dynamic_set{false};

// omp_lock_t is 4 bytes in GCC's omp.h: the shim's Lock.
// omp_nest_lock_t is 16 bytes: a Lock, a count and the owner.
struct NestLock {
    Lock lock;
    int count;
    std::atomic<const void*> owner;
};
static_assert(sizeof(NestLock) == 16);

const void* self() {
    static thread_local char marker;
    return &marker;
}

}  // namespace

bool dyn_var() { return g_dynamic_set.load() ? g_dynamic.load() : settings().dynamic; }

}  // namespace numaware::omp

using namespace numaware::omp;

#pragma GCC visibility push(default)   // the entry points: exports.map keeps only these
extern "C" {

typedef struct {
    unsigned char x[4];
} omp_lock_t;
typedef struct {
    unsigned char x[16];
} omp_nest_lock_t;

// ---- threads and teams ----
void omp_set_num_threads(int n) { set_nthreads_var(n > 0 ? static_cast<unsigned>(n) : 1); }
int omp_get_num_threads(void) { return static_cast<int>(thread_state().team->size); }
int omp_get_max_threads(void) { return static_cast<int>(nthreads_var()); }
int omp_get_thread_num(void) { return static_cast<int>(thread_state().num); }
int omp_get_num_procs(void) { return static_cast<int>(available_cpus()); }
int omp_in_parallel(void) { return thread_state().active_level > 0; }
int omp_get_level(void) { return static_cast<int>(thread_state().level); }
int omp_get_active_level(void) { return static_cast<int>(thread_state().active_level); }
int omp_get_ancestor_thread_num(int level) {
    const ThreadState& st = thread_state();
    if (level < 0 || level > static_cast<int>(st.level)) return -1;
    return level == 0 ? 0 : static_cast<int>(st.ancestors[static_cast<std::size_t>(level) - 1]);
}
int omp_get_team_size(int level) {
    const ThreadState& st = thread_state();
    if (level < 0 || level > static_cast<int>(st.level)) return -1;
    return level == 0 ? 1 : static_cast<int>(st.sizes[static_cast<std::size_t>(level) - 1]);
}
int omp_get_thread_limit(void) { return thread_limit() ? static_cast<int>(std::min<unsigned>(thread_limit(), INT_MAX)) : INT_MAX; }
void omp_set_dynamic(int on) {
    g_dynamic.store(on != 0);
    g_dynamic_set.store(true);
}
int omp_get_dynamic(void) { return dyn_var(); }
void omp_set_nested(int on) { set_max_active_levels(on ? supported_active_levels : 1); }
int omp_get_max_active_levels(void) { return static_cast<int>(std::min<unsigned>(max_active_levels(), INT_MAX)); }
int omp_get_nested(void) { return omp_get_max_active_levels() > 1; }
void omp_set_max_active_levels(int levels) {
    // Beyond the supported levels: the supported levels, as the standard says.
    if (levels >= 0) set_max_active_levels(std::min(static_cast<unsigned>(levels), supported_active_levels));
}
int omp_get_supported_active_levels(void) { return static_cast<int>(supported_active_levels); }
int omp_get_cancellation(void) { return settings().cancellation ? 1 : 0; }
int omp_get_max_task_priority(void) { return static_cast<int>(settings().max_task_priority); }
int omp_get_proc_bind(void) { return static_cast<int>(bind_var(thread_state())); }

// ---- schedule ----
void omp_set_schedule(int kind, int chunk) {
    ThreadState& st = thread_state();
    const int k = kind & 0x7fffffff;
    if (k < 1 || k > 4) return;   // not an omp_sched_t: ignored, as libgomp does
    // libgomp's rule: below 1 is the kind's default (static 0, else 1); auto
    // keeps the chunk run-sched-var had, which its runtime loops use (a
    // static schedule of that chunk).
    if (k != 4) st.run_sched.chunk = chunk > 0 ? chunk : k == 1 ? 0 : 1;
    else if (!st.run_sched_set) st.run_sched.chunk = run_schedule().chunk;
    st.run_sched.kind = static_cast<Sched>(k);
    st.run_sched.monotonic = (static_cast<unsigned>(kind) & 0x80000000u) != 0;
    st.run_sched_set = true;
}
void omp_get_schedule(int* kind, int* chunk) {
    const Schedule s = run_schedule();
    *kind = static_cast<int>(s.kind) | (s.monotonic ? static_cast<int>(0x80000000u) : 0);
    *chunk = static_cast<int>(s.chunk);
}

// ---- devices, and the host teams construct: the host is the only device ----
int omp_get_num_devices(void) { return 0; }
// default-device-var: OMP_DEFAULT_DEVICE, then omp_set_default_device (a
// negative number is ignored, as libgomp does); there are no devices, so
// every target region runs on the host whatever it holds.
namespace {
std::atomic<int>& default_device_var() {
    static std::atomic<int> v{settings().default_device};
    return v;
}
}  // namespace
int omp_get_default_device(void) { return default_device_var().load(std::memory_order_relaxed); }
void omp_set_default_device(int device) {
    if (device >= 0) default_device_var().store(device, std::memory_order_relaxed);
}
int omp_is_initial_device(void) { return 1; }
int omp_get_initial_device(void) { return 0; }
int omp_get_device_num(void) { return 0; }
int omp_get_num_teams(void) { return static_cast<int>(thread_state().league_size); }
int omp_get_team_num(void) { return static_cast<int>(thread_state().league_num); }
void omp_set_num_teams(int teams) {
    if (teams > 0) set_nteams_var(static_cast<unsigned>(teams));   // others: ignored, as libgomp does
}
int omp_get_max_teams(void) { return static_cast<int>(std::min<unsigned>(nteams_var(), INT_MAX)); }
void omp_set_teams_thread_limit(int limit) {
    if (limit > 0) set_teams_thread_limit_var(static_cast<unsigned>(limit));
}
int omp_get_teams_thread_limit(void) { return static_cast<int>(std::min<unsigned>(teams_thread_limit_var(), INT_MAX)); }

// ---- timing ----
double omp_get_wtime(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
double omp_get_wtick(void) {
    struct timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// ---- locks ----
void omp_init_lock(omp_lock_t* l) { new (l) Lock; }
void omp_destroy_lock(omp_lock_t*) {}
void omp_set_lock(omp_lock_t* l) { reinterpret_cast<Lock*>(l)->lock(); }
void omp_unset_lock(omp_lock_t* l) { reinterpret_cast<Lock*>(l)->unlock(); }
int omp_test_lock(omp_lock_t* l) { return reinterpret_cast<Lock*>(l)->try_lock(); }

void omp_init_nest_lock(omp_nest_lock_t* l) { new (l) NestLock{{}, 0, {nullptr}}; }
void omp_destroy_nest_lock(omp_nest_lock_t*) {}
void omp_set_nest_lock(omp_nest_lock_t* l) {
    auto* n = reinterpret_cast<NestLock*>(l);
    if (n->owner.load(std::memory_order_relaxed) != self()) {
        n->lock.lock();
        n->owner.store(self(), std::memory_order_relaxed);
    }
    ++n->count;
}
void omp_unset_nest_lock(omp_nest_lock_t* l) {
    auto* n = reinterpret_cast<NestLock*>(l);
    if (--n->count == 0) {
        n->owner.store(nullptr, std::memory_order_relaxed);
        n->lock.unlock();
    }
}
int omp_test_nest_lock(omp_nest_lock_t* l) {
    auto* n = reinterpret_cast<NestLock*>(l);
    if (n->owner.load(std::memory_order_relaxed) != self()) {
        if (!n->lock.try_lock()) return 0;
        n->owner.store(self(), std::memory_order_relaxed);
    }
    return ++n->count;
}

}  // extern "C"
#pragma GCC visibility pop
