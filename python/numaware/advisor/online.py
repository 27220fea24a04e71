"""``numaware advise run``: profile twice, predict, apply, run.

Two modes (docs/ADVISOR.md, "Online mode"):

- **simulated** (``--workload SPEC``, ``--trace FILE``, or a program, whose
  accesses are recorded first with ``numaware trace record``): every step
  runs in the memory-hierarchy simulator on the model's preset. The program
  is profiled under the model's feature configurations (one simulator run
  each), every region (``dataset.region_of``) gets its features and its
  predicted configuration, page mappings that regions disagree on are
  settled by cross-evaluation, and the advised program is compared with the
  baseline and with the training's single best configuration.
- **live** (``--live``, a program): the same decision for the real machine.
  What the machine lacks is said in one line each, with what was done
  instead (``live.py``); then the chosen mapping is applied with
  ``numaware run`` and the program runs.

Cross-evaluation: when regions want different page mappings, each wanted
mapping P is tried for the whole program. Under P a region that wanted P
keeps its configuration; another runs the output-space configuration with
page mapping P that did best over the training regions. The P with the
least total time wins (published: "conflicting page mappings between
regions settled by cross-evaluation").

Limits of the simulated mode, shown in its document: a simulator run has
one configuration from start to end, so a region's time is its phases'
time in the run under the configuration chosen for it; moving threads or
pages between regions costs nothing there. A recorded trace keeps the
thread count it was recorded with (trace thread k runs as rank k of the
chosen mapping).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time

import numpy as np

from . import live
from .dataset import accumulate, derived, region_of
from .model import AdvisorModel, ModelError
from .simulator import TRACE_PREFIX, SimulatorError, find_cli, simulator_version
from .space import Configuration, configuration_space
from .store import Store
from .sweep import plan, sweep

NOTE = ("simulated (numaware sim memory, throughput model). One configuration per simulated run: a region's time is "
        "its phases' time in the run under the configuration chosen for it; moving pages or threads between regions "
        "costs nothing here.")


def workload_spec(*, workload: str | None = None, trace: str | None = None) -> str:
    """The sweep's name for what runs: a ``--workload`` spec, or ``trace:PATH``."""
    if (workload is None) == (trace is None):
        raise ModelError("give exactly one of a workload, a trace or a program")
    if trace is not None:
        if not os.path.isfile(trace):
            raise ModelError(f"trace: {trace}: no such file")
        return TRACE_PREFIX + os.path.abspath(trace)
    return workload


def check_model_for(model: AdvisorModel, preset: str) -> None:
    """Every configuration the model may run must exist on ``preset``."""
    space = configuration_space(preset)   # ConfigurationError for a preset without prefetcher control
    for key in [f.configuration for f in model.features] + model.output_space + [model.baseline]:
        c = Configuration.from_key(key)
        if c not in space:
            raise ModelError(f"the model (trained on {model.preset}) runs {key}, which {preset} does not have; "
                             f"train on {preset}")


def advise_simulated(model: AdvisorModel, spec: str, *, preset: str | None = None, cli: str | None = None,
                     workers: int | None = 1, model_name: str | None = None, name: str | None = None) -> dict:
    """The whole simulated online mode on one workload or trace: one document.

    ``name`` stands for ``spec`` in what the document shows (a program's name
    for the temporary trace it was recorded into).
    """
    preset = preset or model.preset
    check_model_for(model, preset)
    cli = find_cli(cli)
    version = simulator_version(cli)
    with tempfile.TemporaryDirectory(prefix="numaware-advise-") as tmp:
        with Store(os.path.join(tmp, "run.sqlite"), version) as store:
            def times_under(keys: list[str]) -> dict:
                """Runs (or finds) the spec under each configuration: {(region, key): summed raw counters}."""
                configs = [Configuration.from_key(k) for k in dict.fromkeys(keys)]
                sweep(plan(preset, [spec], configs), store, cli=cli, workers=workers)
                wanted = set(dict.fromkeys(keys))
                sums: dict = {}
                for r in store.results(preset):
                    if r.workload == spec and r.configuration in wanted and r.measured and r.counters is not None:
                        accumulate(sums, (region_of(r.workload, r.phase), r.configuration), r.counters,
                                   r.simulated_s)
                return sums

            profile = model.profile_configurations()
            sums = times_under(profile)
            regions = sorted({region for region, _ in sums})
            if not regions:
                raise SimulatorError(f"{spec}: no measured phase with counters under {profile[0]}")
            x = np.array([[derived(sums[(r, f.configuration)])[f.counter] for f in model.features] for r in regions])
            predicted = dict(zip(regions, model.predict(x, model_name)))
            candidates = settle_candidates(model, predicted)
            needed = [model.baseline, model.best_single] + [k for plan_ in candidates.values() for k in plan_.values()]
            sums.update(times_under(needed))
    seconds = {key: s["seconds"] for key, s in sums.items()}
    totals = {p: sum(seconds[(r, k)] for r, k in chosen.items()) for p, chosen in candidates.items()}
    page_mapping = min(totals, key=lambda p: (totals[p], p))
    chosen = candidates[page_mapping]
    # One configuration for the whole program (what a live run applies): of
    # the regions' choices, the one with the least total time.
    whole = min(dict.fromkeys(chosen.values()), key=lambda k: (sum(seconds[(r, k)] for r in regions), k))
    baseline_s = sum(seconds[(r, model.baseline)] for r in regions)
    single_s = sum(seconds[(r, model.best_single)] for r in regions)
    advised_s = totals[page_mapping]
    name = name or spec

    def shown(region: str) -> str:
        return name + region[len(spec):] if region.startswith(spec) else region

    return {
        "label": NOTE,
        "simulated": True,
        "mode": "simulated",
        "preset": preset,
        "workload": name,
        "model": model_name or model.model,
        "features": [f.name() for f in model.features],
        "profile_runs": profile,
        "regions": [{
            "region": shown(r),
            "features": {f.name(): float(v) for f, v in zip(model.features, x[i])},
            "predicted": predicted[r],
            "chosen": chosen[r],
            "simulated_s": seconds[(r, chosen[r])],
            "baseline_s": seconds[(r, model.baseline)],
            "speedup": seconds[(r, model.baseline)] / seconds[(r, chosen[r])],
        } for i, r in enumerate(regions)],
        "page_mapping_candidates": [{"page_mapping": p, "simulated_s": totals[p]} for p in sorted(totals)],
        "page_mapping": page_mapping,
        "simulated_s": advised_s,
        "baseline": model.baseline,
        "baseline_s": baseline_s,
        "speedup": baseline_s / advised_s,
        "whole_program": {"configuration": whole, "simulated_s": sum(seconds[(r, whole)] for r in regions)},
        "best_single": model.best_single,
        "best_single_speedup": baseline_s / single_s,
    }


def settle_candidates(model: AdvisorModel, predicted: dict[str, str]) -> dict[str, dict[str, str]]:
    """For each page mapping some region wants, every region's configuration under it (cross-evaluation)."""
    wanted = sorted({Configuration.from_key(k).page_mapping for k in predicted.values()})
    if len(wanted) == 1:
        return {wanted[0]: dict(predicted)}
    log_means = np.mean(np.log(model.speedups), axis=0)
    out = {}
    for p in wanted:
        with_p = [j for j, k in enumerate(model.output_space) if Configuration.from_key(k).page_mapping == p]
        fallback = model.output_space[max(with_p, key=lambda j: log_means[j])]
        out[p] = {r: k if Configuration.from_key(k).page_mapping == p else fallback for r, k in predicted.items()}
    return out


def summary(doc: dict) -> str:
    """The document for a terminal."""
    lines = [doc["label"],
             f"{doc['workload']} on {doc['preset']}: profiled under {len(doc['profile_runs'])} configuration(s); "
             f"model {doc['model']} on {', '.join(doc['features'])}"]
    for r in doc["regions"]:
        lines.append(f"  {r['region']}: {r['chosen']} ({r['speedup']:.3f}x the baseline)")
    if len(doc["page_mapping_candidates"]) > 1:
        lines.append("page mappings settled by cross-evaluation: " + ", ".join(
            f"{c['page_mapping']} {c['simulated_s'] * 1e3:.3f} ms" for c in doc["page_mapping_candidates"]))
    lines.append(f"advised: {doc['simulated_s'] * 1e3:.3f} ms simulated, {doc['speedup']:.3f}x the baseline "
                 f"({doc['baseline_s'] * 1e3:.3f} ms); the training's single best configuration "
                 f"{doc['best_single_speedup']:.3f}x")
    return "\n".join(lines)



def record_trace(cli: str, program: list[str], path: str) -> str:
    """Records the program's accesses (``numaware trace record``); its output is not shown."""
    done = subprocess.run([cli, "trace", "record", "-o", path, "--", *program], stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # The recorder exits with the program's status: a program that fails
    # still leaves its trace, which is advised on like any other.
    if not os.path.isfile(path) or os.path.getsize(path) == 0:
        last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise SimulatorError(f"recording {program[0]}'s trace failed: {last}")
    return path


def advise_live(model: AdvisorModel, program: list[str], *, cli: str | None = None, workers: int | None = 1,
                say=print) -> tuple[int, dict]:
    """Decides on the live machine, applies, runs the program: (its exit status, the report).

    ``say(line)`` gets each line of what is missing and what was done instead.
    """
    cli = find_cli(cli)
    caps = live.probe(cli)
    for note in caps.notes:
        say(note)
    report: dict = {"mode": "live", "program": program, "model": model.model,
                    "features": [f.name() for f in model.features], "missing": []}
    missing = caps.counters or live.counter_features([f.counter for f in model.features])
    preset_nodes = configuration_space(model.preset).preset.sockets
    if missing is None:
        counts = {key: _live_counts(cli, key, program, caps, preset_nodes) for key in model.profile_configurations()}
        x = [[live.LIVE_FEATURES[f.counter](counts[f.configuration]) for f in model.features]]
        chosen = model.predict(np.array(x))[0]
        report["features_from"] = "live counters (perf stat)"
    else:
        line = f"{missing}; features from the simulator instead: the program's trace replayed on {model.preset}"
        say(line)
        report["missing"].append(line)
        with tempfile.TemporaryDirectory(prefix="numaware-advise-") as tmp:
            trace = record_trace(cli, program, os.path.join(tmp, "program.nwt"))
            simulated = advise_simulated(model, TRACE_PREFIX + trace, cli=cli, workers=workers,
                                         name="trace of " + " ".join(program))
        chosen = simulated["whole_program"]["configuration"]
        report["features_from"] = f"simulated on {model.preset} (a trace of the program)"
        report["simulated"] = simulated
    config = Configuration.from_key(chosen)
    applied = live.run_command(cli, config, caps, preset_nodes)
    for note in applied.notes:
        say(note)
    report.update(chosen=chosen, applied=applied.argv[1:-1], notes=applied.notes)
    if caps.prefetcher is not None:
        say(caps.prefetcher)
        report["missing"].append(caps.prefetcher)
    say(f"running under {chosen}: {' '.join(applied.argv[1:-1])}")
    with live.prefetchers(None if caps.prefetcher else config.prefetch, caps):
        start = time.monotonic()
        done = subprocess.run([*applied.argv, *program], env={**os.environ, **applied.env})
        report["wall_s"] = time.monotonic() - start
    report["exit_status"] = done.returncode
    return done.returncode, report


def _live_counts(cli: str, key: str, program: list[str], caps, preset_nodes: int) -> dict:
    """The counts perf stat gives while the program runs under one configuration (one profile run)."""
    applied = live.run_command(cli, Configuration.from_key(key), caps, preset_nodes)
    with tempfile.NamedTemporaryFile("r", suffix=".perf") as out:
        argv = [caps.perf, "stat", "-x", ",", "-o", out.name, "-e", ",".join(live.PERF_EVENTS.values()), "--",
                *applied.argv, *program]
        start = time.monotonic()
        subprocess.run(argv, env={**os.environ, **applied.env}, stdout=subprocess.DEVNULL)
        seconds = time.monotonic() - start
        counts = live.parse_perf_stat(out.read())
    if any(v is None or v <= 0 for v in counts.values()):
        raise live.LiveError(f"perf stat counted nothing for {', '.join(k for k, v in counts.items() if not v)} "
                             f"under {key}")
    return {**counts, "seconds": seconds}
