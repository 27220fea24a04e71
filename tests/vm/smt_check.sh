#!/bin/sh
# tests/vm/smt_check.sh NUMAWARE SHIM THREAD_CPUS GUEST_TESTS — runs in an
# emulated guest whose cores have two hardware threads (SMT), numbered side
# by side as QEMU numbers them: 2 nodes of 2 cores, CPUs 2k and 2k+1 the
# threads of core k, node 0 holding cores 0-1 (CPUs 0-3).
#   model    `numaware topo` lists the guest kernel's cores (smt_cores),
#            which the kernel's thread siblings show; the guest's L1 caches
#            are per CPU, so only the cores tell;
#   run      `numaware run --threads N` gives every core one thread before
#            any core a second one, node by node (contiguous) or dealt over
#            the nodes (scatter): CPUs in index order put two on a core
#            while the other node idled;
#   OpenMP   under libnumaware_omp.so (SHIM), THREAD_CPUS' threads: with
#            OMP_PLACES=cores each thread has libgomp's place and mask;
#            OMP_PROC_BIND=close over the default places (a CPU each) and
#            numaware's default pool threads take a core each, where
#            libgomp's close puts threads 0 and 1 on one core;
#   gtests   the guest tests (GUEST_TESTS) pass on this machine.
set -u
NW=${1:?usage: smt_check.sh NUMAWARE SHIM THREAD_CPUS GUEST_TESTS}
SHIM=${2:?}
PROG=${3:?}
GUEST=${4:?}
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
expect() {   # WHAT GOT WANTED
    [ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"
    echo "ok: $1: $2"
}

sib=$(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list)
[ "$sib" = "0-1" ] || fail "the guest kernel shows CPU 0's siblings as '$sib', not 0-1: QEMU gave no SMT"
cores=$("$NW" topo --json | python3 -c 'import json, sys; print(json.load(sys.stdin).get("smt_cores"))') ||
    fail "numaware topo --json"
expect "smt_cores" "$cores" "[[0, 1], [2, 3], [4, 5], [6, 7]]"

mask() { "$NW" run "$@" -- grep Cpus_allowed_list /proc/self/status | awk '{print $2}'; }
expect "run --threads 4" "$(mask --threads 4)" "0,2,4,6"
expect "run --threads 2" "$(mask --threads 2)" "0,2"
expect "run --threads 2 --mapping scatter" "$(mask --threads 2 --mapping scatter)" "0,4"
expect "run --threads 3 --nodes 1" "$(mask --threads 3 --nodes 1)" "0-2"
expect "run --threads 6" "$(mask --threads 6)" "0-4,6"

# Each thread's CPUs, one line per thread, from THREAD_CPUS' output.
cpus_of() { awk '{print $6}' | paste -sd' ' -; }
for env in "OMP_PROC_BIND=close OMP_PLACES=cores OMP_NUM_THREADS=4" \
           "OMP_PROC_BIND=spread OMP_PLACES=cores OMP_NUM_THREADS=2" \
           "OMP_PROC_BIND=close OMP_PLACES=cores OMP_NUM_THREADS=6"; do
    want=$(env $env "$PROG") || fail "$PROG under libgomp ($env)"
    got=$(env $env LD_PRELOAD="$SHIM" "$PROG") || fail "$PROG under the shim ($env)"
    [ "$got" = "$want" ] || fail "$env: the shim's threads
$got
differ from libgomp's
$want"
    echo "ok: $env: as libgomp: $(echo "$got" | cpus_of)"
done
expect "shim OMP_PROC_BIND=close OMP_NUM_THREADS=4" \
    "$(OMP_PROC_BIND=close OMP_NUM_THREADS=4 LD_PRELOAD="$SHIM" "$PROG" | cpus_of)" "0 2 4 6"
expect "shim OMP_PROC_BIND=spread OMP_NUM_THREADS=2" \
    "$(OMP_PROC_BIND=spread OMP_NUM_THREADS=2 LD_PRELOAD="$SHIM" "$PROG" | cpus_of)" "0 4"
# numaware's default: the initial thread keeps its mask, the pool threads a core each.
expect "shim default OMP_NUM_THREADS=4" "$(OMP_NUM_THREADS=4 LD_PRELOAD="$SHIM" "$PROG" | cpus_of)" "0-7 2 4 6"
expect "run --omp --threads 4" "$("$NW" run --omp --threads 4 -- "$PROG" | cpus_of)" "0 2 4 6"

"$GUEST" || fail "the guest tests on the SMT machine"
echo "smt_check: all passed"
