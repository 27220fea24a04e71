// util/debug_assert.hpp — invariants checked in debug builds (the sanitizer
// builds that `make test` runs), in the manner of mimalloc's internal
// assertions, and free in release builds. A broken invariant traps at once,
// without a message, so the check is safe inside malloc and signal paths.
#pragma once

#if defined(NDEBUG)
#define NW_DEBUG_ASSERT(c) ((void)0)
#else
#define NW_DEBUG_ASSERT(c) ((c) ? (void)0 : __builtin_trap())
#endif
