/* numaware/numaware.h — the whole C API.
 *
 * Every function returns 0 (or a non-negative value) on success and -1 with
 * errno set on failure; nw_error_message() then names the input and the
 * limit.
 *
 * Names follow nw_<object>_<verb>, as hwloc's follow hwloc_<object>_<verb>:
 * the object first (machine, range, thread, balancing, team, psm, runtime,
 * task, error), then what is done to it (nw_task_spawn, nw_range_place,
 * nw_runtime_barrier). A call that only reads an attribute may name the
 * attribute instead of a verb (nw_team_size, nw_machine_distance).
 * The names of numaware 0.1 that broke this rule (nw_spawn, nw_place,
 * nw_last_error, ...) are kept for one release: they still compile, with a
 * deprecation warning naming the replacement, and still link.
 *
 * Each header says, call by call, what happens where a feature is missing:
 * a kernel without NUMA support, a call the process is not permitted to
 * make, a kernel too old for a mode.
 */
#ifndef NUMAWARE_NUMAWARE_H
#define NUMAWARE_NUMAWARE_H

#include "numaware/c/error.h"
#include "numaware/c/machine.h"
#include "numaware/c/placement.h"
#include "numaware/c/balancing.h"
#include "numaware/c/team.h"
#include "numaware/c/heap.h"
#include "numaware/c/tasks.h"

#endif
