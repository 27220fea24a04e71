"""The sweep on a Dask cluster: a LocalCluster on loopback, a worker killed mid-sweep."""

import os
import signal
import socket

import pytest
from distributed import Client, LocalCluster

from advisor_fakes import read_log
from numaware.advisor import sweep as sweep_module
from numaware.advisor.store import Store
from numaware.advisor.sweep import SweepError, sweep_size
from test_advisor_sweep import expected_pairs, stored_pairs


def _results(path):
    with Store(path) as store:
        return [(r.region, r.configuration, r.measured, r.simulated_s, r.counters) for r in store.results()]


def test_a_killed_worker_loses_no_result(fake_cli, tmp_path):
    log = tmp_path / "log"
    cli = fake_cli(sleep=0.3, log=log)
    store = tmp_path / "dask.db"
    killed = []
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster, set_as_default=False) as spy:

        def kill_a_busy_worker(done, total, result):
            # Once, after the first job is stored: SIGKILL a worker that is running a job.
            if killed:
                return
            busy = [address for address, keys in spy.processing().items() if keys]
            if busy:
                pid = spy.run(os.getpid, workers=busy[:1])[busy[0]]
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)

        report = sweep_size("thesis-4s", "test", str(store), cli=cli, scheduler=cluster.scheduler_address,
                            progress=kill_a_busy_worker)
        assert killed, "no worker was busy to be killed"
        assert killed[0] not in spy.run(os.getpid).values()
    assert (report.jobs, report.skipped, report.ran) == (18, 0, 18)
    assert report.engine == f"dask {cluster.scheduler_address}"
    counts = stored_pairs(store)
    assert set(counts) == expected_pairs()
    assert set(counts.values()) == {1}
    # Every job ran; the killed one usually twice (unless killed before it started its simulation).
    assert len(read_log(log)) >= 18

    # The same sweep on the local pool gives identical results.
    sweep_size("thesis-4s", "test", str(tmp_path / "pool.db"), cli=fake_cli(), workers=2)
    assert _results(store) == _results(tmp_path / "pool.db")


def test_an_unreachable_scheduler_is_one_line(fake_cli, tmp_path, monkeypatch):
    monkeypatch.setattr(sweep_module, "DASK_CONNECT_TIMEOUT", "1s")
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(SweepError) as e:
        sweep_size("thesis-4s", "test", str(tmp_path / "s.db"), cli=fake_cli(), scheduler=f"tcp://127.0.0.1:{port}")
    assert str(e.value).startswith(f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}: ")
    assert "\n" not in str(e.value)
