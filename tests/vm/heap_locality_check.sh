#!/bin/sh
# heap_locality_check.sh — a small, fast locality proof for CI: numaware's
# malloc must leave no page of a thread's live blocks on another node.
#
# usage: heap_locality_check.sh NUMAWARE LOCALITY_BIN MALLOC_LIB
#   NUMAWARE      the numaware binary (boots the emulated machine)
#   LOCALITY_BIN  the numaware_bench_locality binary
#   MALLOC_LIB    libnumaware_malloc.so (preloaded for the numaware run)
#
# One boot of a 4-node guest (kernel 6.12, 2 vCPUs per node, SLIT 10/21/31), 8 pinned
# threads, each freeing its left neighbour's blocks; 16 x 1 MiB blocks and
# about 8,000 pages of 64 B-4 KiB blocks per round, 1 warm-up + 2 rounds.
# FAILS if numaware shows any remote (or absent) page, and also if glibc,
# run the same way for contrast, shows none in the small-block rounds: then
# the probe could not have seen a remote page at all.
set -u

fail() {
    echo "heap_locality_check: FAIL: $*" >&2
    exit 1
}

# ---------------------------------------------------------------- guest side
if [ "${1:-}" = "--guest" ]; then
    loc=$2 lib=$3
    args="--threads 8 --rounds 2 --big-blocks 16 --small-pages 8000"
    env LD_PRELOAD="$lib" "$loc" --allocator numaware $args --expect-zero
    rc_nw=$?
    "$loc" --allocator glibc $args
    rc_glibc=$?
    [ "$rc_glibc" -eq 0 ] || echo "heap_locality_check: the glibc run exited with $rc_glibc"
    exit "$rc_nw"
fi

# ----------------------------------------------------------------- host side
[ $# -eq 3 ] || { echo "usage: heap_locality_check.sh NUMAWARE LOCALITY_BIN MALLOC_LIB" >&2; exit 2; }
nw=$1 loc=$2 lib=$3
for f in "$nw" "$loc" "$lib"; do [ -e "$f" ] || fail "'$f' does not exist"; done
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
machine='nodes=4 cpus-per-node=2 mem-per-node=512M distances=10,21,31,31/21,10,31,31/31,31,10,21/31,31,21,10'

out=$("$nw" vm --machine "$machine" --kernel 6.12 --timeout 800 -- sh "$self" --guest "$loc" "$lib" 2>&1)
rc=$?
echo "$out"

# Reported rounds (round >= 1) only; the warm-up round is not judged.
sum() {  # sum ALLOCATOR KIND FIELD
    echo "$out" | awk -v a="allocator=$1" -v k="kind=$2" -v f="$3" '
        $1 == "locality" && $2 == a && $3 == k {
            for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
            if (v["round"] > 0) { s += v[f]; n++ }
        }
        END { if (n == 0) print "none"; else print s }'
}
for k in big small; do
    pages=$(sum numaware $k pages)
    [ "$pages" != none ] && [ "$pages" -gt 0 ] || fail "numaware printed no $k-block rounds"
    remote=$(sum numaware $k remote) absent=$(sum numaware $k absent)
    [ "$remote" -eq 0 ] || fail "numaware: $remote of $pages $k-block pages were remote"
    [ "$absent" -eq 0 ] || fail "numaware: $absent of $pages $k-block pages were not present"
done
[ "$rc" -eq 0 ] || fail "the guest run exited with $rc"
glibc_remote=$(sum glibc small remote)
[ "$glibc_remote" != none ] || fail "glibc printed no small-block rounds"
[ "$glibc_remote" -gt 0 ] || fail "glibc showed no remote small-block page: the probe cannot tell local from remote"
echo "heap_locality_check: PASS: numaware 0 remote pages; glibc $glibc_remote remote small-block pages for contrast"
