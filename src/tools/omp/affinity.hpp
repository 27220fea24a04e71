// tools/omp/affinity.hpp — what the OpenMP place and affinity routines
// report, as pure data: the place list that OMP_PLACES names over the
// machine model and the CPUs the process may use, the place holding a set
// of CPUs, and the affinity format of OMP_AFFINITY_FORMAT and
// omp_capture_affinity (OpenMP 5.0, 6.14 and 3.2.31-3.2.35). Nothing here
// touches threads; omp_api.cpp and team.cpp call it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "numaware/machine.hpp"
#include "tools/omp/settings.hpp"

namespace numaware::omp {

using PlaceList = std::vector<std::vector<unsigned>>;   // CPU OS indices per place, ascending

// The place list of `places` over `machine`, restricted to `allowed` (the
// CPUs the process may use; empty: every CPU of the machine):
//   threads       one place per CPU;
//   cores         the CPUs that share a level-1 cache (one per CPU when
//                 the model has no caches);
//   ll_caches     the CPUs that share a last-level cache (each node's CPUs
//                 when the model has no caches);
//   sockets,      each node's CPUs: the machine model has nodes, not
//   numa_domains  packages, so a socket is taken to be a node;
//   explicit      the listed sets, without CPUs the process may not use;
//                 a set left empty is dropped.
// An abstract name's count ("cores(4)") keeps the first that many places.
PlaceList place_list(const Machine& machine, const std::vector<unsigned>& allowed, const Places& places);
// An explicit list's places (OMP_PLACES, GOMP_CPU_AFFINITY) as threads are
// bound to them: each keeps the CPUs in `allowed` (empty: all), a place left
// with none is dropped, and repeated places stay (libgomp binds thread i to
// the i-th listed place, repeats included; place_list() lists each once).
PlaceList usable_listed_places(const Places& places, const std::vector<unsigned>& allowed);

// The CPUs of `machine` in `allowed` (the CPUs the process may use;
// empty: every CPU of the machine), ascending.
std::vector<unsigned> allowed_cpus(const Machine& machine, const std::vector<unsigned>& allowed);

// The first place holding every CPU of `cpus`; -1 when none does or `cpus`
// is empty (an unbound thread's mask is every allowed CPU).
int place_of(const PlaceList& list, const std::vector<unsigned>& cpus);

// The values one thread's affinity line shows.
struct AffinityFields {
    int team_num = 0, num_teams = 1;         // %t %T
    int level = 0;                           // %L
    int thread_num = 0, num_threads = 1;     // %n %N
    int ancestor_thread_num = -1;            // %a: the parent's thread number, -1 at level 0
    std::string host;                        // %H
    long process_id = 0;                     // %P
    long native_thread_id = 0;               // %i: the kernel's thread id
    std::string affinity;                    // %A: the thread's mask, format_cpu_list's "0-3,8"
};

// affinity-format-var's default, as libgomp's.
inline constexpr std::string_view default_affinity_format = "level %L thread %i affinity %A";

// `format` with its fields replaced: %t %T %L %n %N %a %H %P %i %A, their
// long names in braces (%{thread_num}), an optional width between the %
// and the field (left-justified; with a leading '.' right-justified; with
// "0." right-justified and zero-padded), and %% for a percent sign. A
// field the standard does not define is kept as written.
std::string format_affinity(std::string_view format, const AffinityFields& f);

}  // namespace numaware::omp
