/* numaware/c/error.h — how the C API reports failure.
 *
 * Every nw_ function that can fail returns -1 and sets errno (EINVAL for bad
 * input, ENOMEM when out of memory, the kernel's errno for a failed system
 * call), like hwloc. nw_error_message() then gives the full message, naming
 * the offending input and the limit, e.g.
 *   "distances[0][1]: asymmetric matrix: distances[0][1]=21 but distances[1][0]=31; ..."
 */
#ifndef NUMAWARE_C_ERROR_H
#define NUMAWARE_C_ERROR_H

#include "numaware/c/deprecated.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Message of the most recent failed nw_ call on the calling thread, or ""
 * if none has failed. The text stays valid until the next nw_ call on this
 * thread fails; successful calls leave it unchanged. Never NULL. Needs no
 * kernel feature. */
const char* nw_error_message(void);

/* The 0.1 name, kept for one release. */
NW_DEPRECATED(nw_error_message) const char* nw_last_error(void);

#ifdef __cplusplus
}
#endif

#endif
