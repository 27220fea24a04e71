#!/bin/sh
# bench_apps_balancing_check.sh — numaware_bench_apps's --balancing: a bad
# value is one line naming the option and the accepted values, exit 2; each
# good value reports, in the JSON, what was asked and the kernel's state
# before and during the runs (or a note saying why it could not be read).
# usage: bench_apps_balancing_check.sh NUMAWARE_BENCH_APPS
set -u
apps=$1
fail() { echo "bench_apps_balancing_check: FAIL: $*" >&2; exit 1; }

out=$("$apps" --app nstream --policy sa --threads 1 --balancing bogus 2>&1)
rc=$?
[ "$rc" -eq 2 ] || fail "--balancing bogus exited $rc, expected 2"
echo "$out" | grep -q -- "--balancing: bogus not in {off,keep}" || fail "--balancing bogus said: $out"

for want in off keep; do
    "$apps" --app nstream --policy sa --threads 1 --balancing "$want" --json > json.$$ || fail "--balancing $want failed"
    python3 - "$want" json.$$ <<'PY' || fail "--balancing $want: report"
import json, sys
want, path = sys.argv[1:3]
b = json.load(open(path))["balancing"]
assert b["requested"] == want, b
if "note" in b:
    assert "during" not in b or want == "keep", b   # could not switch it off
else:
    assert b["before"] in ("off", "normal", "memory-tiering", "normal+memory-tiering"), b
    assert b["during"] == ("off" if want == "off" else b["before"]), b
print(want, b)
PY
done
rm -f json.$$
