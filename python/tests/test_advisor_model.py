"""numaware.advisor.model: training, the model file, and `train` on the command line, against a fake numaware."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from advisor_fakes import swept_test_table

from numaware.advisor import sizes
from numaware.advisor.learn import MODELS, LearnError, evaluate, output_space
from numaware.advisor.model import AdvisorModel, ModelError, train

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(sizes.__file__))))


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    return swept_test_table(tmp_path_factory.mktemp("model"))


@pytest.fixture(scope="module")
def trained(table):
    """The exhaustive pair search, once for the module."""
    return train(table, preset="thesis-4s", simulator_version="9.9.9", folds=5)


def test_train_keeps_the_best_pair_and_its_cross_validated_figure(table, trained):
    assert len(trained.features) == 2
    space, _ = output_space(table)
    assert trained.output_space == [table.configurations[c] for c in space]
    assert trained.baseline == table.configurations[table.baseline]
    assert trained.best_single in trained.output_space
    assert trained.x.shape == (len(table.regions), 2)
    assert trained.speedups.shape == (len(table.regions), len(space))
    cv = trained.cross_validated
    assert cv["folds"] == 5 and cv["regions"] == len(table.regions)
    assert cv["speedup"] <= cv["oracle_speedup"] + 1e-12
    # The figure is the cross-validation of the pair it names.
    features = [f for f in _features(table, trained)]
    assert evaluate(table, "tree", features, space, k=5, seed=0).speedup == pytest.approx(cv["speedup"])


def _features(table, model):
    from numaware.advisor.learn import Feature
    return [Feature(table.configurations.index(f.configuration), f.counter) for f in model.features]


def test_the_file_round_trips_and_predicts_the_same(trained, tmp_path):
    path = str(tmp_path / "model.json")
    trained.save(path)
    again = AdvisorModel.load(path)
    assert again.features == trained.features and again.output_space == trained.output_space
    np.testing.assert_array_equal(again.x, trained.x)
    for name in MODELS:
        assert again.predict(trained.x, name) == trained.predict(trained.x, name), name
    # The tree, refitted on its training rows, gives each distinct row its label back.
    labels = [trained.output_space[i] for i in trained.speedups.argmax(axis=1)]
    rows = {tuple(r) for r in trained.x}
    if len(rows) == len(trained.x):
        assert again.predict(trained.x) == labels
    assert not [p for p in os.listdir(tmp_path) if ".tmp" in p]


def test_train_on_given_features(table):
    key = table.configurations[table.baseline]
    m = train(table, preset="thesis-4s", simulator_version="9.9.9", features=[f"l3_mpki@{key}", f"power_w@{key}"],
              folds=5)
    assert [f.name() for f in m.features] == [f"l3_mpki@{key}", f"power_w@{key}"]
    assert m.profile_configurations() == [key]


@pytest.mark.parametrize("features, words", [
    (["bogus@threads=16"], "expected COUNTER@CONFIGURATION"),
    (["l3_mpki"], "expected COUNTER@CONFIGURATION"),
    (["l3_mpki@threads=16,colour=red"], "colour"),
    (["l3_mpki@threads=4,nodes=1,thread_mapping=contiguous,page_mapping=local,prefetch=intel:0101"],
     "no results under that configuration"),
])
def test_bad_features_are_one_line(table, features, words):
    with pytest.raises(ModelError, match=words) as e:
        train(table, preset="thesis-4s", simulator_version="9.9.9", features=features, folds=5)
    assert "\n" not in str(e.value)


def test_too_few_regions_to_train(table):
    from numaware.advisor.learn import Table
    t = Table(table.regions[:3], table.configurations, table.times[:3], {}, table.numa, table.prefetch,
              table.baseline)
    with pytest.raises(LearnError, match="too few to train"):
        train(t, preset="thesis-4s", simulator_version="9.9.9")


def _doc(trained):
    return json.loads(json.dumps(trained.to_json()))


@pytest.mark.parametrize("change, field", [
    (lambda d: d.update(format="other"), "format"),
    (lambda d: d.update(format_version=2), "format_version"),
    (lambda d: d.update(model="forest"), "model"),
    (lambda d: d.update(preset=""), "preset"),
    (lambda d: d["features"][0].update(counter="cycles"), "features[0].counter"),
    (lambda d: d["features"][1].update(configuration="threads=2,paint=blue"), "features[1].configuration"),
    (lambda d: d.update(output_space=[]), "output_space"),
    (lambda d: d.update(best_single="threads=4,nodes=1,thread_mapping=contiguous,page_mapping=local,"
                                    "prefetch=intel:0101"), "best_single"),
    (lambda d: d["training"].update(x=d["training"]["x"][1:]), "training.x"),
    (lambda d: d["training"]["x"][0].__setitem__(0, "NaN"), "training.x"),
    (lambda d: d["training"]["speedups"][0].__setitem__(0, 0), "training.speedups"),
    (lambda d: d["training"].update(regions=["only"]), "training.regions"),
])
def test_a_bad_model_file_names_the_field(trained, tmp_path, change, field):
    doc = _doc(trained)
    change(doc)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ModelError) as e:
        AdvisorModel.load(str(path))
    assert f"{path}: {field}" in str(e.value) and "\n" not in str(e.value)


def test_unreadable_and_non_json_files(tmp_path):
    with pytest.raises(ModelError, match="cannot read the model"):
        AdvisorModel.load(str(tmp_path / "missing.json"))
    (tmp_path / "x.json").write_text("{not json")
    with pytest.raises(ModelError, match="not a model file"):
        AdvisorModel.load(str(tmp_path / "x.json"))


def test_a_failed_save_leaves_nothing(trained, tmp_path):
    with pytest.raises(ModelError, match="cannot write the model"):
        trained.save(str(tmp_path / "no-such-dir" / "m.json"))
    with pytest.raises(ModelError, match="unknown 'forest'"):
        trained.predict(trained.x, "forest")


def test_train_and_plot_on_the_command_line(tmp_path, fake_cli):
    env = dict(os.environ, PYTHONPATH=PACKAGE_DIR, XDG_CACHE_HOME=str(tmp_path), NUMAWARE_CLI=fake_cli())
    out = tmp_path / "m.json"
    done = subprocess.run([sys.executable, "-m", "numaware.advisor", "train", "--preset", "thesis-4s", "--size",
                           "test", "--output", str(out), "--folds", "5", "--screen", "6", "--workers", "1"],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert "cross-validated" in done.stdout and "simulated" in done.stdout
    assert AdvisorModel.load(str(out)).preset == "thesis-4s"
    done = subprocess.run([sys.executable, "-m", "numaware.advisor", "plot", "--preset", "thesis-4s", "--size",
                           "test", "--output", str(tmp_path), "--folds", "5", "--screen", "6", "--workers", "1"],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    written = done.stdout.split()
    assert len(written) == 3
    for path in written:
        with open(path, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    done = subprocess.run([sys.executable, "-m", "numaware.advisor", "train", "--preset", "thesis-4s", "--size",
                           "test", "--output", str(out), "--model", "forest"], capture_output=True, text=True, env=env)
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1 and "forest" in done.stderr
