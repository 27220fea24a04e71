#!/bin/sh
# tests/malloc/stress_check.sh LIB STRESS — runs the allocator stress program
# (stress.c: edge cases, alignments, calloc, realloc storms, larson-like
# cross-thread frees, neighbouring blocks, fork while allocating, blocks of
# exited threads, memory returned after a peak) under LD_PRELOAD=LIB, which
# it proves mapped; fails unless every check passes.
set -u
LIB=${1:?usage: stress_check.sh /path/to/libnumaware_malloc.so STRESS}
STRESS=${2:?usage: stress_check.sh LIB STRESS}
for f in "$LIB" "$STRESS"; do [ -f "$f" ] || { echo "stress_check: FAIL: no such file: $f" >&2; exit 1; }; done
STRESS_EXPECT_LIBRARY=$(basename "$LIB") LD_PRELOAD=$LIB timeout 120 "$STRESS"
rc=$?
[ "$rc" -eq 0 ] || { echo "stress_check: FAIL: $rc checks failed (exit $rc)" >&2; exit 1; }
echo "stress_check: every check passed under $(basename "$LIB")"
