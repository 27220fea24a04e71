// tools/omp/unsupported.cpp — every libgomp entry point that
// libnumaware_omp.so does not implement yet. Each one stops the program at
// once, naming itself and what to do, so that a program never mixes the
// shim's teams with libgomp's state (docs/OPENMP.md). The test
// `omp.exports` checks that this file and the implemented entry points
// together cover every GOMP_* and omp_* symbol of the system's libgomp.
// Beside them, at the end, LLVM's ABI.

#include "tools/omp/team.hpp"

#define NUMAWARE_OMP_UNSUPPORTED(symbol, what)                                                  \
    extern "C" [[noreturn]] __attribute__((visibility("default"))) void symbol() {                \
        numaware::omp::unsupported(#symbol, what);                                                \
    }

NUMAWARE_OMP_UNSUPPORTED(GOMP_offload_register, "device images from an offloading compiler")
NUMAWARE_OMP_UNSUPPORTED(GOMP_offload_register_ver, "device images from an offloading compiler")
NUMAWARE_OMP_UNSUPPORTED(GOMP_offload_unregister, "device images from an offloading compiler")
NUMAWARE_OMP_UNSUPPORTED(GOMP_offload_unregister_ver, "device images from an offloading compiler")

// LLVM's OpenMP ABI (clang -fopenmp, icx; run by libomp or Intel's
// libiomp5). The shim serves GCC's ABI only, yet its omp_* functions
// shadow the other runtime's for the whole process: inside a region that
// libomp ran, omp_get_thread_num() and omp_get_num_threads() would answer
// for the shim (thread 0 of 1) and the program would go on with wrong
// results. So the entry points through which such code starts threads or
// tasks stop the program instead, naming themselves.
#define NUMAWARE_OMP_LLVM_ABI(symbol)                                                                          \
    NUMAWARE_OMP_UNSUPPORTED(symbol, "LLVM's OpenMP ABI, which code built with clang -fopenmp or icx calls, for " \
                                     "libomp or libiomp5; the shim serves GCC's")
NUMAWARE_OMP_LLVM_ABI(__kmpc_fork_call)
NUMAWARE_OMP_LLVM_ABI(__kmpc_fork_call_if)
NUMAWARE_OMP_LLVM_ABI(__kmpc_fork_teams)
NUMAWARE_OMP_LLVM_ABI(__kmpc_serialized_parallel)
NUMAWARE_OMP_LLVM_ABI(__kmpc_omp_task_alloc)
NUMAWARE_OMP_LLVM_ABI(__kmpc_omp_target_task_alloc)
NUMAWARE_OMP_LLVM_ABI(__kmpc_omp_task)
NUMAWARE_OMP_LLVM_ABI(__kmpc_omp_task_with_deps)
NUMAWARE_OMP_LLVM_ABI(__kmpc_taskloop)
NUMAWARE_OMP_LLVM_ABI(__kmpc_taskloop_5)
