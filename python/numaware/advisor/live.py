"""The live machine under ``numaware advise run --live``: what it offers the
advisor, and a configuration applied to a program.

- ``probe``: NUMA nodes and CPUs (``numaware topo --json``, numaware's one
  machine model), hardware counters (the ``perf`` tool, which reads them
  through perf_event_open), and prefetcher control (MSR 0x1A4 through the
  ``msr`` module's ``/dev/cpu/N/msr``). Each missing piece is one line
  saying what is missing.
- ``counter_features``: the advisor's features that generic perf events
  give (instructions, last-level and L1 data cache misses, time). The
  others (DRAM bandwidth by node, prefetch counts, energy) need
  model-specific uncore events; a model that uses them is fed from the
  simulator instead, and the run says so.
- ``prefetch_msr_value``: an ``intel:XXXX`` setting as the value of MSR
  0x1A4, whose bits disable (when set) bit 0 the L2 streamer, bit 1 the L2
  adjacent-line prefetcher, bit 2 the L1 next-line (DCU) prefetcher and
  bit 3 the L1 IP-stride prefetcher (Intel, "Disclosure of H/W prefetcher
  control on some Intel processors", 2014).
- ``run_command``: the ``numaware run`` argv that applies a configuration,
  mapped onto the live machine's nodes.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field

from .space import BALANCE, FIRST_TOUCH, INTERLEAVE, LOCAL, LOCALITY, PREFETCH_KNOBS, REMOTE, Configuration

PREFETCH_MSR = 0x1A4
# MSR 0x1A4's disable bit of each knob of PREFETCH_KNOBS, in that order.
_KNOB_BITS = (3, 2, 1, 0)
# Features a generic perf event gives: name -> the events it needs.
PERF_EVENTS = {"instructions": "instructions", "llc_misses": "LLC-load-misses", "l1_misses": "L1-dcache-load-misses"}
LIVE_FEATURES = {
    "l3_mpki": lambda c: 1e3 * c["llc_misses"] / c["instructions"],
    "l1_mpki": lambda c: 1e3 * c["l1_misses"] / c["instructions"],
    "ns_per_instruction": lambda c: 1e9 * c["seconds"] / c["instructions"],
}


class LiveError(Exception):
    """The live machine cannot do what was asked (one line)."""


@dataclass
class Capabilities:
    nodes: list[list[int]]                 # CPUs of each node that has CPUs, in node order
    node_ids: list[int]                    # the OS index of each of those nodes
    counters: str | None = None            # None: usable; else what is missing
    perf: str | None = None                # the perf tool the probe ran
    prefetcher: str | None = None          # None: usable; else what is missing
    notes: list[str] = field(default_factory=list)


def probe(cli: str, *, perf: str | None = None, msr_path: str = "/dev/cpu/0/msr",
          cpuinfo: str = "/proc/cpuinfo") -> Capabilities:
    nodes, ids = _nodes(cli)
    caps = Capabilities(nodes=nodes, node_ids=ids, perf=perf or shutil.which("perf"))
    caps.counters = _counters_missing(caps.perf)
    caps.prefetcher = _prefetcher_missing(msr_path, cpuinfo)
    if len(nodes) == 1:
        caps.notes.append("this machine has one NUMA node with CPUs: a thread or page mapping changes the thread "
                          "count at most")
    return caps


def _nodes(cli: str) -> tuple[list[list[int]], list[int]]:
    done = subprocess.run([cli, "topo", "--json"], capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise LiveError(f"{cli} topo --json failed: {last}")
    try:
        machine = json.loads(done.stdout)
        with_cpus = [n for n in machine["nodes"] if n["cpus"]]
        return [list(n["cpus"]) for n in with_cpus], [int(n["os_index"]) for n in with_cpus]
    except (ValueError, KeyError, TypeError) as e:
        raise LiveError(f"{cli} topo --json printed no machine model ({e})") from None


def _counters_missing(perf: str | None) -> str | None:
    if perf is None:
        return "hardware counters unavailable: the perf tool (linux-perf) is not installed"
    events = ",".join(PERF_EVENTS.values())
    try:
        done = subprocess.run([perf, "stat", "-x", ",", "-e", events, "--", "true"], capture_output=True, text=True)
    except OSError as e:
        return f"hardware counters unavailable: cannot run {perf} ({e.strerror})"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return f"hardware counters unavailable: perf stat failed ({last}); see /proc/sys/kernel/perf_event_paranoid"
    missing = [name for name, value in parse_perf_stat(done.stderr).items() if value is None]
    if missing:
        return (f"hardware counters unavailable: perf_event_open does not count {', '.join(missing)} here "
                "(no PMU exposed to this machine, e.g. a virtual machine)")
    return None


def parse_perf_stat(text: str) -> dict[str, float | None]:
    """``perf stat -x ,`` output: each of PERF_EVENTS' events -> its count (None: not counted)."""
    by_event = {}
    for line in text.splitlines():
        parts = line.split(",")
        if len(parts) >= 3:
            by_event[parts[2].split(":")[0]] = parts[0]
    out: dict[str, float | None] = {}
    for name, event in PERF_EVENTS.items():
        value = by_event.get(event)
        try:
            out[name] = float(value) if value is not None else None
        except ValueError:   # "<not supported>", "<not counted>"
            out[name] = None
    return out


def _prefetcher_missing(msr_path: str, cpuinfo: str) -> str | None:
    vendor = ""
    with contextlib.suppress(OSError):
        with open(cpuinfo) as f:
            vendor = next((line.split(":", 1)[1].strip() for line in f if line.startswith("vendor_id")), "")
    if vendor and vendor != "GenuineIntel":
        return (f"prefetcher control unavailable: MSR {PREFETCH_MSR:#x} is Intel's and this CPU is {vendor}; "
                "advising thread and page mapping only")
    if not os.path.exists(msr_path):
        return "prefetcher control unavailable: msr module not loaded; advising thread and page mapping only"
    try:
        fd = os.open(msr_path, os.O_RDONLY)
    except PermissionError:
        return (f"prefetcher control unavailable: {msr_path} needs root (CAP_SYS_RAWIO); advising thread and page "
                "mapping only")
    except OSError as e:
        return f"prefetcher control unavailable: {msr_path}: {e.strerror}; advising thread and page mapping only"
    try:
        os.pread(fd, 8, PREFETCH_MSR)
    except OSError as e:
        return (f"prefetcher control unavailable: MSR {PREFETCH_MSR:#x} cannot be read ({e.strerror}); advising "
                "thread and page mapping only")
    finally:
        os.close(fd)
    return None


def prefetch_msr_value(prefetch: str) -> int:
    """The value of MSR 0x1A4 for an ``intel:XXXX`` setting (1 = knob on)."""
    bits = prefetch.removeprefix("intel:")
    if len(bits) != len(PREFETCH_KNOBS) or set(bits) - {"0", "1"}:
        raise LiveError(f"prefetch: '{prefetch}' is not intel:XXXX with X 0 or 1")
    return sum(1 << bit for bit, on in zip(_KNOB_BITS, bits) if on == "0")


def counter_features(needed: list[str]) -> str | None:
    """None if perf's generic events give every feature in ``needed``, else what they do not give."""
    missing = [name for name in needed if name not in LIVE_FEATURES]
    if missing:
        return (f"the model's features {', '.join(missing)} have no generic perf event (generic events give "
                f"{', '.join(sorted(LIVE_FEATURES))})")
    return None


@dataclass
class Applied:
    argv: list[str]          # numaware run ... --
    env: dict[str, str]      # what the program gets in its environment
    notes: list[str]         # how the configuration was mapped onto this machine


def run_command(cli: str, c: Configuration, caps: Capabilities, preset_nodes: int) -> Applied:
    """``numaware run`` with the configuration's team and pages on the live machine.

    The configuration space counts nodes as 1, 2 or all of the preset's; on
    the live machine "all" is all of its nodes, and a count it lacks is
    capped at what it has (said in the notes). The threads are all the
    cores of those nodes, as in the space.
    """
    notes = []
    have = len(caps.nodes)
    nodes = have if c.nodes == preset_nodes else min(c.nodes, have)
    if nodes != c.nodes:
        notes.append(f"{c.nodes} node(s) on the preset -> {nodes} of this machine's {have}")
    team = caps.node_ids[:nodes]
    threads = sum(len(cpus) for cpus in caps.nodes[:nodes])
    pages = {
        FIRST_TOUCH: "first-touch",
        LOCAL: "local",
        REMOTE: "remote",
        INTERLEAVE: "interleave:" + ",".join(map(str, team)),
        # numaware run has no per-page plan: the profile-based mappings
        # become the policies they approach.
        LOCALITY: "first-touch",
        BALANCE: "interleave:" + ",".join(map(str, team)),
    }[c.page_mapping]
    if c.page_mapping in (LOCALITY, BALANCE):
        notes.append(f"page mapping {c.page_mapping} applied as {pages} (a per-page plan needs the program's "
                     "allocations: link numaware's heap)")
    if c.page_mapping == REMOTE and have == 1:
        raise LiveError("the model chose remote pages, and this machine has one node with CPUs")
    argv = [cli, "run", "--nodes", str(nodes), "--mapping", c.thread_mapping, "--threads", str(threads),
            "--pages", pages, "--"]
    return Applied(argv=argv, env={"OMP_NUM_THREADS": str(threads)}, notes=notes)


@contextlib.contextmanager
def prefetchers(prefetch: str | None, caps: Capabilities):
    """Sets MSR 0x1A4 on every CPU for the body and restores each CPU's value after it (nothing when None).

    Only the four knob bits change; a failed write puts back what was written.
    """
    if prefetch is None:
        yield
        return
    value = prefetch_msr_value(prefetch)
    saved: list[tuple[int, bytes]] = []
    try:
        for cpu in (cpu for node in caps.nodes for cpu in node):
            old = _msr(cpu, None)
            _msr(cpu, ((int.from_bytes(old, "little") & ~0xF) | value).to_bytes(8, "little"))
            saved.append((cpu, old))
    except OSError as e:
        _restore(saved)
        raise LiveError(f"prefetcher control failed: MSR {PREFETCH_MSR:#x}: {e.strerror}; nothing changed") from None
    try:
        yield
    finally:
        _restore(saved)


def _msr(cpu: int, write: bytes | None) -> bytes:
    """Reads (write None) or writes MSR 0x1A4 of one CPU."""
    fd = os.open(f"/dev/cpu/{cpu}/msr", os.O_RDONLY if write is None else os.O_WRONLY)
    try:
        if write is None:
            return os.pread(fd, 8, PREFETCH_MSR)
        os.pwrite(fd, write, PREFETCH_MSR)
        return write
    finally:
        os.close(fd)


def _restore(saved: list[tuple[int, bytes]]) -> None:
    for cpu, old in saved:
        with contextlib.suppress(OSError):
            _msr(cpu, old)
