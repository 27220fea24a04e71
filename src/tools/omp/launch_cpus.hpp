// tools/omp/launch_cpus.hpp — the CPUs the process was started on (its
// affinity mask at exec: taskset, an MPI launcher's binding, a batch job's
// allocation), kept before libgomp's constructor binds the initial thread.
//
// The program links libgomp, whose constructor runs before this library's
// and, when OMP_PROC_BIND or OMP_PLACES asks for binding, binds the initial
// thread to its first place: the thread's mask then no longer says which
// CPUs the process was given. libgomp binds through pthread_setaffinity_np,
// and this library, preloaded, defines it: the definition notes the calling
// thread's mask at the first call, then hands the call to the C library's.
#pragma once

#include <vector>

namespace numaware::omp {

// The mask noted before the first pthread_setaffinity_np of the process,
// ascending, in `out`; false when there was no call yet (the threads' masks
// are still the launch mask) or the mask could not be read.
bool launch_cpus(std::vector<unsigned>& out);

}  // namespace numaware::omp
