"""numaware.advisor.sweep and its command line, on the local process pool, against a fake numaware."""

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from advisor_fakes import phases_of, read_log
from numaware.advisor import sizes
from numaware.advisor.simulator import Job, SimulatorError
from numaware.advisor.space import configuration_space
from numaware.advisor.store import Store, StoreVersionError
from numaware.advisor.sweep import SweepError, plan, remaining, sweep, sweep_size

# python/, the folder that holds numaware/
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(sizes.__file__))))
TEST_SIZE = sizes.SIZES["test"]


def expected_pairs(preset="thesis-4s", size=TEST_SIZE):
    """Every (region, configuration key) the size's sweep should store."""
    configurations = size.configurations(configuration_space(preset))
    return {(f"{w}/{phase}", c.key) for w in size.workloads for c in configurations for phase in phases_of(w)}


def stored_pairs(path):
    """Every stored (region, configuration), with its count: each must be 1."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT region, configuration, COUNT(*) FROM results GROUP BY region, configuration")
        counts = {(region, configuration): n for region, configuration, n in rows}
    finally:
        db.close()
    return counts


def test_the_test_and_full_plans():
    s = configuration_space("thesis-4s")
    jobs = plan("thesis-4s", TEST_SIZE.workloads, TEST_SIZE.configurations(s))
    # 1 node: local, remote, interleave, locality; 16 threads scattered over 4 nodes: interleave, locality.
    assert len(jobs) == 3 * (4 + 2) == 18
    assert all(job.prefetches == ("intel:1111", "intel:1100", "intel:0011", "intel:0000") for job in jobs)
    assert {(j.threads, j.nodes, j.thread_mapping) for j in jobs} == {(4, 1, "contiguous"), (16, 4, "scatter")}
    full = sizes.SIZES["full"]
    jobs = plan("thesis-4s", full.workloads, full.configurations(s))
    # The 16 kernels at class W and at class S, two STREAM sizes, three GUPS
    # tables, two triangular matrices, two integral histograms, the three
    # stencils and the two tiled factorisations at two sizes.
    assert len(full.workloads) == 16 + 16 + 2 + 3 + 2 + 2 + 6 + 2 + 2
    assert {f"{k}:{c}" for k in sizes.NAS_KERNELS + sizes.RODINIA_KERNELS for c in "WS"} <= set(full.workloads)
    assert {"gups:8", "gups:32", "gups:128", "trmv:32", "trmv:128", "ihist:32", "ihist:128",
            "jacobi:8", "jacobi:32", "gauss-seidel:8", "gauss-seidel:32", "red-black:8", "red-black:32",
            "cholesky:8", "cholesky:32", "qr:8", "qr:32"} <= set(full.workloads)
    # The medium sweep: all of them but the two slowest class W kernels.
    assert set(full.workloads) - set(sizes.SIZES["medium"].workloads) == {"mg:W", "ft:W"}
    assert len(jobs) == len(full.workloads) * (1 * 6 + 4 * 4)  # with first touch
    assert all(len(job.prefetches) == 16 for job in jobs)
    assert len(set(jobs)) == len(jobs)
    assert sum(len(job.prefetches) for job in jobs) == len(full.workloads) * len(s)
    # small-full: every configuration, over a subset of the full size's
    # workloads with at least 50 regions' worth of phases.
    small = sizes.SIZES["small-full"]
    assert small.configurations(s) == full.configurations(s)
    assert set(small.workloads) < set(full.workloads)
    assert {f"{k}:S" for k in sizes.NAS_KERNELS + sizes.RODINIA_KERNELS} <= set(small.workloads)


def test_a_sweep_stores_every_region_under_every_configuration_once(fake_cli, tmp_path):
    log = tmp_path / "log"
    cli = fake_cli(log=log)
    seen = []
    report = sweep_size("thesis-4s", "test", str(tmp_path / "s.db"), cli=cli, workers=2,
                        progress=lambda done, total, result: seen.append((done, total, result.job.workload)))
    assert (report.jobs, report.skipped, report.ran) == (18, 0, 18)
    assert report.engine == "process pool (2 workers)"
    counts = stored_pairs(tmp_path / "s.db")
    assert set(counts) == expected_pairs()
    assert set(counts.values()) == {1}
    assert report.results == len(counts)
    assert [(d, t) for d, t, _ in seen] == [(n, 18) for n in range(1, 19)]
    assert len(read_log(log)) == 18  # one simulator call per job, every prefetch setting in it
    with Store(tmp_path / "s.db") as store:
        assert store.simulator_version == "9.9.9"
        assert {r.preset for r in store.results()} == {"thesis-4s"}


def test_recorded_traces_are_swept_beside_the_size(fake_cli, tmp_path):
    log = tmp_path / "log"
    trace = tmp_path / "prog.nwt"
    trace.write_text("x")
    report = sweep_size("thesis-4s", "test", str(tmp_path / "s.db"), cli=fake_cli(log=log), workers=1,
                        traces=[str(trace)])
    assert (report.jobs, report.ran) == (24, 24)   # the 18 of the size, and 6 of the trace
    calls = [c for c in read_log(log) if "--trace" in c]
    assert len(calls) == 6 and all(c[c.index("--trace") + 1] == str(trace) for c in calls)
    with Store(tmp_path / "s.db") as store:
        traced = {(r.workload, r.configuration) for r in store.results() if r.workload.startswith("trace:")}
    assert {w for w, _ in traced} == {f"trace:{trace}"} and len(traced) == 24   # 6 jobs x 4 prefetch settings
    with pytest.raises(SweepError, match="no such file"):
        sweep_size("thesis-4s", "test", str(tmp_path / "s.db"), cli=fake_cli(), workers=1,
                   traces=[str(tmp_path / "missing.nwt")])


def test_a_rerun_runs_nothing(fake_cli, tmp_path):
    log = tmp_path / "log"
    cli = fake_cli(log=log)
    sweep_size("thesis-4s", "test", str(tmp_path / "s.db"), cli=cli, workers=2)
    before = stored_pairs(tmp_path / "s.db")
    report = sweep_size("thesis-4s", "test", str(tmp_path / "s.db"), cli=cli, workers=2)
    assert (report.skipped, report.ran, report.results) == (18, 0, 0)
    assert len(read_log(log)) == 18
    assert stored_pairs(tmp_path / "s.db") == before


def test_a_partly_done_job_runs_only_its_missing_settings(fake_cli, tmp_path):
    log = tmp_path / "log"
    cli = fake_cli(log=log)
    job = Job("thesis-4s", "cg:S", 8, 2, "scatter", "balance", ("intel:1111", "intel:0000"))
    with Store(tmp_path / "s.db", "9.9.9") as store:
        sweep([job], store, cli=cli, workers=1)
        wider = Job("thesis-4s", "cg:S", 8, 2, "scatter", "balance", ("intel:1111", "intel:1010", "intel:0000"))
        assert remaining([wider], store) == [Job("thesis-4s", "cg:S", 8, 2, "scatter", "balance", ("intel:1010",))]
        report = sweep([wider], store, cli=cli, workers=1)
        assert (report.ran, report.results) == (1, len(phases_of("cg:S")))
        assert store.count() == 3 * len(phases_of("cg:S"))
    calls = read_log(log)
    assert [c[c.index("--prefetch") + 1] for c in calls] == ["intel:1111,intel:0000", "intel:1010"]


def test_a_failing_job_stops_the_sweep_and_keeps_the_finished_ones(fake_cli, tmp_path):
    cli = fake_cli(fail_workload="is:S")
    with pytest.raises(SimulatorError) as e:
        sweep_size("thesis-4s", "test", str(tmp_path / "s.db"), cli=cli, workers=1)
    assert "\n" not in str(e.value)
    assert str(e.value).startswith("is:S on thesis-4s (")
    assert str(e.value).endswith("failed (exit status 1): workload: cannot simulate is:S")
    # The workloads before it (one worker: in plan order) are stored whole.
    counts = stored_pairs(tmp_path / "s.db")
    assert set(counts) == {pair for pair in expected_pairs() if not pair[0].startswith("is:S/")}
    report = sweep_size("thesis-4s", "test", str(tmp_path / "s.db"), cli=fake_cli(), workers=1)
    assert (report.skipped, report.ran) == (12, 6)
    assert set(stored_pairs(tmp_path / "s.db")) == expected_pairs()


@pytest.mark.parametrize("options, words", [
    (dict(workers=0), "workers: expected an integer >= 1, got 0"),
    (dict(scheduler="localhost:8786"), "scheduler: expected a Dask scheduler address tcp://HOST:PORT"),
    (dict(scheduler="tcp://127.0.0.1:8786", workers=2), "give workers or a scheduler, not both"),
])
def test_a_bad_engine_is_refused_before_anything_runs(fake_cli, tmp_path, options, words):
    log = tmp_path / "log"
    with pytest.raises(SweepError, match=words):
        sweep_size("thesis-4s", "test", str(tmp_path / "s.db"), cli=fake_cli(log=log), **options)
    assert not (tmp_path / "s.db").exists()
    assert read_log(log) == []


def test_a_store_of_another_version_is_refused(fake_cli, tmp_path):
    sweep_size("thesis-4s", "test", str(tmp_path / "s.db"), cli=fake_cli(), workers=2)
    with pytest.raises(StoreVersionError, match="holds results of simulator 9.9.9, this simulator is 10.0.0"):
        sweep_size("thesis-4s", "test", str(tmp_path / "s.db"), cli=fake_cli(version="numaware 10.0.0"))


# ---- the command line: python3 -m numaware.advisor ----

def _command(*args):
    return [sys.executable, "-m", "numaware.advisor", *args]


def _env():
    return dict(os.environ, PYTHONPATH=PACKAGE_DIR)


def _cli(*args):
    return subprocess.run(_command(*args), capture_output=True, text=True, env=_env(), timeout=120)


def test_cli_sweep(fake_cli, tmp_path):
    store = tmp_path / "s.db"
    r = _cli("sweep", "--preset", "thesis-4s", "--size", "test", "--store", str(store), "--workers", "2",
             "--cli", fake_cli())
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""  # progress only on a terminal
    assert r.stdout == (f"numaware.advisor sweep: thesis-4s, size test: 18 jobs (0 already done, 18 run on process "
                        f"pool (2 workers)), {len(expected_pairs())} phase results written to {store} (simulated)\n")
    assert set(stored_pairs(store)) == expected_pairs()


def _one_error_line(result, *words):
    assert result.returncode == 1, result
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("numaware.advisor: ")
    for w in words:
        assert w in result.stderr, result.stderr


def test_cli_bad_input_is_one_line(fake_cli, tmp_path):
    store = str(tmp_path / "s.db")
    cli = fake_cli()
    base = ["sweep", "--size", "test", "--store", store, "--cli", cli]
    _one_error_line(_cli(*base, "--preset", "thesis-9s"), "unknown preset 'thesis-9s'")
    _one_error_line(_cli(*base, "--preset", "thesis-4s", "--workers", "two"), "--workers: expected an integer >= 1")
    _one_error_line(_cli(*base, "--preset", "thesis-4s", "--scheduler", "8786"), "tcp://HOST:PORT")
    _one_error_line(_cli("sweep", "--preset", "thesis-4s", "--size", "huge", "--store", store), "--size")
    _one_error_line(_cli("sweep", "--preset", "thesis-4s", "--size", "test"), "--store")
    _one_error_line(_cli("tune"), "invalid choice: 'tune'")
    _one_error_line(_cli("train"), "required: --preset, --size, --output")
    _one_error_line(_cli(*base[:-1], fake_cli(version=None), "--preset", "thesis-4s"), "--version does not give")
    _one_error_line(_cli(*base[:-1], str(tmp_path / "nothing"), "--preset", "thesis-4s"), "is not an executable")
    assert not os.path.exists(store)
    assert _cli(*base, "--preset", "thesis-4s").returncode == 0
    _one_error_line(_cli(*base[:-1], fake_cli(version="numaware 2.0.0"), "--preset", "thesis-4s"),
                    "holds results of simulator 9.9.9, this simulator is 2.0.0")


def test_a_killed_sweep_leaves_a_store_that_resumes_exactly_once(fake_cli, tmp_path):
    log = tmp_path / "log"
    cli = fake_cli(sleep=0.15, log=log)
    store = tmp_path / "s.db"
    # A session of its own, so its pool worker and simulations can be found and ended after it.
    writer = subprocess.Popen(
        _command("sweep", "--preset", "thesis-4s", "--size", "test", "--store", str(store), "--workers", "1",
                 "--cli", cli),
        env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while _stored_runs(store) < 3 * len(TEST_SIZE.prefetches):  # 3 jobs in
            assert writer.poll() is None, "the sweep ended before it could be killed"
            assert time.monotonic() < deadline, "the sweep stored nothing"
            time.sleep(0.02)
        os.kill(writer.pid, signal.SIGKILL)  # the writer: the sweep's parent
        writer.wait(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(writer.pid, signal.SIGKILL)  # its pool worker and a simulation in flight
        writer.wait(timeout=30)
    assert writer.returncode == -signal.SIGKILL

    with Store(store) as s:
        s.check_integrity()
        runs = _stored_runs(store)
        assert 3 * len(TEST_SIZE.prefetches) <= runs < 18 * len(TEST_SIZE.prefetches)
        # Every stored run holds all its phases: none was half written.
        per_run = {}
        for r in s.results():
            per_run.setdefault((r.workload, r.configuration), []).append(r.phase)
        assert len(per_run) == runs
        assert all(sorted(p) == sorted(phases_of(w)) for (w, _), p in per_run.items())
    calls_before = len(read_log(log))

    report = sweep_size("thesis-4s", "test", str(store), cli=cli, workers=2)
    assert report.skipped == runs // len(TEST_SIZE.prefetches)
    assert report.skipped + report.ran == 18
    assert len(read_log(log)) - calls_before == report.ran  # nothing stored ran again
    counts = stored_pairs(store)
    assert set(counts) == expected_pairs()
    assert set(counts.values()) == {1}


def _stored_runs(path):
    if not os.path.exists(path):
        return 0
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        finally:
            db.close()
    except sqlite3.OperationalError:  # not created yet
        return 0
