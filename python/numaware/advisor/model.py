"""A trained advisor as a file: ``numaware advise train`` writes it,
``numaware advise run`` reads it.

The file is JSON (docs/ADVISOR.md, "Training and the model file"). It
holds what the model was learnt from, not a fitted estimator: the feature
pair (each a counter under a configuration), the output space, and the
training regions' feature values and speedups over that space. Loading it
fits the model again with the same code and seed as the cross-validation
(``learn.fit_predict``), in milliseconds for a few hundred regions. So a
model file carries no pickled code, reads the same on any scikit-learn, and
every model of ``learn.MODELS`` can be asked for from the same file.

Errors are ``ModelError`` (a ValueError), one line naming the field.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass

import numpy as np

from .dataset import FEATURES
from .evaluate import candidates, screened
from .learn import (MODELS, Feature, LearnError, Table, best_single, evaluate, fit_predict, oracle, output_space,
                    pair_search)
from .space import Configuration, ConfigurationError

FORMAT = "numaware-advisor-model"
FORMAT_VERSION = 1
SEED = 0


class ModelError(ValueError):
    """A model file or a request to train one is not usable (one line)."""


@dataclass(frozen=True)
class ModelFeature:
    counter: str        # a name of dataset.FEATURES
    configuration: str  # a Configuration key: the run that measures it

    def name(self) -> str:
        return f"{self.counter}@{self.configuration}"


@dataclass
class AdvisorModel:
    preset: str
    simulator_version: str
    model: str                         # the default of learn.MODELS for predict()
    features: list[ModelFeature]       # two (the published reaction-based pair), or any number >= 1
    output_space: list[str]            # configuration keys a prediction is one of
    baseline: str
    best_single: str                   # of the output space, over the training regions
    regions: list[str]                 # training regions
    x: np.ndarray                      # regions x features
    speedups: np.ndarray               # regions x output space, against the baseline
    cross_validated: dict              # {"folds", "speedup", "oracle_speedup", "best_of_2"...}: how it was chosen

    def profile_configurations(self) -> list[str]:
        """The configurations whose runs measure the features, in first-use order (one or two runs)."""
        return list(dict.fromkeys(f.configuration for f in self.features))

    def predict(self, x: np.ndarray, model: str | None = None) -> list[str]:
        """The configuration keys chosen for the rows of ``x`` (regions x features)."""
        model = model or self.model
        if model not in MODELS:
            raise ModelError(f"model: unknown '{model}' (known: {', '.join(MODELS)})")
        x = np.asarray(x, dtype=float).reshape(-1, len(self.features))
        if not np.all(np.isfinite(x)):
            raise ModelError("features: a value is not a finite number")
        chosen = fit_predict(model, self.x, self.speedups, x, SEED)
        return [self.output_space[int(i)] for i in chosen]

    def to_json(self) -> dict:
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "label": "trained on simulated sweeps (numaware sim memory, throughput model)",
            "simulated": True,
            "preset": self.preset,
            "simulator_version": self.simulator_version,
            "model": self.model,
            "features": [{"counter": f.counter, "configuration": f.configuration} for f in self.features],
            "output_space": self.output_space,
            "baseline": self.baseline,
            "best_single": self.best_single,
            "cross_validated": self.cross_validated,
            "training": {"regions": self.regions, "x": self.x.tolist(), "speedups": self.speedups.tolist()},
        }

    def save(self, path: str) -> None:
        """Writes the file whole or not at all (a temporary file renamed over it)."""
        tmp = f"{path}.tmp{os.getpid()}"
        try:
            with open(tmp, "w") as f:
                json.dump(self.to_json(), f, indent=1)
                f.write("\n")
            os.replace(tmp, path)
        except OSError as e:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise ModelError(f"{path}: cannot write the model ({e.strerror or e})") from None

    @classmethod
    def load(cls, path: str) -> AdvisorModel:
        try:
            with open(path) as f:
                doc = json.load(f)
        except OSError as e:
            raise ModelError(f"{path}: cannot read the model ({e.strerror or e})") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ModelError(f"{path}: not a model file (not JSON: {e})") from None
        try:
            return cls.from_json(doc)
        except ModelError as e:
            raise ModelError(f"{path}: {e}") from None

    @classmethod
    def from_json(cls, doc) -> AdvisorModel:
        _check(isinstance(doc, dict) and doc.get("format") == FORMAT, "format", f"expected '{FORMAT}'")
        _check(doc.get("format_version") == FORMAT_VERSION, "format_version",
               f"expected {FORMAT_VERSION}, got {doc.get('format_version')!r} (train the model again)")
        for name in ("preset", "simulator_version", "model", "baseline", "best_single"):
            _check(isinstance(doc.get(name), str) and doc[name] != "", name, "expected a non-empty string")
        _check(doc["model"] in MODELS, "model", f"unknown '{doc['model']}' (known: {', '.join(MODELS)})")
        feats = doc.get("features")
        _check(isinstance(feats, list) and feats, "features", "expected a non-empty list")
        features = []
        for i, f in enumerate(feats):
            _check(isinstance(f, dict) and f.get("counter") in FEATURES, f"features[{i}].counter",
                   f"expected one of {', '.join(sorted(FEATURES))}")
            features.append(ModelFeature(f["counter"], _configuration(f.get("configuration"),
                                                                      f"features[{i}].configuration")))
        space = doc.get("output_space")
        _check(isinstance(space, list) and space, "output_space", "expected a non-empty list")
        space = [_configuration(c, f"output_space[{i}]") for i, c in enumerate(space)]
        _configuration(doc["baseline"], "baseline")
        _check(doc["best_single"] in space, "best_single", "not a configuration of the output space")
        training = doc.get("training")
        _check(isinstance(training, dict), "training", "expected an object")
        regions = training.get("regions")
        _check(isinstance(regions, list) and len(regions) >= 2 and all(isinstance(r, str) for r in regions),
               "training.regions", "expected a list of at least 2 region names")
        x = _matrix(training.get("x"), (len(regions), len(features)), "training.x")
        s = _matrix(training.get("speedups"), (len(regions), len(space)), "training.speedups")
        _check(bool(np.all(s > 0)), "training.speedups", "every speedup must be > 0")
        cv = doc.get("cross_validated", {})
        _check(isinstance(cv, dict), "cross_validated", "expected an object")
        return cls(preset=doc["preset"], simulator_version=doc["simulator_version"], model=doc["model"],
                   features=features, output_space=space, baseline=doc["baseline"], best_single=doc["best_single"],
                   regions=regions, x=x, speedups=s, cross_validated=cv)


def train(table: Table, *, preset: str, simulator_version: str, model: str = "tree", features: list[str] | None = None,
          folds: int = 10, screen: int | None = None) -> AdvisorModel:
    """The model on the best feature pair (exhaustive search, or screened) or on the given ``features``
    (``COUNTER@CONFIGURATION_KEY`` names)."""
    if model not in MODELS:
        raise ModelError(f"model: unknown '{model}' (known: {', '.join(MODELS)})")
    if len(table.regions) < 4:
        raise LearnError(f"{len(table.regions)} regions: too few to train on (at least 4)")
    space, _ = output_space(table)
    if features:
        chosen = [_table_feature(table, name) for name in features]
        speedup = evaluate(table, model, chosen, space, k=folds, seed=SEED).speedup
    else:
        kept = screened(table, space, candidates(table, space), screen, folds=folds, seed=SEED)
        e, ranked = pair_search(table, space, kept, model=model, k=folds, seed=SEED)
        chosen, speedup = [ranked[0][1], ranked[0][2]], e.speedup
    x = np.column_stack([table.counters[f.counter][:, f.configuration] for f in chosen])
    s = table.speedups()[:, space]
    return AdvisorModel(
        preset=preset, simulator_version=simulator_version, model=model,
        features=[ModelFeature(f.counter, table.configurations[f.configuration]) for f in chosen],
        output_space=[table.configurations[c] for c in space], baseline=table.configurations[table.baseline],
        best_single=table.configurations[best_single(table, space)], regions=list(table.regions), x=x, speedups=s,
        cross_validated={"folds": folds, "speedup": speedup, "oracle_speedup": oracle(table, space),
                         "regions": len(table.regions)})


def _table_feature(table: Table, name: str) -> Feature:
    counter, sep, key = name.partition("@")
    if not sep or counter not in FEATURES:
        raise ModelError(f"features: '{name}': expected COUNTER@CONFIGURATION with COUNTER one of "
                         f"{', '.join(sorted(FEATURES))}")
    try:
        key = Configuration.from_key(key).key
    except ConfigurationError as e:
        raise ModelError(f"features: '{name}': {e}") from None
    if key not in table.configurations:
        raise ModelError(f"features: '{name}': the sweep has no results under that configuration")
    return Feature(table.configurations.index(key), counter)


def _configuration(value, field: str) -> str:
    _check(isinstance(value, str), field, "expected a configuration key")
    try:
        return Configuration.from_key(value).key
    except ConfigurationError as e:
        raise ModelError(f"{field}: {e}") from None


def _matrix(value, shape: tuple[int, int], field: str) -> np.ndarray:
    try:
        m = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"{field}: expected a {shape[0]} x {shape[1]} list of numbers") from None
    _check(m.shape == shape, field, f"expected {shape[0]} x {shape[1]} numbers, got shape {m.shape}")
    _check(bool(np.all(np.isfinite(m))), field, "every value must be a finite number")
    return m


def _check(ok: bool, field: str, problem: str) -> None:
    if not ok:
        raise ModelError(f"{field}: {problem}")
