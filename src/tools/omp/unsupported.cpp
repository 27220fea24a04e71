// tools/omp/unsupported.cpp — every libgomp entry point that
// libnumaware_omp.so does not implement yet. Each one stops the program at
// once, naming itself and what to do, so that a program never mixes the
// shim's teams with libgomp's state (docs/OPENMP.md). The test
// `omp.exports` checks that this file and the implemented entry points
// together cover every GOMP_* and omp_* symbol of the system's libgomp.

#include "tools/omp/team.hpp"

#define NUMAWARE_OMP_UNSUPPORTED(symbol, what)                                                  \
    extern "C" [[noreturn]] __attribute__((visibility("default"))) void symbol() {                \
        numaware::omp::unsupported(#symbol, what);                                                \
    }

NUMAWARE_OMP_UNSUPPORTED(GOMP_offload_register, "device images from an offloading compiler")
NUMAWARE_OMP_UNSUPPORTED(GOMP_offload_register_ver, "device images from an offloading compiler")
NUMAWARE_OMP_UNSUPPORTED(GOMP_offload_unregister, "device images from an offloading compiler")
NUMAWARE_OMP_UNSUPPORTED(GOMP_offload_unregister_ver, "device images from an offloading compiler")
