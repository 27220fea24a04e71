"""The advisor's result store: one SQLite file (stdlib sqlite3, WAL mode).

Every result is keyed by (region, configuration key, preset, simulator
version); a region is a workload spec and one of its phases
(``cg:S/iter1:spmv``). Schema (version 1):

- ``meta(name, value)``: ``schema`` and ``simulator_version``. A store holds
  the results of one simulator version; opening it for another is an error.
- ``runs(workload, configuration, preset, simulator, simulated_s, counters)``:
  one row per workload run under a configuration, its whole-run counters as
  JSON. A job's work is done when its runs are here.
- ``results(region, configuration, preset, simulator, workload, phase,
  measured, simulated_s, counters)``: one row per phase of such a run, the
  phase's own counters as JSON (``null`` for an unmeasured phase the
  simulator gave none).

Each job's rows are written in one transaction, by one process (the sweep's
parent), so a sweep killed at any moment leaves a store that opens, reads
and resumes: a run is either there with all its phases or not at all. A run
recorded twice is skipped, not duplicated (the keys are primary keys).

Errors are ``StoreError``, one line naming the file.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from .simulator import JobResult

SCHEMA_VERSION = "1"

_SCHEMA = """
CREATE TABLE meta (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE runs (
    workload TEXT NOT NULL,
    configuration TEXT NOT NULL,
    preset TEXT NOT NULL,
    simulator TEXT NOT NULL,
    simulated_s REAL NOT NULL,
    counters TEXT NOT NULL,
    PRIMARY KEY (workload, configuration, preset, simulator)
);
CREATE TABLE results (
    region TEXT NOT NULL,
    configuration TEXT NOT NULL,
    preset TEXT NOT NULL,
    simulator TEXT NOT NULL,
    workload TEXT NOT NULL,
    phase TEXT NOT NULL,
    measured INTEGER NOT NULL,
    simulated_s REAL NOT NULL,
    counters TEXT NOT NULL,
    PRIMARY KEY (region, configuration, preset, simulator),
    FOREIGN KEY (workload, configuration, preset, simulator) REFERENCES runs
);
"""


class StoreError(Exception):
    """The store cannot be opened, read or written (one line)."""


class StoreVersionError(StoreError):
    """The store holds results of another simulator version."""


def region_key(workload: str, phase: str) -> str:
    """A region: a workload spec and one of its phases."""
    return f"{workload}/{phase}"


@dataclass(frozen=True)
class Result:
    """One region under one configuration."""

    region: str
    workload: str
    phase: str
    configuration: str  # Configuration.key
    preset: str
    simulator: str
    measured: bool
    simulated_s: float
    counters: dict | None  # None: an unmeasured phase without counters


class Store:
    """A result store, opened for one simulator version.

    ``Store(path, version)`` creates the file if it is new and refuses one
    written by another version (StoreVersionError). ``Store(path)`` opens an
    existing store for reading whatever version it holds.
    """

    def __init__(self, path: str | os.PathLike, simulator_version: str | None = None):
        self.path = os.fspath(path)
        if simulator_version is None and not os.path.exists(self.path):
            raise StoreError(f"{self.path}: no such store")
        try:
            # isolation_level=None: transactions are the explicit BEGIN/COMMIT below.
            self._db = sqlite3.connect(self.path, isolation_level=None, timeout=30.0)
        except sqlite3.Error as e:
            raise StoreError(f"{self.path}: cannot open: {e}") from e
        try:
            # WAL: readers (a report while a sweep runs) never block the
            # writer, and a killed writer's last transaction is either in the
            # log whole or ignored. NORMAL sync is safe against a crash of the
            # process; a power cut may lose the last commits, which a rerun
            # then redoes.
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self.simulator_version = self._open_schema(simulator_version)
        except sqlite3.OperationalError as e:  # locked, unreadable, read-only
            self._db.close()
            raise StoreError(f"{self.path}: cannot open: {e}") from e
        except sqlite3.DatabaseError as e:  # e.g. "file is not a database"
            self._db.close()
            raise StoreError(f"{self.path}: not a numaware advisor store ({e})") from e
        except StoreError:
            self._db.close()
            raise

    def _open_schema(self, version: str | None) -> str:
        if not self._tables():
            if version is None:
                raise StoreError(f"{self.path}: an empty store; a sweep creates it")
            with self._transaction():
                if not self._tables():  # another sweep may have created it meanwhile
                    # Statement by statement: executescript() would commit.
                    for statement in _SCHEMA.split(";"):
                        if statement.strip():
                            self._db.execute(statement)
                    self._db.executemany("INSERT INTO meta (name, value) VALUES (?, ?)",
                                         [("schema", SCHEMA_VERSION), ("simulator_version", version)])
        if not {"meta", "runs", "results"} <= self._tables():
            raise StoreError(f"{self.path}: not a numaware advisor store (no meta, runs and results tables)")
        meta = dict(self._db.execute("SELECT name, value FROM meta"))
        if meta.get("schema") != SCHEMA_VERSION:
            raise StoreError(f"{self.path}: store schema {meta.get('schema')!r}, this advisor reads {SCHEMA_VERSION!r}")
        stored = meta.get("simulator_version")
        if stored is None:
            raise StoreError(f"{self.path}: the store names no simulator version")
        if version is not None and stored != version:
            raise StoreVersionError(
                f"{self.path}: the store holds results of simulator {stored}, this simulator is {version}; "
                "give another store file (results of two versions are not mixed)")
        return stored

    def _tables(self) -> set[str]:
        return {row[0] for row in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def _transaction(self):
        return _Transaction(self._db)

    # ---- writing ----

    def record(self, result: JobResult) -> int:
        """Writes a job's runs and their phases in one transaction.

        A run already in the store is skipped with its phases, so recording
        a result twice changes nothing. Returns the number of phase results
        written.
        """
        job = result.job
        written = 0
        try:
            with self._transaction():
                for run in result.runs:
                    configuration = job.configuration(run.prefetch).key
                    inserted = self._db.execute(
                        "INSERT INTO runs (workload, configuration, preset, simulator, simulated_s, counters) "
                        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                        (job.workload, configuration, job.preset, self.simulator_version, run.simulated_s,
                         _json(run.counters)))
                    if inserted.rowcount == 0:
                        continue
                    self._db.executemany(
                        "INSERT INTO results (region, configuration, preset, simulator, workload, phase, measured, "
                        "simulated_s, counters) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [(region_key(job.workload, phase.name), configuration, job.preset, self.simulator_version,
                          job.workload, phase.name, int(phase.measured), phase.simulated_s, _json(phase.counters))
                         for phase in run.phases])
                    written += len(run.phases)
        except sqlite3.IntegrityError as e:
            raise StoreError(f"{self.path}: {job.describe()}: a phase name repeats within one run ({e})") from e
        except sqlite3.Error as e:
            raise StoreError(f"{self.path}: cannot write: {e}") from e
        return written

    # ---- reading ----

    def done(self, keys: Iterable[tuple[str, str]], preset: str) -> set[tuple[str, str]]:
        """Which (workload, configuration key) pairs of ``keys`` have their run recorded."""
        have = set(self._db.execute(
            "SELECT workload, configuration FROM runs WHERE preset = ? AND simulator = ?",
            (preset, self.simulator_version)))
        return {key for key in keys if tuple(key) in have}

    def results(self, preset: str | None = None) -> Iterator[Result]:
        """Every phase result (of one preset if given), ordered by region and configuration."""
        query = ("SELECT region, workload, phase, configuration, preset, simulator, measured, simulated_s, counters "
                 "FROM results WHERE simulator = ?")
        args: list = [self.simulator_version]
        if preset is not None:
            query += " AND preset = ?"
            args.append(preset)
        for row in self._db.execute(query + " ORDER BY region, configuration", args):
            yield Result(*row[:6], measured=bool(row[6]), simulated_s=row[7], counters=json.loads(row[8]))

    def count(self) -> int:
        """The number of phase results."""
        return self._db.execute("SELECT COUNT(*) FROM results").fetchone()[0]

    def check_integrity(self) -> None:
        """SQLite's own check of the file; raises StoreError if it finds damage."""
        verdict = [row[0] for row in self._db.execute("PRAGMA integrity_check")]
        if verdict != ["ok"]:
            raise StoreError(f"{self.path}: damaged: {verdict[0]}")

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any exception.

    IMMEDIATE takes the write lock at the start, so a transaction never
    fails half way for want of it.
    """

    def __init__(self, db: sqlite3.Connection):
        self._db = db

    def __enter__(self):
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind, value, traceback):
        if kind is None:
            self._db.execute("COMMIT")
        elif self._db.in_transaction:  # some errors end the transaction themselves
            self._db.execute("ROLLBACK")
        return False


def _json(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))
