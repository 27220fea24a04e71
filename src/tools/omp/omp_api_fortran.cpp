// tools/omp/omp_api_fortran.cpp — the omp_* routines as gfortran calls
// them (omp_lib): the C routine's name with a trailing underscore, every
// argument by reference, LOGICAL results as int, and a `_8_` twin for
// programs built with -fdefault-integer-8. Each forwards to the shim's C
// routine (omp_api.cpp), declared by GCC's own omp.h.
//
// gfortran's kinds on x86-64 Linux (omp_lib.h): omp_lock_kind is 4, so a
// Fortran lock is the C lock itself; omp_nest_lock_kind is 8 and the C
// nest lock 16 bytes, so a Fortran nest lock holds a pointer to one.
#include <omp.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tools/omp/team.hpp"

namespace {

static_assert(sizeof(omp_lock_t) == 4, "a Fortran omp_lock_kind=4 lock holds the C lock");
static_assert(sizeof(omp_nest_lock_t) > 8, "a Fortran omp_nest_lock_kind=8 lock holds a pointer");

omp_lock_t* lock_of(std::int32_t* fortran) { return reinterpret_cast<omp_lock_t*>(fortran); }
omp_nest_lock_t*& nest_lock_of(std::int64_t* fortran) { return *reinterpret_cast<omp_nest_lock_t**>(fortran); }

// An INTEGER(8) argument where the C routine takes an int: saturated.
int narrow(std::int64_t v) {
    if (v > INT_MAX) return INT_MAX;
    if (v < INT_MIN) return INT_MIN;
    return static_cast<int>(v);
}

// omp_get_schedule into a Fortran kind and a chunk of either integer kind.
template <class Chunk>
void get_schedule(std::int32_t* kind, Chunk* chunk) {
    omp_sched_t k;
    int c = 0;
    omp_get_schedule(&k, &c);
    *kind = static_cast<std::int32_t>(k);
    *chunk = c;
}

// A CHARACTER argument (its hidden length comes last): trailing blanks
// dropped, as a fixed-length variable pads the text it holds.
std::string fortran_text(const char* text, std::size_t len) {
    std::string s(text, len);
    s.erase(s.find_last_not_of(' ') + 1);
    return s;
}

// `text` into a CHARACTER buffer, blank-padded or cut to fit; its full length.
std::int32_t fortran_out(const std::string& text, char* buffer, std::size_t len) {
    const std::size_t n = std::min(text.size(), len);
    std::memcpy(buffer, text.data(), n);
    std::memset(buffer + n, ' ', len - n);
    return static_cast<std::int32_t>(std::min<std::size_t>(text.size(), INT32_MAX));
}

// omp_get_place_proc_ids and omp_get_partition_place_nums into an array
// of either integer kind.
template <class Int>
void place_proc_ids(std::int64_t place, Int* ids) {
    const int n = omp_get_place_num_procs(narrow(place));
    std::vector<int> c(static_cast<std::size_t>(n));
    omp_get_place_proc_ids(narrow(place), c.data());
    std::copy(c.begin(), c.end(), ids);
}
template <class Int>
void partition_place_nums(Int* nums) {
    std::vector<int> c(static_cast<std::size_t>(omp_get_partition_num_places()));
    omp_get_partition_place_nums(c.data());
    std::copy(c.begin(), c.end(), nums);
}

}  // namespace

#pragma GCC visibility push(default)   // the entry points: exports.map keeps only these
extern "C" {

// ---- threads and teams ----
void omp_set_num_threads_(const std::int32_t* n) { omp_set_num_threads(*n); }
void omp_set_num_threads_8_(const std::int64_t* n) { omp_set_num_threads(narrow(*n)); }
std::int32_t omp_get_num_threads_(void) { return omp_get_num_threads(); }
std::int32_t omp_get_max_threads_(void) { return omp_get_max_threads(); }
std::int32_t omp_get_thread_num_(void) { return omp_get_thread_num(); }
std::int32_t omp_get_num_procs_(void) { return omp_get_num_procs(); }
std::int32_t omp_in_parallel_(void) { return omp_in_parallel(); }
std::int32_t omp_get_level_(void) { return omp_get_level(); }
std::int32_t omp_get_active_level_(void) { return omp_get_active_level(); }
std::int32_t omp_get_ancestor_thread_num_(const std::int32_t* level) { return omp_get_ancestor_thread_num(*level); }
std::int32_t omp_get_ancestor_thread_num_8_(const std::int64_t* level) {
    return omp_get_ancestor_thread_num(narrow(*level));
}
std::int32_t omp_get_team_size_(const std::int32_t* level) { return omp_get_team_size(*level); }
std::int32_t omp_get_team_size_8_(const std::int64_t* level) { return omp_get_team_size(narrow(*level)); }
std::int32_t omp_get_thread_limit_(void) { return omp_get_thread_limit(); }
void omp_set_dynamic_(const std::int32_t* on) { omp_set_dynamic(*on); }
void omp_set_dynamic_8_(const std::int64_t* on) { omp_set_dynamic(*on != 0); }
std::int32_t omp_get_dynamic_(void) { return omp_get_dynamic(); }
void omp_set_nested_(const std::int32_t* on) { omp_set_nested(*on); }
void omp_set_nested_8_(const std::int64_t* on) { omp_set_nested(*on != 0); }
std::int32_t omp_get_nested_(void) { return omp_get_nested(); }
void omp_set_max_active_levels_(const std::int32_t* levels) { omp_set_max_active_levels(*levels); }
void omp_set_max_active_levels_8_(const std::int64_t* levels) { omp_set_max_active_levels(narrow(*levels)); }
std::int32_t omp_get_max_active_levels_(void) { return omp_get_max_active_levels(); }
std::int32_t omp_get_supported_active_levels_(void) { return omp_get_supported_active_levels(); }
std::int32_t omp_get_cancellation_(void) { return omp_get_cancellation(); }
std::int32_t omp_get_max_task_priority_(void) { return omp_get_max_task_priority(); }
std::int32_t omp_get_proc_bind_(void) { return static_cast<std::int32_t>(omp_get_proc_bind()); }
std::int32_t omp_in_final_(void) { return omp_in_final(); }
void omp_fulfill_event_(const omp_event_handle_t* event) { omp_fulfill_event(*event); }

// ---- schedule ----
void omp_set_schedule_(const std::int32_t* kind, const std::int32_t* chunk) {
    omp_set_schedule(static_cast<omp_sched_t>(*kind), *chunk);
}
void omp_set_schedule_8_(const std::int32_t* kind, const std::int64_t* chunk) {
    omp_set_schedule(static_cast<omp_sched_t>(*kind), narrow(*chunk));
}
void omp_get_schedule_(std::int32_t* kind, std::int32_t* chunk) { get_schedule(kind, chunk); }
void omp_get_schedule_8_(std::int32_t* kind, std::int64_t* chunk) { get_schedule(kind, chunk); }

// ---- devices and teams: the host is the only device ----
std::int32_t omp_get_num_devices_(void) { return omp_get_num_devices(); }
std::int32_t omp_get_default_device_(void) { return omp_get_default_device(); }
void omp_set_default_device_(const std::int32_t* d) { omp_set_default_device(*d); }
void omp_set_default_device_8_(const std::int64_t* d) { omp_set_default_device(narrow(*d)); }
std::int32_t omp_is_initial_device_(void) { return omp_is_initial_device(); }
std::int32_t omp_get_initial_device_(void) { return omp_get_initial_device(); }
std::int32_t omp_get_device_num_(void) { return omp_get_device_num(); }
std::int32_t omp_get_num_teams_(void) { return omp_get_num_teams(); }
std::int32_t omp_get_team_num_(void) { return omp_get_team_num(); }
void omp_set_num_teams_(const std::int32_t* teams) { omp_set_num_teams(*teams); }
void omp_set_num_teams_8_(const std::int64_t* teams) { omp_set_num_teams(narrow(*teams)); }
std::int32_t omp_get_max_teams_(void) { return omp_get_max_teams(); }
void omp_set_teams_thread_limit_(const std::int32_t* limit) { omp_set_teams_thread_limit(*limit); }
void omp_set_teams_thread_limit_8_(const std::int64_t* limit) { omp_set_teams_thread_limit(narrow(*limit)); }
std::int32_t omp_get_teams_thread_limit_(void) { return omp_get_teams_thread_limit(); }

// ---- places and affinity ----
std::int32_t omp_get_num_places_(void) { return omp_get_num_places(); }
std::int32_t omp_get_place_num_procs_(const std::int32_t* place) { return omp_get_place_num_procs(*place); }
std::int32_t omp_get_place_num_procs_8_(const std::int64_t* place) { return omp_get_place_num_procs(narrow(*place)); }
void omp_get_place_proc_ids_(const std::int32_t* place, std::int32_t* ids) { place_proc_ids(*place, ids); }
void omp_get_place_proc_ids_8_(const std::int64_t* place, std::int64_t* ids) { place_proc_ids(*place, ids); }
std::int32_t omp_get_place_num_(void) { return omp_get_place_num(); }
std::int32_t omp_get_partition_num_places_(void) { return omp_get_partition_num_places(); }
void omp_get_partition_place_nums_(std::int32_t* nums) { partition_place_nums(nums); }
void omp_get_partition_place_nums_8_(std::int64_t* nums) { partition_place_nums(nums); }
void omp_set_affinity_format_(const char* format, std::size_t len) {
    omp_set_affinity_format(fortran_text(format, len).c_str());
}
std::int32_t omp_get_affinity_format_(char* buffer, std::size_t len) {
    std::string f(omp_get_affinity_format(nullptr, 0), '\0');
    omp_get_affinity_format(f.data(), f.size() + 1);
    return fortran_out(f, buffer, len);
}
void omp_display_affinity_(const char* format, std::size_t len) {
    omp_display_affinity(fortran_text(format, len).c_str());
}
std::int32_t omp_capture_affinity_(char* buffer, const char* format, std::size_t buffer_len, std::size_t format_len) {
    const std::string f = fortran_text(format, format_len);
    std::string line(omp_capture_affinity(nullptr, 0, f.c_str()), '\0');
    omp_capture_affinity(line.data(), line.size() + 1, f.c_str());
    return fortran_out(line, buffer, buffer_len);
}

// ---- the environment and resources ----
void omp_display_env_(const std::int32_t* verbose) { omp_display_env(*verbose != 0); }
void omp_display_env_8_(const std::int64_t* verbose) { omp_display_env(*verbose != 0); }
std::int32_t omp_pause_resource_(const std::int32_t* kind, const std::int32_t* device) {
    return omp_pause_resource(static_cast<omp_pause_resource_t>(*kind), *device);
}
std::int32_t omp_pause_resource_all_(const std::int32_t* kind) {
    return omp_pause_resource_all(static_cast<omp_pause_resource_t>(*kind));
}

// ---- memory allocators (omp_alloc and omp_free are bind(c): the C routines) ----
std::intptr_t omp_init_allocator_(const std::intptr_t* space, const std::int32_t* ntraits, const omp_alloctrait_t* traits) {
    return static_cast<std::intptr_t>(
        omp_init_allocator(static_cast<omp_memspace_handle_t>(*space), *ntraits, traits));
}
std::intptr_t omp_init_allocator_8_(const std::intptr_t* space, const std::int64_t* ntraits,
                                    const omp_alloctrait_t* traits) {
    return static_cast<std::intptr_t>(
        omp_init_allocator(static_cast<omp_memspace_handle_t>(*space), narrow(*ntraits), traits));
}
void omp_destroy_allocator_(const std::intptr_t* a) { omp_destroy_allocator(static_cast<omp_allocator_handle_t>(*a)); }
void omp_set_default_allocator_(const std::intptr_t* a) {
    omp_set_default_allocator(static_cast<omp_allocator_handle_t>(*a));
}
std::intptr_t omp_get_default_allocator_(void) { return static_cast<std::intptr_t>(omp_get_default_allocator()); }

// ---- timing ----
double omp_get_wtime_(void) { return omp_get_wtime(); }
double omp_get_wtick_(void) { return omp_get_wtick(); }

// ---- locks ----
void omp_init_lock_(std::int32_t* l) { omp_init_lock(lock_of(l)); }
void omp_destroy_lock_(std::int32_t* l) { omp_destroy_lock(lock_of(l)); }
void omp_set_lock_(std::int32_t* l) { omp_set_lock(lock_of(l)); }
void omp_unset_lock_(std::int32_t* l) { omp_unset_lock(lock_of(l)); }
std::int32_t omp_test_lock_(std::int32_t* l) { return omp_test_lock(lock_of(l)); }

void omp_init_nest_lock_(std::int64_t* l) {
    auto* lock = static_cast<omp_nest_lock_t*>(std::malloc(sizeof(omp_nest_lock_t)));
    if (lock == nullptr) numaware::omp::fatal("omp_init_nest_lock: out of memory for a nest lock");
    omp_init_nest_lock(lock);
    nest_lock_of(l) = lock;
}
void omp_destroy_nest_lock_(std::int64_t* l) {
    omp_destroy_nest_lock(nest_lock_of(l));
    std::free(nest_lock_of(l));
    nest_lock_of(l) = nullptr;
}
void omp_set_nest_lock_(std::int64_t* l) { omp_set_nest_lock(nest_lock_of(l)); }
void omp_unset_nest_lock_(std::int64_t* l) { omp_unset_nest_lock(nest_lock_of(l)); }
std::int32_t omp_test_nest_lock_(std::int64_t* l) { return omp_test_nest_lock(nest_lock_of(l)); }

}  // extern "C"
#pragma GCC visibility pop
