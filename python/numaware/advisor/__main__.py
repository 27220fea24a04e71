"""``python3 -m numaware.advisor``: the advisor's command line.

    python3 -m numaware.advisor sweep --preset thesis-4s --size test|medium|small-full|full --store FILE
                                      [--scheduler tcp://HOST:PORT | --workers N] [--cli PATH]
    python3 -m numaware.advisor evaluate --preset thesis-4s --size test|medium|small-full|full [--store FILE] [--json]
                                      [--folds K] [--screen N] [--plot DIR] (runs or resumes the sweep first)
    python3 -m numaware.advisor plot --preset thesis-4s --size test|medium|small-full|full [--store FILE] --output DIR
    python3 -m numaware.advisor train --preset thesis-4s --size test|medium|small-full|full [--store FILE] --output MODEL.json
                                      [--model tree] [--features F@C,F@C] [--folds K] [--screen N]
    python3 -m numaware.advisor run --model MODEL.json (--workload SPEC | --trace FILE | -- PROGRAM ARGS...)
                                      [--preset P] [--predict-with MODEL] [--json]   (simulated)
    python3 -m numaware.advisor run --model MODEL.json --live -- PROGRAM ARGS...  (the live machine)

A failure or bad input prints one line on standard error and exits 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

from .dataset import load_table
from .evaluate import cross_machine_document, evaluation_document
from .learn import MODELS, LearnError
from .live import LiveError
from .model import AdvisorModel, ModelError, train
from .online import advise_live, advise_simulated, record_trace, summary as run_summary, workload_spec
from .plots import write_plots
from .simulator import TRACE_PREFIX, SimulatorError, find_cli, simulator_version
from .sizes import SIZES
from .space import ConfigurationError
from .store import Store, StoreError
from .sweep import SweepError, SweepReport, sweep_size

PROGRAM = "numaware.advisor"


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting 2."""

    def error(self, message):
        raise UsageError(message)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got '{text}'")
    return int(text)


def _add_sweep_options(command: argparse.ArgumentParser) -> None:
    """The options of a sweep, shared by `sweep` and `evaluate` (which runs or resumes one)."""
    command.add_argument("--preset", required=True, help="simulator preset, e.g. thesis-4s")
    command.add_argument("--size", required=True, choices=list(SIZES), help="test: a few regions (seconds); medium: the full size's workloads but mg:W and ft:W, 4 prefetcher "
                              "settings (a quarter of an hour on 2 cores); small-full: every configuration over the "
                              "regions whose runs are short (9 minutes); full: all (docs/ADVISOR.md)")
    command.add_argument("--workers", type=_positive, metavar="N", help="local pool size for the sweep (default: the CPU count)")
    command.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="run the sweep on this Dask scheduler's cluster")
    command.add_argument("--cli", metavar="PATH", help="the numaware command (default: $NUMAWARE_CLI, else on PATH)")
    command.add_argument("--trace", action="append", default=[], metavar="FILE", dest="traces",
                         help="also sweep this recorded trace (numaware trace record; repeatable), each phase a region")


def _add_learning_options(command: argparse.ArgumentParser) -> None:
    """The sweep's options, the default store, and the cross-validation's: shared by evaluate, plot and train."""
    _add_sweep_options(command)
    command.add_argument("--store", metavar="FILE",
                         help="SQLite result store (default: $XDG_CACHE_HOME/numaware/advisor-PRESET-SIZE.sqlite)")
    command.add_argument("--folds", type=_positive, default=10, help="cross-validation folds (default 10)")
    command.add_argument("--screen", type=_positive, default=None,
                         help="pair only the N candidate features best alone (default: every pair)")


def _parser() -> _Parser:
    parser = _Parser(prog=f"python3 -m {PROGRAM}", description="numaware's configuration advisor (simulated sweeps).")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    sweep = commands.add_parser(
        "sweep", help="run every region of a size under every configuration into a store",
        description="Run the simulator over a size's regions and configurations; results go into an SQLite "
                    "store, and a rerun skips what is done.")
    _add_sweep_options(sweep)
    sweep.add_argument("--store", required=True, metavar="FILE", help="SQLite result store (created if new)")
    evaluate = commands.add_parser(
        "evaluate", help="sweep (or resume), then cross-validate every model; one document",
        description="Run or resume the size's sweep into the store, then evaluate the output space, the references "
                    "and every model in k-fold cross-validation (simulated).")
    _add_learning_options(evaluate)
    evaluate.add_argument("--json", action="store_true", help="print one JSON document")
    evaluate.add_argument("--plot", metavar="DIR", help="also write per_region.png, coverage.png and tree_regions.png")
    evaluate.add_argument("--features-from", metavar="STORE:PRESET",
                          help="cross-machine training: also choose this preset's configurations from features "
                               "measured on PRESET, whose sweep is in STORE (the regions both have)")
    plot = commands.add_parser(
        "plot", help="sweep (or resume), evaluate, and write the plots",
        description="The evaluation's plots as PNG: per_region.png, coverage.png and tree_regions.png (simulated).")
    _add_learning_options(plot)
    plot.add_argument("--output", required=True, metavar="DIR", help="directory for the PNG files")
    trainer = commands.add_parser(
        "train", help="sweep (or resume), search the feature pair, write a model file",
        description="Run or resume the size's sweep, choose the feature pair by exhaustive search (or take "
                    "--features), and write the model file that `run` reads (JSON, docs/ADVISOR.md).")
    _add_learning_options(trainer)
    trainer.add_argument("--output", required=True, metavar="MODEL.json", help="the model file to write")
    trainer.add_argument("--model", default="tree", choices=list(MODELS), help="the model run uses (default tree)")
    trainer.add_argument("--features", metavar="F@C;F@C",
                         help="the features, COUNTER@CONFIGURATION_KEY separated by ';' (default: the best pair)")
    runner = commands.add_parser(
        "run", help="profile under the model's feature configurations, predict, apply, run",
        description="Simulated (a workload, a trace, or a program whose trace is recorded first): every step in "
                    "the simulator on the model's preset. --live: decide for this machine, say what it lacks, "
                    "apply the chosen mapping with `numaware run` and run the program.")
    runner.add_argument("--model", required=True, metavar="MODEL.json", help="a file written by train")
    what = runner.add_mutually_exclusive_group()
    what.add_argument("--workload", metavar="SPEC", help="a simulator workload (numaware sim memory --workload)")
    what.add_argument("--trace", metavar="FILE", help="a recorded trace (numaware trace record, or ChampSim's)")
    runner.add_argument("--live", action="store_true", help="advise and run the program on this machine")
    runner.add_argument("--preset", help="simulate on this preset (default: the model's)")
    runner.add_argument("--predict-with", choices=list(MODELS), help="another model on the same training data")
    runner.add_argument("--json", action="store_true", help="print one JSON document (on stderr with --live)")
    runner.add_argument("--workers", type=_positive, default=1, metavar="N", help="simulator runs at once (default 1)")
    runner.add_argument("--cli", metavar="PATH", help="the numaware command (default: $NUMAWARE_CLI, else on PATH)")
    runner.add_argument("program", nargs=argparse.REMAINDER, help="-- PROGRAM ARGS...")
    return parser


def default_store(preset: str, size: str) -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    os.makedirs(os.path.join(base, "numaware"), exist_ok=True)
    return os.path.join(base, "numaware", f"advisor-{preset}-{size}.sqlite")


def _text(doc: dict) -> str:
    lines = [f"{doc['label']}",
             f"preset {doc['preset']}: {doc['regions']} regions, {doc['configurations']} configurations, baseline "
             f"{doc['baseline']}",
             f"oracle (best of the {len(doc['output_space'])} covering 99%): {doc['oracle_speedup']:.3f}x; best "
             f"single configuration {doc['best_single']['speedup']:.3f}x; best-of-2 {doc['best_of_2_speedup']:.3f}x",
             "characterisation: " + ", ".join(f"{k} {v:.3f}x" for k, v in doc["characterisation"].items()),
             f"best feature pair: {', '.join(doc['feature_search']['best_pair'])}"]
    for name, m in doc["models"].items():
        lines.append(f"  {name:16s} {m['speedup']:.3f}x ({m['speedup'] / doc['oracle_speedup']:.1%} of the oracle)")
    cm = doc.get("cross_machine")
    if cm:
        lines.append(f"cross-machine: features from {cm['features_preset']}, labels from {cm['labels_preset']} "
                     f"({cm['regions']} regions; oracle {cm['oracle_speedup']:.3f}x, best-of-2 "
                     f"{cm['best_of_2_speedup']:.3f}x, tree on {cm['labels_preset']}'s own features "
                     f"{cm['same_machine_tree']['speedup']:.3f}x)")
        for name, m in cm["models"].items():
            lines.append(f"  {name:16s} {m['speedup']:.3f}x ({m['speedup'] / cm['oracle_speedup']:.1%} of the oracle)")
    return "\n".join(lines)


def _evaluate(args) -> int:
    store_path, _, table = _sweep_and_table(args)
    doc = evaluation_document(table, preset=args.preset, folds=args.folds, screen=args.screen)
    doc["store"] = store_path
    if args.features_from:
        other_store, sep, other_preset = args.features_from.rpartition(":")
        if not sep or not other_store or not other_preset:
            raise UsageError(f"--features-from: expected STORE:PRESET, got '{args.features_from}'")
        if not os.path.isfile(other_store):
            raise UsageError(f"--features-from: {other_store}: no such store")
        with Store(other_store) as store:
            other = load_table(store, other_preset)
        search = doc["feature_search"]
        doc["cross_machine"] = cross_machine_document(
            other, table, features_preset=other_preset, labels_preset=args.preset, folds=args.folds,
            screen=args.screen,
            same_machine={"speedup": search["best_pair_speedup"], "features": search["best_pair"]})
    if args.plot:
        doc["plots"] = write_plots(doc, args.plot)
    print(json.dumps(doc, indent=1) if args.json else _text(doc))
    return 0


def _sweep_and_table(args):
    store_path = args.store or default_store(args.preset, args.size)
    sweep_size(args.preset, args.size, store_path, cli=args.cli, workers=args.workers, scheduler=args.scheduler,
               progress=_progress if sys.stderr.isatty() else None, traces=args.traces)
    with Store(store_path) as store:
        return store_path, store.simulator_version, load_table(store, args.preset)


def _plot(args) -> int:
    _, _, table = _sweep_and_table(args)
    doc = evaluation_document(table, preset=args.preset, folds=args.folds, screen=args.screen, models=("tree",))
    for path in write_plots(doc, args.output):
        print(path)
    return 0


def _train(args) -> int:
    store_path, version, table = _sweep_and_table(args)
    features = [f for f in args.features.split(";") if f] if args.features else None
    model = train(table, preset=args.preset, simulator_version=version, model=args.model, features=features,
                  folds=args.folds, screen=args.screen)
    model.save(args.output)
    cv = model.cross_validated
    print(f"{PROGRAM} train: {args.output}: {model.model} on {', '.join(f.name() for f in model.features)}; "
          f"{cv['regions']} regions of {store_path}, {len(model.output_space)} configurations to choose from; "
          f"{cv['folds']}-fold cross-validated {cv['speedup']:.3f}x against the baseline (oracle "
          f"{cv['oracle_speedup']:.3f}x; simulated)")
    return 0


def _run(args) -> int:
    program = args.program[1:] if args.program[:1] == ["--"] else args.program
    model = AdvisorModel.load(args.model)
    if args.live:
        if not program or args.workload or args.trace or args.preset:
            raise UsageError("--live runs a program: give -- PROGRAM ARGS (and no --workload, --trace or --preset)")
        status, report = advise_live(model, program, cli=args.cli, workers=args.workers,
                                     say=lambda line: print(f"{PROGRAM} run: {line}", file=sys.stderr))
        if args.json:
            print(json.dumps(report, indent=1), file=sys.stderr)
        return status
    if sum(x is not None and x != [] for x in (args.workload, args.trace, program or None)) != 1:
        raise UsageError("give exactly one of --workload SPEC, --trace FILE or -- PROGRAM ARGS")
    cli = find_cli(args.cli)
    if program:
        simulator_version(cli)   # before the recording, which may take long: an unusable numaware fails first
        with tempfile.TemporaryDirectory(prefix="numaware-advise-") as tmp:
            trace = record_trace(cli, program, os.path.join(tmp, "program.nwt"))
            doc = advise_simulated(model, TRACE_PREFIX + trace, preset=args.preset, cli=cli, workers=args.workers,
                                   model_name=args.predict_with, name="trace of " + " ".join(program))
    else:
        doc = advise_simulated(model, workload_spec(workload=args.workload, trace=args.trace), preset=args.preset,
                               cli=cli, workers=args.workers, model_name=args.predict_with)
    print(json.dumps(doc, indent=1) if args.json else run_summary(doc))
    return 0


def _progress(done: int, total: int, result) -> None:
    print(f"[{done}/{total}] {result.job.describe()}", file=sys.stderr, flush=True)


def _summary(args, report: SweepReport) -> str:
    return (f"{PROGRAM} sweep: {args.preset}, size {args.size}: {report.jobs} jobs ({report.skipped} already "
            f"done, {report.ran} run on {report.engine}), {report.results} phase results written to {args.store} "
            "(simulated)")


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
        if args.command == "evaluate":
            return _evaluate(args)
        if args.command in ("plot", "train", "run"):
            return {"plot": _plot, "train": _train, "run": _run}[args.command](args)
        report = sweep_size(args.preset, args.size, args.store, cli=args.cli, workers=args.workers,
                            scheduler=args.scheduler, progress=_progress if sys.stderr.isatty() else None,
                            traces=args.traces)
    except (UsageError, ConfigurationError, SimulatorError, StoreError, SweepError, LearnError, ModelError,
            LiveError) as e:
        print(f"{PROGRAM}: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROGRAM}: interrupted; finished jobs are stored, rerun to resume", file=sys.stderr)
        return 130
    print(_summary(args, report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
