/* numaware/c/balancing.h — the kernel's automatic NUMA balancing from C.
 *
 * Same operations as numaware/balancing.hpp. States are the values of
 * /proc/sys/kernel/numa_balancing. Functions return 0 (or a count) on
 * success and -1 with errno set on failure; nw_error_message() has the text:
 *   ENOENT        the kernel has no NUMA balancing (CONFIG_NUMA_BALANCING off)
 *   EPERM/EACCES/EROFS  not permitted to write the sysctl (needs root and a
 *                 writable /proc)
 *   EINVAL        a state outside 0-3, a NULL pointer, or a value the kernel
 *                 refuses (tiering modes before Linux 5.18)
 * A failed call changes nothing. None of the calls takes flags.
 *
 * Where a feature is missing:
 *   no NUMA       a kernel without NUMA support has neither the sysctl nor
 *                 /proc/PID/numa_maps: every call fails with ENOENT.
 *   no permission reading needs none; nw_balancing_set needs root (EPERM,
 *                 EACCES or EROFS as above); nw_balancing_exempt_ranges of
 *                 another user's process is EACCES (the kernel lets only a
 *                 process that may ptrace it read its numa_maps).
 *   old kernel    the tiering states (2 and 3) need Linux 5.18 (EINVAL
 *                 before).
 */
#ifndef NUMAWARE_C_BALANCING_H
#define NUMAWARE_C_BALANCING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

enum nw_balancing_state {
    NW_BALANCING_OFF = 0,
    NW_BALANCING_NORMAL = 1,
    NW_BALANCING_MEMORY_TIERING = 2,
    NW_BALANCING_NORMAL_AND_MEMORY_TIERING = 3
};

/* Stores the current state (an nw_balancing_state value) in *state. */
int nw_balancing_get(int* state);
/* Sets the state. Writing the current value is allowed and changes nothing. */
int nw_balancing_set(int state);

/* Mappings of process `pid` (0 = this process) that balancing leaves alone
 * (rule in numaware/balancing.hpp: any explicit policy except
 * bind=balancing, and hugetlbfs). Fills up to `capacity` entries: the start
 * address in starts[i] and, if `bound` is not NULL, 1 in bound[i] when the
 * mapping is bound (MPOL_BIND) else 0. Returns the total number of exempt
 * mappings, which may exceed `capacity`; starts may be NULL if capacity is 0.
 * ENOENT when there is no process `pid`. */
int nw_balancing_exempt_ranges(pid_t pid, uintptr_t* starts, int* bound, size_t capacity);

#ifdef __cplusplus
}
#endif

#endif
