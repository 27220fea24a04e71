"""A fake ``numaware`` command for the advisor's tests.

``write_fake_cli(path, ...)`` writes a small Python script that answers ``--version``
and ``sim memory ... --json`` in the shape of the simulator's contract
(docs/ADVISOR.md, "The simulator's side"): one run per prefetch setting,
each with its phases and every measured phase with its counters. Its figures are a
hash of the job and the phase, so any worker, at any time, prints the same
document for the same job, and the advisor's tests need no simulator build.
"""

import json
import os
import stat
import sys

# The regions (phases) the fake gives each workload kind.
FAKE_PHASES = {
    "stream": ["init", "triad"],
    "cg": ["init", "iter1:spmv", "iter1:dot-pq"],
    "is": ["init", "rank", "verify"],
}
FAKE_DEFAULT_PHASES = ["init", "main"]
# What the fake's `sim memory --list-presets --json` lists: the simulator's
# presets (src/sim/memory/presets.cpp), as test data.
FAKE_PRESETS = [
    {"name": "thesis-4s", "sockets": 4, "cores_per_socket": 4, "prefetcher_control": True},
    {"name": "thesis-4s-nonuma", "sockets": 4, "cores_per_socket": 4, "prefetcher_control": True},
    {"name": "skylake-sp-2s", "sockets": 2, "cores_per_socket": 28, "prefetcher_control": True},
    {"name": "no-knobs-1s", "sockets": 1, "cores_per_socket": 8, "prefetcher_control": False},
]

_SCRIPT = '''\
#!{python}
import json, sys, time, zlib

VERSION = {version!r}      # None: no --version, as an old numaware
SLEEP = {sleep!r}
LOG = {log!r}
FAIL_WORKLOAD = {fail_workload!r}
OMIT_COUNTERS = {omit_counters!r}
PHASES = {phases!r}
DEFAULT_PHASES = {default_phases!r}
PRESETS = {presets!r}

args = sys.argv[1:]
if args == ["--version"] and VERSION is not None:
    print(VERSION)
    sys.exit(0)
if args == ["sim", "memory", "--list-presets", "--json"]:
    print(json.dumps({{"presets": PRESETS}}))
    sys.exit(0)
# What `advise run --live` calls besides the simulator: a one-node machine,
# a recorder that writes a placeholder trace, and `run`, which execs.
if LOG and args[:1] in (["topo"], ["trace"], ["run"]):
    with open(LOG, "a") as f:
        f.write(json.dumps(args) + "\\n")
if args == ["topo", "--json"]:
    print(json.dumps({{"nodes": [{{"os_index": 0, "cpus": [0, 1]}}]}}))
    sys.exit(0)
if args[:2] == ["trace", "record"]:
    import subprocess
    with open(args[args.index("-o") + 1], "w") as f:
        f.write("fake trace\\n")
    sys.exit(subprocess.call(args[args.index("--") + 1:], stdout=subprocess.DEVNULL))
if args[:1] == ["run"]:
    import os
    program = args[args.index("--") + 1:]
    os.execvp(program[0], program)
if args[:2] != ["sim", "memory"] or "--json" not in args:
    print("The following argument was not expected: " + " ".join(args), file=sys.stderr)
    sys.exit(109)
opts = dict(zip(args[2::2], args[3::2]))
workload = opts["--workload"] if "--workload" in opts else "trace:" + opts["--trace"]
if LOG:
    with open(LOG, "a") as f:
        f.write(json.dumps(args[2:]) + "\\n")
time.sleep(SLEEP)
if workload == FAIL_WORKLOAD:
    print("numaware: simulated failure\\nworkload: cannot simulate " + workload, file=sys.stderr)
    sys.exit(1)
numa = [workload, opts["--threads"], opts["--nodes"], opts["--thread-mapping"], opts["--mapping"]]

def figure(*parts):
    return zlib.crc32("|".join(numa + list(parts)).encode()) % 997 + 3

def counters(*parts):
    n = figure(*parts, "n")
    return {{
        "levels": {{"l1": {{"demand_accesses": 100 * n, "demand_misses": n}},
                    "l2": {{"demand_accesses": n, "demand_misses": n // 2}},
                    "l3": {{"demand_accesses": n // 2, "demand_misses": n // 3}},
                    "dram": {{"served": n // 3}}}},
        "bytes": {{"l1": 64 * n, "l2": 32 * n, "l3": 16 * n, "dram_local": 8 * n, "dram_remote": 4 * n,
                   "writeback": n}},
        "prefetch_counts": {{"issued_l1": n, "issued_l2": n, "issued_l3": 0, "useful": n // 2, "late": n // 8}},
        "energy_j": {{"total": n * 1e-9}},
        "bandwidth_gbps": {{"dram_local": n / 100, "dram_remote": n / 300}},
        "instructions": 200 * n,
        "accesses": 100 * n,
    }}

runs = []
for prefetch in opts["--prefetch"].split(","):
    phases = []
    for name in PHASES.get(workload.split(":")[0], DEFAULT_PHASES):
        phase = {{"name": name, "measured": name != "init", "simulated_s": figure(prefetch, name) * 1e-6}}
        # As numaware does: counters for measured phases only.
        if phase["measured"] and not OMIT_COUNTERS:
            phase["counters"] = counters(prefetch, name)
        phases.append(phase)
    run = {{"prefetch": prefetch, "simulated": True, "simulated_s": sum(p["simulated_s"] for p in phases),
            "prefetches_issued": figure(prefetch)}}
    run.update(counters(prefetch))
    run["phases"] = phases
    runs.append(run)
for run in runs:
    run["speedup"] = runs[0]["simulated_s"] / run["simulated_s"]
print(json.dumps({{"simulated": True, "label": "simulated (fake numaware for tests)", "preset": opts["--preset"],
                  "workload": workload, "mapping": opts["--mapping"], "thread_mapping": opts["--thread-mapping"],
                  "baseline": runs[0]["prefetch"], "runs": runs}}, indent=1))
'''


def write_fake_cli(path, *, sleep=0.0, version="numaware 9.9.9", log=None, fail_workload=None,
                   omit_counters=False):
    """Writes the fake at ``path`` (made executable) and returns its path as a string.

    ``version``: the line ``--version`` prints (None: the option is unknown);
    ``sleep``: seconds each simulation takes; ``log``: a file that gets one
    line per simulation; ``fail_workload``: a workload whose simulation
    fails; ``omit_counters``: measured phases without counters, as a
    numaware that predates them.
    """
    path.write_text(_SCRIPT.format(
        python=sys.executable, version=version, sleep=sleep, log=None if log is None else str(log),
        fail_workload=fail_workload, omit_counters=omit_counters, phases=FAKE_PHASES,
        default_phases=FAKE_DEFAULT_PHASES, presets=FAKE_PRESETS))
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path)


def read_log(path):
    """The fake's invocations (argv after ``sim memory``), one list each."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f]


def phases_of(workload):
    return FAKE_PHASES.get(workload.split(":")[0], FAKE_DEFAULT_PHASES)



def swept_test_table(directory, preset="thesis-4s"):
    """The learner's table of a test-size sweep through a fake written in ``directory`` (a pathlib.Path)."""
    from numaware.advisor.dataset import load_table
    from numaware.advisor.store import Store
    from numaware.advisor.sweep import sweep_size

    path = str(directory / f"{preset}.sqlite")
    sweep_size(preset, "test", path, cli=write_fake_cli(directory / "fake-numaware"), workers=1)
    with Store(path) as store:
        return load_table(store, preset)
