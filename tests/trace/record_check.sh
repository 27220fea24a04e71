#!/usr/bin/env bash
# tests/trace/record_check.sh NUMAWARE OMP_TRIAD — traces of real, unmodified
# programs: `numaware trace record` (Valgrind tool nwtrace), then
# `numaware sim memory --trace`.
#
#  1. python3 -c, sqlite3 :memory: and a small OpenMP run of omp_triad
#     (3 threads): the trace has the expected threads (OpenMP: the team
#     size) and a plausible access count, and its replay succeeds with
#     simulated: true;
#  2. omp_triad 8 on 4 threads against the built-in workload stream:8 on 4
#     threads, and omp_triad 32 on 16 threads against the built-in default
#     stream (32 MiB, every core of thesis-4s): the measured triad phase's
#     L1, L2 and L3 demand misses agree within 2 %;
#  3. bad input: a truncated trace and a foreign file are rejected with the
#     byte offset, a missing file with its path, each in one line;
#  4. the advisor on omp_triad: train at the test size, advise run simulated
#     (the chosen configurations are of the model, the speedups consistent)
#     and --live (it says what it applied and which counters are missing).
#
# Prints every figure it measured (trace size, record time, replay speed).
# The programs are the real binaries (/usr/bin/python3 rather than a shim
# on PATH: the trace ends where a program execs another).
set -euo pipefail
nw=$1
triad=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
sqlite=$(command -v sqlite3) || fail "sqlite3 is not installed (scripts/bootstrap installs it)"

# json FILE EXPR: evaluates a Python expression over the JSON document d.
json() { "$py" -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

# record NAME THREADS MIN MAX -- PROGRAM...: records, checks the summary.
record() {
    local name=$1 threads=$2 min=$3 max=$4
    shift 5
    "$nw" trace record --json -o "$tmp/$name.nwt" -- "$@" >"$tmp/$name.out" || fail "$name: trace record failed"
    tail -n 1 "$tmp/$name.out" >"$tmp/$name.rec.json"
    local t a
    t=$(json "$tmp/$name.rec.json" 'd["threads"]')
    a=$(json "$tmp/$name.rec.json" 'd["accesses"]')
    [ "$t" = "$threads" ] || fail "$name: $t thread(s) recorded, expected $threads"
    [ "$a" -ge "$min" ] && [ "$a" -le "$max" ] || fail "$name: $a accesses, expected $min to $max"
    echo "$name: $(json "$tmp/$name.rec.json" '"%d threads, %d accesses, %d instructions, %d bytes (%.1f bytes/access), recorded in %.2f s" % (d["threads"], d["accesses"], d["instructions"], d["bytes"], d["bytes"] / d["accesses"], d["record_s"])')"
}

# replay NAME [ARGS...]: replays, checks simulated: true, prints the speed.
replay() {
    local name=$1
    shift
    local start end
    start=$(date +%s.%N)
    "$nw" sim memory --trace "$tmp/$name.nwt" --json "$@" >"$tmp/$name.sim.json" || fail "$name: replay failed"
    end=$(date +%s.%N)
    [ "$(json "$tmp/$name.sim.json" 'd["simulated"] and d["runs"][0]["simulated"]')" = True ] ||
        fail "$name: the replay is not labelled simulated"
    "$py" - "$tmp/$name.sim.json" "$tmp/$name.rec.json" "$start" "$end" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); rec = json.load(open(sys.argv[2]))
s = float(sys.argv[4]) - float(sys.argv[3]); r = d["runs"][0]; lv = r["levels"]
print("%s: replayed %d accesses in %.2f s (%.2f M accesses/s); measured %d accesses; L1/L2/L3 demand misses %d / %d / %d; simulated %.6f s"
      % (rec["trace"], rec["accesses"], s, rec["accesses"] / s / 1e6, r["accesses"], lv["l1"]["demand_misses"],
         lv["l2"]["demand_misses"], lv["l3"]["demand_misses"], r["simulated_s"]))
EOF
}

echo "== 1. real programs"
record python 1 1000000 500000000 -- "$py" -c 'import json; print(json.dumps({"sum": sum(range(10000))}))'
replay python
record sqlite 1 100000 500000000 -- "$sqlite" :memory: \
    'create table t(k integer primary key, v text);
     with recursive n(i) as (select 1 union all select i + 1 from n where i < 2000)
     insert into t(v) select hex(randomblob(16)) from n;
     select count(*), sum(length(v)) from t;'
replay sqlite
# 1 MiB per array: 3 x 131072 elements; the measured triad is 3 accesses
# per element plus the OpenMP runtime's own.
OMP_NUM_THREADS=3 OMP_WAIT_POLICY=passive record omp 3 786432 50000000 -- "$triad" 1
replay omp
measured=$(json "$tmp/omp.sim.json" 'd["runs"][0]["accesses"]')
[ "$measured" -ge 393216 ] && [ "$measured" -le 412876 ] ||
    fail "omp: $measured accesses in the measured triad, expected 393216 (3 x 131072) to 5 % more"
[ "$(json "$tmp/omp.sim.json" '[p["name"] for p in d["runs"][0]["phases"] if p["measured"]]')" = "['triad']" ] ||
    fail "omp: the measured phase is not the triad alone"

# compare_stream NAME MIB THREADS WORKLOAD: the recorded triad against the
# built-in workload on thesis-4s, demand misses per level within 2 %.
compare_stream() {
    local name=$1 mib=$2 threads=$3 workload=$4 elems
    elems=$((mib * 131072))
    OMP_NUM_THREADS=$threads OMP_WAIT_POLICY=passive record "$name" "$threads" $((6 * elems)) $((20 * elems)) -- "$triad" "$mib"
    replay "$name" --preset thesis-4s
    "$nw" sim memory --workload "$workload" --threads "$threads" --preset thesis-4s --json >"$tmp/$name.builtin.json"
    "$py" - "$tmp/$name.sim.json" "$tmp/$name.builtin.json" "$name" <<'EOF'
import json, sys
traced = json.load(open(sys.argv[1]))["runs"][0]["levels"]
builtin = json.load(open(sys.argv[2]))["runs"][0]["levels"]
bad = []
for level in ("l1", "l2", "l3"):
    t, b = traced[level]["demand_misses"], builtin[level]["demand_misses"]
    diff = (t - b) / b
    print("%s %s demand misses: recorded %d, built-in %d, %+.3f %%" % (sys.argv[3], level.upper(), t, b, 100 * diff))
    if abs(diff) > 0.02:
        bad.append(level)
if bad:
    print("FAIL: more than 2 % apart at " + ", ".join(bad))
    sys.exit(1)
EOF
}

echo "== 2. recorded STREAM triads against the built-in stream (thesis-4s)"
compare_stream stream8 8 4 stream:8
compare_stream stream32 32 16 stream   # the built-in default: 32 MiB, every core

echo "== 3. bad input"
one_line_error() {   # one_line_error WHAT EXPECTED ARGS...: fails in one line containing EXPECTED
    local what=$1 expected=$2
    shift 2
    if "$nw" "$@" >"$tmp/err.out" 2>&1; then fail "$what: accepted"; fi
    [ "$(wc -l <"$tmp/err.out")" -eq 1 ] || fail "$what: not one line: $(cat "$tmp/err.out")"
    grep -qF -- "$expected" "$tmp/err.out" || fail "$what: '$(cat "$tmp/err.out")' lacks '$expected'"
    echo "$what: $(cat "$tmp/err.out")"
}
size=$(stat -c %s "$tmp/python.nwt")
head -c $((size / 2)) "$tmp/python.nwt" >"$tmp/truncated.nwt"
one_line_error truncated "byte offset" sim memory --trace "$tmp/truncated.nwt"
one_line_error foreign "at byte offset 0" sim memory --trace "$triad"
one_line_error missing "$tmp/missing.nwt" sim memory --trace "$tmp/missing.nwt"
one_line_error both "excludes" sim memory --trace "$tmp/python.nwt" --workload stream
echo "== 4. the advisor on a real program (numaware advise run; the model from the test-size sweep)"
"$nw" advise train --preset thesis-4s --size test --store "$tmp/advise.sqlite" --folds 5 --screen 6 \
    --output "$tmp/model.json" --workers 1 || fail "advise train failed"
OMP_NUM_THREADS=3 OMP_WAIT_POLICY=passive "$nw" advise run --model "$tmp/model.json" --json -- "$triad" 1 \
    >"$tmp/advise.json" || fail "advise run (simulated) failed"
"$py" - "$tmp/advise.json" "$tmp/model.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); m = json.load(open(sys.argv[2]))
assert d["simulated"] is True and "simulated" in d["label"], "not labelled simulated"
regions = [r["region"] for r in d["regions"]]
assert any(r.endswith("/triad") for r in regions), regions
for r in d["regions"]:
    assert r["chosen"] in m["output_space"], r
    assert abs(r["speedup"] - r["baseline_s"] / r["simulated_s"]) < 1e-9 * r["speedup"], r
assert abs(d["speedup"] - d["baseline_s"] / d["simulated_s"]) < 1e-9 * d["speedup"]
print("advise run (simulated) on omp_triad 1: %s; %.3fx the baseline, the training's best single %.3fx"
      % (", ".join("%s -> %s" % (r["region"], r["chosen"]) for r in d["regions"]), d["speedup"],
         d["best_single_speedup"]))
EOF
OMP_NUM_THREADS=3 "$nw" advise run --model "$tmp/model.json" --live -- "$triad" 1 >"$tmp/live.out" 2>"$tmp/live.err" ||
    fail "advise run --live failed: $(tail -n 3 "$tmp/live.err")"
cat "$tmp/live.err"
grep -q "running under threads=" "$tmp/live.err" || fail "advise run --live did not say what it applied"
# Without hardware counters (no perf, or a PMU that counts no instructions)
# the run must say so.
if ! command -v perf >/dev/null || perf stat -x , -e instructions -- true 2>&1 | grep -q "not supported"; then
    grep -q "hardware counters unavailable" "$tmp/live.err" || fail "advise run --live did not say counters are missing"
fi
echo "record_check: all passed"
