"""``python3 -m numaware.advisor``: the advisor's command line.

    python3 -m numaware.advisor sweep --preset thesis-4s --size test|full --store FILE
                                      [--scheduler tcp://HOST:PORT | --workers N] [--cli PATH]
    python3 -m numaware.advisor evaluate --preset thesis-4s --size test|full [--store FILE] [--json]
                                      [--folds K] [--screen N] [--plot DIR] (runs or resumes the sweep first)

A failure or bad input prints one line on standard error and exits 1.
"""

from __future__ import annotations

import argparse
import sys

import json
import os

from .dataset import load_table
from .evaluate import evaluation_document
from .learn import LearnError
from .plots import write_plots
from .simulator import SimulatorError
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
    command.add_argument("--size", required=True, choices=list(SIZES), help="test: a few regions (seconds); medium: 12 class W workloads, 4 prefetcher settings (minutes); full: all")
    command.add_argument("--workers", type=_positive, metavar="N", help="local pool size for the sweep (default: the CPU count)")
    command.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="run the sweep on this Dask scheduler's cluster")
    command.add_argument("--cli", metavar="PATH", help="the numaware command (default: $NUMAWARE_CLI, else on PATH)")


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
    _add_sweep_options(evaluate)
    evaluate.add_argument("--store", metavar="FILE",
                          help="SQLite result store (default: $XDG_CACHE_HOME/numaware/advisor-PRESET-SIZE.sqlite)")
    evaluate.add_argument("--json", action="store_true", help="print one JSON document")
    evaluate.add_argument("--folds", type=_positive, default=10, help="cross-validation folds (default 10)")
    evaluate.add_argument("--screen", type=_positive, default=None,
                          help="pair only the N candidate features best alone (default: every pair)")
    evaluate.add_argument("--plot", metavar="DIR", help="also write per_region.png, coverage.png and tree_regions.png")
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
    return "\n".join(lines)


def _evaluate(args) -> int:
    store_path = args.store or default_store(args.preset, args.size)
    sweep_size(args.preset, args.size, store_path, cli=args.cli, workers=args.workers, scheduler=args.scheduler,
               progress=_progress if sys.stderr.isatty() else None)
    with Store(store_path) as store:
        table = load_table(store, args.preset)
    doc = evaluation_document(table, preset=args.preset, folds=args.folds, screen=args.screen)
    doc["store"] = store_path
    if args.plot:
        doc["plots"] = write_plots(doc, args.plot)
    print(json.dumps(doc, indent=1) if args.json else _text(doc))
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
        report = sweep_size(args.preset, args.size, args.store, cli=args.cli, workers=args.workers,
                            scheduler=args.scheduler, progress=_progress if sys.stderr.isatty() else None)
    except (UsageError, ConfigurationError, SimulatorError, StoreError, SweepError, LearnError) as e:
        print(f"{PROGRAM}: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROGRAM}: interrupted; finished jobs are stored, rerun to resume", file=sys.stderr)
        return 130
    print(_summary(args, report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
