#!/bin/sh
# Checks `numaware run --pages interleave:all` through the child's own
# /proc/self/numa_maps, and `numaware run --cpu-nodes` through its
# Cpus_allowed_list, inside an emulated machine (or on any host).
#
# usage: run_check.sh NUMAWARE GUEST_TESTS [EXPECTED_POLICY]
#   NUMAWARE         the numaware binary
#   GUEST_TESTS      the numaware_guest_tests binary; its RunPages test
#                    touches 64 MiB and prints the mapping's numa_maps line
#   EXPECTED_POLICY  e.g. interleave:0-3 (default) for a 4-node machine
#
# Passes when the child's mapping shows EXPECTED_POLICY and its pages are
# spread over exactly those nodes, each within one 2 MiB huge page
# (512 pages) of an even share.
set -u
nw=$1
guest=$2
expect=${3:-interleave:0-3}

fail() {
    echo "run_check: FAIL: $*" >&2
    exit 1
}

out=$("$nw" run --json --pages interleave:all -- "$guest" --gtest_filter='RunPages.*' 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 0 ] || fail "numaware run exited with $rc"

line=$(echo "$out" | grep '^numa_maps: ' | head -n 1)
[ -n "$line" ] || fail "the child printed no numa_maps line"
policy=$(echo "$line" | awk '{print $3}')
[ "$policy" = "$expect" ] || fail "policy is '$policy', expected '$expect'"

# Expand the expected node list ("0-3,6") and compare per-node page counts.
echo "$line" | awk -v list="${expect#*:}" '
    BEGIN {
        n = split(list, items, ",")
        for (i = 1; i <= n; i++) {
            if (split(items[i], r, "-") == 2) { for (k = r[1]; k <= r[2]; k++) want[k] = 1 }
            else want[items[i]] = 1
        }
    }
    {
        for (i = 1; i <= NF; i++)
            if ($i ~ /^N[0-9]+=[0-9]+$/) {
                split(substr($i, 2), kv, "=")
                pages[kv[1]] = kv[2]; total += kv[2]
            }
    }
    END {
        nodes = 0
        for (k in want) nodes++
        share = total / nodes
        bad = 0
        for (k in pages) if (!(k in want)) { printf "run_check: %d pages on node %s, outside the policy\n", pages[k], k; bad = 1 }
        for (k in want) {
            got = (k in pages) ? pages[k] : 0
            if (got > share + 512 || got + 512 < share) { printf "run_check: node %s has %d pages, even share %d\n", k, got, share; bad = 1 }
        }
        if (total == 0) { print "run_check: no pages counted"; bad = 1 }
        exit bad
    }' || fail "pages are not spread evenly over $expect"

echo "run_check: PASS: $expect, pages spread evenly"

# --cpu-nodes N (numactl --cpunodebind): the child runs on exactly node N's
# CPUs as the kernel lists them; N is the highest node that has CPUs.
node=""
for d in /sys/devices/system/node/node[0-9]*; do
    n=${d##*node}
    [ -n "$(cat "$d/cpulist")" ] && { [ -z "$node" ] || [ "$n" -gt "$node" ]; } && node=$n
done
[ -n "$node" ] || fail "no node with CPUs in /sys/devices/system/node"
want=$(cat "/sys/devices/system/node/node$node/cpulist")
got=$("$nw" run --cpu-nodes "$node" -- grep Cpus_allowed_list /proc/self/status | awk '{print $2}')
[ "$got" = "$want" ] || fail "--cpu-nodes $node ran on CPUs '$got'; node $node's are '$want'"
echo "run_check: PASS: --cpu-nodes $node ran on CPUs $got"
