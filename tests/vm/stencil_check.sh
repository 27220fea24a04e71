#!/bin/sh
# stencil_check.sh — the stencil skeleton's placement proof in an emulated
# NUMA machine (QEMU, real Linux kernel): every placement mode, every stencil
# kind, page locations asked of the guest's kernel (move_pages), automatic
# NUMA balancing read from /proc inside the guest while the sweeps run.
#
# usage: stencil_check.sh NUMAWARE STENCIL_BIN MACHINE THREADS [TABLE]
#   NUMAWARE     the numaware binary (boots the emulated machine)
#   STENCIL_BIN  the numaware_bench_stencil binary
#   MACHINE      the machine description (numaware vm --machine)
#   THREADS      ranks, one per vCPU (scatter mapping: neighbouring ranks
#                on different nodes)
#   TABLE        optional: write the Markdown table here
#
# One boot. The guest switches automatic NUMA balancing ON first (so the
# skeleton has something to switch off), then runs, 4 sweeps each, with
# --probe-balancing:
#   Jacobi 2-D 5-point and 9-point (130x130) and 3-D 7-point and 27-point
#     (34x34x98) under serial-first-touch, parallel-first-touch, interleave
#     and stencil-aware placement;
#   red-black and Gauss-Seidel (2-D 5-point), variable (2-D; the driver
#     bounds it by a box of radius 2),
#     multigrid (33^3) and butterfly (n = 32768) under stencil-aware;
#   Jacobi 2-D 5-point with the numa-weighted distribution, stencil-aware.
#
# FAILS (naming the run) when a run
#   - does not match its serial reference, or its process fails;
#   - stencil-aware or parallel-first-touch: some rank has a page of its
#     owned block off its node (block_pages_on_node != block_pages);
#   - serial-first-touch: a page is not on rank 0's node;
#   - interleave / explicit: a page is not where the plan put it;
#   - stencil-aware Jacobi, variable, red-black, Gauss-Seidel: remote read
#     bytes per sweep differ from the halo arithmetic, computed here from
#     the shape, the neighbourhood, the work blocks and the ranks' nodes
#     (exact equality);
#   - serial-first-touch or interleave Jacobi: remote read bytes per sweep
#     are not at least 4x the stencil-aware run's of the same shape;
#   - balancing: not "normal" before, not 0 in every sweep, not 1 after
#     (as the driver and, after the process, this script read it), or the
#     report does not say switched off and restored.
set -u

fail() {
    echo "stencil_check: FAIL: $*" >&2
    exit 1
}

# ---------------------------------------------------------------- guest side
if [ "${1:-}" = "--guest" ]; then
    drv=$2 threads=$3
    knob=/proc/sys/kernel/numa_balancing
    [ -e "$knob" ] || fail "$knob does not exist in the guest: its kernel has no automatic NUMA" \
        "balancing (CONFIG_NUMA_BALANCING), so the balancing proof cannot run"
    echo 1 > "$knob" || fail "cannot write 1 to $knob in the guest (not root?)"
    [ "$(cat "$knob")" = 1 ] || fail "$knob reads '$(cat "$knob")' after writing 1"
    status=0
    # run LABEL ARGS...: one driver process; its JSON between markers, then
    # its exit status and the balancing state after it exited.
    run() {
        label=$1
        shift
        echo "=== run $label"
        "$drv" run --threads "$threads" --mapping scatter --sweeps 4 --probe-balancing --json "$@"
        rc=$?
        echo
        echo "=== exit $label $rc $(cat "$knob")"
        [ "$rc" -eq 0 ] || status=1
    }
    all="--placement all"
    sa="--placement stencil-aware"
    run jacobi-2d-5pt --kind jacobi --points 5-point --size 130,130 $all
    run jacobi-2d-9pt --kind jacobi --points 9-point --size 130,130 $all
    run jacobi-3d-7pt --kind jacobi --points 7-point --size 34,34,98 $all
    run jacobi-3d-27pt --kind jacobi --points 27-point --size 34,34,98 $all
    run red-black-2d-5pt --kind red-black --points 5-point --size 130,130 $sa
    run gauss-seidel-2d-5pt --kind gauss-seidel --points 5-point --size 130,130 $sa
    run variable-2d --kind variable --points 9-point --size 130,130 $sa
    run multigrid-3d --kind multigrid --size 33,33,33 $sa
    run butterfly --kind butterfly --size 32768 $sa
    run jacobi-2d-5pt-weighted --kind jacobi --points 5-point --size 130,130 $sa --distribution numa-weighted
    exit "$status"
fi

# ----------------------------------------------------------------- host side
[ $# -ge 4 ] || { echo "usage: stencil_check.sh NUMAWARE STENCIL_BIN MACHINE THREADS [TABLE]" >&2; exit 2; }
nw=$1 drv=$2 machine=$3 threads=$4 table=${5:-}
for f in "$nw" "$drv"; do [ -e "$f" ] || fail "'$f' does not exist"; done
command -v python3 > /dev/null || fail "python3 is needed to read the results (scripts/bootstrap installs it)"
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")

raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
# 840 s: below the test's TIMEOUT (900), so a hung guest is reported here.
"$nw" vm --machine "$machine" --kernel 6.1 --timeout 840 -- sh "$self" --guest "$drv" "$threads" > "$raw"
rc=$?
cat "$raw"

python3 - "$raw" "$machine" "$threads" "$table" "$rc" <<'EOF'
import json, sys

raw, machine, threads, table, guest_rc = sys.argv[1:6]
PAGE = 4096          # x86-64 guest
problems = []


def problem(name, text):
    problems.append(f"{name}: {text}")


# ---- the guest's output: "=== run LABEL", one JSON document, "=== exit LABEL RC BALANCING"
sections = []
cur = None
for line in open(raw).read().splitlines(keepends=True):
    if line.startswith("=== run "):
        cur = {"label": line[8:].strip(), "text": "", "rc": None, "after": None}
        sections.append(cur)
    elif line.startswith("=== exit ") and cur is not None:
        parts = line.split()
        cur["rc"] = int(parts[3]) if len(parts) > 3 else None
        cur["after"] = parts[4] if len(parts) > 4 else None
        cur = None
    elif cur is not None:
        cur["text"] += line
if not sections:
    sys.exit("stencil_check: FAIL: the guest started no run (see the output above)")

runs = []   # (name, section label, run object)
for s in sections:
    label = s["label"]
    if s["rc"] is None:
        problem(label, "the driver never finished (guest killed or timed out?)")
    elif s["rc"] != 0:
        problem(label, f"the driver exited with {s['rc']}")
    if s["after"] is not None and s["after"] != "1":
        problem(label, f"/proc/sys/kernel/numa_balancing reads {s['after']} after the driver exited, expected 1")
    text = s["text"]
    start = text.find("{")
    if start < 0:
        problem(label, "printed no JSON document")
        continue
    try:
        doc, _ = json.JSONDecoder().raw_decode(text[start:])
    except ValueError as e:
        problem(label, f"printed malformed JSON ({e})")
        continue
    if not doc.get("runs"):
        problem(label, "the JSON document has no runs")
    for r in doc.get("runs", []):
        rep = r["report"]
        name = f"{label}/{r.get('placement', rep.get('placement'))}/{r.get('distribution', rep.get('distribution'))}"
        runs.append((name, label, r))


# ---- geometry, computed here from the rules in stencil.hpp (independently of the library)
def layout(shape):
    dims, nx, ny, nz = shape["dims"], shape["nx"], shape["ny"], shape["nz"]
    row = (nx + 7) // 8 * 8                       # rows padded to a cache line of doubles
    slab_bytes = (row if dims == 2 else row * ny) * 8
    if slab_bytes >= PAGE:
        return {"slabs": ny if dims == 2 else nz, "granule": 1}
    stride = 1
    while stride < slab_bytes:
        stride *= 2
    return {"slabs": ny if dims == 2 else nz, "granule": PAGE // stride}


def offsets(name):
    """The neighbourhood's offsets as (dx, dy, dz) from its name."""
    fixed = {"5-point": ("star", 2, 1), "9-point": ("box", 2, 1), "7-point": ("star", 3, 1),
             "27-point": ("box", 3, 1)}
    if name in fixed:
        kind, dims, r = fixed[name]
    else:
        parts = name.split(":")
        if len(parts) != 3 or parts[0] not in ("star", "box"):
            return None
        kind, dims, r = parts[0], int(parts[1]), int(parts[2])
    rng = range(-r, r + 1)
    zs = rng if dims == 3 else [0]
    out = []
    for dz in zs:
        for dy in rng:
            for dx in rng:
                axes = sum(1 for d in (dx, dy, dz) if d != 0)
                if kind == "box" or axes <= 1:
                    out.append((dx, dy, dz))
    return dims, out


def halo_cells(shape, offs, dims, d, side):
    """Cells of the slab at distance d (1..) below (side -1) or above (+1) a
    block that the block's updates read: the union, over offsets reaching that
    far along the slab axis, of the interior shifted in-plane."""
    nx, ny = shape["nx"], shape["ny"]
    rx = max(abs(o[0]) for o in offs)
    ry = max(abs(o[1]) for o in offs)
    read = set()
    for dx, dy, dz in offs:
        ds = dz if dims == 3 else dy
        if ds * side < d:
            continue
        if dims == 2:
            read.update((x + dx, 0) for x in range(rx, nx - rx))
        else:
            read.update((x + dx, y + dy) for y in range(ry, ny - ry) for x in range(rx, nx - rx))
    return len(read)


def halo_arithmetic(name, rep):
    """Remote read bytes per sweep if every owned block is on its rank's node:
    for each rank, each slab within the slab radius outside its work block
    whose owner is on another node contributes the cells read from it."""
    nb = offsets(rep["neighbourhood"])
    if nb is None:
        problem(name, f"unknown neighbourhood '{rep['neighbourhood']}'")
        return None
    dims, offs = nb
    shape = rep["shape"]
    lay = layout(shape)
    slabs = lay["slabs"]
    rs = max(abs(o[2] if dims == 3 else o[1]) for o in offs)
    ranks = sorted(rep["ranks"], key=lambda k: k["rank"])
    work = [tuple(k["work"]) for k in ranks]
    nodes = [k["node"] for k in ranks]
    # the work blocks must cover the interior in rank order, cut on page boundaries
    pos = rs
    for i, (lo, hi) in enumerate(work):
        if lo != pos or hi < lo:
            problem(name, f"rank {i}'s work block [{lo},{hi}) does not continue the cut at slab {pos}")
            return None
        if i > 0 and lo % lay["granule"] != 0:
            problem(name, f"rank {i}'s block starts at slab {lo}, not a multiple of {lay['granule']} "
                          f"slabs per page: its boundary is not page-aligned")
        pos = hi
    if pos != slabs - rs:
        problem(name, f"the work blocks end at slab {pos}, the interior at {slabs - rs}")
        return None

    def owner(s):
        if s < work[0][1]:
            return 0
        if s >= work[-1][0]:
            return len(work) - 1
        return next(i for i, (lo, hi) in enumerate(work) if lo <= s < hi)

    for i, k in enumerate(ranks):
        lo = 0 if i == 0 else work[i][0]
        hi = slabs if i == len(ranks) - 1 else work[i][1]
        if tuple(k["owned"]) != (lo, hi) and work[i][0] != work[i][1]:
            problem(name, f"rank {i} owns [{k['owned'][0]},{k['owned'][1]}), the cut says [{lo},{hi})")
    total = 0
    for i, (lo, hi) in enumerate(work):
        if lo == hi:
            continue
        for d in range(1, rs + 1):
            for s, side in ((lo - d, -1), (hi + d - 1, 1)):
                if 0 <= s < slabs and nodes[owner(s)] != nodes[i]:
                    total += halo_cells(shape, offs, dims, d, side) * 8
    return total


HALO_KINDS = ("jacobi", "variable", "red-black", "gauss-seidel")
rows = []
sa_remote = {}      # section label -> stencil-aware remote bytes (static Jacobi)
other_remote = {}   # section label -> {placement: remote bytes}
seen = {}
for name, label, r in runs:
    rep = r["report"]
    kind, placement = rep["kind"], rep["placement"]
    seen.setdefault(label, set()).add(placement)
    if not r.get("matches"):
        problem(name, f"does not match its serial reference (max error {r.get('max_error')})")
    ranks = sorted(rep.get("ranks", []), key=lambda k: k["rank"])
    if len(ranks) != int(threads):
        problem(name, f"{len(ranks)} ranks reported, {threads} asked for")
    pr = rep["placement_report"]
    if not pr.get("verified"):
        problem(name, "the page locations were not asked of the kernel (placement_report.verified false)")
    if pr.get("pages_unknown", 0) != 0:
        problem(name, f"{pr['pages_unknown']} of {pr['pages']} pages absent or unreadable")
    if pr["pages"] <= 0:
        problem(name, "placement_report counts no pages")
    block = sum(k["traffic"]["block_pages"] for k in ranks)
    block_on = sum(k["traffic"]["block_pages_on_node"] for k in ranks)
    if placement in ("stencil-aware", "parallel-first-touch"):
        for k in ranks:
            t = k["traffic"]
            if t["block_pages_on_node"] != t["block_pages"]:
                problem(name, f"rank {k['rank']} (node {k['node']}) has {t['block_pages_on_node']} of its "
                              f"{t['block_pages']} block pages on its node")
        if block <= 0:
            problem(name, "the ranks own no block pages")
    if placement in ("stencil-aware", "parallel-first-touch", "interleave", "serial-first-touch") or \
            placement.startswith("explicit"):
        if pr["pages_as_intended"] != pr["pages"]:
            problem(name, f"{pr['pages_as_intended']} of {pr['pages']} pages where the mode intends "
                          f"(pages per node {pr.get('pages_per_node')})")
    if placement == "serial-first-touch" and ranks:
        on0 = pr.get("pages_per_node", {}).get(str(ranks[0]["node"]), 0)
        if on0 != pr["pages"]:
            problem(name, f"{on0} of {pr['pages']} pages on rank 0's node {ranks[0]['node']}")
    if placement == "interleave" and kind == "jacobi":
        counts = list(pr.get("pages_per_node", {}).values())
        if len(counts) < 2 or max(counts) - min(counts) > 2:
            problem(name, f"interleaved pages are not spread evenly over the nodes: {pr.get('pages_per_node')}")
    # balancing, read from /proc in the guest
    b = rep["balancing"]
    if not b.get("available"):
        problem(name, f"the report says the kernel has no NUMA balancing ({b.get('note')})")
    if b.get("before") != "normal":
        problem(name, f"balancing before the run was '{b.get('before')}', expected 'normal'")
    if not b.get("switched_off") or not b.get("restored"):
        problem(name, f"balancing switched_off={b.get('switched_off')} restored={b.get('restored')} "
                      f"({b.get('note')})")
    during = r.get("balancing_during")
    if not during:
        problem(name, "no balancing_during values (was --probe-balancing honoured?)")
    elif any(v != 0 for v in during):
        problem(name, f"balancing during the sweeps read {during}, expected all 0")
    if r.get("balancing_after") != 1:
        problem(name, f"balancing_after is {r.get('balancing_after')}, expected 1")
    # remote bytes against the halo arithmetic
    want = None
    if kind in HALO_KINDS and ranks:
        for i in range(len(ranks) - 1):
            if ranks[i]["node"] == ranks[i + 1]["node"]:
                problem(name, f"ranks {i} and {i + 1} are both on node {ranks[i]['node']}: "
                              "scatter should put neighbours on different nodes")
        want = halo_arithmetic(name, rep)
    remote = rep["remote_read_bytes_per_sweep"]
    if sum(k["traffic"]["remote_read_bytes"] for k in ranks) != remote:
        problem(name, "remote_read_bytes_per_sweep is not the sum of the ranks' remote read bytes")
    if placement == "stencil-aware" and want is not None:
        if remote != want:
            problem(name, f"stencil-aware remote read bytes per sweep {remote}, the halo arithmetic says "
                          f"exactly {want}")
        if rep["remote_write_bytes_per_sweep"] != 0:
            problem(name, f"stencil-aware run writes {rep['remote_write_bytes_per_sweep']} bytes per sweep "
                          "on other nodes")
        if kind == "jacobi" and rep["distribution"] == "static":
            sa_remote[label] = (remote, want)
    if kind == "jacobi" and rep["distribution"] == "static" and placement in ("serial-first-touch", "interleave"):
        other_remote.setdefault(label, {})[placement] = remote
    s = rep["shape"]
    shape = f"{s['nx']}x{s['ny']}" + (f"x{s['nz']}" if s["dims"] == 3 else "")
    rows.append({"kind": kind, "shape": shape, "nb": rep["neighbourhood"] if kind not in ("multigrid", "butterfly")
                 else "–", "placement": placement, "distribution": rep["distribution"], "remote": remote,
                 "want": want, "halo_pages": rep["halo_pages"], "block": block, "block_on": block_on,
                 "matches": r.get("matches")})

# every expected run is there
EXPECTED = ["jacobi-2d-5pt", "jacobi-2d-9pt", "jacobi-3d-7pt", "jacobi-3d-27pt", "red-black-2d-5pt",
            "gauss-seidel-2d-5pt", "variable-2d", "multigrid-3d", "butterfly", "jacobi-2d-5pt-weighted"]
for label in EXPECTED:
    if label not in seen and not any(s["label"] == label for s in sections):
        problem(label, "never ran")
for s in sections:
    label = s["label"]
    want = {"serial-first-touch", "parallel-first-touch", "interleave", "stencil-aware"} \
        if label.startswith("jacobi") and not label.endswith("weighted") else {"stencil-aware"}
    missing = want - seen.get(label, set())
    if missing and s["rc"] is not None:
        problem(label, f"missing placement runs: {', '.join(sorted(missing))}")

# serial first-touch and interleave: far more remote than stencil-aware
FACTOR = 4
for label, per in other_remote.items():
    if label not in sa_remote:
        continue
    sa, _ = sa_remote[label]
    for placement, remote in per.items():
        if remote < FACTOR * sa:
            problem(f"{label}/{placement}", f"{remote} remote read bytes per sweep, not at least {FACTOR}x "
                                            f"the stencil-aware run's {sa}")


def num(v):
    return "–" if v is None else f"{v:,}"


lines = [f"Remote read bytes per sweep by placement — EMULATED machine: {machine}; {threads} ranks, scatter "
         "mapping; page locations from the guest kernel (move_pages)", "",
         "| kind | shape | neighbourhood | placement | remote bytes/sweep | halo arithmetic | × arithmetic "
         "| halo pages | block pages on node | matches |",
         "|---|---|---|---|---:|---:|---:|---:|---:|---|"]
for w in rows:
    placement = w["placement"] + ("" if w["distribution"] == "static" else f" ({w['distribution']})")
    ratio = "–" if not w["want"] else f"{w['remote'] / w['want']:.1f}"
    share = f"{100.0 * w['block_on'] / w['block']:.0f}%" if w["block"] else "–"
    lines.append(f"| {w['kind']} | {w['shape']} | {w['nb']} | {placement} | {num(w['remote'])} | {num(w['want'])} "
                 f"| {ratio} | {w['halo_pages']} | {share} | {'yes' if w['matches'] else 'NO'} |")
lines += ["", "halo arithmetic: per boundary between neighbouring ranks on different nodes, each side reads the "
          "other's slabs within the radius: (nx-2)·8 bytes per row (5-point), nx·8 (9-point), (nx-2)(ny-2)·8 per "
          "plane (7-point), nx·ny·8 (27-point); radius r: r such slabs, each as its offsets reach."]
for name, label, r in runs:
    rep = r["report"]
    if rep["distribution"] == "numa-weighted":
        ranks = sorted(rep["ranks"], key=lambda k: k["rank"])
        blocks = ", ".join(f"{k['work'][1] - k['work'][0]}" for k in ranks)
        weights = ", ".join(f"{k['weight']:.3f}" for k in ranks)
        lines += ["", f"{name}: slabs per rank {blocks}; weights {weights}; rule: {rep.get('weight_rule') or '–'}"]
text = "\n".join(lines)
print(text)
if table:
    open(table, "w").write(text + "\n")
if guest_rc != "0" and not problems:
    problem("guest", f"the guest run exited with {guest_rc}")
if problems:
    for p in problems:
        print("stencil_check: FAIL:", p, file=sys.stderr)
    sys.exit(1)
print(f"stencil_check: PASS: {len(runs)} runs match their references; every owned block is on its rank's node "
      "where the mode puts it there; stencil-aware remote bytes equal the halo arithmetic, serial first-touch and "
      f"interleave move at least {FACTOR}x more; automatic NUMA balancing was off in every sweep and restored")
EOF
