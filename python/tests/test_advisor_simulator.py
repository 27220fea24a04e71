"""numaware.advisor.simulator: the one door to the numaware command (against a fake of it)."""

import json
import os
import subprocess

import pytest

from advisor_fakes import phases_of
from numaware.advisor import simulator
from numaware.advisor.simulator import COUNTER_FIELDS, Job, SimulatorError

JOB = Job("thesis-4s", "cg:S", 8, 2, "scatter", "interleave", ("intel:1111", "intel:0000", "intel:1010"))


def test_the_command_of_a_job():
    assert simulator.sim_memory_command("/opt/bin/numaware", JOB) == [
        "/opt/bin/numaware", "sim", "memory", "--preset", "thesis-4s", "--workload", "cg:S",
        "--threads", "8", "--nodes", "2", "--thread-mapping", "scatter", "--mapping", "interleave",
        "--prefetch", "intel:1111,intel:0000,intel:1010", "--json"]


def test_a_job_names_its_configurations():
    assert [c.key for c in JOB.configurations()] == [
        f"threads=8,nodes=2,thread_mapping=scatter,page_mapping=interleave,prefetch={p}" for p in JOB.prefetches]


def test_run_job_reads_every_phase_under_every_setting(fake_cli):
    result = simulator.run_job(fake_cli(), JOB)
    assert result.job == JOB
    assert [r.prefetch for r in result.runs] == list(JOB.prefetches)
    for run in result.runs:
        assert [p.name for p in run.phases] == phases_of("cg:S")
        assert [p.measured for p in run.phases] == [False, True, True]
        assert run.simulated_s == pytest.approx(sum(p.simulated_s for p in run.phases))
        assert set(run.counters) == set(COUNTER_FIELDS)
        init, *measured = run.phases
        assert init.counters is None  # an unmeasured phase may come without counters
        for phase in measured:
            assert set(phase.counters) == set(COUNTER_FIELDS)
            assert phase.counters["bytes"]["dram_remote"] > 0
    # The same job gives the same figures: results do not depend on who ran them.
    assert simulator.run_job(fake_cli(), JOB) == result


def test_version(fake_cli):
    assert simulator.simulator_version(fake_cli(version="numaware 1.4.2")) == "1.4.2"
    # numaware 0.1.0 prints the bare number.
    assert simulator.simulator_version(fake_cli(version="0.1.0")) == "0.1.0"


@pytest.mark.parametrize("version, words", [
    (None, ["The following argument was not expected: --version"]),
    ("numaware", ["got: numaware"]),
    ("numaware 1.2.3\nbuilt today", ["got: built today"]),
])
def test_no_version_is_one_line(fake_cli, version, words):
    cli = fake_cli(version=version)
    with pytest.raises(SimulatorError) as e:
        simulator.simulator_version(cli)
    message = str(e.value)
    assert "\n" not in message
    assert f"{cli} --version does not give the simulator version (expected one line 'numaware X.Y.Z'" in message
    for w in words:
        assert w in message


def test_find_cli(fake_cli, monkeypatch, tmp_path):
    cli = fake_cli()
    assert simulator.find_cli(cli) == cli
    monkeypatch.setenv("NUMAWARE_CLI", cli)
    assert simulator.find_cli() == cli
    monkeypatch.delenv("NUMAWARE_CLI")
    monkeypatch.setenv("PATH", os.path.dirname(cli))
    os.rename(cli, os.path.join(os.path.dirname(cli), "numaware"))
    assert simulator.find_cli() == os.path.join(os.path.dirname(cli), "numaware")
    with pytest.raises(SimulatorError, match=r"'.*absent' \(from --cli\) is not an executable file; give --cli"):
        simulator.find_cli(str(tmp_path / "absent"))
    monkeypatch.setenv("NUMAWARE_CLI", "no-such-numaware")
    with pytest.raises(SimulatorError, match=r"'no-such-numaware' \(from \$NUMAWARE_CLI\)"):
        simulator.find_cli()


def test_a_failed_simulation_is_one_line_naming_the_job(fake_cli):
    with pytest.raises(SimulatorError) as e:
        simulator.run_job(fake_cli(fail_workload="cg:S"), JOB)
    message = str(e.value)
    assert "\n" not in message
    assert message.startswith("cg:S on thesis-4s (8 threads on 2 node(s) scatter, pages interleave): sim memory")
    assert message.endswith("failed (exit status 1): workload: cannot simulate cg:S")


def test_phases_without_counters_are_named(fake_cli):
    with pytest.raises(SimulatorError) as e:
        simulator.run_job(fake_cli(omit_counters=True), JOB)
    assert str(e.value).endswith("runs[0].phases[1].counters: missing (a numaware without per-phase counters)")


def _document(fake_cli):
    out = subprocess.run(simulator.sim_memory_command(fake_cli(), JOB), capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


@pytest.mark.parametrize("change, words", [
    (lambda d: d.update(simulated=False), "simulated: must be true"),
    (lambda d: d.update(preset="skylake-sp-2s"), "preset: expected 'thesis-4s', got 'skylake-sp-2s'"),
    (lambda d: d["runs"].pop(), "runs: expected a list of 3 runs"),
    (lambda d: d["runs"].reverse(), "runs[0].prefetch: expected 'intel:1111', got 'intel:1010'"),
    (lambda d: d["runs"][1].update(phases=[]), "runs[1].phases: expected a non-empty list"),
    (lambda d: d["runs"][1]["phases"][2].pop("name"), "runs[1].phases[2].name: expected a non-empty string"),
    (lambda d: d["runs"][1]["phases"][2].update(measured=1), "runs[1].phases[2].measured: expected true or false"),
    (lambda d: d["runs"][1]["phases"][2].update(simulated_s=-1), "runs[1].phases[2].simulated_s: expected a number"),
    (lambda d: d["runs"][2]["phases"][1]["counters"].pop("levels"), "runs[2].phases[1].counters.levels: missing"),
    (lambda d: d["runs"][2]["phases"][2]["counters"].update(accesses="9"),
     "runs[2].phases[2].counters.accesses: expected a number"),
    (lambda d: d["runs"][2]["phases"][0].update(counters=[]), "runs[2].phases[0].counters: expected an object"),
    (lambda d: d["runs"][0].pop("energy_j"), "runs[0].energy_j: missing"),
])
def test_a_bad_document_names_the_field(fake_cli, change, words):
    doc = _document(fake_cli)
    change(doc)
    with pytest.raises(simulator._FieldError) as e:
        simulator.parse_output(doc, JOB)
    assert words in str(e.value)


def test_todays_run_level_shape_is_read():
    # A real `numaware sim memory --json` run (cg:S on thesis-4s, abridged):
    # counters for the run and for each measured phase.
    counters = {"accesses": 319488, "instructions": 565248,
                "bandwidth_gbps": {"dram_local": 0.0, "dram_remote": 3.74},
                "bytes": {"dram_local": 0, "dram_remote": 98688, "l1": 1047104, "l2": 492416, "l3": 98688,
                          "writeback": 0},
                "energy_j": {"caches": 8.1e-06, "dram": 2.4e-05, "static": 0.0041, "total": 0.0041},
                "levels": {"dram": {"mean_latency_ns": 545.8, "served": 815},
                           "l1": {"demand_accesses": 319488, "demand_misses": 9173}},
                "prefetch_counts": {"issued_l1": 7188, "issued_l2": 4021, "useful": 10910}}
    run = dict(counters, prefetch="intel:1111", prefetches_issued=11209, simulated=True,
               simulated_s=2.6e-05, speedup=1.0,
               phases=[{"measured": False, "name": "init", "simulated_s": 5.4e-06},
                       {"measured": True, "name": "iter1:spmv", "simulated_s": 1.1e-05, "counters": counters}])
    doc = {"baseline": "intel:1111", "label": "simulated (memory-hierarchy throughput model, not cycle-accurate)",
           "mapping": "first-touch", "preset": "thesis-4s", "simulated": True, "thread_mapping": "contiguous",
           "workload": "cg:S", "runs": [run]}
    job = Job("thesis-4s", "cg:S", 16, 4, "contiguous", "first-touch", ("intel:1111",))
    result = simulator.parse_output(doc, job)
    assert [p.name for p in result.runs[0].phases] == ["init", "iter1:spmv"]
    assert result.runs[0].phases[0].counters is None
    assert result.runs[0].phases[1].counters["bytes"]["dram_remote"] == 98688
