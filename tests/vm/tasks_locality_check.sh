#!/bin/sh
# tasks_locality_check.sh — the task runtime's locality proof in an emulated
# NUMA machine: every application under every scheduler policy, with
# dependency homes asked of the guest's kernel (move_pages), so cross-node
# bytes come from the pages' real locations.
#
# usage: tasks_locality_check.sh NUMAWARE APPS_BIN MACHINE THREADS [TABLE]
#   NUMAWARE  the numaware binary (boots the emulated machine)
#   APPS_BIN  the numaware_bench_apps binary
#   MACHINE   the machine description (numaware vm --machine)
#   THREADS   workers, one per vCPU
#   TABLE     optional: write the Markdown table here
#
# FAILS when the guest run fails, when any run does not match its serial
# reference, when a run reports no dependency bytes (the homes were never
# looked at), when SA (the applications' own node hints) does not move at
# most 0.8 x the bytes across nodes that the locality-unaware DFIFO does for
# Jacobi, Gauss-Seidel and Red-Black, or moves any for NStream.
set -u

fail() {
    echo "tasks_locality_check: FAIL: $*" >&2
    exit 1
}

# ---------------------------------------------------------------- guest side
if [ "${1:-}" = "--guest" ]; then
    apps=$2 threads=$3
    exec "$apps" --app all --policy all --threads "$threads" --mapping scatter --homes kernel --json
fi

# ----------------------------------------------------------------- host side
[ $# -ge 4 ] || { echo "usage: tasks_locality_check.sh NUMAWARE APPS_BIN MACHINE THREADS [TABLE]" >&2; exit 2; }
nw=$1 apps=$2 machine=$3 threads=$4 table=${5:-}
for f in "$nw" "$apps"; do [ -e "$f" ] || fail "'$f' does not exist"; done
command -v python3 > /dev/null || fail "python3 is needed to read the results (scripts/bootstrap installs it)"
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")

raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
"$nw" vm --machine "$machine" --kernel 6.1 --timeout 800 -- sh "$self" --guest "$apps" "$threads" > "$raw"
rc=$?
cat "$raw"
[ "$rc" -eq 0 ] || fail "the guest run exited with $rc"

python3 - "$raw" "$machine" "$threads" "$table" <<'EOF'
import json, sys
raw, machine, threads, table = sys.argv[1:5]
text = open(raw).read()
start = text.find("\n{")
start = 0 if text.startswith("{") else (start + 1 if start >= 0 else -1)
if start < 0:
    sys.exit("tasks_locality_check: FAIL: the guest printed no JSON document")
doc, _ = json.JSONDecoder().raw_decode(text[start:])
runs = []
for r in doc["runs"]:
    rep = r["report"]
    runs.append({"app": r["app"], "policy": r["policy"], "matches": r["matches"],
                 "max_error": r["max_error"], "dep_bytes": rep["dep_bytes"],
                 "cross_node_bytes": rep["cross_node_bytes"]})
if not runs:
    sys.exit("tasks_locality_check: FAIL: the guest printed no runs")
problems = []
by = {}
for r in runs:
    key = (r["app"], r["policy"])
    by[key] = r
    if not r["matches"]:
        problems.append(f"{key}: does not match its serial reference (max error {r['max_error']})")
    if r["dep_bytes"] <= 0:
        problems.append(f"{key}: no dependency bytes reported")
apps = list(dict.fromkeys(r["app"] for r in runs))
policies = list(dict.fromkeys(r["policy"] for r in runs))
# SA runs every task where the application's hints say (each block's init,
# and every update of it, on the block's owner node; no stealing across
# nodes), so its cross-node bytes are the halos only (whole neighbour
# blocks, as the tasks declare them): below the locality-unaware DFIFO's
# (by a margin: at most 0.8 x), and none at all for NStream, whose blocks never
# meet. The other policies are reported as they come.
for app in ("jacobi", "gauss-seidel", "red-black"):
    s, f = by.get((app, "sa")), by.get((app, "dfifo"))
    if not s or not f:
        problems.append(f"{app}: missing sa or dfifo run")
    elif not 5 * s["cross_node_bytes"] < 4 * f["cross_node_bytes"]:
        problems.append(f"{app}: SA moved {s['cross_node_bytes']} bytes across nodes, "
                        f"not less than 0.8 x DFIFO's {f['cross_node_bytes']}")
s = by.get(("nstream", "sa"))
if not s:
    problems.append("nstream: missing sa run")
elif s["cross_node_bytes"] != 0:
    problems.append(f"nstream: SA moved {s['cross_node_bytes']} bytes across nodes, expected 0")
lines = [f"Cross-node bytes, MiB (share of dependency bytes) — EMULATED machine: {machine}; "
         f"{threads} workers, scatter; homes from the guest kernel (move_pages)", "",
         "| app | " + " | ".join(policies) + " |",
         "|---|" + "---|" * len(policies)]
for app in apps:
    cells = []
    for p in policies:
        r = by.get((app, p))
        if r is None:
            cells.append("–")
        else:
            share = 100.0 * r["cross_node_bytes"] / r["dep_bytes"] if r["dep_bytes"] else 0.0
            cells.append(f"{r['cross_node_bytes'] / 2**20:.2f} ({share:.0f}%)")
    lines.append(f"| {app} | " + " | ".join(cells) + " |")
text = "\n".join(lines)
print(text)
if table:
    open(table, "w").write(text + "\n")
if problems:
    for p in problems:
        print("tasks_locality_check: FAIL:", p, file=sys.stderr)
    sys.exit(1)
print(f"tasks_locality_check: PASS: {len(runs)} runs match their references; SA < 0.8 x DFIFO for Jacobi, "
      "Gauss-Seidel and Red-Black; SA moves no NStream byte across nodes")
EOF
