// tools/omp/settings.hpp — what the OpenMP environment asks of
// libnumaware_omp.so: the OMP_* variables the standard defines and
// numaware's own, parsed into plain data (settings.cpp). Nothing here
// touches threads or the machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace numaware::omp {

// A loop schedule as omp_sched_t numbers it (omp.h).
enum class Sched : int { static_ = 1, dynamic = 2, guided = 3, auto_ = 4 };

// run-sched-var as libgomp keeps it: a chunk of 0 (given or not) is 1 for
// every kind but static, whose 0 means "blocks"; a runtime loop under auto
// is static with the chunk held (as libgomp's).
struct Schedule {
    Sched kind = Sched::dynamic;   // libgomp's default run-sched-var
    long chunk = 1;
    bool monotonic = false;
};

// OMP_PROC_BIND, as omp_proc_bind_t numbers it.
enum class Bind : int { false_ = 0, true_ = 1, primary = 2, close = 3, spread = 4 };

// OMP_PLACES: the abstract names, or an explicit list of CPU sets.
enum class PlaceKind { threads, cores, ll_caches, sockets, numa_domains, explicit_list };

struct Places {
    PlaceKind kind = PlaceKind::threads;   // OMP_PLACES unset: libgomp's default, a place per CPU
    std::vector<std::vector<unsigned>> sets;   // explicit_list only: CPU OS indices per place
    unsigned count = 0;                        // an abstract name's "(N)": the first N places; 0: all
};

struct Settings {
    unsigned num_threads = 0;                  // OMP_NUM_THREADS' first value; 0: one per allowed CPU
    std::vector<unsigned> nested_threads;      // its later values, one per nesting level
    Bind bind = Bind::true_;                   // OMP_PROC_BIND; unset: true with a place list, else false
    std::vector<Bind> nested_binds;            // its later values, one per nesting level
    bool bind_set = false;                     // OMP_PROC_BIND was given
    Places places;
    bool places_set = false;                   // OMP_PLACES (or libgomp's GOMP_CPU_AFFINITY) was given
    // Neither OMP_PROC_BIND nor a place list was given: bind-var is false,
    // as under libgomp and libomp, so the initial thread keeps its launch
    // mask, and so do the threads and processes it starts after a region;
    // numaware pins only the pool threads it starts itself (threads 1..n-1
    // of the outermost teams) to the team plan's CPUs, where its task
    // runtime's locality scheduler expects them (docs/OPENMP.md).
    bool pin_pool_threads = false;
    std::size_t stack_bytes = 0;               // OMP_STACKSIZE; 0: the system's default
    Schedule schedule;                         // OMP_SCHEDULE: schedule(runtime)
    bool dynamic = false;                      // OMP_DYNAMIC
    // OMP_MAX_ACTIVE_LEVELS (at most supported_active_levels); OMP_NESTED=true,
    // or a list of more than one value in OMP_NUM_THREADS or OMP_PROC_BIND
    // without either of them: supported_active_levels, as libgomp.
    unsigned max_active_levels = 1;
    unsigned thread_limit = 0;                 // OMP_THREAD_LIMIT; 0: none
    unsigned num_teams = 0;                    // OMP_NUM_TEAMS; 0: one team per node the process may use
    unsigned teams_thread_limit = 0;           // OMP_TEAMS_THREAD_LIMIT; 0: none
    // OMP_MAX_TASK_PRIORITY: reported (omp_get_max_task_priority); the
    // priority clause is a hint the task runtime does not use.
    unsigned max_task_priority = 0;
    int default_device = 0;                    // OMP_DEFAULT_DEVICE: default-device-var (the host runs targets)
    // OMP_CANCELLATION: cancel-var; `cancel` and `cancellation point`
    // act only when it is true (gomp_parallel.cpp).
    bool cancellation = false;
    // OMP_WAIT_POLICY: how long a waiting thread of a team that fits the
    // CPUs spins before it sleeps (spin_count()): unset, a short while;
    // active, minutes; passive, not at all. More threads than CPUs never spin.
    enum class Wait { unset, active, passive };
    Wait wait_policy = Wait::unset;
    // GOMP_SPINCOUNT, libgomp's own: the pauses a waiter spends before it
    // sleeps, which OMP_WAIT_POLICY then no longer decides (spin_count()).
    // UINT64_MAX: INFINITE. Unset: none given.
    std::optional<std::uint64_t> spin_count_set;
    std::string affinity_format;               // OMP_AFFINITY_FORMAT; empty: the default (affinity.hpp)
    bool display_affinity = false;             // OMP_DISPLAY_AFFINITY
    enum class Display { no, yes, verbose };
    Display display_env = Display::no;         // OMP_DISPLAY_ENV
    std::uintptr_t default_allocator = 1;      // OMP_ALLOCATOR: a predefined allocator, omp.h's number
    // NUMAWARE_POLICY. DEP by default: the two lines of README.md give an
    // unmodified program locality scheduling from its own depend clauses
    // (issue 16); DFIFO, the locality-unaware baseline, is there by name.
    std::string policy = "dep";
    std::size_t rip_window = 256;              // NUMAWARE_RIP_WINDOW: tasks per RIP partition window
    // NUMAWARE_TASK_THROTTLE: unfinished tasks per thread of the team beyond
    // which a new task without `depend` runs at once on its creating
    // thread, as libgomp does beyond 64 (tasking.cpp); 0: never.
    unsigned task_throttle = 64;
    std::string report_path;                   // NUMAWARE_REPORT: the run report's file; empty: none
};

// The nesting depth of active parallel regions that the shim supports
// (omp_get_supported_active_levels), libgomp's figure.
inline constexpr unsigned supported_active_levels = 255;

// A value that the standard leaves to the implementation (not a positive
// integer, an unknown keyword): libgomp and numaware both say so on one
// line and keep the default. `warn` receives that line.
using Warn = std::function<void(const std::string&)>;
using GetEnv = std::function<const char*(const char*)>;

// Reads every variable through `getenv`. Throws Error (numaware/error.hpp)
// naming the variable for what numaware itself defines and cannot run
// with: an unknown NUMAWARE_POLICY (the message lists the policies).
Settings read_settings(const GetEnv& getenv, const Warn& warn);

// The parsers, one per variable (exposed for the tests). Each returns
// false, leaving `out` as it was, for a value the standard does not define.
bool parse_num_threads(std::string_view text, unsigned& first, std::vector<unsigned>& nested);
bool parse_proc_bind(std::string_view text, Bind& out, std::vector<Bind>& nested);
bool parse_places(std::string_view text, Places& out);
bool parse_stack_size(std::string_view text, std::size_t& out);
// GOMP_CPU_AFFINITY, libgomp's own: CPUs "N", ranges "M-N" and strided
// ranges "M-N:S", separated by spaces or commas; each CPU one place, in
// the order given (thread i binds to the i-th, cyclically).
bool parse_cpu_affinity(std::string_view text, Places& out);
bool parse_schedule(std::string_view text, Schedule& out);
// GOMP_SPINCOUNT as libgomp reads it: INFINITE or INFINITY (UINT64_MAX),
// or a non-negative decimal count, optionally followed by k, M, G or T
// (thousand to trillion; any case, spaces allowed around); a count too
// large saturates at UINT64_MAX.
bool parse_spin_count(std::string_view text, std::uint64_t& out);

// The pauses a waiting thread of a team that fits the CPUs spends before it
// sleeps: GOMP_SPINCOUNT's when given, else by OMP_WAIT_POLICY: unset
// 2,000 (about 20-60 microseconds), active libgomp's 30 billion (minutes:
// waiters use their CPU, as asked), passive 0.
std::uint64_t spin_count(const Settings& s);

// dyn-var true (OMP_DYNAMIC, omp_set_dynamic): the most threads a region
// gets, libgomp's rule: the CPUs the process may use, at most nthreads-var,
// less the machine's 15-minute load average (`load15`, rounded down after
// adding 0.1); at least 1.
unsigned dynamic_threads(unsigned cpus, unsigned nthreads_var, double load15);

}  // namespace numaware::omp
