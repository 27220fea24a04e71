"""numaware.advisor.store: the SQLite result store."""

import sqlite3

import pytest

from numaware.advisor.simulator import Job, JobResult, PhaseResult, RunResult
from numaware.advisor.store import Store, StoreError, StoreVersionError, region_key

JOB = Job("thesis-4s", "cg:S", 4, 1, "contiguous", "local", ("intel:1111", "intel:0000"))


def _counters(n):
    return {"levels": {"l1": {"demand_misses": n}}, "bytes": {"dram_remote": 64 * n}, "prefetch_counts": {},
            "energy_j": {"total": n * 1e-9}, "bandwidth_gbps": {"dram_local": n / 10}, "instructions": 2 * n,
            "accesses": n}


def _result(job=JOB, phases=("init", "iter1:spmv")):
    return JobResult(job, tuple(
        RunResult(p, 1e-3 * (i + 1), _counters(i), tuple(
            PhaseResult(name, name != "init", 1e-4 * (i + k + 1), None if name == "init" else _counters(10 * i + k))
            for k, name in enumerate(phases)))
        for i, p in enumerate(job.prefetches)))


def test_a_result_reads_back(tmp_path):
    with Store(tmp_path / "s.db", "1.0.0") as store:
        assert store.record(_result()) == 4
        rows = list(store.results())
    assert len(rows) == 4
    first = rows[0]
    assert first.region == region_key("cg:S", "init") == "cg:S/init"
    assert (first.workload, first.phase, first.preset, first.simulator) == ("cg:S", "init", "thesis-4s", "1.0.0")
    assert first.configuration in {c.key for c in JOB.configurations()}
    assert first.measured is False
    assert first.counters is None  # an unmeasured phase without counters
    by_key = {(r.region, r.configuration): r for r in rows}
    spmv = by_key[("cg:S/iter1:spmv", JOB.configuration("intel:0000").key)]
    assert spmv.measured is True
    assert spmv.simulated_s == pytest.approx(3e-4)
    assert spmv.counters == _counters(11)


def test_the_store_reopens_for_reading_and_is_in_wal_mode(tmp_path):
    with Store(tmp_path / "s.db", "1.0.0") as store:
        store.record(_result())
    with Store(tmp_path / "s.db") as store:
        assert store.simulator_version == "1.0.0"
        assert store.count() == 4
        store.check_integrity()
    assert sqlite3.connect(tmp_path / "s.db").execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_recording_twice_writes_nothing_twice(tmp_path):
    with Store(tmp_path / "s.db", "1.0.0") as store:
        assert store.record(_result()) == 4
        assert store.record(_result()) == 0
        # A job that overlaps: only its new setting is written.
        wider = Job(JOB.preset, JOB.workload, JOB.threads, JOB.nodes, JOB.thread_mapping, JOB.page_mapping,
                    ("intel:0000", "intel:1010"))
        assert store.record(_result(wider)) == 2
        assert store.count() == 6


def test_done(tmp_path):
    with Store(tmp_path / "s.db", "1.0.0") as store:
        store.record(_result())
        asked = [("cg:S", JOB.configuration("intel:1111").key), ("cg:S", JOB.configuration("intel:1010").key),
                 ("is:S", JOB.configuration("intel:1111").key)]
        assert store.done(asked, "thesis-4s") == {asked[0]}
        assert store.done(asked, "skylake-sp-2s") == set()


def test_a_store_of_another_simulator_version_is_refused_in_one_line(tmp_path):
    path = tmp_path / "s.db"
    with Store(path, "1.0.0") as store:
        store.record(_result())
    with pytest.raises(StoreVersionError) as e:
        Store(path, "1.1.0")
    message = str(e.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: the store holds results of simulator 1.0.0, this simulator is 1.1.0")
    with Store(path, "1.0.0") as store:  # left as it was
        assert store.count() == 4


def test_what_is_not_a_store_is_named(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not a database, but long enough to be read as one's header " * 20)
    with pytest.raises(StoreError, match=r"notes.txt: not a numaware advisor store \(file is not a database\)"):
        Store(text, "1.0.0")
    other = tmp_path / "other.db"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="other.db: not a numaware advisor store"):
        Store(other, "1.0.0")
    with pytest.raises(StoreError, match="absent.db: no such store"):
        Store(tmp_path / "absent.db")
    with pytest.raises(StoreError, match="cannot open"):
        Store(tmp_path / "no-dir" / "s.db", "1.0.0")


def test_a_phase_named_twice_is_refused_whole(tmp_path):
    with Store(tmp_path / "s.db", "1.0.0") as store:
        with pytest.raises(StoreError, match="a phase name repeats within one run"):
            store.record(_result(phases=("init", "main", "main")))
        assert store.count() == 0  # the transaction rolled back
        assert store.done([("cg:S", JOB.configuration("intel:1111").key)], "thesis-4s") == set()


def test_a_reader_sees_committed_jobs_while_a_writer_is_open(tmp_path):
    with Store(tmp_path / "s.db", "1.0.0") as writer, Store(tmp_path / "s.db") as reader:
        writer.record(_result())
        assert reader.count() == 4
