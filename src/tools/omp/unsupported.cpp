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

NUMAWARE_OMP_UNSUPPORTED(GOMP_offload_register, "offloading to devices")
NUMAWARE_OMP_UNSUPPORTED(GOMP_offload_register_ver, "offloading to devices")
NUMAWARE_OMP_UNSUPPORTED(GOMP_offload_unregister, "offloading to devices")
NUMAWARE_OMP_UNSUPPORTED(GOMP_offload_unregister_ver, "offloading to devices")
NUMAWARE_OMP_UNSUPPORTED(GOMP_target, "offloading to devices")
NUMAWARE_OMP_UNSUPPORTED(GOMP_target_data, "offloading to devices")
NUMAWARE_OMP_UNSUPPORTED(GOMP_target_data_ext, "offloading to devices")
NUMAWARE_OMP_UNSUPPORTED(GOMP_target_end_data, "offloading to devices")
NUMAWARE_OMP_UNSUPPORTED(GOMP_target_enter_exit_data, "offloading to devices")
NUMAWARE_OMP_UNSUPPORTED(GOMP_target_ext, "offloading to devices")
NUMAWARE_OMP_UNSUPPORTED(GOMP_target_update, "offloading to devices")
NUMAWARE_OMP_UNSUPPORTED(GOMP_target_update_ext, "offloading to devices")
NUMAWARE_OMP_UNSUPPORTED(GOMP_teams, "the teams construct on a target device")
NUMAWARE_OMP_UNSUPPORTED(GOMP_teams4, "the teams construct on a target device")
NUMAWARE_OMP_UNSUPPORTED(omp_target_alloc, "offloading to devices")
NUMAWARE_OMP_UNSUPPORTED(omp_target_associate_ptr, "offloading to devices")
NUMAWARE_OMP_UNSUPPORTED(omp_target_disassociate_ptr, "offloading to devices")
NUMAWARE_OMP_UNSUPPORTED(omp_target_free, "offloading to devices")
NUMAWARE_OMP_UNSUPPORTED(omp_target_is_present, "offloading to devices")
NUMAWARE_OMP_UNSUPPORTED(omp_target_memcpy, "offloading to devices")
NUMAWARE_OMP_UNSUPPORTED(omp_target_memcpy_rect, "offloading to devices")
