#!/usr/bin/env bash
# tests/omp/run_suite.sh SHIM LIBGOMP PROGRAM... — the OpenMP construct suite
# under libgomp and under libnumaware_omp.so (LD_PRELOAD), compared byte for
# byte, at 1 to 4 threads (4 oversubscribes this 2-CPU machine) and under
# every NUMAWARE_POLICY; then the shim's refusals: an unknown policy, an
# invalid OMP_NUM_THREADS, an entry point it lacks; and its exports against
# libgomp's.
set -u
shim=$1 libgomp=$2
shift 2
# A sanitizer's runtime must come first when the shim is built with one
# (OMP_SUITE_PRELOAD_FIRST: the ThreadSanitizer test, tests/CMakeLists.txt).
preload="${OMP_SUITE_PRELOAD_FIRST:+$OMP_SUITE_PRELOAD_FIRST:}$shim"
fail=0
say() { printf '%s\n' "$*"; }
bad() { say "FAIL: $*"; fail=1; }
# same_as_libgomp VARS PROG [ARG...]: PROG's output under libgomp and under
# the shim with the environment VARS (NAME=VALUE words) must be equal; a
# difference fails, shown.
same_as_libgomp() {
    local vars=$1 want got
    shift
    want=$(env $vars "$@" 2>&1)
    got=$(env $vars LD_PRELOAD="$preload" "$@" 2>&1)
    [[ $got == "$want" ]] || { bad "$(basename "$1") $* with $vars: output differs"; diff <(echo "$want") <(echo "$got") | head; }
}

# display_env_as_libgomp VARS REGEX PROG: the OMP_DISPLAY_ENV lines that
# match REGEX must read as libgomp's. Under the shim they are the last ones:
# its block comes after libgomp's own, which the program loads too.
display_env_as_libgomp() {
    local vars=$1 regex=$2 prog=$3 want got n
    want=$(env $vars OMP_DISPLAY_ENV=true "$prog" 2>&1 >/dev/null | grep -E "$regex")
    n=$(printf '%s\n' "$want" | grep -c .)
    got=$(env $vars OMP_DISPLAY_ENV=true LD_PRELOAD="$preload" "$prog" 2>&1 >/dev/null | grep -E "$regex" | tail -n "$n")
    [[ -n $want && $got == "$want" ]] || bad "OMP_DISPLAY_ENV with $vars: '$got', libgomp '$want'"
}

# The policies, from the shim's own refusal of a bogus one (one line,
# status 2, naming the variable and listing them).
out=$(NUMAWARE_POLICY=bogus LD_PRELOAD=$preload "$1" 2>&1 >/dev/null); rc=$?
lines=$(printf '%s\n' "$out" | grep -c .)
if [[ $rc -ne 2 || $lines -ne 1 || $out != *"NUMAWARE_POLICY"*"unknown policy 'bogus'; expected one of "* ]]; then
    bad "NUMAWARE_POLICY=bogus: status $rc, output: $out"
fi
for prog in "$@"; do [[ -x $prog ]] || { say "FAIL: $prog is not built"; exit 1; }; done
# LLVM's libomp (Debian's libomp5, which scripts/bootstrap installs): the
# reference where libgomp cannot be one (fork, LLVM's ABI below).
libomp=$(ldconfig -p | awk '/libomp\.so\.5 / && !found {print $NF; found = 1}')   # reads to the end: no SIGPIPE for ldconfig under pipefail
policies=$(printf '%s\n' "$out" | sed -n 's/.*expected one of //p' | sed 's/,//g')
[[ -n $policies ]] || { say "FAIL: no policy list in: $out"; exit 1; }
say "policies: $policies"

for prog in "$@"; do
    name=$(basename "$prog")
    # Checked by their own sections below (not compared with libgomp here).
    case $name in unsupported | deadlock | fork | wait_policy | dynamic | refuse_syscalls | app_*) continue ;; esac
    for n in 1 2 3 4; do
        want=$(OMP_NUM_THREADS=$n "$prog" 2>&1) || bad "$name under libgomp, $n threads: status $?"
        for policy in $policies; do
            # A hang (timeout's status 124) fails this run alone, named.
            got=$(OMP_NUM_THREADS=$n NUMAWARE_POLICY=$policy LD_PRELOAD=$preload timeout 120 "$prog" 2>&1) ||
                bad "$name under the shim, $n threads, $policy: status $?"
            if [[ $got != "$want" ]]; then
                bad "$name, $n threads, $policy: output differs from libgomp's"
                diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | head -20
            fi
        done
        say "ok: $name, $n threads, every policy"
    done
    # The environment's schedule reaches schedule(runtime) the same way.
    for sched in "static,5" "dynamic,3" "guided" "nonmonotonic:dynamic"; do
        same_as_libgomp "OMP_SCHEDULE=$sched OMP_NUM_THREADS=3" "$prog"
    done
done

# A process restricted to one CPU (taskset, as a cpuset or a batch job
# would): the default team, omp_get_num_procs and the binding follow it.
if command -v taskset >/dev/null; then
    last=$(taskset -cp $$ | sed 's/.*: //; s/.*[,-]//')
    for prog in "$@"; do
        [[ $(basename "$prog") == sync ]] || continue
        # Also with binding asked for: libgomp's constructor binds the
        # initial thread before the shim's runs, and the shim must still
        # see the launch mask (launch_cpus.hpp; before, it took the
        # cgroup's CPUs and died planning two threads on a mask of one).
        for bind in "" "OMP_PROC_BIND=close" "OMP_PLACES=cores" "OMP_PROC_BIND=spread OMP_PLACES=threads"; do
            want=$(env $bind taskset -c "$last" "$prog" 2>&1)
            got=$(env $bind LD_PRELOAD=$preload taskset -c "$last" "$prog" 2>&1)
            [[ $got == "$want" ]] || { bad "sync on CPU $last alone ${bind:-unbound}: output differs"; diff <(echo "$want") <(echo "$got") | head; }
        done
        say "ok: sync restricted to CPU $last (taskset), unbound and bound, as under libgomp"
    done
else
    bad "taskset is missing (util-linux): the restricted-CPU case cannot run"
fi

# A sysfs whose node directory lists no node (a container or sandbox that
# masked it with an empty directory): hwloc's Linux backend stops the
# process there (an assertion), so the shim's machine is one node without
# asking it; the program runs as under libgomp. A mount namespace of our
# own (unshare -rm: root, or an unprivileged user namespace) holds the
# empty directory.
# The same for a masked CPU directory (/sys/devices/system/cpu empty):
# hwloc's backend would print its "failed to find sysfs cpu topology
# directory" on the program's stderr, so the shim reads the node directory
# itself and the output (stderr included) is libgomp's.
masked() { unshare -rm sh -c 'mount -t tmpfs none "$0" && exec env "$@"' "$@"; }
if command -v unshare >/dev/null && unshare -rm true 2>/dev/null; then
    for prog in "$@"; do
        [[ $(basename "$prog") == sync ]] || continue
        for dir in /sys/devices/system/node /sys/devices/system/cpu; do
            want=$(masked "$dir" OMP_NUM_THREADS=2 "$prog" 2>&1) || bad "sync under libgomp with an empty $dir: status $?"
            got=$(masked "$dir" OMP_NUM_THREADS=2 LD_PRELOAD=$preload "$prog" 2>&1) ||
                bad "sync under the shim with an empty $dir: status $? ($(printf '%s' "$got" | head -c 300))"
            [[ $got == "$want" ]] || { bad "sync with an empty $dir: output differs from libgomp's"; diff <(echo "$want") <(echo "$got") | head; }
            say "ok: sync with an empty $dir, as under libgomp"
        done
    done
else
    bad "unshare -rm is refused here (util-linux's unshare, and root or user namespaces): the masked-sysfs case cannot run"
fi

# Binding requested through the environment: libgomp, loaded beside the
# shim, binds the initial thread before the shim starts; the CPU count and
# the default team must still be the process's (as libgomp's are).
for prog in "$@"; do
    [[ $(basename "$prog") == sync ]] || continue
    for bind in "OMP_PROC_BIND=close" "OMP_PROC_BIND=spread" "OMP_PLACES=cores" "OMP_PROC_BIND=false"; do
        same_as_libgomp "$bind" "$prog"
    done
    say "ok: sync under OMP_PROC_BIND/OMP_PLACES as under libgomp"
done

# Nested teams where OMP_PLACES and an OMP_PROC_BIND list put them: each
# inner thread counted from its encountering thread's place; proc_bind
# clauses, and OMP_PROC_BIND=false, under which they are ignored (nested.c).
for prog in "$@"; do
    [[ $(basename "$prog") == nested ]] || continue
    for bind in "close,close" "close,primary" "close,spread" "primary,close" "true" "false" "spread"; do
        extra=""
        [[ $bind == true ]] && extra="OMP_NESTED=true"
        same_as_libgomp "NESTED_PLACES=1 OMP_PLACES=threads OMP_PROC_BIND=$bind $extra" "$prog"
    done
    say "ok: nested teams' places under OMP_PROC_BIND lists as under libgomp"
    # OMP_THREAD_LIMIT bounds the nested teams' threads together.
    for limit in 2 3 4 6 9; do
        same_as_libgomp "NESTED_THREAD_LIMIT=1 OMP_THREAD_LIMIT=$limit" "$prog"
    done
    say "ok: OMP_THREAD_LIMIT over nested teams as under libgomp"
done

# OMP_NUM_THREADS=0 is not a positive integer: the standard leaves it to the
# implementation; like libgomp, one line says so and the default is used.
for prog in "$@"; do
    [[ $(basename "$prog") == sync ]] || continue
    want=$("$prog" 2>/dev/null)
    got=$(OMP_NUM_THREADS=0 LD_PRELOAD=$preload "$prog" 2>/tmp/omp_suite_err.$$); rc=$?
    err=$(cat /tmp/omp_suite_err.$$); rm -f /tmp/omp_suite_err.$$
    [[ $rc -eq 0 && $got == "$want" ]] || bad "OMP_NUM_THREADS=0: status $rc or output differs from the default's"
    # (libgomp, loaded because the program links it, says so too.)
    grep -qx "numaware-omp: invalid value for environment variable OMP_NUM_THREADS: '0' (expected a list of positive integers); the default is used" <<<"$err" ||
        bad "OMP_NUM_THREADS=0: message: $err"
    say "ok: OMP_NUM_THREADS=0 warns and keeps the default"
done

# The task applications in plain OpenMP (tests/omp/apps): each checks its
# result against its serial reference; task count and checksum must be
# libgomp's (the time differs, so it is left out of the comparison).
for prog in "$@"; do
    name=$(basename "$prog")
    [[ $name == app_* ]] || continue
    for n in 1 2 3 4; do
        want=$(OMP_NUM_THREADS=$n "$prog" --size test 2>&1 | sed 's/ seconds=[^ ]*//') ||
            bad "$name under libgomp, $n threads: status $?"
        [[ $want == *" ok=1" ]] || bad "$name under libgomp, $n threads: $want"
        for policy in $policies; do
            got=$(OMP_NUM_THREADS=$n NUMAWARE_POLICY=$policy LD_PRELOAD=$preload "$prog" --size test 2>&1 |
                  sed 's/ seconds=[^ ]*//') || bad "$name under the shim, $n threads, $policy: status $?"
            [[ $got == "$want" ]] || bad "$name, $n threads, $policy: '$got', libgomp '$want'"
        done
    done
    say "ok: $name at 1-4 threads, every policy: $want"
done

# NUMAWARE_REPORT=FILE: the run report (one per task runtime) and the
# Chrome trace beside it; the program's output is unchanged. A file that
# cannot be written stops the program at start, in one line.
for prog in "$@"; do
    [[ $(basename "$prog") == tasks_depend ]] || continue
    dir=$(mktemp -d)
    want=$(OMP_NUM_THREADS=2 "$prog" 2>&1)
    got=$(OMP_NUM_THREADS=2 NUMAWARE_POLICY=dep NUMAWARE_REPORT=$dir/run.json LD_PRELOAD=$preload "$prog" 2>&1) ||
        bad "tasks_depend with NUMAWARE_REPORT: status $?"
    [[ $got == "$want" ]] || bad "tasks_depend with NUMAWARE_REPORT: output differs from libgomp's"
    if python3 - "$dir/run.json" "$dir/run.trace.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
rts = report["runtimes"]
assert len(rts) == 1, rts
r = rts[0]["report"]
assert rts[0]["threads"] == 2 and rts[0]["trace"] == sys.argv[2], rts[0]
assert r["policy"] == "dep" and r["tasks"] > 100, r
assert sum(r["tasks_per_node"]) == r["tasks"], r
assert 0 < r["load_balance_pct"] <= 100, r
trace = json.load(open(sys.argv[2]))
begins = [e for e in trace["traceEvents"] if e.get("ph") == "B"]
assert len(begins) == r["tasks"], (len(begins), r["tasks"])
PY
    then say "ok: NUMAWARE_REPORT writes the run report and its trace"
    else bad "NUMAWARE_REPORT: report or trace wrong (files in $dir)"; dir=""
    fi
    out=$(NUMAWARE_REPORT=/nonexistent-dir/run.json LD_PRELOAD=$preload "$prog" 2>&1); rc=$?
    [[ $rc -eq 2 && $out == "numaware-omp: NUMAWARE_REPORT: cannot write '/nonexistent-dir/run.json': No such file or directory" ]] ||
        bad "NUMAWARE_REPORT to a missing folder: status $rc, output: $out"
    [[ -n $dir ]] && rm -rf "$dir"
done

# The task throttle (tasking.cpp): tasks without depend made faster than
# the team runs them run at once beyond NUMAWARE_TASK_THROTTLE unfinished
# tasks per thread, so the shim keeps about libgomp's memory (without it,
# every task waits queued: 114 MB against libgomp's 14 MB for this
# program's 600,000 tasks, 2026-11-28), and a thread that creates a task
# with depend there first runs ready ones (the last phase: 400,000
# dependent tasks made by every thread held 341 MB before, 2026-12-07).
# The report counts the tasks run at
# once beside the runtime's; 0 turns the throttle off; a bad value stops
# the program in one line.
for prog in "$@"; do
    [[ $(basename "$prog") == tasks_producer ]] || continue
    if python3 - "$prog" "$preload" <<'PY'
import json, os, subprocess, sys, tempfile
prog, preload = sys.argv[1], sys.argv[2]
def run(extra, args=()):
    """The program's output and its own peak resident KB (wait4's rusage)."""
    env = dict(os.environ, OMP_NUM_THREADS="2", **extra)
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen([prog, *args], env=env, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)   # reaped here, not by Popen
        out.seek(0), err.seek(0)
        text, errors = out.read(), err.read()
    assert p.returncode == 0, (extra, p.returncode, text, errors)
    assert text.count(" 0 did not") == 4, text
    return text, usage.ru_maxrss
# Peak memory, not under a sanitizer (its shadow memory would dominate):
# the shim with its throttle near libgomp's, without it far above.
measure = not os.environ.get("OMP_SUITE_PRELOAD_FIRST")
n = 20000 if measure else 1000
if measure:
    want, gomp_kb = run({}, ["200000"])
    got, shim_kb = run({"LD_PRELOAD": preload, "NUMAWARE_POLICY": "dep"}, ["200000"])
    assert got == want, (got, want)
    assert shim_kb <= gomp_kb + 16 * 1024, f"with the throttle the shim peaked at {shim_kb} KB, libgomp at {gomp_kb} KB"
    _, free_kb = run({"LD_PRELOAD": preload, "NUMAWARE_POLICY": "dep", "NUMAWARE_TASK_THROTTLE": "0"}, ["200000"])
    assert free_kb > shim_kb + 32 * 1024, f"without the throttle {free_kb} KB, with it {shim_kb} KB: the test does not tell them apart"
    print(f"peak KB: libgomp {gomp_kb}, shim {shim_kb}, shim without throttle {free_kb}")
else:
    print("peak memory not checked: a sanitizer's shadow memory would dominate it")
# The report's counts: 5 x n tasks in all (the dependent pairs queued). Unthrottled, every task is in
# the Chrome trace (five events a task), which must cost about what its
# events take, not a JSON tree of the whole trace (349 MB for 60,000 tasks
# before 2026-11-28; 50 MB after).
d = tempfile.mkdtemp()
for throttle in ("64", "0"):
    path = f"{d}/run{throttle}.json"
    _, report_kb = run({"LD_PRELOAD": preload, "NUMAWARE_POLICY": "dfifo", "NUMAWARE_TASK_THROTTLE": throttle,
                        "NUMAWARE_REPORT": path}, [str(n)])
    if throttle == "0" and measure:
        assert report_kb <= gomp_kb + 96 * 1024, f"the report of {5 * n} tasks peaked at {report_kb} KB"
        print(f"peak KB of the report of {5 * n} tasks: {report_kb}")
    r = json.load(open(path))
    queued = sum(x["report"]["tasks"] for x in r["runtimes"])
    at_once = r["tasks_run_at_once"]
    assert queued + at_once == 5 * n, (throttle, queued, at_once)
    assert (at_once > 0) if throttle == "64" else (at_once == 0), (throttle, queued, at_once)
PY
    then say "ok: the task throttle keeps a producer's tasks bounded and reports them"
    else bad "the task throttle: see above"
    fi
    for v in abc -1 16777217; do
        out=$(NUMAWARE_TASK_THROTTLE=$v LD_PRELOAD=$preload "$prog" 10 2>&1); rc=$?
        [[ $rc -eq 2 && $out == "numaware-omp: NUMAWARE_TASK_THROTTLE: '$v' is not an integer from 0 to 16777216 "* &&
           $(grep -c . <<<"$out") -eq 1 ]] || bad "NUMAWARE_TASK_THROTTLE=$v: status $rc, output: $out"
    done
done
# OMP_DISPLAY_ENV and OMP_DISPLAY_AFFINITY: the shim's own block (after
# libgomp's, which is loaded too) names the places and, verbose, numaware's
# variables; each thread shows its line in the format asked for, once.
for prog in "$@"; do
    [[ $(basename "$prog") == affinity ]] || continue
    err=$(OMP_DISPLAY_ENV=verbose OMP_PLACES=threads NUMAWARE_POLICY=dep LD_PRELOAD=$preload "$prog" 2>&1 >/dev/null)
    blocks=$(grep -c '^OPENMP DISPLAY ENVIRONMENT BEGIN$' <<<"$err")
    places=$(nproc)
    want_places=$(seq 0 $((places - 1)) | sed 's/.*/{&}/' | paste -sd, -)
    if [[ $blocks -lt 1 ]] || ! grep -qx "  NUMAWARE_POLICY = 'dep'" <<<"$err" ||
        ! grep -qx "  OMP_PLACES = '$want_places'" <<<"$err"; then
        bad "OMP_DISPLAY_ENV=verbose: no block with NUMAWARE_POLICY and OMP_PLACES '$want_places': $err"
    else
        say "ok: OMP_DISPLAY_ENV=verbose shows the places and numaware's variables"
    fi
    err=$(OMP_DISPLAY_AFFINITY=true OMP_AFFINITY_FORMAT='T%n/%N' OMP_NUM_THREADS=2 LD_PRELOAD=$preload "$prog" 2>&1 >/dev/null)
    lines=$(grep -E '^(T[0-9]+/[0-9]+|thread [0-9]+ of [0-9]+)$' <<<"$err" | sort | uniq -c |
            awk '{$1 = $1; n = $1; $1 = ""; print substr($0, 2) " x" n}' | paste -sd, -)
    # The program's regions: 3 threads in OMP_AFFINITY_FORMAT; then, after
    # it sets the format "thread %n of %N", 2 threads three times, a pause
    # before each of the last two (new pool threads: thread 1 shows anew).
    # A thread shows a line when its line changes.
    [[ $lines == "T0/3 x1,T1/3 x1,T2/3 x1,thread 0 of 2 x1,thread 1 of 2 x3" ]] ||
        bad "OMP_DISPLAY_AFFINITY=true: lines: $lines ($err)"
    say "ok: OMP_DISPLAY_AFFINITY=true: $lines"
done

# Without OMP_PROC_BIND and OMP_PLACES, bind-var is false and the initial
# thread, the threads and the processes it starts keep its mask (the main
# loop compares inherit's output with libgomp's), but numaware still pins
# the pool threads it starts, one CPU each while there are CPUs for them:
# those of the first initial thread's teams only, not those of another
# thread's teams, which would share the same CPUs.
for prog in "$@"; do
    [[ $(basename "$prog") == inherit ]] || continue
    out=$(INHERIT_POOL=1 OMP_NUM_THREADS=2 LD_PRELOAD=$preload "$prog" 2>&1)
    grep -qx "pool thread 1: 1 CPUs" <<<"$out" || bad "inherit: numaware's pool thread is not pinned to one CPU: $out"
    grep -qx "another initial thread's pool thread 1: $(nproc) CPUs" <<<"$out" ||
        bad "inherit: another initial thread's pool thread is not unbound ($(nproc) CPUs): $out"
    want=$(INHERIT_POOL=1 OMP_NUM_THREADS=2 "$prog" 2>&1 | grep -v '^pool thread')
    [[ $(grep -v '^pool thread' <<<"$out") == "$want" ]] || bad "inherit with INHERIT_POOL=1: output differs from libgomp's: $out"
    say "ok: unbound by default as under libgomp (the initial thread, its threads and children keep its CPUs); pool thread pinned"
done

# libgomp's own binding variable, GOMP_CPU_AFFINITY (a CPU list: thread i
# on the i-th CPU), alone and beside OMP_PROC_BIND and OMP_PLACES, binds the
# threads as under libgomp. CPUs 0 and 1: the machine has at least two.
for prog in "$@"; do
    [[ $(basename "$prog") == affinity ]] || continue
    for vars in "GOMP_CPU_AFFINITY=1,0" "GOMP_CPU_AFFINITY=1" "GOMP_CPU_AFFINITY=0-1:1 OMP_NUM_THREADS=3" \
                "GOMP_CPU_AFFINITY=1,0 OMP_PROC_BIND=spread" "GOMP_CPU_AFFINITY=1,0 OMP_PLACES=threads" \
                "GOMP_CPU_AFFINITY=1,0 OMP_PROC_BIND=false" "OMP_PROC_BIND=false OMP_PLACES=threads"; do
        same_as_libgomp "OMP_NUM_THREADS=2 $vars" "$prog" masks
    done
    say "ok: GOMP_CPU_AFFINITY binds as under libgomp; OMP_PROC_BIND=false leaves no places"
    # OpenMP 5.1's ll_caches and an abstract name's count of places, which
    # GCC 12's libgomp reads (the shim refused ll_caches and ignored counts).
    for vars in "OMP_PLACES=ll_caches" "OMP_PLACES=ll_caches OMP_PROC_BIND=spread" "OMP_PLACES=cores(1)" \
                "OMP_PLACES=threads(1) OMP_PROC_BIND=spread" "OMP_PLACES=ll_caches(1) OMP_PROC_BIND=close"; do
        same_as_libgomp "OMP_NUM_THREADS=2 $vars" "$prog" masks
    done
    say "ok: OMP_PLACES=ll_caches and counted places bind as under libgomp"
done

# run-sched-var from OMP_SCHEDULE as libgomp reads it: a chunk of 0 is the
# kind's default, auto keeps a chunk (a runtime loop under auto is static
# with it), static is monotonic
# unless said otherwise (the shim refused 'dynamic,0', 'static,0' and
# 'auto,4', and reported chunk 0 where libgomp reports 1).
for prog in "$@"; do
    [[ $(basename "$prog") == schedule ]] || continue
    for s in "static" "static,0" "static,3" "dynamic,0" "guided" "auto" "auto,4" "monotonic:dynamic,2" \
             "nonmonotonic:static,5"; do
        same_as_libgomp "OMP_NUM_THREADS=3 OMP_SCHEDULE=$s" "$prog"
    done
    say "ok: OMP_SCHEDULE and omp_set_schedule as libgomp keeps them"
    # OMP_DISPLAY_ENV's schedule and wait policy, as libgomp shows them.
    for vars in "OMP_SCHEDULE=static,0" "OMP_SCHEDULE=monotonic:dynamic,3" "OMP_SCHEDULE=auto,4 OMP_WAIT_POLICY=active" \
                "OMP_WAIT_POLICY=passive"; do
        display_env_as_libgomp "$vars" "OMP_(SCHEDULE|WAIT_POLICY) =" "$prog"
    done
    say "ok: OMP_DISPLAY_ENV shows the schedule and the wait policy as libgomp does"
done

# Cancellation (cancel.c runs itself with OMP_CANCELLATION=true above):
# with cancel-var false the cancel constructs do nothing, as under libgomp,
# and OMP_DISPLAY_ENV shows cancel-var as libgomp does.
for prog in "$@"; do
    [[ $(basename "$prog") == cancel ]] || continue
    for n in 1 3; do same_as_libgomp "OMP_CANCELLATION=false OMP_NUM_THREADS=$n" "$prog"; done
    for v in true false; do display_env_as_libgomp "OMP_CANCELLATION=$v" "OMP_CANCELLATION =" "$prog"; done
    say "ok: cancellation off as under libgomp; OMP_DISPLAY_ENV shows cancel-var as libgomp does"
done

# A pinned allocator's blocks are locked in memory while they live (the
# shim only: GCC 12's libgomp refuses pinned allocators).
# Sanitizers turn mlock into a no-op, so under one (OMP_SUITE_PRELOAD_FIRST)
# this is said and not checked; the plain build's run checks it.
for prog in "$@"; do
    [[ $(basename "$prog") == allocators ]] || continue
    if [[ -n ${OMP_SUITE_PRELOAD_FIRST:-} ]]; then
        say "not checked here: pinned allocators (a sanitizer's mlock does nothing; omp.constructs checks them)"
        continue
    fi
    out=$(LD_PRELOAD=$preload "$prog" pinned 2>&1) || bad "pinned allocator: $out"
    say "ok: $out"
done

# Detached tasks fulfilled by a thread outside OpenMP: the shim only (GCC
# 12's libgomp hangs or crashes on them), at 1 to 4 threads and every policy.
for prog in "$@"; do
    [[ $(basename "$prog") == detach ]] || continue
    want="taskgroup ended after the fulfilment: 1
region ended after the fulfilment: 1
taskwait after a nested region's detached task: 200 of 200 children and 1 detached task done
if(0) task returned after the fulfilment: 1"
    watch=watch
    # Under a sanitizer the if(0) case's watcher (the program's own polling,
    # not instrumented) looks like a race to it: that case is left out, and
    # says so; the plain build's run checks it.
    if [[ -n ${OMP_SUITE_PRELOAD_FIRST:-} ]]; then
        watch=nowatch
        want="${want%if(0)*}if(0) task: not run (a sanitizer cannot see its watcher synchronise)"
        say "not checked here: a detached if(0) task fulfilled from outside (see above)"
    fi
    for n in 1 2 3 4; do
        for policy in $policies; do
            got=$(OMP_NUM_THREADS=$n NUMAWARE_POLICY=$policy LD_PRELOAD=$preload timeout 60 "$prog" outside $watch 2>&1) ||
                bad "detach outside, $n threads, $policy: status $?"
            [[ $got == "$want" ]] || bad "detach outside, $n threads, $policy: $got"
        done
    done
    say "ok: detached tasks fulfilled from outside OpenMP, 1-4 threads, every policy"
done

# An entry point the shim lacks stops the program at once, naming it
# (a target region), where libgomp runs the program (on the host).
refused() {   # PROGRAM SYMBOL WHAT
    local prog=$1 symbol=$2 what=$3 out rc
    OMP_NUM_THREADS=2 "$prog" >/dev/null 2>&1 || bad "$(basename "$prog") under libgomp: status $?"
    out=$(OMP_NUM_THREADS=2 LD_PRELOAD=$preload "$prog" 2>&1); rc=$?
    if [[ $rc -ne 2 || $out != "numaware-omp: $symbol: not supported by libnumaware_omp.so yet ($what); run this program without it (unset LD_PRELOAD)" ]]; then
        bad "unsupported $symbol: status $rc, output: $out"
    else
        say "ok: $symbol refused in one line"
    fi
}
for prog in "$@"; do
    case $(basename "$prog") in
        unsupported) refused "$prog" GOMP_offload_register_ver "device images from an offloading compiler" ;;
    esac
done

# A program of LLVM's OpenMP ABI (llvm_abi.c, built here with clang
# -fopenmp against LLVM's libomp, which scripts/bootstrap installs with
# clang): under libomp it runs; preloading the shim, whose omp_* functions
# would answer inside libomp's regions, stops it at its first region in one
# line instead of letting it run with a team of one.
llvm_cc=$(command -v clang-14 || command -v clang)
if [[ -z $llvm_cc || -z $libomp ]]; then
    bad "LLVM's ABI: clang (${llvm_cc:-missing}) or libomp.so.5 (${libomp:-missing}) is not installed (scripts/bootstrap installs both)"
else
    llvm_dir=$(mktemp -d)
    if "$llvm_cc" -fopenmp=libomp -O2 -c "$(dirname "$0")/llvm_abi.c" -o "$llvm_dir/llvm_abi.o" &&
        "$llvm_cc" "$llvm_dir/llvm_abi.o" -o "$llvm_dir/llvm_abi" "$libomp" -lpthread; then
        out=$(OMP_NUM_THREADS=2 "$llvm_dir/llvm_abi" 2>&1)
        [[ $out == "team 2, distinct thread numbers 2" ]] || bad "llvm_abi under libomp: $out"
        out=$(OMP_NUM_THREADS=2 LD_PRELOAD=$preload "$llvm_dir/llvm_abi" 2>&1); rc=$?
        want="numaware-omp: __kmpc_fork_call: not supported by libnumaware_omp.so yet (LLVM's OpenMP ABI, which code built with clang -fopenmp or icx calls, for libomp or libiomp5; the shim serves GCC's); run this program without it (unset LD_PRELOAD)"
        if [[ $rc -ne 2 || $out != "$want" ]]; then
            bad "a program of LLVM's ABI under the shim: status $rc, output: $out"
        else
            say "ok: a program of LLVM's ABI (clang -fopenmp, libomp) is refused in one line"
        fi
    else
        bad "llvm_abi.c does not build with $llvm_cc against $libomp"
    fi
    rm -rf "$llvm_dir"
fi

# A program that deadlocks by its own fault hangs under both runtimes, and
# the shim neither crashes nor returns (timeout's status 124 for both).
for prog in "$@"; do
    [[ $(basename "$prog") == deadlock ]] || continue
    timeout 3 "$prog" >/dev/null 2>&1; gomp_rc=$?
    LD_PRELOAD=$preload timeout 3 "$prog" >/dev/null 2>&1; shim_rc=$?
    if [[ $gomp_rc -ne 124 || $shim_rc -ne 124 ]]; then
        bad "the self-deadlocking program: status $gomp_rc under libgomp, $shim_rc under the shim (124: still waiting)"
    else
        say "ok: a self-deadlocking program hangs under both, no crash"
    fi
done

# OpenMP after fork() (fork.c): libgomp's child hangs, so the reference is
# LLVM's libomp (Debian's libomp5, which scripts/bootstrap installs), whose
# child starts afresh. ThreadSanitizer does not support a child that starts
# threads after a multithreaded parent forked it: not run under it.
for prog in "$@"; do
    [[ $(basename "$prog") == fork ]] || continue
    if [[ -n ${OMP_SUITE_PRELOAD_FIRST:-} ]]; then
        say "fork: not run with $OMP_SUITE_PRELOAD_FIRST preloaded (no threads after a multithreaded fork there)"
        continue
    fi
    [[ -n $libomp ]] || { bad "fork: LLVM's libomp (Debian package libomp5) is not installed"; continue; }
    for n in 1 2 3 4; do
        want=$(OMP_NUM_THREADS=$n LD_PRELOAD=$libomp timeout 60 "$prog" 2>&1) || bad "fork under libomp, $n threads: status $?"
        for policy in $policies; do
            got=$(OMP_NUM_THREADS=$n NUMAWARE_POLICY=$policy LD_PRELOAD=$preload timeout 60 "$prog" 2>&1) ||
                bad "fork under the shim, $n threads, $policy: status $? (124: a child still waiting)"
            [[ $got == "$want" ]] || { bad "fork, $n threads, $policy: output differs from libomp's"; diff <(echo "$want") <(echo "$got") | head; }
        done
    done
    say "ok: OpenMP in fork()'s children, 1-4 threads, every policy, as under libomp"
done

# What idle team threads cost (wait_policy.c: the CPU time a 2-thread
# team's other thread uses while the initial thread sleeps a second):
# OMP_WAIT_POLICY=passive and GOMP_SPINCOUNT=0 sleep at once (under 100 ms),
# OMP_WAIT_POLICY=active and GOMP_SPINCOUNT=INFINITE spin (over 250 ms: the
# CPU may be shared with other tests); GOMP_SPINCOUNT overrides
# OMP_WAIT_POLICY; libgomp alike. OMP_DISPLAY_ENV
# shows GOMP_SPINCOUNT as libgomp does when it is given.
for prog in "$@"; do
    [[ $(basename "$prog") == wait_policy ]] || continue
    for runtime in libgomp shim; do
        pre=""
        [[ $runtime == shim ]] && pre=$preload
        for case in "sleeps:OMP_WAIT_POLICY=passive" "sleeps:GOMP_SPINCOUNT=0" "sleeps:GOMP_SPINCOUNT=0 OMP_WAIT_POLICY=active" \
                    "spins:OMP_WAIT_POLICY=active" "spins:GOMP_SPINCOUNT=INFINITE" \
                    "spins:GOMP_SPINCOUNT=infinity OMP_WAIT_POLICY=passive"; do
            vars=${case#*:}
            out=$(env $vars LD_PRELOAD="$pre" "$prog" 2>&1)
            ms=$(printf '%s\n' "$out" | sed -n 's/.*used \([0-9]*\) ms.*/\1/p')
            [[ -n $ms && $out == "2 threads;"* ]] || { bad "wait_policy under $runtime with $vars: $out"; continue; }
            if [[ $case == spins:* ]]; then
                ((ms > 250)) || bad "$runtime with $vars: idle threads used $ms ms in a second (spinning: over 250)"
            else
                ((ms < 100)) || bad "$runtime with $vars: idle threads used $ms ms in a second (sleeping: under 100)"
            fi
        done
    done
    for v in 5k 0 "7 k" 2M infinite 12; do
        want=$(GOMP_SPINCOUNT="$v" OMP_DISPLAY_ENV=verbose "$prog" 2>&1 >/dev/null | grep "GOMP_SPINCOUNT =")
        got=$(GOMP_SPINCOUNT="$v" OMP_DISPLAY_ENV=verbose LD_PRELOAD=$preload "$prog" 2>&1 >/dev/null | grep "GOMP_SPINCOUNT =" | tail -n 1)
        [[ -n $want && $got == "$want" ]] || bad "OMP_DISPLAY_ENV with GOMP_SPINCOUNT='$v': '$got', libgomp '$want'"
    done
    out=$(GOMP_SPINCOUNT=1.5k LD_PRELOAD=$preload "$prog" 2>&1 >/dev/null | grep numaware-omp)
    [[ $out == *"GOMP_SPINCOUNT"*"'1.5k'"* ]] || bad "GOMP_SPINCOUNT=1.5k: '$out'"
    say "ok: idle threads sleep or spin by OMP_WAIT_POLICY and GOMP_SPINCOUNT, as under libgomp"
done

# dyn-var (dynamic.c): with OMP_DYNAMIC=true a team of OMP_NUM_THREADS=8, or
# a num_threads(64) clause, gets at most the CPUs the process may use (less
# the load, libgomp's rule: the machine's load decides the exact count, so
# only the bounds are checked); after omp_set_dynamic(0), the count asked
# for. Under libgomp and the shim alike.
for prog in "$@"; do
    [[ $(basename "$prog") == dynamic ]] || continue
    cpus=$(nproc)
    for runtime in libgomp shim; do
        pre=""
        [[ $runtime == shim ]] && pre=$preload
        out=$(OMP_DYNAMIC=true OMP_NUM_THREADS=8 LD_PRELOAD="$pre" "$prog" 2>&1)
        read -r d1 t1 c1 d0 t0 c0 <<< "$(printf '%s\n' "$out" | sed -n 's/^dynamic \([01]\): team \([0-9]*\), with num_threads(64) \([0-9]*\)$/\1 \2 \3/p' | tr '\n' ' ')"
        if [[ $d1 != 1 || $d0 != 0 || -z $c0 ]] || ((t1 < 1 || t1 > cpus || c1 < 1 || c1 > cpus || t0 != 8 || c0 != 64)); then
            bad "OMP_DYNAMIC=true under $runtime on $cpus CPUs: $out"
        fi
    done
    say "ok: OMP_DYNAMIC=true bounds teams by the CPUs as libgomp does; omp_set_dynamic(0) lifts it"
done

# A system that refuses to bind threads (refuse_syscalls
# sched_setaffinity: it fails with EPERM, as in a sandbox): binding that nobody asked for
# (numaware's default) is given up with one line on stderr and the program
# runs as under libgomp, which binds nothing by default; binding asked for
# (OMP_PROC_BIND=close) stops the program naming the thread and the error,
# as libgomp stops too.
refuse_syscalls=""
for prog in "$@"; do [[ $(basename "$prog") == refuse_syscalls ]] && refuse_syscalls=$prog; done
no_affinity() { "$refuse_syscalls" sched_setaffinity "$@"; }
for prog in "$@"; do
    [[ $(basename "$prog") == sync ]] || continue
    [[ -n $refuse_syscalls ]] || { bad "refuse_syscalls is not among the programs"; continue; }
    err=$(mktemp)
    for n in 1 3; do
        want=$(OMP_NUM_THREADS=$n no_affinity "$prog" 2>/dev/null)
        got=$(OMP_NUM_THREADS=$n LD_PRELOAD="$preload" no_affinity "$prog" 2>"$err")
        [[ $got == "$want" ]] || { bad "sync without binding, $n threads: output differs from libgomp's"; diff <(echo "$want") <(echo "$got") | head; }
        if ((n > 1)); then
            [[ $(grep -c . "$err") == 1 ]] && grep -q "threads run unbound" "$err" ||
                bad "sync without binding: stderr '$(cat "$err")' (one line saying the threads run unbound)"
        fi
    done
    rm -f "$err"
    out=$(OMP_PROC_BIND=close OMP_NUM_THREADS=2 LD_PRELOAD="$preload" no_affinity "$prog" 2>&1 >/dev/null); rc=$?
    [[ $rc == 2 && $(printf '%s\n' "$out" | grep -c .) == 1 && $out == *"cannot bind OpenMP thread"*"Operation not permitted"* ]] ||
        bad "OMP_PROC_BIND=close without binding: status $rc, '$out'"
    say "ok: where binding is refused, default teams run unbound (one line) and requested binding stops the program"
done

# Every GOMP_* and omp_* entry point of libgomp is the shim's, implemented
# or refused: none can fall through to libgomp's own state.
exports() { nm -D --defined-only "$1" | awk '{print $3}' | sed 's/@.*//' | grep -E '^(GOMP|omp)_' |
            grep -Ev '^GOMP_(PLUGIN_|[0-9])' | sort -u; }
missing=$(comm -23 <(exports "$libgomp") <(exports "$shim"))
[[ -z $missing ]] || bad "libgomp entry points the shim does not define: $(echo $missing)"
extra=$(nm -D --defined-only "$shim" | awk '$2 ~ /[TDBW]/ {print $3}' | grep -Ev '^((GOMP|omp|__kmpc)_|pthread_setaffinity_np$)' | head -5)
[[ -z $extra ]] || bad "the shim exports more than the OpenMP entry points: $(echo $extra)"
say "exports: $(exports "$shim" | wc -l) entry points, libgomp's $(exports "$libgomp" | wc -l) all covered"

exit $fail
