#!/bin/sh
# leak_check.sh — the one LeakSanitizer suppression (tests/lsan.supp) still
# has its cause: scotch_map_leak, a program that uses Scotch alone, leaks
# under LeakSanitizer from Scotch's strategy parser inside the mapping.
# FAILS when it does not: then Scotch no longer leaks, and the suppression
# must go.
#
# usage: leak_check.sh SCOTCH_MAP_LEAK
set -u
out=$(ASAN_OPTIONS=fast_unwind_on_malloc=0:detect_leaks=1 LSAN_OPTIONS= "$1" 2>&1)
rc=$?
echo "$out" | grep -E 'mapped|LeakSanitizer|SUMMARY|scotchyyparse|kgraphMapFm' | head -8
if [ "$rc" -eq 0 ] || ! echo "$out" | grep -q 'ERROR: LeakSanitizer: detected memory leaks' ||
   ! echo "$out" | grep -q 'scotchyyparse' || ! echo "$out" | grep -q 'kgraphMapFm'; then
    echo "leak_check: FAIL: Scotch alone no longer leaks from scotchyyparse in kgraphMapFm (exit $rc); remove the suppression in tests/lsan.supp" >&2
    exit 1
fi
echo "leak_check: Scotch alone leaks from scotchyyparse inside kgraphMapFm: the suppression's cause holds"
