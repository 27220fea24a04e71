/* numaware/numaware.h — the whole C API.
 *
 * Every function returns 0 (or a non-negative value) on success and -1 with
 * errno set on failure; nw_last_error() then names the input and the limit.
 * Names follow nw_<object>_<verb>.
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
