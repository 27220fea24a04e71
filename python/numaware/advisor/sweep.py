"""The sweep engine: every region under every configuration, into the store.

The work is cut into jobs (``simulator.Job``): one workload under one thread
and page mapping, with all its prefetch settings in one simulator call. A
job already in the store is skipped, and one partly there runs only the
settings it lacks, so a rerun or an interrupted sweep resumes where it was.

Jobs run on an existing engine, never a home-made one:

- by default a local ``concurrent.futures.ProcessPoolExecutor``
  (``os.cpu_count()`` workers unless told);
- with ``scheduler="tcp://HOST:PORT"`` a Dask distributed cluster, through
  ``dask.distributed.Client``: a worker that dies loses nothing, as the
  scheduler runs its jobs again elsewhere.

Either way the workers only run ``simulator.run_job`` and return its data;
this process alone writes the store, one transaction per job, so each
(region, configuration) is written exactly once.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace

from .simulator import TRACE_PREFIX, Job, JobResult, SimulatorError, find_cli, run_job, simulator_version
from .sizes import SIZES
from .space import Configuration, ConfigurationError, configuration_space
from .store import Store

Progress = Callable[[int, int, JobResult], None]
# How long to keep trying to reach a Dask scheduler before giving up.
DASK_CONNECT_TIMEOUT = "30s"


class SweepError(Exception):
    """The sweep cannot start or had to stop (one line)."""


@dataclass(frozen=True)
class SweepReport:
    jobs: int  # planned
    skipped: int  # already in the store
    ran: int
    results: int  # phase results written
    engine: str


def plan(preset: str, workloads: Iterable[str], configurations: Iterable[Configuration]) -> list[Job]:
    """One job per workload and (thread mapping, page mapping), its prefetch settings in the configurations' order."""
    groups: dict[tuple, list[str]] = {}
    for c in configurations:
        groups.setdefault((c.threads, c.nodes, c.thread_mapping, c.page_mapping), []).append(c.prefetch)
    return [Job(preset, workload, *numa, tuple(prefetches))
            for workload in workloads for numa, prefetches in groups.items()]


def remaining(jobs: Iterable[Job], store: Store) -> list[Job]:
    """The jobs with work left, each narrowed to the prefetch settings not yet in the store."""
    jobs = list(jobs)
    done: set[tuple[str, str, str]] = set()
    for preset in {job.preset for job in jobs}:
        keys = [(job.workload, c.key) for job in jobs if job.preset == preset for c in job.configurations()]
        done |= {(preset, *key) for key in store.done(keys, preset)}
    out = []
    for job in jobs:
        left = tuple(p for p in job.prefetches
                     if (job.preset, job.workload, job.configuration(p).key) not in done)
        if left:
            out.append(job if left == job.prefetches else replace(job, prefetches=left))
    return out


def sweep(jobs: Sequence[Job], store: Store, *, cli: str, workers: int | None = None, scheduler: str | None = None,
          progress: Progress | None = None) -> SweepReport:
    """Runs the jobs the store lacks and records each result as it arrives.

    ``cli`` is the ``numaware`` command's path; on a Dask cluster it must be
    valid on every worker. ``progress(done, total, result)`` is called after
    each job is stored.
    """
    _check_engine(workers, scheduler)
    todo = remaining(jobs, store)
    pool = _pool_size(workers)
    engine = f"dask {scheduler}" if scheduler else f"process pool ({pool} worker{'s' if pool != 1 else ''})"
    written = 0
    if todo:
        results = _dask(cli, todo, scheduler) if scheduler else _local_pool(cli, todo, pool)
        with contextlib.closing(results):
            for n, result in enumerate(results, 1):
                written += store.record(result)
                if progress is not None:
                    progress(n, len(todo), result)
    return SweepReport(jobs=len(jobs), skipped=len(jobs) - len(todo), ran=len(todo), results=written, engine=engine)


def sweep_size(preset: str, size: str, store_path: str, *, cli: str | None = None, workers: int | None = None,
               scheduler: str | None = None, progress: Progress | None = None,
               traces: Sequence[str] = ()) -> SweepReport:
    """``python3 -m numaware.advisor sweep``: a named size on a preset, into the store at ``store_path``.

    ``traces``: recorded traces of real programs (``numaware trace record``)
    swept beside the size's workloads, as workloads ``trace:ABSOLUTE_PATH``
    (each phase of a trace a region). A trace replays on teams of at least
    its thread count, so record it with at most the smallest team's threads.
    """
    _check_engine(workers, scheduler)
    if size not in SIZES:
        raise ConfigurationError("size", f"unknown size '{size}' (known: {', '.join(SIZES)})")
    for trace in traces:
        if not os.path.isfile(trace):
            raise SweepError(f"trace {trace}: no such file")
    space = configuration_space(preset)
    chosen = SIZES[size]
    cli = find_cli(cli)
    version = simulator_version(cli)
    workloads = tuple(chosen.workloads) + tuple(TRACE_PREFIX + os.path.abspath(t) for t in traces)
    jobs = plan(space.preset.name, workloads, chosen.configurations(space))
    with Store(store_path, version) as store:
        return sweep(jobs, store, cli=cli, workers=workers, scheduler=scheduler, progress=progress)


def _check_engine(workers: int | None, scheduler: str | None) -> None:
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise SweepError(f"workers: expected an integer >= 1, got {workers!r}")
    if scheduler is not None:
        if workers is not None:
            raise SweepError("workers: a Dask cluster has its own workers; give workers or a scheduler, not both")
        scheme, sep, rest = scheduler.partition("://")
        if not sep or not scheme or ":" not in rest:
            raise SweepError(f"scheduler: expected a Dask scheduler address tcp://HOST:PORT, got {scheduler!r}")


def _pool_size(workers: int | None) -> int:
    return workers if workers is not None else (os.cpu_count() or 1)


def _local_pool(cli: str, jobs: list[Job], workers: int) -> Iterator[JobResult]:
    # Spawned, not forked: the sweep may run in a process that has threads
    # (a Dask client, a test runner), which fork would copy mid-lock.
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=context)
    # A bounded window of submitted jobs: finished results are dropped as
    # soon as they are stored, and stopping cancels little.
    window = 2 * workers
    waiting = iter(jobs)
    running: set = set()
    try:
        while True:
            while len(running) < window:
                job = next(waiting, None)
                if job is None:
                    break
                running.add(pool.submit(run_job, cli, job))
            if not running:
                return
            finished, running = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                yield future.result()
    except BrokenProcessPool as e:
        raise SweepError(f"a worker process of the local pool died ({e}); finished jobs are stored, "
                         "rerun to resume") from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _dask(cli: str, jobs: list[Job], address: str) -> Iterator[JobResult]:
    try:
        from distributed import Client, as_completed
        from distributed.scheduler import KilledWorker
    except ImportError as e:
        raise SweepError(f"dask.distributed is not installed for {sys.executable} "
                         "(scripts/bootstrap, or apt-get install python3-distributed)") from e
    try:
        client = Client(address, timeout=DASK_CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError) as e:
        raise SweepError(f"cannot reach the Dask scheduler at {address}: {e}") from None
    with client:
        # The jobs not yet returned, by their futures.
        pending = {client.submit(run_job, cli, job, pure=False): job for job in jobs}
        try:
            # set_as_default=False above: as_completed is told the client's loop.
            for future in as_completed(list(pending), loop=client.loop):
                job = pending.pop(future)
                try:
                    result = future.result()
                except KilledWorker as e:
                    raise SweepError(f"{job.describe()}: the workers running it died repeatedly ({e}); "
                                     "finished jobs are stored, rerun to resume") from None
                except SimulatorError:
                    raise
                except Exception as e:  # e.g. a worker that cannot import numaware
                    raise SweepError(f"{job.describe()}: failed on a Dask worker: {type(e).__name__}: {e}") from None
                future.release()
                yield result
        finally:
            if pending:
                client.cancel(list(pending))
