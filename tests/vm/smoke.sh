#!/bin/sh
# smoke.sh — end-to-end checks of `numaware vm`, one guest boot per machine.
#
# Usage: tests/vm/smoke.sh NUMAWARE_BINARY [6.1|6.12|all]     (default: all)
#
# For a 2-node, a 4-node (SLIT 10/21/31) and an 8-node machine with a CPU-less
# node it boots one guest each and checks, inside that one boot: the online
# node list, every node's SLIT row, the CPU-less node's empty cpulist and the
# harness environment. Outside it checks that the guest's exit status comes
# back as numaware's and that guest stdout and stderr arrive separately.
# With 6.12 it also boots the 4-node machine on that kernel and checks that
# weighted interleave is there, and a 16-node machine (the most `numaware
# vm` emulates) with two memory-only nodes. Prints boot+power-off seconds
# per machine.
#
# The same file is the guest-side checker (called with --guest).
set -u

# ---------------------------------------------------------------- guest side
if [ "${1:-}" = "--guest" ]; then
    # --guest NODE_COUNT CPULESS_NODES(comma list or -) DISTANCES(rows '/', values ',') [weighted]
    nodes=$2 cpuless=$3 distances=$4 weighted=${5:-}
    fail=0
    check() {  # check WHAT EXPECTED ACTUAL
        if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1: expected '$2', got '$3'"; fail=1; fi
    }
    sys=/sys/devices/system/node
    check "online nodes" "0-$((nodes - 1))" "$(cat $sys/online)"
    check "NUMAWARE_VM" "1" "${NUMAWARE_VM:-}"
    check "guest machine file" "yes" "$([ -s "${NUMAWARE_VM_MACHINE:-/nonexistent}" ] && echo yes || echo no)"
    check "HOME" "/tmp" "$HOME"
    check "working directory" "$SMOKE_CWD" "$(pwd)"
    i=0
    rest=$distances
    while [ "$i" -lt "$nodes" ]; do
        row=${rest%%/*}
        rest=${rest#*/}
        check "node$i distance" "$(echo "$row" | tr ',' ' ')" "$(cat $sys/node$i/distance)"
        case ",$cpuless," in
            *",$i,"*) check "node$i cpulist (CPU-less)" "" "$(cat $sys/node$i/cpulist)" ;;
            *) [ -n "$(cat $sys/node$i/cpulist)" ] || { echo "FAIL node$i has no CPUs"; fail=1; } ;;
        esac
        i=$((i + 1))
    done
    if [ "$weighted" = weighted ]; then
        check "weighted interleave sysfs" "yes" \
            "$([ -d /sys/kernel/mm/mempolicy/weighted_interleave ] && echo yes || echo no)"
    fi
    echo "smoke-stderr-marker" >&2
    echo "smoke-stdout-marker"
    # 7 = everything passed; the host checks it arrives as numaware's status.
    [ "$fail" = 0 ] && exit 7
    exit 1
fi

# ----------------------------------------------------------------- host side
nw=${1:?usage: smoke.sh NUMAWARE_BINARY [6.1|6.12|all]}
which_kernels=${2:-all}
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
summary=""

M2_D="10,21/21,10"
M2="nodes=2 cpus-per-node=2 mem-per-node=512M distances=$M2_D"
M4_D="10,21,31,31/21,10,21,31/31,21,10,21/31,31,21,10"
M4="nodes=4 cpus-per-node=1 mem-per-node=256M distances=$M4_D"
M8_D="10,16,16,16,28,28,22,40/16,10,16,16,28,28,22,40/16,16,10,16,22,22,28,40/16,16,16,10,22,22,28,40/28,28,22,22,10,16,16,40/28,28,22,22,16,10,16,40/22,22,28,28,16,16,10,40/40,40,40,40,40,40,40,10"
M8="nodes=8 cpus=1,1,1,1,1,1,1,0 mem-per-node=256M distances=$M8_D"
# 16 nodes, the most numaware vm emulates: four groups of four (10 local,
# 16 within a group, 32 across), and nodes 14 and 15 memory only (CXL-like
# expanders, 40 from every other node, 16 between them).
M16_D=$(awk 'BEGIN {
    for (i = 0; i < 16; i++) {
        row = ""
        for (j = 0; j < 16; j++) {
            if (i == j) d = 10
            else if (i >= 14 && j >= 14) d = 16
            else if (i >= 14 || j >= 14) d = 40
            else if (int(i / 4) == int(j / 4)) d = 16
            else d = 32
            row = row (j ? "," : "") d
        }
        out = out (i ? "/" : "") row
    }
    print out
}')
M16="nodes=16 cpus=1,1,1,1,1,1,1,1,1,1,1,1,1,1,0,0 mem-per-node=128M distances=$M16_D"

# boot LABEL KERNEL SPEC NODES CPULESS DISTANCES [weighted]
boot() {
    label=$1 kernel=$2 spec=$3
    shift 3
    start=$(date +%s.%N)
    SMOKE_CWD=$(pwd) "$nw" vm --machine "$spec" --kernel "$kernel" --timeout 300 --env SMOKE_CWD -- \
        sh "$self" --guest "$@" >"$work/out" 2>"$work/err"
    status=$?
    end=$(date +%s.%N)
    seconds=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
    ok=yes
    if [ "$status" != 7 ]; then
        echo "FAIL $label: numaware vm exited $status (guest checks pass with 7)"; ok=no
    fi
    if ! grep -q '^smoke-stdout-marker$' "$work/out" || grep -q 'smoke-stderr-marker' "$work/out"; then
        echo "FAIL $label: guest stdout did not arrive alone on stdout"; ok=no
    fi
    if ! grep -q '^smoke-stderr-marker$' "$work/err" || grep -q 'smoke-stdout-marker' "$work/err"; then
        echo "FAIL $label: guest stderr did not arrive alone on stderr"; ok=no
    fi
    if [ "$ok" = no ]; then
        failures=$((failures + 1))
        echo "--- $label stdout ---"; cat "$work/out"; echo "--- $label stderr ---"; cat "$work/err"
    else
        echo "ok   $label: $(grep -c "^ok " "$work/out") guest checks, exit status and streams"
    fi
    summary="$summary$(printf '%-28s %6ss %s' "$label" "$seconds" "$ok")
"
}

case "$which_kernels" in
    6.1|all)
        boot "2-node (6.1)" 6.1 "$M2" 2 - "$M2_D"
        boot "4-node 10/21/31 (6.1)" 6.1 "$M4" 4 - "$M4_D"
        boot "8-node, CPU-less 7 (6.1)" 6.1 "$M8" 8 7 "$M8_D"
        ;;
esac
case "$which_kernels" in
    6.12|all)
        boot "4-node 10/21/31 (6.12)" 6.12 "$M4" 4 - "$M4_D" weighted
        boot "16-node, CPU-less 14,15 (6.12)" 6.12 "$M16" 16 14,15 "$M16_D"
        ;;
esac

echo "machine                      boot+run+poweroff  passed"
printf '%s' "$summary"
[ "$failures" = 0 ] || { echo "smoke: $failures machine(s) failed"; exit 1; }
echo "smoke: all machines passed"
