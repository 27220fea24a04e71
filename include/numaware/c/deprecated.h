/* numaware/c/deprecated.h — how the C API marks a name it is retiring.
 *
 * A renamed call keeps its old name for one release: the old name is
 * declared with NW_DEPRECATED(new_name), so callers get a warning that
 * names the replacement, and it stays an exported function that forwards
 * to the new one, so programs linked against the old name keep running.
 */
#ifndef NUMAWARE_C_DEPRECATED_H
#define NUMAWARE_C_DEPRECATED_H

#if defined(__GNUC__) || defined(__clang__)
#define NW_DEPRECATED(replacement) __attribute__((deprecated("use " #replacement)))
#else
#define NW_DEPRECATED(replacement)
#endif

#endif
