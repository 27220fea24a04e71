"""numaware.advisor.online and .live: `advise run`, simulated and live, against a fake numaware."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from advisor_fakes import read_log, swept_test_table, write_fake_cli

from numaware.advisor import live, sizes
from numaware.advisor.model import AdvisorModel, ModelError, ModelFeature, train
from numaware.advisor.online import advise_live, advise_simulated, settle_candidates, workload_spec
from numaware.advisor.space import Configuration

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(sizes.__file__))))
BASE = "threads=16,nodes=4,thread_mapping=scatter,page_mapping=locality,prefetch=intel:1111"


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """A model trained on the fake's test sweep, on two features under two configurations."""
    table = swept_test_table(tmp_path_factory.mktemp("online"))
    other = next(c for c in table.configurations if c != BASE and "page_mapping=interleave" in c)
    return train(table, preset="thesis-4s", simulator_version="9.9.9", features=[f"l3_mpki@{BASE}",
                                                                                   f"power_w@{other}"], folds=5)


def test_a_simulated_run_profiles_predicts_and_compares(model, tmp_path):
    log = tmp_path / "log"
    doc = advise_simulated(model, "cg:S", cli=write_fake_cli(tmp_path / "fake", log=log))
    assert doc["simulated"] is True and "simulated" in doc["label"]
    assert doc["profile_runs"] == model.profile_configurations() and len(doc["profile_runs"]) == 2
    calls = read_log(log)
    # The two profile runs come first, each one simulator call.
    first = [Configuration(int(c[c.index("--threads") + 1]), int(c[c.index("--nodes") + 1]),
                           c[c.index("--thread-mapping") + 1], c[c.index("--mapping") + 1],
                           c[c.index("--prefetch") + 1]).key for c in calls[:2]]
    assert sorted(first) == sorted(model.profile_configurations())
    assert [r["region"] for r in doc["regions"]] == ["cg:S/dot-pq", "cg:S/spmv"]
    for r in doc["regions"]:
        assert r["predicted"] in model.output_space and r["chosen"] in model.output_space
        assert r["speedup"] == pytest.approx(r["baseline_s"] / r["simulated_s"])
        assert set(r["features"]) == {f.name() for f in model.features}
    assert doc["simulated_s"] == pytest.approx(sum(r["simulated_s"] for r in doc["regions"]))
    assert doc["speedup"] == pytest.approx(doc["baseline_s"] / doc["simulated_s"])
    assert doc["whole_program"]["configuration"] in {r["chosen"] for r in doc["regions"]}
    # The predictions are the model's on the features the profile runs gave.
    x = np.array([[r["features"][f.name()] for f in model.features] for r in doc["regions"]])
    assert [r["predicted"] for r in doc["regions"]] == model.predict(x)


def test_a_trace_runs_as_a_trace(model, tmp_path):
    trace = tmp_path / "p.nwt"
    trace.write_text("x")
    spec = workload_spec(trace=str(trace))
    assert spec == "trace:" + str(trace)
    log = tmp_path / "log"
    doc = advise_simulated(model, spec, cli=write_fake_cli(tmp_path / "fake", log=log), name="my program")
    assert all("--trace" in c and str(trace) in c and "--workload" not in c for c in read_log(log))
    assert [r["region"] for r in doc["regions"]] == ["my program/main"]
    with pytest.raises(ModelError, match="no such file"):
        workload_spec(trace=str(tmp_path / "missing.nwt"))
    with pytest.raises(ModelError, match="exactly one"):
        workload_spec(workload="cg:S", trace=str(trace))


def test_conflicting_page_mappings_are_cross_evaluated():
    a = "threads=16,nodes=4,thread_mapping=scatter,page_mapping=interleave,prefetch=intel:1111"
    b = "threads=4,nodes=1,thread_mapping=contiguous,page_mapping=local,prefetch=intel:0000"
    b2 = "threads=4,nodes=1,thread_mapping=contiguous,page_mapping=local,prefetch=intel:1111"
    a2 = "threads=16,nodes=4,thread_mapping=contiguous,page_mapping=interleave,prefetch=intel:0011"
    # Training speedups: b2 is the better local configuration, a2 the better interleaved one.
    m = AdvisorModel(preset="thesis-4s", simulator_version="9.9.9", model="tree",
                     features=[ModelFeature("l3_mpki", BASE)], output_space=[a, b, b2, a2], baseline=BASE,
                     best_single=a, regions=["x", "y"], x=np.array([[1.0], [2.0]]),
                     speedups=np.array([[1.0, 0.5, 2.0, 1.5], [1.0, 0.5, 2.0, 1.5]]), cross_validated={})
    plans = settle_candidates(m, {"r1": a, "r2": b, "r3": a})
    # Under each wanted mapping, a region that wanted it keeps its choice;
    # another runs the best training configuration with that mapping.
    assert plans == {"interleave": {"r1": a, "r2": a2, "r3": a}, "local": {"r1": b2, "r2": b, "r3": b2}}
    assert settle_candidates(m, {"r1": a, "r2": a}) == {"interleave": {"r1": a, "r2": a}}


def test_a_model_for_another_machine_is_refused(model, tmp_path):
    with pytest.raises(ModelError, match="skylake-sp-2s does not have"):
        advise_simulated(model, "cg:S", preset="skylake-sp-2s", cli=write_fake_cli(tmp_path / "fake"))


# ---- the live machine --------------------------------------------------------------


def test_msr_values_disable_the_knobs_that_are_off():
    assert live.prefetch_msr_value("intel:1111") == 0
    assert live.prefetch_msr_value("intel:0000") == 0xF
    assert live.prefetch_msr_value("intel:0111") == 0x8   # L1 IP-stride off: bit 3
    assert live.prefetch_msr_value("intel:1011") == 0x4   # L1 next-line (DCU) off: bit 2
    assert live.prefetch_msr_value("intel:1101") == 0x2   # L2 adjacent line off: bit 1
    assert live.prefetch_msr_value("intel:1110") == 0x1   # L2 streamer off: bit 0
    with pytest.raises(live.LiveError, match="intel:XXXX"):
        live.prefetch_msr_value("intel:11")


def test_perf_stat_output_is_read():
    text = ("# started on ...\n\n123456,,instructions,1000,100.00,,\n<not supported>,,LLC-load-misses,0,100.00,,\n"
            "789,,L1-dcache-load-misses:u,1000,100.00,,\n")
    assert live.parse_perf_stat(text) == {"instructions": 123456.0, "llc_misses": None, "l1_misses": 789.0}
    assert live.counter_features(["l3_mpki", "ns_per_instruction"]) is None
    assert "dram_remote_gbps" in live.counter_features(["l3_mpki", "dram_remote_gbps"])


def test_the_probe_says_what_is_missing(tmp_path):
    cli = write_fake_cli(tmp_path / "fake")
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nvendor_id\t: GenuineIntel\n")
    caps = live.probe(cli, perf=str(tmp_path / "no-perf"), msr_path=str(tmp_path / "no-msr"), cpuinfo=str(cpuinfo))
    assert caps.nodes == [[0, 1]] and caps.node_ids == [0]
    assert caps.prefetcher == ("prefetcher control unavailable: msr module not loaded; advising thread and page "
                               "mapping only")
    assert caps.counters.startswith("hardware counters unavailable: cannot run") and "no-perf" in caps.counters
    cpuinfo.write_text("vendor_id\t: AuthenticAMD\n")
    caps = live.probe(cli, perf=None, msr_path=str(tmp_path / "no-msr"), cpuinfo=str(cpuinfo))
    assert "this CPU is AuthenticAMD" in caps.prefetcher
    assert "one NUMA node" in caps.notes[0]


def test_a_configuration_maps_onto_the_live_nodes():
    caps = live.Capabilities(nodes=[[0, 1], [2, 3]], node_ids=[0, 1])
    a = live.run_command("nw", Configuration(16, 4, "scatter", "interleave", "intel:1111"), caps, preset_nodes=4)
    assert a.argv == ["nw", "run", "--nodes", "2", "--mapping", "scatter", "--threads", "4", "--pages",
                      "interleave:0,1", "--"]
    assert a.env == {"OMP_NUM_THREADS": "4"} and "4 node(s) on the preset -> 2" in a.notes[0]
    a = live.run_command("nw", Configuration(4, 1, "contiguous", "locality", "intel:1111"), caps, preset_nodes=4)
    assert a.argv[2:8] == ["--nodes", "1", "--mapping", "contiguous", "--threads", "2"]
    assert a.argv[9] == "first-touch" and "applied as first-touch" in a.notes[0]
    one = live.Capabilities(nodes=[[0, 1]], node_ids=[0])
    with pytest.raises(live.LiveError, match="remote pages"):
        live.run_command("nw", Configuration(4, 1, "contiguous", "remote", "intel:1111"), one, preset_nodes=4)


def test_a_live_run_says_what_it_lacks_and_runs_the_program(model, tmp_path, monkeypatch):
    log = tmp_path / "log"
    cli = write_fake_cli(tmp_path / "fake", log=log)
    monkeypatch.setattr(live, "probe", lambda c: live.Capabilities(
        nodes=[[0, 1]], node_ids=[0], counters="hardware counters unavailable: test",
        prefetcher="prefetcher control unavailable: msr module not loaded; advising thread and page mapping only"))
    said = []
    marker = tmp_path / "ran"
    status, report = advise_live(model, [sys.executable, "-c", f"open({str(marker)!r}, 'w'); raise SystemExit(3)"],
                                 cli=cli, say=said.append)
    assert status == 3 and report["exit_status"] == 3 and marker.exists()
    assert said[0].startswith("hardware counters unavailable: test; features from the simulator instead")
    assert any(s.startswith("prefetcher control unavailable: msr module not loaded") for s in said)
    assert report["chosen"] in model.output_space
    assert report["simulated"]["simulated"] is True
    calls = [c for c in read_log(log)]
    assert calls[0][:2] == ["trace", "record"]   # a failing program's trace is still advised on
    assert calls[-1][0] == "run" and calls[-1][calls[-1].index("--threads") + 1] == "2"


def test_run_on_the_command_line(model, tmp_path):
    path = tmp_path / "m.json"
    model.save(str(path))
    env = dict(os.environ, PYTHONPATH=PACKAGE_DIR, NUMAWARE_CLI=write_fake_cli(tmp_path / "fake"))
    run = [sys.executable, "-m", "numaware.advisor", "run", "--model", str(path)]
    done = subprocess.run(run + ["--workload", "is:S", "--json"], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["workload"] == "is:S"
    done = subprocess.run(run + ["--", sys.executable, "-c", "pass"], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert "trace of" in done.stdout and "simulated" in done.stdout
    for bad, words in ((["--workload", "is:S", "--", "ls"], "exactly one"), ([], "exactly one"),
                       (["--live", "--workload", "is:S"], "--live runs a program"),
                       (["--workload", "is:S", "--predict-with", "forest"], "forest")):
        done = subprocess.run(run + bad, capture_output=True, text=True, env=env)
        assert done.returncode != 0 and len(done.stderr.strip().splitlines()) == 1 and words in done.stderr, bad
    (tmp_path / "bad.json").write_text("{}")
    done = subprocess.run([*run[:-1], str(tmp_path / "bad.json"), "--workload", "is:S"], capture_output=True,
                          text=True, env=env)
    assert done.returncode == 1 and "format" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_model_features_name_their_run():
    f = ModelFeature("l3_mpki", BASE)
    assert f.name() == f"l3_mpki@{BASE}"
    m = AdvisorModel.__new__(AdvisorModel)
    m.features = [f, ModelFeature("power_w", BASE)]
    assert m.profile_configurations() == [BASE]
