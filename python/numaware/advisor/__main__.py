"""``python3 -m numaware.advisor``: the advisor's command line.

    python3 -m numaware.advisor sweep --preset thesis-4s --size test|full --store FILE
                                      [--scheduler tcp://HOST:PORT | --workers N] [--cli PATH]

A failure or bad input prints one line on standard error and exits 1.
"""

from __future__ import annotations

import argparse
import sys

from .simulator import SimulatorError
from .sizes import SIZES
from .space import ConfigurationError
from .store import StoreError
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


def _parser() -> _Parser:
    parser = _Parser(prog=f"python3 -m {PROGRAM}", description="numaware's configuration advisor (simulated sweeps).")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    sweep = commands.add_parser(
        "sweep", help="run every region of a size under every configuration into a store",
        description="Run the simulator over a size's regions and configurations; results go into an SQLite "
                    "store, and a rerun skips what is done.")
    sweep.add_argument("--preset", required=True, help="simulator preset, e.g. thesis-4s")
    sweep.add_argument("--size", required=True, choices=list(SIZES), help="test: a few regions; full: all")
    sweep.add_argument("--store", required=True, metavar="FILE", help="SQLite result store (created if new)")
    sweep.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="run on this Dask scheduler's cluster")
    sweep.add_argument("--workers", type=_positive, metavar="N", help="local pool size (default: the CPU count)")
    sweep.add_argument("--cli", metavar="PATH", help="the numaware command (default: $NUMAWARE_CLI, else on PATH)")
    return parser


def _progress(done: int, total: int, result) -> None:
    print(f"[{done}/{total}] {result.job.describe()}", file=sys.stderr, flush=True)


def _summary(args, report: SweepReport) -> str:
    return (f"{PROGRAM} sweep: {args.preset}, size {args.size}: {report.jobs} jobs ({report.skipped} already "
            f"done, {report.ran} run on {report.engine}), {report.results} phase results written to {args.store} "
            "(simulated)")


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
        report = sweep_size(args.preset, args.size, args.store, cli=args.cli, workers=args.workers,
                            scheduler=args.scheduler, progress=_progress if sys.stderr.isatty() else None)
    except (UsageError, ConfigurationError, SimulatorError, StoreError, SweepError) as e:
        print(f"{PROGRAM}: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROGRAM}: interrupted; finished jobs are stored, rerun to resume", file=sys.stderr)
        return 130
    print(_summary(args, report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
