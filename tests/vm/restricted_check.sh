#!/bin/sh
# restricted_check.sh — numaware in a process that may use only part of the
# machine (issue 17), in one emulated 4-node boot (2 CPUs a node, CPUs 2k
# and 2k+1 on node k):
#   cgroup  a cgroup v2 cpuset with cpuset.cpus=2-5 and cpuset.mems=1,3:
#           node 0 left out (no CPU, no memory), node 1 whole, node 2 for
#           its CPUs only (memory not allowed), node 3 for its memory only
#   numactl numactl --cpunodebind=1: CPUs 2-3, every node's memory
#   both    numactl --physcpubind=2-3 inside that cgroup: CPUs 2-3 (node 1),
#           node 3 for its memory only, nodes 0 and 2 left out; both named
# The guest kernel allows for 1,100 CPUs (possible_cpus=1100), more than a
# cpu_set_t holds, as a server of more than 1,024 CPUs or its kernel command
# line does: the kernel refuses a fixed cpu_set_t to sched_getaffinity
# (EINVAL), so every restriction below is also read through masks of the
# kernel's size (util/cpu_mask.hpp); with a cpu_set_t, numactl's binding
# went unseen and `numaware topo` showed the whole machine.
# In each: `numaware topo` (text and JSON) must show that part and what was
# left out; the RestrictedGuest gtests (teams, the heap, placement; the
# expected sets read from the kernel) must pass; `numaware run` must place
# threads on allowed CPUs only and refuse a left-out CPU and a node whose
# memory is not allowed, in one line naming who restricts: the cpuset in the
# cgroup, the CPU affinity under numactl.
#
#   seccomp the NUMA memory-policy calls refused with EPERM, as a
#           container's default seccomp profile refuses them without
#           CAP_SYS_NICE (REFUSE: tests/support/refuse_syscalls.c
#           numa-policy): `numaware topo` works and says so; the drop-in malloc
#           (MALLOC) passes the allocator stress checks (STRESS) with its
#           memory placed by first touch and says so in one line, once,
#           and says nothing without the refusal; `numaware run --pages
#           bind:1` and `numaware probe` stop in one line naming EPERM and
#           the cause; the OpenMP shim (OMP) runs a Jacobi with depend
#           clauses (OMP_APP) under DEP and RIP-DEP with libgomp's output,
#           its report saying that homes come from the first writers since
#           the kernel refused move_pages.
#
# usage: restricted_check.sh NUMAWARE GUEST_TESTS MACHINE REFUSE MALLOC STRESS OMP OMP_APP
set -u

fail() {
    echo "restricted_check: FAIL: $*" >&2
    exit 1
}

# ---------------------------------------------------------------- guest side
if [ "${1:-}" = "--guest" ]; then
    nw=$2 tests=$3
    probe() {   # LABEL BY RUNNER...: the checks below, run by RUNNER; BY restricts
        label=$1 by=$2
        shift 2
        echo "@@ begin $label"
        "$@" "$nw" topo > /tmp/topo.txt 2>&1
        echo "@@ topo-exit=$?"
        sed 's/^/@@ topo /' /tmp/topo.txt
        "$@" "$nw" topo --json > /tmp/topo.json 2>&1
        echo "@@ json $(tr -d '\n' < /tmp/topo.json)"
        RESTRICTED_EXPECT_BY="$by" "$@" "$tests" --gtest_filter='RestrictedGuest.*' > /tmp/gtest.txt 2>&1
        echo "@@ gtest-exit=$?"
        sed 's/^/@@ gtest /' /tmp/gtest.txt
        "$@" "$nw" run --threads 2 --mapping scatter --json -- cat /proc/self/status > /tmp/run.txt 2> /tmp/run.err
        echo "@@ run-exit=$? $(grep '^Cpus_allowed_list' /tmp/run.txt | tr '\t' ' ')"
        echo "@@ run-json $(cat /tmp/run.err)"
        "$@" "$nw" run --cpus 0 -- true > /tmp/bad.txt 2>&1
        echo "@@ bad-cpu-exit=$? lines=$(wc -l < /tmp/bad.txt) $(cat /tmp/bad.txt)"
        "$@" "$nw" run --pages bind:2 -- true > /tmp/bad.txt 2>&1
        echo "@@ bad-node-exit=$? lines=$(wc -l < /tmp/bad.txt) $(cat /tmp/bad.txt)"
        echo "@@ end $label"
    }
    in_cgroup() {   # runs "$@" as a member of the job cgroup
        sh -c 'echo $$ > /sys/fs/cgroup/job/cgroup.procs && exec "$@"' sh "$@"
    }
    echo "@@ possible $(cat /sys/devices/system/cpu/possible)"
    mkdir -p /sys/fs/cgroup
    mount -t cgroup2 none /sys/fs/cgroup || echo "@@ setup: cannot mount cgroup2"
    echo "+cpuset" > /sys/fs/cgroup/cgroup.subtree_control || echo "@@ setup: no cpuset controller"
    mkdir -p /sys/fs/cgroup/job
    echo 2-5 > /sys/fs/cgroup/job/cpuset.cpus || echo "@@ setup: cpuset.cpus refused"
    echo 1,3 > /sys/fs/cgroup/job/cpuset.mems || echo "@@ setup: cpuset.mems refused"
    probe cgroup "this process's cpuset" in_cgroup
    probe numactl "this process's CPU affinity" numactl --cpunodebind=1
    probe both "this process's cpuset and this process's CPU affinity" in_cgroup numactl --physcpubind=2-3

    refuse=$4 malloc=$5 stress=$6 omp=$7 app=$8
    echo "@@ begin seccomp"
    "$refuse" numa-policy "$nw" topo > /tmp/topo.txt 2>&1
    echo "@@ topo-exit=$? $(grep -c '^memory policies: not available to this process (get_mempolicy: EPERM (the NUMA memory-policy calls are refused' /tmp/topo.txt)"
    STRESS_EXPECT_LIBRARY=$(basename "$malloc") LD_PRELOAD=$malloc "$refuse" numa-policy \
        "$stress" edges calloc realloc larson fork exit > /tmp/stress.txt 2> /tmp/stress.err
    echo "@@ stress-exit=$? notices=$(grep -c 'numaware-malloc: binding memory to NUMA nodes is refused (EPERM' /tmp/stress.err) lines=$(wc -l < /tmp/stress.err)"
    STRESS_EXPECT_LIBRARY=$(basename "$malloc") LD_PRELOAD=$malloc \
        "$stress" edges larson > /tmp/stress.txt 2> /tmp/stress.err
    echo "@@ stress-unrefused-exit=$? notices=$(grep -c 'numaware-malloc' /tmp/stress.err)"
    "$refuse" numa-policy "$nw" run --threads 2 --pages bind:1 -- true > /tmp/bad.txt 2>&1
    echo "@@ bind-exit=$? lines=$(wc -l < /tmp/bad.txt) $(cat /tmp/bad.txt)"
    "$refuse" numa-policy "$nw" probe --size 1M --iterations 20000 > /tmp/bad.txt 2>&1
    echo "@@ probe-exit=$? lines=$(wc -l < /tmp/bad.txt) $(cat /tmp/bad.txt)"
    # Its line but the time: app, tasks, checksum and the serial check.
    OMP_NUM_THREADS=4 "$app" --n 256 --block 32 --iterations 8 2>&1 | sed 's/ seconds=[^ ]*//' > /tmp/ref.txt
    for policy in dep rip-dep; do
        OMP_NUM_THREADS=4 NUMAWARE_POLICY=$policy NUMAWARE_REPORT=/tmp/report.json LD_PRELOAD=$omp \
            "$refuse" numa-policy "$app" --n 256 --block 32 --iterations 8 > /tmp/out.txt 2>&1
        rc=$?
        sed -i 's/ seconds=[^ ]*//' /tmp/out.txt
        grep -q ' ok=1$' /tmp/ref.txt && cmp -s /tmp/ref.txt /tmp/out.txt && same=same || same=differs
        echo "@@ omp-$policy-exit=$rc $same"
        echo "@@ omp-$policy-homes $(grep -o '"homes": *"[^"]*"' /tmp/report.json | head -n 1)"
    done
    echo "@@ end seccomp"
    exit 0
fi

# ----------------------------------------------------------------- host side
[ $# -eq 8 ] || { echo "usage: restricted_check.sh NUMAWARE GUEST_TESTS MACHINE REFUSE MALLOC STRESS OMP OMP_APP" >&2; exit 2; }
nw=$1 tests=$2 machine=$3 refuse=$4 malloc=$5 stress=$6 omp=$7 app=$8
for f in "$nw" "$tests" "$refuse" "$malloc" "$stress" "$omp" "$app"; do [ -e "$f" ] || fail "'$f' does not exist"; done
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$nw" vm --machine "$machine" --kernel 6.1 --kernel-args possible_cpus=1100 --timeout 600 -- sh "$self" --guest "$nw" "$tests" "$refuse" "$malloc" "$stress" "$omp" "$app" > "$work/raw"
rc=$?
cat "$work/raw"
[ "$rc" -eq 0 ] || fail "the guest run exited with $rc"

python3 - "$work/raw" <<'EOF'
import json, re, sys
text = open(sys.argv[1]).read()
problems = []
for m in re.finditer(r"^@@ setup: (.*)$", text, re.M):
    problems.append(f"guest setup: {m.group(1)}")
possible = re.search(r"^@@ possible (.*)$", text, re.M)
if not possible or possible.group(1).strip() != "0-1099":
    problems.append(f"the guest kernel does not allow for 1,100 CPUs (possible: {possible and possible.group(1)})")

def section(label):
    m = re.search(rf"^@@ begin {label}$(.*?)^@@ end {label}$", text, re.M | re.S)
    if not m:
        problems.append(f"{label}: no output")
        return None
    return m.group(1)

def field(body, key):
    m = re.search(rf"^@@ {key}=(\d+)(.*)$", body, re.M)
    return (int(m.group(1)), m.group(2).strip()) if m else (None, "")

# What each restriction must leave: the nodes kept with their CPUs, the
# nodes whose memory is not allowed, the CPUs and nodes left out.
want = {
    "cgroup": {"cpus": {1: [2, 3], 2: [4, 5], 3: []}, "memory_not_allowed": [2], "left_cpus": [0, 1, 6, 7],
               "left_nodes": [0], "allowed": "2-5", "by": "this process's cpuset", "bad_node": "node 2"},
    "numactl": {"cpus": {0: [], 1: [2, 3], 2: [], 3: []}, "memory_not_allowed": [], "left_cpus": [0, 1, 4, 5, 6, 7],
                "left_nodes": [], "allowed": "2-3", "by": "this process's CPU affinity", "bad_node": None},
    "both": {"cpus": {1: [2, 3], 3: []}, "memory_not_allowed": [], "left_cpus": [0, 1, 4, 5, 6, 7],
             "left_nodes": [0, 2], "allowed": "2-3", "by": "this process's cpuset and this process's CPU affinity",
             "bad_node": "node 2"},
}
for label, w in want.items():
    body = section(label)
    if body is None:
        continue
    rc, _ = field(body, "topo-exit")
    if rc != 0:
        problems.append(f"{label}: numaware topo exited with {rc}")
    topo = "\n".join(l[len("@@ topo "):] for l in body.splitlines() if l.startswith("@@ topo "))
    if f"left out ({w['by']}):" not in topo:
        problems.append(f"{label}: numaware topo does not say what was left out:\n{topo}")
    jm = re.search(r"^@@ json (.*)$", body, re.M)
    try:
        j = json.loads(jm.group(1)) if jm else None
    except json.JSONDecodeError as e:
        j = None
        problems.append(f"{label}: topo --json is not JSON: {e}")
    if j:
        got = {n["os_index"]: n["cpus"] for n in j["nodes"]}
        if got != w["cpus"]:
            problems.append(f"{label}: nodes and CPUs {got}, expected {w['cpus']}")
        no_mem = [n["os_index"] for n in j["nodes"] if n.get("memory_allowed", True) is False]
        if no_mem != w["memory_not_allowed"]:
            problems.append(f"{label}: nodes whose memory is not allowed {no_mem}, expected {w['memory_not_allowed']}")
        lo = j.get("left_out", {})
        if lo.get("cpus") != w["left_cpus"] or lo.get("nodes", []) != w["left_nodes"]:
            problems.append(f"{label}: left out {lo}, expected CPUs {w['left_cpus']} and nodes {w['left_nodes']}")
    rc, _ = field(body, "gtest-exit")
    if rc != 0:
        problems.append(f"{label}: the RestrictedGuest tests failed (exit {rc})")
    if not re.search(rf"^@@ gtest @@ restricted machine: CPUs {w['allowed']},", body, re.M):
        problems.append(f"{label}: the guest tests did not see CPUs {w['allowed']}")
    rc, rest = field(body, "run-exit")
    if rc != 0:
        problems.append(f"{label}: numaware run --threads 2 exited with {rc}")
    rj = re.search(r"^@@ run-json (.*)$", body, re.M)
    try:
        listed = json.loads(rj.group(1))["cpus"] if rj else None   # "2-3,5"
        cpus = None if listed is None else [c for part in str(listed).split(",") if part
                                            for c in (range(int(part.split("-")[0]), int(part.split("-")[-1]) + 1))]
    except (json.JSONDecodeError, KeyError) as e:
        cpus = None
        problems.append(f"{label}: numaware run --json printed no plan: {e}")
    if cpus is not None and not all(c in sum(w["cpus"].values(), []) for c in cpus):
        problems.append(f"{label}: numaware run placed threads on {cpus}, outside {w['allowed']}")
    for key, must in (("bad-cpu-exit", "CPU 0 is not allowed"),
                      ("bad-node-exit", w["bad_node"])):
        rc, rest = field(body, key)
        if must is None:
            continue
        if rc == 0 or "lines=1 " not in rest + " " or must not in rest or w["by"] not in rest:
            problems.append(f"{label}: {key}: expected one line naming '{must}' and {w['by']}, got exit {rc}: {rest}")
body = section("seccomp")
if body is not None:
    def expect(key, ok, what):
        rc, rest = field(body, key)
        if rc is None or not ok(rc, rest):
            problems.append(f"seccomp: {key}: expected {what}, got exit {rc}: {rest}")
    expect("topo-exit", lambda rc, rest: rc == 0 and rest == "1",
           "numaware topo to work and say, in one line, that memory policies are refused")
    expect("stress-exit", lambda rc, rest: rc == 0 and "notices=1 lines=1" in rest,
           "the malloc stress checks to pass with one line saying memory is placed by first touch")
    expect("stress-unrefused-exit", lambda rc, rest: rc == 0 and "notices=0" in rest,
           "no notice where binding is allowed")
    for key, must in (("bind-exit", "EPERM"), ("probe-exit", "CAP_SYS_NICE")):
        expect(key, lambda rc, rest, must=must: rc != 0 and rest.startswith("lines=1 ") and must in rest,
               f"one line naming {must}")
    for policy in ("dep", "rip-dep"):
        expect(f"omp-{policy}-exit", lambda rc, rest: rc == 0 and rest == "same",
               "the Jacobi's output under libgomp")
        # The kernel will not say where pages are: homes come from the
        # tasks that first write them, and the report says why.
        m = re.search(rf"^@@ omp-{policy}-homes (.*)$", body, re.M)
        homes = m.group(1) if m else ""
        if "first writers (the kernel refused move_pages: EPERM)" not in homes:
            problems.append(f"seccomp: omp-{policy}: the report's homes are '{homes}', expected first writers "
                            "with the kernel's refusal")
for p in problems:
    print("restricted_check: FAIL:", p, file=sys.stderr)
print("restricted_check: cgroup cpuset, numactl --cpunodebind, both, and the NUMA calls refused (seccomp): "
      + ("ok" if not problems else f"{len(problems)} problems"))
sys.exit(1 if problems else 0)
EOF
