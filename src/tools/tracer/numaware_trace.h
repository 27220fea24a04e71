/* numaware_trace.h — what a traced program may say to numaware's Valgrind
 * tool (nwtrace, `numaware trace record`).
 *
 * NUMAWARE_TRACE_PHASE(name, measured) ends the running phase of the trace
 * and starts the next one, for every thread, at this point of the
 * (serialised) execution. `name` is a short C string (up to 63 bytes are
 * kept; NULL for none), `measured` is 1 when the simulator should count the
 * new phase, 0 when it only warms caches and places pages (initialisation).
 * A trace whose program never marks a phase is one measured phase; once a
 * program marks one, what ran before its first mark is not measured.
 *
 * Outside Valgrind (or under another tool) the macro does nothing and
 * costs a few instructions. It needs <valgrind/valgrind.h> (Debian's
 * valgrind package).
 */
#ifndef NUMAWARE_TRACE_H
#define NUMAWARE_TRACE_H

#include <valgrind/valgrind.h>

/* The tool's client requests: VG_USERREQ_TOOL_BASE('N', 'W') onwards. */
#define NUMAWARE_TRACE_REQ_PHASE (VG_USERREQ_TOOL_BASE('N', 'W') + 0)

#define NUMAWARE_TRACE_PHASE(name, measured)                                                     \
    VALGRIND_DO_CLIENT_REQUEST_STMT(NUMAWARE_TRACE_REQ_PHASE, (measured) ? 1 : 0, (name), 0, 0, 0)

#endif
