"""numaware.advisor.dataset and .evaluate, and `evaluate` on the command line, against a fake numaware."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from numaware.advisor import sizes
from numaware.advisor.dataset import load_table, region_of
from numaware.advisor.evaluate import evaluation_document
from numaware.advisor.learn import MODELS, LearnError, Table
from numaware.advisor.store import Store
from numaware.advisor.sweep import sweep_size

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(sizes.__file__))))


def test_regions_merge_iterations_and_hyperplanes():
    assert region_of("cg:S", "iter1:spmv") == "cg:S/spmv"
    assert region_of("cg:S", "iter12:spmv") == "cg:S/spmv"
    assert region_of("bt:S", "step1:rhs:flux-x") == "bt:S/rhs:flux-x"
    assert region_of("lu:S", "iter1:lower:h13") == "lu:S/lower"
    assert region_of("mg:S", "iter1:resid:L3") == "mg:S/resid:L3"
    assert region_of("stream:1", "triad") == "stream:1/triad"


@pytest.fixture
def swept(tmp_path, fake_cli):
    path = str(tmp_path / "sweep.sqlite")
    sweep_size("thesis-4s", "test", path, cli=fake_cli(), workers=1)
    return path


def test_table_from_a_sweep(swept):
    with Store(swept) as store:
        t = load_table(store, "thesis-4s")
    # The fake's measured phases: stream triad, cg spmv and dot-pq, is rank and verify.
    assert t.regions == ["cg:S/dot-pq", "cg:S/spmv", "is:S/rank", "is:S/verify", "stream:1/triad"]
    assert "scatter,page_mapping=locality,prefetch=intel:1111" in t.configurations[t.baseline]
    assert len(t.outputs) == len(t.configurations)   # the test size sweeps no first-touch
    assert t.times.shape == (5, len(t.configurations))
    assert (t.counters["l2_miss_ratio"] > 0).all()
    with Store(swept) as store:
        with pytest.raises(LearnError, match="no measured results for preset skylake-sp-2s"):
            load_table(store, "skylake-sp-2s")


def test_evaluation_document(swept):
    with Store(swept) as store:
        t = load_table(store, "thesis-4s")
    doc = evaluation_document(t, preset="thesis-4s", folds=5, screen=6)
    assert doc["simulated"] is True
    assert set(doc["models"]) == set(MODELS)
    curve = doc["coverage_curve"]
    assert curve == sorted(curve) and curve[-1] >= 0.99
    # Nothing chosen from the output space beats its oracle.
    for name, m in doc["models"].items():
        assert m["speedup"] <= doc["oracle_speedup"] + 1e-12, name
        assert len(m["features"]) == 2
    assert doc["best_of_2_speedup"] <= doc["oracle_speedup"] + 1e-12
    # Over every configuration at least the output space's own winners count.
    assert doc["distinct_best_configurations_all"] >= doc["distinct_best_configurations"] >= 1
    c = doc["characterisation"]
    assert c["greedy"] <= c["coupled"] + 1e-12 and c["numa_only"] <= c["coupled"] + 1e-12
    # The pruned pair search against the exhaustive one on this small table.
    full = evaluation_document(t, preset="thesis-4s", folds=5, screen=None, models=("tree",))
    assert full["feature_search"]["pairs"] > doc["feature_search"]["pairs"]
    assert full["feature_search"]["best_pair_speedup"] >= doc["feature_search"]["best_pair_speedup"] - 1e-12


def test_too_few_regions():
    t = Table(["a", "b"], ["base"], np.ones((2, 1)), {}, ["n"], ["p"], 0)
    with pytest.raises(LearnError, match="too few to cross-validate"):
        evaluation_document(t, preset="thesis-4s")


def test_evaluate_on_the_command_line(tmp_path, fake_cli):
    env = dict(os.environ, PYTHONPATH=PACKAGE_DIR, XDG_CACHE_HOME=str(tmp_path), NUMAWARE_CLI=fake_cli())
    cmd = [sys.executable, "-m", "numaware.advisor", "evaluate", "--preset", "thesis-4s", "--size", "test", "--json",
           "--folds", "5", "--screen", "4", "--workers", "1"]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["simulated"] is True
    for key in ("oracle_speedup", "best_of_2_speedup", "models"):
        assert key in doc
    for m in doc["models"].values():
        assert set(m) == {"speedup", "features"}
    assert os.path.exists(os.path.join(str(tmp_path), "numaware", "advisor-thesis-4s-test.sqlite"))
    # A bad preset: one line, exit 1.
    r = subprocess.run(cmd[:5] + ["nowhere-9s"] + cmd[6:], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and "unknown preset 'nowhere-9s'" in r.stderr
    # Cross-machine: the same store as features (one preset both ways), then bad --features-from values.
    store = os.path.join(str(tmp_path), "numaware", "advisor-thesis-4s-test.sqlite")
    r = subprocess.run(cmd + ["--features-from", f"{store}:thesis-4s"], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["cross_machine"]["regions"] == doc["regions"]
    for bad, words in (("thesis-4s", "expected STORE:PRESET"), (f"{tmp_path}/none.sqlite:thesis-4s", "no such store"),
                       (f"{store}:skylake-sp-2s", "no measured results for preset skylake-sp-2s")):
        r = subprocess.run(cmd + ["--features-from", bad], env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 1 and r.stderr.count("\n") == 1 and words in r.stderr, (bad, r.stderr)


def _png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def test_plots(swept, tmp_path):
    from numaware.advisor.plots import FILES, write_plots

    with Store(swept) as store:
        t = load_table(store, "thesis-4s")
    doc = evaluation_document(t, preset="thesis-4s", folds=5, screen=4)
    paths = write_plots(doc, str(tmp_path / "plots"))
    assert [os.path.basename(p) for p in paths] == list(FILES)
    # Figure sizes in inches at 100 dpi: 5 regions give the 6-inch minimum.
    assert _png_size(paths[0]) == (600, 450)
    assert _png_size(paths[1]) == (550, 400)
    assert _png_size(paths[2]) == (600, 450)
    assert len(doc["per_region"]) == len(t.regions)
    assert all(r["oracle"] >= r["tree"] - 1e-12 for r in doc["per_region"])
    bad = dict(doc)
    del bad["pair_points"]
    with pytest.raises(LearnError, match="missing 'pair_points'"):
        write_plots(bad, str(tmp_path / "plots2"))


def test_cross_machine_training(tmp_path, fake_cli):
    from numaware.advisor.evaluate import cross_machine_document
    cli = fake_cli()
    tables = {}
    for preset in ("thesis-4s", "skylake-sp-2s"):
        path = str(tmp_path / f"{preset}.sqlite")
        sweep_size(preset, "test", path, cli=cli, workers=1)
        with Store(path) as store:
            tables[preset] = load_table(store, preset)
    doc = cross_machine_document(tables["thesis-4s"], tables["skylake-sp-2s"], features_preset="thesis-4s",
                                 labels_preset="skylake-sp-2s", folds=5, screen=6)
    assert doc["regions"] == 5 and doc["features_preset"] == "thesis-4s"
    assert set(doc["models"]) == set(MODELS)
    for name, m in doc["models"].items():
        assert m["speedup"] <= doc["oracle_speedup"] + 1e-12, name
        # Both features are measured on the features' preset.
        assert all("@thesis-4s:threads=" in f for f in m["features"]), m["features"]
    assert doc["same_machine_tree"]["speedup"] <= doc["oracle_speedup"] + 1e-12
    assert all("@threads=" in f for f in doc["same_machine_tree"]["features"])
    # What `evaluate --features-from` reuses instead of searching again: the
    # labels' own document's best pair is the same search.
    own = evaluation_document(tables["skylake-sp-2s"], preset="skylake-sp-2s", folds=5, screen=6, models=("tree",))
    assert own["feature_search"]["best_pair"] == doc["same_machine_tree"]["features"]
    assert own["feature_search"]["best_pair_speedup"] == pytest.approx(doc["same_machine_tree"]["speedup"])
    one = Table(["a", "b"], ["base"], np.ones((2, 1)), {}, ["n"], ["p"], 0)
    with pytest.raises(LearnError, match="swept on both"):
        cross_machine_document(one, tables["skylake-sp-2s"], features_preset="x", labels_preset="y")
