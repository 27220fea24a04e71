"""Learning the configuration from counters: the advisor's models and their
evaluation, on a table of regions x configurations (``Table``).

Everything here is pure computation over arrays (numpy, scikit-learn); the
table comes from the sweep's store (``dataset.py``). Definitions:

- speedup of configuration c on region r: time under the baseline divided
  by time under c; geometric means over regions throughout;
- oracle: each region under its best configuration of a given set;
- output space: the k configurations chosen greedily, each adding the most
  to the geometric mean of "best of the chosen", until they cover >= 99%
  of the oracle over all configurations (coverage = chosen / oracle);
- characterisation: NUMA only (best thread and page mapping, prefetchers
  as the baseline's), prefetch only (best prefetcher setting, NUMA as the
  baseline's), greedy (the best NUMA setting under the baseline's
  prefetchers, then the best prefetcher setting under that NUMA setting),
  coupled (the oracle);
- features: a (configuration, counter) pair is one feature: the counter
  measured while the region runs under that configuration. A reaction-based
  feature set is two such features, usually under two configurations; the
  single-configuration comparison takes both from one configuration;
- models (scikit-learn): decision tree (single label: the best of the
  output space; multi-label: every configuration within 95% of the best is
  correct), SVM (one-vs-one, gamma 'scale'), MLP (lbfgs, one hidden layer
  of 7), multinomial logistic regression, Ward clustering (regions grouped
  by their features; a group runs the configuration with the best
  geometric mean over its training regions);
- evaluation: k-fold cross-validation over shuffled regions; a model's
  speedup is the geometric mean over every region, each predicted by the
  fold that held it out. best-of-2: the two configurations with the best
  geometric means on the training regions, each test region taking the
  faster of the two (the cost of two runs, like the two profile runs).

Errors are ``LearnError`` (a ValueError), one line.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np


class LearnError(ValueError):
    """The table or a request cannot be learnt from (one line)."""


@dataclass
class Table:
    """Regions x configurations: simulated times and counters.

    ``times[r, c]`` is region r's simulated seconds under configuration c;
    ``counters[name][r, c]`` a counter of region r under c. ``numa[c]`` and
    ``prefetch[c]`` split a configuration into its NUMA part (thread and
    page mapping) and its prefetcher setting; ``baseline`` is the index of
    the baseline configuration.
    """

    regions: list[str]
    configurations: list[str]
    times: np.ndarray
    counters: dict[str, np.ndarray]
    numa: list[str]
    prefetch: list[str]
    baseline: int
    outputs: list[int] = field(default_factory=list)   # configurations a model may choose (default: all)

    def __post_init__(self):
        r, c = len(self.regions), len(self.configurations)
        if r == 0 or c == 0:
            raise LearnError(f"an empty table ({r} regions, {c} configurations)")
        self.times = np.asarray(self.times, dtype=float)
        if self.times.shape != (r, c):
            raise LearnError(f"times has shape {self.times.shape}, expected {(r, c)}")
        if not np.all(np.isfinite(self.times)) or np.any(self.times <= 0):
            raise LearnError("every time must be finite and > 0 (a missing result?)")
        for name, values in self.counters.items():
            values = np.asarray(values, dtype=float)
            if values.shape != (r, c):
                raise LearnError(f"counter {name} has shape {values.shape}, expected {(r, c)}")
            self.counters[name] = values
        if len(self.numa) != c or len(self.prefetch) != c:
            raise LearnError("numa and prefetch need one entry per configuration")
        if not 0 <= self.baseline < c:
            raise LearnError(f"baseline {self.baseline} is not a configuration index")
        if not self.outputs:
            self.outputs = list(range(c))

    def speedups(self) -> np.ndarray:
        """speedup[r, c] against the baseline."""
        return self.times[:, [self.baseline]] / self.times


def gmean(values) -> float:
    v = np.asarray(values, dtype=float)
    return float(np.exp(np.mean(np.log(v))))


# ---- the problem itself -------------------------------------------------------


def oracle(table: Table, among: list[int] | None = None) -> float:
    """Geometric-mean speedup of each region under its best configuration."""
    s = table.speedups()[:, among if among is not None else table.outputs]
    return gmean(s.max(axis=1))


def output_space(table: Table, cover: float = 0.99, among: list[int] | None = None) -> tuple[list[int], list[float]]:
    """The greedy output space and its coverage curve (coverage after each pick)."""
    cand = list(among if among is not None else table.outputs)
    s = np.log(table.speedups()[:, cand])
    best = float(np.mean(s.max(axis=1)))
    chosen: list[int] = []
    curve: list[float] = []
    current = np.full(s.shape[0], -np.inf)
    while True:
        gains = [np.mean(np.maximum(current, s[:, j])) if j not in chosen else -np.inf for j in range(len(cand))]
        j = int(np.argmax(gains))
        chosen.append(j)
        current = np.maximum(current, s[:, j])
        coverage = math.exp(float(np.mean(current)) - best)
        curve.append(coverage)
        if coverage >= cover or len(chosen) == len(cand):
            break
    return [cand[j] for j in chosen], curve


def best_single(table: Table, among: list[int] | None = None) -> int:
    """The configuration with the best geometric-mean speedup over all regions."""
    cand = among if among is not None else table.outputs
    g = np.mean(np.log(table.speedups()[:, cand]), axis=0)
    return cand[int(np.argmax(g))]


def characterisation(table: Table) -> dict[str, float]:
    """NUMA only, prefetch only, greedy and coupled geometric-mean speedups."""
    s = table.speedups()
    base_numa, base_pf = table.numa[table.baseline], table.prefetch[table.baseline]
    outs = table.outputs
    numa_only = [c for c in outs if table.prefetch[c] == base_pf]
    pf_only = [c for c in outs if table.numa[c] == base_numa]
    if not numa_only or not pf_only:
        raise LearnError("the output space lacks the baseline's prefetcher setting or its NUMA setting")
    greedy = []
    for r in range(s.shape[0]):
        n = max(numa_only, key=lambda c: s[r, c])
        under = [c for c in outs if table.numa[c] == table.numa[n]]
        greedy.append(max(s[r, c] for c in under))
    return {
        "numa_only": gmean(s[:, numa_only].max(axis=1)),
        "prefetch_only": gmean(s[:, pf_only].max(axis=1)),
        "greedy": gmean(greedy),
        "coupled": gmean(s[:, outs].max(axis=1)),
    }


# ---- features -----------------------------------------------------------------


@dataclass(frozen=True)
class Feature:
    configuration: int
    counter: str

    def name(self, table: Table) -> str:
        return f"{self.counter}@{table.configurations[self.configuration]}"


def feature_matrix(table: Table, features: list[Feature]) -> np.ndarray:
    if not features:
        raise LearnError("no features")
    cols = []
    for f in features:
        if f.counter not in table.counters:
            raise LearnError(f"unknown counter '{f.counter}'; known: {', '.join(sorted(table.counters))}")
        cols.append(table.counters[f.counter][:, f.configuration])
    return np.column_stack(cols)


# ---- models -------------------------------------------------------------------

MODELS = ("tree", "tree-multilabel", "svm", "mlp", "logistic", "ward")


def _labels(s_space: np.ndarray) -> np.ndarray:
    return np.argmax(s_space, axis=1)


def fit_predict(model: str, x_train: np.ndarray, s_train: np.ndarray, x_test: np.ndarray, seed: int) -> np.ndarray:
    """Fits `model` on the training rows (their speedups over the output space give the labels) and
    returns its choice for each test row: indices into the output space. The cross-validation and a
    loaded model file (model.py) both fit through here."""
    from sklearn.cluster import AgglomerativeClustering
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import NearestCentroid
    from sklearn.neural_network import MLPClassifier
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC
    from sklearn.tree import DecisionTreeClassifier

    y = _labels(s_train)
    if len(set(y.tolist())) == 1:   # one class in training: every model predicts it
        return np.full(x_test.shape[0], y[0])
    if model == "tree":
        return DecisionTreeClassifier(random_state=seed).fit(x_train, y).predict(x_test)
    if model == "tree-multilabel":
        # Every configuration within 95% of the region's best is a correct
        # label; the tree learns them all, and a test region takes, of the
        # labels it predicts, the one with the best training geometric mean.
        ok = (s_train >= 0.95 * s_train.max(axis=1, keepdims=True)).astype(int)
        tree = DecisionTreeClassifier(random_state=seed).fit(x_train, ok)
        pred = np.asarray(tree.predict(x_test)).reshape(x_test.shape[0], -1)
        order = np.argsort(-np.mean(np.log(s_train), axis=0))
        out = []
        for row in pred:
            chosen = next((j for j in order if row[j] == 1), order[0])
            out.append(chosen)
        return np.asarray(out)
    scaler = StandardScaler().fit(x_train)
    xs, xt = scaler.transform(x_train), scaler.transform(x_test)
    if model == "svm":
        return SVC(decision_function_shape="ovo", gamma="scale", random_state=seed).fit(xs, y).predict(xt)
    if model == "mlp":
        return MLPClassifier(hidden_layer_sizes=(7,), solver="lbfgs", max_iter=2000, random_state=seed).fit(xs, y).predict(xt)
    if model == "logistic":
        return LogisticRegression(max_iter=2000).fit(xs, y).predict(xt)   # multinomial for several classes (lbfgs)
    if model == "ward":
        groups = max(2, min(len(set(y.tolist())), xs.shape[0] - 1))
        clusters = AgglomerativeClustering(n_clusters=groups, linkage="ward").fit_predict(xs)
        best = {g: int(np.argmax(np.mean(np.log(s_train[clusters == g]), axis=0))) for g in set(clusters.tolist())}
        nearest = NearestCentroid().fit(xs, clusters)
        return np.asarray([best[g] for g in nearest.predict(xt)])
    raise LearnError(f"unknown model '{model}'; known: {', '.join(MODELS)}")


@dataclass
class Evaluation:
    speedup: float                 # geometric mean over every region, predicted out of fold
    per_region: np.ndarray         # each region's speedup under its prediction
    features: list[str]


def folds(n: int, k: int, seed: int) -> list[np.ndarray]:
    if n < 2:
        raise LearnError(f"cross-validation needs at least 2 regions, got {n}")
    k = max(2, min(k, n))
    order = np.random.default_rng(seed).permutation(n)
    return [order[i::k] for i in range(k)]


def evaluate(table: Table, model: str, features: list[Feature], space: list[int], *, k: int = 10,
             seed: int = 0) -> Evaluation:
    """Cross-validated speedup of `model` choosing among `space` from `features`."""
    x = feature_matrix(table, features)
    s = table.speedups()[:, space]
    got = np.empty(len(table.regions))
    for test in folds(len(table.regions), k, seed):
        train = np.setdiff1d(np.arange(len(table.regions)), test)
        pred = fit_predict(model, x[train], s[train], x[test], seed)
        got[test] = s[test, pred]
    return Evaluation(gmean(got), got, [f.name(table) for f in features])


def best_of_2(table: Table, space: list[int], *, k: int = 10, seed: int = 0) -> Evaluation:
    """The two configurations best on the training regions; the faster of the two."""
    s = table.speedups()[:, space]
    got = np.empty(len(table.regions))
    for test in folds(len(table.regions), k, seed):
        train = np.setdiff1d(np.arange(len(table.regions)), test)
        order = np.argsort(-np.mean(np.log(s[train]), axis=0))[:2]
        got[test] = s[np.ix_(test, order)].max(axis=1)
    return Evaluation(gmean(got), got, [])


def pair_search(table: Table, space: list[int], candidates: list[Feature], *, model: str = "tree", k: int = 10,
                seed: int = 0, same_configuration: bool = False) -> tuple[Evaluation, list[tuple[float, Feature, Feature]]]:
    """Every pair of candidate features (both under one configuration when
    `same_configuration`), ranked by cross-validated speedup: the best pair's
    evaluation and the ranking."""
    ranked = []
    best: Evaluation | None = None
    for a, b in itertools.combinations(candidates, 2):
        if same_configuration and a.configuration != b.configuration:
            continue
        e = evaluate(table, model, [a, b], space, k=k, seed=seed)
        ranked.append((e.speedup, a, b))
        if best is None or e.speedup > best.speedup:
            best = e
    if best is None:
        raise LearnError("no feature pair to search")
    ranked.sort(key=lambda t: -t[0])
    return best, ranked
