"""The advisor's one door to the simulator: the ``numaware`` command.

This module alone knows the command line's flags and the shape of what it
prints; the advisor calls the command by subprocess and links nothing.

- ``find_cli``: the command's path (an argument, else ``$NUMAWARE_CLI``, else
  ``numaware`` on PATH);
- ``simulator_version``: what ``numaware --version`` says (``numaware X.Y.Z``);
- ``sim_memory_command``: the argv of one job;
- ``run_job``: runs a job and returns its results as plain data. It is the
  function the sweep's workers run (a process pool's or Dask's), so it is
  importable, takes and returns picklable values, and writes nothing.

A job is one simulator run: a workload under one thread and page mapping
with every prefetch setting asked for in one comma list, so one process
gives every phase under every setting.
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass

from .space import Configuration

CLI_ENV = "NUMAWARE_CLI"
DEFAULT_CLI = "numaware"
# A job's workload that names a recorded trace (numaware trace record, or
# ChampSim's) instead of a built-in workload: ``trace:PATH``.
TRACE_PREFIX = "trace:"
# The counters a run reports, whole and per phase.
COUNTER_FIELDS = ("levels", "bytes", "prefetch_counts", "energy_j", "bandwidth_gbps", "instructions", "accesses")
_NUMBER_COUNTERS = ("instructions", "accesses")
# `numaware X.Y.Z`; the bare X.Y.Z that numaware 0.1.0 prints is read too.
_VERSION = re.compile(r"(?:numaware )?(\d+\.\d+\.\d+\S*)")


class SimulatorError(Exception):
    """The command is missing, failed, or printed something unexpected (one line)."""


@dataclass(frozen=True)
class Job:
    """One simulator run: a workload under one thread and page mapping, every prefetch setting in ``prefetches``."""

    preset: str
    workload: str
    threads: int
    nodes: int
    thread_mapping: str
    page_mapping: str
    prefetches: tuple[str, ...]

    def configuration(self, prefetch: str) -> Configuration:
        return Configuration(self.threads, self.nodes, self.thread_mapping, self.page_mapping, prefetch)

    def configurations(self) -> tuple[Configuration, ...]:
        return tuple(self.configuration(p) for p in self.prefetches)

    def describe(self) -> str:
        return (f"{self.workload} on {self.preset} ({self.threads} threads on {self.nodes} node(s) "
                f"{self.thread_mapping}, pages {self.page_mapping})")


@dataclass(frozen=True)
class PhaseResult:
    name: str
    measured: bool
    simulated_s: float
    counters: dict | None  # COUNTER_FIELDS, for this phase alone; None: an unmeasured phase without them


@dataclass(frozen=True)
class RunResult:
    """One prefetch setting of a job: the whole run and each phase."""

    prefetch: str
    simulated_s: float
    counters: dict
    phases: tuple[PhaseResult, ...]


@dataclass(frozen=True)
class JobResult:
    job: Job
    runs: tuple[RunResult, ...]  # in the order of job.prefetches


def find_cli(path: str | None = None) -> str:
    """The absolute path of the ``numaware`` command to run."""
    given = path or os.environ.get(CLI_ENV) or DEFAULT_CLI
    found = shutil.which(given)
    if found is None:
        source = "--cli" if path else (f"${CLI_ENV}" if os.environ.get(CLI_ENV) else "PATH")
        raise SimulatorError(f"the numaware command '{given}' (from {source}) is not an executable file; "
                             f"give --cli PATH or set {CLI_ENV}")
    return os.path.abspath(found)


def simulator_version(cli: str) -> str:
    """The simulator's version, from ``numaware --version`` (one line ``numaware X.Y.Z``)."""
    try:
        done = subprocess.run([cli, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SimulatorError(f"{cli} --version: cannot run: {e}") from e
    lines = done.stdout.strip().splitlines()
    match = _VERSION.fullmatch(lines[0].strip()) if done.returncode == 0 and len(lines) == 1 else None
    if match is None:
        said = _last_line(done.stderr) or _last_line(done.stdout) or f"exit status {done.returncode}"
        raise SimulatorError(f"{cli} --version does not give the simulator version (expected one line "
                             f"'numaware X.Y.Z', got: {said}); results cannot be keyed without it")
    return match.group(1)


def list_presets(cli: str) -> list[dict]:
    """The simulator's presets: ``numaware sim memory --list-presets --json``, each checked.

    Each is a dict with ``name``, ``sockets``, ``cores_per_socket`` and ``prefetcher_control``.
    """
    argv = [cli, "sim", "memory", "--list-presets", "--json"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SimulatorError(f"{cli} sim memory --list-presets: cannot run: {e}") from e
    if done.returncode != 0:
        said = _last_line(done.stderr) or _last_line(done.stdout) or f"exit status {done.returncode}"
        raise SimulatorError(f"{cli} sim memory --list-presets failed (a numaware without it?): {said}")
    try:
        doc = json.loads(done.stdout)
        _expect(isinstance(doc, dict) and isinstance(doc.get("presets"), list) and doc["presets"], "presets",
                "expected a non-empty list")
        for i, p in enumerate(doc["presets"]):
            where = f"presets[{i}]"
            _expect(isinstance(p, dict) and isinstance(p.get("name"), str) and p["name"], f"{where}.name",
                    "expected a non-empty string")
            for name in ("sockets", "cores_per_socket"):
                value = p.get(name)
                _expect(isinstance(value, int) and not isinstance(value, bool) and value >= 1, f"{where}.{name}",
                        f"expected an integer >= 1, got {value!r}")
            _expect(isinstance(p.get("prefetcher_control"), bool), f"{where}.prefetcher_control",
                    "expected true or false")
        return doc["presets"]
    except json.JSONDecodeError as e:
        raise SimulatorError(f"{cli} sim memory --list-presets: not JSON ({e})") from None
    except _FieldError as e:
        raise SimulatorError(f"{cli} sim memory --list-presets: {e}") from None


def sim_memory_command(cli: str, job: Job) -> list[str]:
    """The argv that runs ``job``. A workload ``trace:PATH`` replays the recorded trace at PATH."""
    what = (["--trace", job.workload[len(TRACE_PREFIX):]] if job.workload.startswith(TRACE_PREFIX)
            else ["--workload", job.workload])
    return [
        cli, "sim", "memory",
        "--preset", job.preset,
        *what,
        "--threads", str(job.threads),
        "--nodes", str(job.nodes),
        "--thread-mapping", job.thread_mapping,
        "--mapping", job.page_mapping,
        "--prefetch", ",".join(job.prefetches),
        "--json",
    ]


def run_job(cli: str, job: Job) -> JobResult:
    """Runs ``job`` and returns its checked results. Raises SimulatorError."""
    argv = sim_memory_command(cli, job)
    try:
        done = subprocess.run(argv, capture_output=True, text=True)
    except OSError as e:
        raise SimulatorError(f"{job.describe()}: cannot run {cli}: {e.strerror}") from e
    if done.returncode != 0:
        how = f"killed by signal {-done.returncode}" if done.returncode < 0 else f"exit status {done.returncode}"
        raise SimulatorError(f"{job.describe()}: {shlex.join(argv[1:])} failed ({how}): "
                             f"{_last_line(done.stderr) or 'no message'}")
    try:
        doc = json.loads(done.stdout)
    except json.JSONDecodeError as e:
        raise SimulatorError(f"{job.describe()}: the output is not JSON: {e.msg} at line {e.lineno}") from e
    try:
        return parse_output(doc, job)
    except _FieldError as e:
        raise SimulatorError(f"{job.describe()}: {e}") from None


class _FieldError(Exception):
    pass


def parse_output(doc, job: Job) -> JobResult:
    """Checks a ``sim memory --json`` document against the job that printed it."""
    _expect(isinstance(doc, dict), "document", "expected a JSON object")
    _expect(doc.get("simulated") is True, "simulated", "must be true (a simulated result)")
    _expect(doc.get("preset") == job.preset, "preset", f"expected {job.preset!r}, got {doc.get('preset')!r}")
    runs = doc.get("runs")
    _expect(isinstance(runs, list) and len(runs) == len(job.prefetches), "runs",
            f"expected a list of {len(job.prefetches)} runs, one per prefetch setting")
    out = []
    for i, (run, prefetch) in enumerate(zip(runs, job.prefetches)):
        where = f"runs[{i}]"
        _expect(isinstance(run, dict), where, "expected an object")
        _expect(run.get("prefetch") == prefetch, f"{where}.prefetch", f"expected {prefetch!r}, got {run.get('prefetch')!r}")
        phases = run.get("phases")
        _expect(isinstance(phases, list) and phases, f"{where}.phases", "expected a non-empty list")
        out.append(RunResult(
            prefetch=prefetch,
            simulated_s=_seconds(run, where),
            counters=_counters(run, where),
            phases=tuple(_phase(phase, f"{where}.phases[{k}]") for k, phase in enumerate(phases)),
        ))
    return JobResult(job, tuple(out))


def _phase(phase, where: str) -> PhaseResult:
    _expect(isinstance(phase, dict), where, "expected an object")
    name = phase.get("name")
    _expect(isinstance(name, str) and name != "", f"{where}.name", "expected a non-empty string")
    _expect(isinstance(phase.get("measured"), bool), f"{where}.measured", "expected true or false")
    measured = phase["measured"]
    # A measured phase has its counters (they are the advisor's features);
    # the simulator may leave them out of an unmeasured one (set-up, warm-up).
    # Per-phase counters came after the phases themselves: say so when a
    # numaware that predates them is run.
    if "counters" not in phase:
        _expect(not measured, f"{where}.counters", "missing (a numaware without per-phase counters)")
        return PhaseResult(name, measured, _seconds(phase, where), None)
    counters = phase["counters"]
    _expect(isinstance(counters, dict), f"{where}.counters", "expected an object")
    return PhaseResult(name, measured, _seconds(phase, where), _counters(counters, f"{where}.counters"))


def _seconds(obj: dict, where: str) -> float:
    value = obj.get("simulated_s")
    _expect(_is_number(value) and value >= 0, f"{where}.simulated_s", f"expected a number >= 0, got {value!r}")
    return float(value)


def _counters(obj: dict, where: str) -> dict:
    for name in COUNTER_FIELDS:
        _expect(name in obj, f"{where}.{name}", "missing")
        value = obj[name]
        if name in _NUMBER_COUNTERS:
            _expect(_is_number(value), f"{where}.{name}", f"expected a number, got {value!r}")
        else:
            _expect(isinstance(value, dict), f"{where}.{name}", "expected an object")
    return {name: obj[name] for name in COUNTER_FIELDS}


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _expect(ok: bool, field: str, problem: str) -> None:
    if not ok:
        raise _FieldError(f"{field}: {problem}")


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""
