// tools/omp/libgomp_icv.hpp — the program's own libgomp as a second door to
// the nthreads-var ICV.
//
// A program built with `gcc -fopenmp` links libgomp, and the shim is
// preloaded in front of it: every call the program's code makes binds to
// the shim. Code that finds the OpenMP runtime by its file name does not:
// threadpoolctl (which scikit-learn and NumPy's users call to limit
// threads) opens `libgomp.so.1` and calls that library's own
// omp_set_num_threads through the handle. So, on a thread outside every
// parallel region (level 0, where libgomp sees the thread as the shim does),
// libgomp holds nthreads-var: the shim reads it there and passes its own
// omp_set_num_threads on to it. Inside a region, and in a target region's
// new contention group, the shim's own ICVs rule, as before. Without
// libgomp in the process (not loaded yet, or a program linked to the shim
// alone) the shim's own value is the only one.
#pragma once

namespace numaware::omp {

// libgomp's omp_get_max_threads() for the calling thread, or 0 when the
// process has no libgomp. Looked for again only after the process loaded
// another object (Python loads libgomp with the first extension module
// that needs it, in that module's own scope: found by name, not through the
// global scope).
int libgomp_max_threads();

// Sets libgomp's nthreads-var for the calling thread (its own
// omp_set_num_threads); nothing without libgomp.
void libgomp_set_num_threads(int n);

}  // namespace numaware::omp
