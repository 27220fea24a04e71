#!/bin/sh
# boot_retry_check.sh — `numaware vm` boots again, once, when a boot hangs
# before the command starts, names --boot-timeout when both boots hang, and
# refuses a --boot-timeout that is not a number of seconds in (0, a week].
#
# Usage: tests/vm/boot_retry_check.sh NUMAWARE_BINARY
#
# No guest is booted: a stand-in qemu-system-x86_64, first in PATH, plays
# the boots. It counts its starts in a file. A boot that "hangs" sleeps
# without writing anything; a boot that "works" writes what the guest's init
# writes to the results export (stdout, started, finished, status) and exits.
# The real kernel cache and busybox are still needed, for the initramfs.
set -u
nw=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/boot-retry.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail=0

cat > "$dir/qemu-system-x86_64" <<'FAKE'
#!/bin/sh
# Plays QEMU: hangs for the first $HANGS starts, then runs "the command".
count_file=$FAKE_QEMU_DIR/starts
n=$(( $(cat "$count_file" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$count_file"
if [ "$n" -le "$FAKE_QEMU_HANGS" ]; then exec sleep 1000; fi
out=
for a in "$@"; do
    case "$a" in *mount_tag=nwout*) out=${a#local,path=}; out=${out%%,mount_tag=nwout*} ;; esac
done
[ -n "$out" ] || exit 3
echo "the command ran" > "$out/stdout"
: > "$out/stderr"
echo 1.00 > "$out/started"
echo 1.50 > "$out/finished"
echo 0 > "$out/status"
exit 0
FAKE
chmod +x "$dir/qemu-system-x86_64"

run() {  # run HANGS: numaware vm with the stand-in, stdout/stderr/status kept in $dir
    rm -f "$dir/starts"
    start=$(date +%s)
    FAKE_QEMU_DIR=$dir FAKE_QEMU_HANGS=$1 PATH="$dir:$PATH" \
        "$nw" vm --machine "nodes=2 cpus-per-node=1 mem-per-node=512M" --kernel 6.1 --timeout 120 \
        --boot-timeout 2 -- true > "$dir/stdout" 2> "$dir/stderr"
    status=$?
    seconds=$(( $(date +%s) - start ))
    starts=$(cat "$dir/starts" 2>/dev/null || echo 0)
}
check() {  # check WHAT CONDITION...
    what=$1; shift
    if "$@"; then echo "ok   $what"; else echo "FAIL $what"; fail=1; fi
}

run 1
check "one hung boot: booted twice (got $starts)" [ "$starts" = 2 ]
check "one hung boot: the command's status (got $status)" [ "$status" = 0 ]
check "one hung boot: the command's output" grep -qx "the command ran" "$dir/stdout"
check "one hung boot: the retry is named on stderr" grep -q "the command had not started after 2 s" "$dir/stderr"
check "one hung boot: given up long before --timeout (took $seconds s)" [ "$seconds" -lt 60 ]
[ "$fail" = 0 ] || cat "$dir/stderr"

run 2
check "two hung boots: booted twice, no more (got $starts)" [ "$starts" = 2 ]
check "two hung boots: numaware fails (got $status)" [ "$status" != 0 ]
check "two hung boots: one line names --boot-timeout" grep -q "^numaware: --boot-timeout: the guest had not started the command after 2 s, in two boots" "$dir/stderr"
check "two hung boots: given up long before --timeout (took $seconds s)" [ "$seconds" -lt 60 ]
[ "$fail" = 0 ] || cat "$dir/stderr"

run 0
check "a boot that works: booted once (got $starts)" [ "$starts" = 1 ]
check "a boot that works: no retry named" sh -c "! grep -q 'booted again' '$dir/stderr'"
for bad in 0 -5 inf 1e9; do
    rm -f "$dir/starts"
    FAKE_QEMU_DIR=$dir FAKE_QEMU_HANGS=0 PATH="$dir:$PATH" \
        "$nw" vm --machine "nodes=2" --kernel 6.1 --boot-timeout "$bad" -- true > "$dir/stdout" 2> "$dir/stderr"
    status=$?
    check "--boot-timeout $bad: refused (got $status)" [ "$status" != 0 ]
    check "--boot-timeout $bad: one line naming the option and the limit" \
        sh -c "[ \$(wc -l < '$dir/stderr') = 1 ] && grep -q '^numaware: --boot-timeout: .*at most 604800' '$dir/stderr'"
    check "--boot-timeout $bad: nothing booted" [ ! -e "$dir/starts" ]
done
exit "$fail"
