"""From the sweep's store to the learner's table (``learn.Table``).

A region is a workload and a kind of phase: the iterations of one loop
(``iter1:spmv``, ``iter2:spmv``) and the hyperplanes of one sweep
(``iter1:lower:h3`` ...) are one region, their times and counters summed.
Only measured phases count. A configuration is kept when every region has
a result under it, and a region when it has one under every kept
configuration, so the table has no holes.

The features are derived counters of a region under a configuration, what
hardware counters would give: miss rates and ratios, DRAM bandwidth and
volume (local, remote), energy and power, prefetch counts, and time per
instruction.
"""

from __future__ import annotations

import re
from collections import defaultdict

import numpy as np

from .learn import LearnError, Table
from .space import LOCALITY, SCATTER, Configuration
from .store import Store

_ITERATION = re.compile(r"^(?:iter|step)\d+:")
_HYPERPLANE = re.compile(r":h\d+$")

BASELINE_PREFETCH = "intel:1111"

# Derived counters: name -> function of the summed raw counters (``raw``).
FEATURES = {
    "l1_mpki": lambda c: 1e3 * c["l1_misses"] / c["instructions"],
    "l2_mpki": lambda c: 1e3 * c["l2_misses"] / c["instructions"],
    "l3_mpki": lambda c: 1e3 * c["l3_misses"] / c["instructions"],
    "l2_miss_ratio": lambda c: c["l2_misses"] / c["l2_accesses"] if c["l2_accesses"] else 0.0,
    "l3_miss_ratio": lambda c: c["l3_misses"] / c["l3_accesses"] if c["l3_accesses"] else 0.0,
    "dram_local_gbps": lambda c: c["dram_local"] / c["seconds"] * 1e-9,
    "dram_remote_gbps": lambda c: c["dram_remote"] / c["seconds"] * 1e-9,
    "dram_local_bpi": lambda c: c["dram_local"] / c["instructions"],
    "dram_remote_bpi": lambda c: c["dram_remote"] / c["instructions"],
    "remote_share": lambda c: c["dram_remote"] / (c["dram_local"] + c["dram_remote"])
    if c["dram_local"] + c["dram_remote"] else 0.0,
    "writeback_bpi": lambda c: c["writeback"] / c["instructions"],
    "energy_npi": lambda c: 1e9 * c["energy"] / c["instructions"],
    "power_w": lambda c: c["energy"] / c["seconds"],
    "prefetch_pki": lambda c: 1e3 * c["issued"] / c["instructions"],
    "prefetch_accuracy": lambda c: c["useful"] / c["issued"] if c["issued"] else 0.0,
    "prefetch_late_ratio": lambda c: c["late"] / c["useful"] if c["useful"] else 0.0,
    "ns_per_instruction": lambda c: 1e9 * c["seconds"] / c["instructions"],
}


def region_of(workload: str, phase: str) -> str:
    """The region a phase belongs to: its workload and the kind of phase."""
    return f"{workload}/{_HYPERPLANE.sub('', _ITERATION.sub('', phase))}"


def _raw(counters: dict, seconds: float) -> dict:
    levels = counters["levels"]
    pc = counters["prefetch_counts"]
    return {
        "seconds": seconds,
        "instructions": float(counters["instructions"]),
        "l1_misses": float(levels["l1"]["demand_misses"]),
        "l2_accesses": float(levels["l2"]["demand_accesses"]),
        "l2_misses": float(levels["l2"]["demand_misses"]),
        "l3_accesses": float(levels["l3"]["demand_accesses"]),
        "l3_misses": float(levels["l3"]["demand_misses"]),
        "dram_local": float(counters["bytes"]["dram_local"]),
        "dram_remote": float(counters["bytes"]["dram_remote"]),
        "writeback": float(counters["bytes"]["writeback"]),
        "energy": float(counters["energy_j"]["total"]),
        "issued": float(pc["issued_l1"] + pc["issued_l2"] + pc["issued_l3"]),
        "useful": float(pc["useful"]),
        "late": float(pc["late"]),
    }


def accumulate(sums: dict, region: str, counters: dict, seconds: float) -> None:
    """Adds one measured phase's raw counters to its region's sums (``sums[region]``)."""
    acc = sums.setdefault(region, defaultdict(float))
    for name, value in _raw(counters, seconds).items():
        acc[name] += value


def derived(raw: dict) -> dict[str, float]:
    """Every feature (``FEATURES``) of a region's summed raw counters; 0 for a region without instructions."""
    return {name: f(raw) if raw["instructions"] else 0.0 for name, f in FEATURES.items()}


def numa_part(key: str) -> str:
    c = Configuration.from_key(key)
    return f"threads={c.threads},nodes={c.nodes},thread_mapping={c.thread_mapping},page_mapping={c.page_mapping}"


def load_table(store: Store, preset: str) -> Table:
    """The table of one preset's results (LearnError if it cannot be built)."""
    sums: dict[tuple[str, str], dict] = {}
    for r in store.results(preset):
        if not r.measured or r.counters is None:
            continue
        accumulate(sums, (region_of(r.workload, r.phase), r.configuration), r.counters, r.simulated_s)
    if not sums:
        raise LearnError(f"{store.path}: no measured results for preset {preset}")
    by_config: dict[str, set[str]] = defaultdict(set)
    regions_all = sorted({region for region, _ in sums})
    for region, config in sums:
        by_config[config].add(region)
    configurations = sorted(c for c, rs in by_config.items() if len(rs) == len(regions_all))
    if not configurations:
        raise LearnError(f"{store.path}: no configuration has a result for every region (an unfinished sweep?)")
    regions = [r for r in regions_all if all((r, c) in sums for c in configurations)]
    parsed = [Configuration.from_key(c) for c in configurations]
    most = max(c.threads for c in parsed)
    try:
        baseline = next(i for i, c in enumerate(parsed)
                        if c.threads == most and c.thread_mapping == SCATTER and c.page_mapping == LOCALITY
                        and c.prefetch == BASELINE_PREFETCH)
    except StopIteration:
        raise LearnError(f"{store.path}: the baseline ({most} threads, scatter, locality, {BASELINE_PREFETCH}) is "
                         "not in the sweep") from None
    times = np.array([[sums[(r, c)]["seconds"] for c in configurations] for r in regions])
    if np.any(times <= 0):
        bad = [(regions[i], configurations[j]) for i, j in zip(*np.nonzero(times <= 0))][:1]
        raise LearnError(f"{store.path}: a region with no simulated time: {bad[0][0]} under {bad[0][1]}")
    features = {(r, c): derived(sums[(r, c)]) for r in regions for c in configurations}
    counters = {name: np.array([[features[(r, c)][name] for c in configurations] for r in regions])
                for name in FEATURES}
    return Table(regions=regions, configurations=configurations, times=times, counters=counters,
                 numa=[numa_part(c) for c in configurations], prefetch=[c.prefetch for c in parsed],
                 baseline=baseline, outputs=[i for i, c in enumerate(parsed) if c.model_output])
