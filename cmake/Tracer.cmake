# cmake/Tracer.cmake — the trace recorder: nwtrace, a Valgrind tool of
# numaware's own (src/tools/tracer/), built as the custom target
# numaware_tracer (it is not part of libnumaware).
#
# A Valgrind tool is a static executable linked with Valgrind's core
# (libcoregrind, libvex and libgcc-sup from Debian's valgrind package)
# without the C library or start files, at the load address Valgrind
# reserves for tools (0x58000000 on amd64-linux), and named
# TOOL-amd64-linux. The launcher finds it in $VALGRIND_LIB, which must also
# hold the core's own files: the build makes ${NUMAWARE_TRACER_DIR} with
# symbolic links to every file of the system's valgrind directory plus the
# tool. `numaware trace record` points VALGRIND_LIB there.

set(NUMAWARE_TRACER_DIR ${PROJECT_BINARY_DIR}/valgrind)
set(NUMAWARE_TRACER_TOOL nwtrace-amd64-linux)

find_program(NUMAWARE_VALGRIND valgrind)
find_path(NUMAWARE_VALGRIND_INCLUDE pub_tool_basics.h PATHS /usr/include/valgrind NO_DEFAULT_PATH)
set(_vg_libdirs /usr/lib/x86_64-linux-gnu/valgrind /usr/lib/valgrind /usr/libexec/valgrind)
find_file(NUMAWARE_VALGRIND_COREGRIND libcoregrind-amd64-linux.a PATHS ${_vg_libdirs} NO_DEFAULT_PATH)
find_file(NUMAWARE_VALGRIND_VEX libvex-amd64-linux.a PATHS ${_vg_libdirs} NO_DEFAULT_PATH)
find_file(NUMAWARE_VALGRIND_GCCSUP libgcc-sup-amd64-linux.a PATHS ${_vg_libdirs} NO_DEFAULT_PATH)
# The directory of the installed core (its preload library and suppressions).
find_path(NUMAWARE_VALGRIND_LIBEXEC vgpreload_core-amd64-linux.so PATHS ${_vg_libdirs} NO_DEFAULT_PATH)

if(NOT CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  message(STATUS "nwtrace: not built (Valgrind tools are built here for amd64-linux only)")
  set(NUMAWARE_TRACER_BUILT OFF)
elseif(NOT (NUMAWARE_VALGRIND AND NUMAWARE_VALGRIND_INCLUDE AND NUMAWARE_VALGRIND_COREGRIND AND NUMAWARE_VALGRIND_VEX
            AND NUMAWARE_VALGRIND_GCCSUP AND NUMAWARE_VALGRIND_LIBEXEC))
  message(STATUS "nwtrace: not built: valgrind's tool headers and libraries are missing (apt-get install valgrind)")
  set(NUMAWARE_TRACER_BUILT OFF)
else()
  set(NUMAWARE_TRACER_BUILT ON)
  set(_src ${PROJECT_SOURCE_DIR}/src/tools/tracer)
  set(_obj ${PROJECT_BINARY_DIR}/tracer/nwtrace_main.o)
  set(_exe ${PROJECT_BINARY_DIR}/tracer/${NUMAWARE_TRACER_TOOL})
  # Valgrind's own flags for tool code (no builtins: the core supplies its
  # own libc; no stack protector or PIE: nothing provides them), our
  # warnings as errors, and the platform macros pub_tool_basics.h expects.
  set(_cflags -std=gnu11 -O2 -g -m64 -Wall -Wextra -Wshadow -Wmissing-prototypes -Werror
      -fno-strict-aliasing -fno-builtin -fno-stack-protector -fomit-frame-pointer -fno-pie -fno-PIC
      -DVGA_amd64=1 -DVGO_linux=1 -DVGP_amd64_linux=1 -DVGPV_amd64_linux_vanilla=1
      -isystem ${NUMAWARE_VALGRIND_INCLUDE} -I${_src})
  set(_ldflags -m64 -static -nodefaultlibs -nostartfiles -u _start -no-pie
      -Wl,--build-id=none -Wl,-Ttext-segment=0x58000000)
  add_custom_command(
    OUTPUT ${_exe}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/tracer
    COMMAND ${CMAKE_C_COMPILER} ${_cflags} -c ${_src}/nwtrace_main.c -o ${_obj}
    COMMAND ${CMAKE_C_COMPILER} ${_ldflags} -o ${_exe} ${_obj}
            ${NUMAWARE_VALGRIND_COREGRIND} ${NUMAWARE_VALGRIND_VEX} ${NUMAWARE_VALGRIND_GCCSUP} -lgcc
    DEPENDS ${_src}/nwtrace_main.c ${_src}/numaware_trace.h
    COMMENT "Building the Valgrind tool ${NUMAWARE_TRACER_TOOL}"
    VERBATIM)
  # The VALGRIND_LIB directory, remade at every build (the system's
  # valgrind may have been upgraded).
  add_custom_target(numaware_tracer ALL
    COMMAND ${CMAKE_COMMAND} -DSYSTEM_DIR=${NUMAWARE_VALGRIND_LIBEXEC} -DTOOL=${_exe} -DOUT_DIR=${NUMAWARE_TRACER_DIR}
            -P ${PROJECT_SOURCE_DIR}/cmake/ValgrindLibDir.cmake
    DEPENDS ${_exe}
    COMMENT "Making ${NUMAWARE_TRACER_DIR} (VALGRIND_LIB for nwtrace)"
    VERBATIM)
endif()
