"""The advisor's evaluation: from a table to one document (labelled simulated).

Steps (docs/ADVISOR.md, "Evaluation"):

1. the output space: the k configurations that cover >= 99% of the oracle,
   chosen greedily, and the coverage curve;
2. references: the oracle over the output space (each region under its best
   of the k), the single best configuration, best-of-2, and the published
   characterisation (NUMA only, prefetch only, greedy, coupled);
3. the feature pair: every derived counter under every configuration of
   the output space (and the baseline) is a candidate, and every pair of
   candidates is cross-validated with the decision tree (exhaustive, the
   default). With `screen` = N, only the N candidates best alone are
   paired (the pruning, for spaces too large to search; on the medium
   sweep it lost 3.5 points of the oracle, BENCHMARKS.md);
4. every model on the best pair; the single-configuration comparison (the
   best pair taken under one configuration) and the baseline's features
   alone.

All speedups are geometric means over the regions, each predicted by the
fold that held it out (k-fold cross-validation over shuffled regions).
"""

from __future__ import annotations

import numpy as np

from .dataset import FEATURES
from .learn import (MODELS, Feature, LearnError, Table, best_of_2, best_single, characterisation, evaluate,
                    feature_matrix, gmean, oracle, output_space, pair_search)


def candidates(table: Table, space: list[int]) -> list[Feature]:
    configs = list(dict.fromkeys(space + [table.baseline]))
    return [Feature(c, name) for c in configs for name in sorted(FEATURES) if name in table.counters]


# A configuration outside the output space counts as a region's best only
# when it beats the output space's best for that region by more than this.
MATERIAL = 1.01


def distinct_bests(table: Table, space: list[int]) -> set[str]:
    """The configurations that are some region's best over every model output.

    A region whose best lies outside the output space counts it only when it
    beats the output space's best for that region by more than 1%
    (``MATERIAL``); otherwise the output space's best stands in, so that
    ties within the model's noise do not count as new winners.
    """
    s = table.speedups()
    out = set()
    for r in range(s.shape[0]):
        inside = space[int(np.argmax(s[r, space]))]
        overall = table.outputs[int(np.argmax(s[r, table.outputs]))]
        out.add(table.configurations[overall if s[r, overall] > MATERIAL * s[r, inside] else inside])
    return out


def screened(table: Table, space: list[int], pool: list[Feature], keep: int | None, *, folds: int,
             seed: int) -> list[Feature]:
    """The `keep` candidates whose tree alone does best (all when keep is None)."""
    if keep is None or keep >= len(pool):
        return pool
    scored = sorted(pool, key=lambda f: -evaluate(table, "tree", [f], space, k=folds, seed=seed).speedup)
    return scored[:keep]


def evaluation_document(table: Table, *, preset: str, folds: int = 10, seed: int = 0, screen: int | None = None,
                        models: tuple[str, ...] = MODELS) -> dict:
    if len(table.regions) < 4:
        raise LearnError(f"{len(table.regions)} regions: too few to cross-validate (at least 4)")
    space, curve = output_space(table)
    s = table.speedups()
    pool = candidates(table, space)
    kept = screened(table, space, pool, screen, folds=folds, seed=seed)
    best, ranked = pair_search(table, space, kept, k=folds, seed=seed)
    pair = [ranked[0][1], ranked[0][2]]

    def best_where(keep) -> dict | None:
        """The best searched pair that `keep` accepts (ranked is best first)."""
        hit = next(((speedup, a, b) for speedup, a, b in ranked if keep(a, b)), None)
        return None if hit is None else {"speedup": hit[0], "features": [hit[1].name(table), hit[2].name(table)]}

    same_configuration = best_where(lambda a, b: a.configuration == b.configuration)
    baseline_only = [f for f in pool if f.configuration == table.baseline]
    if all(f in kept for f in baseline_only):
        baseline_features = best_where(lambda a, b: a.configuration == b.configuration == table.baseline)
    else:   # the screening dropped some of them: search them on their own
        e, _ = pair_search(table, space, screened(table, space, baseline_only, screen, folds=folds, seed=seed),
                           k=folds, seed=seed)
        baseline_features = {"speedup": e.speedup, "features": e.features}
    model_results = {}
    per_model = {}
    for m in models:
        e = evaluate(table, m, pair, space, k=folds, seed=seed)
        model_results[m] = {"speedup": e.speedup, "features": e.features}
        per_model[m] = e.per_region
    single = best_single(table, space)
    b2 = best_of_2(table, space, k=folds, seed=seed)
    winners = sorted({table.configurations[space[int(i)]] for i in s[:, space].argmax(axis=1)})
    winners_all = distinct_bests(table, space)
    x = feature_matrix(table, pair)
    best_index = s[:, space].argmax(axis=1)
    per_region = [{"region": table.regions[r], "oracle": float(s[r, space].max()), "best_of_2": float(b2.per_region[r]),
                   **{m: float(per_model[m][r]) for m in per_model}} for r in range(len(table.regions))]
    return {
        "label": "simulated (numaware sim memory, throughput model); speedups are geometric means over regions "
                 "against the baseline, models cross-validated",
        "simulated": True,
        "preset": preset,
        "regions": len(table.regions),
        "configurations": len(table.outputs),
        "baseline": table.configurations[table.baseline],
        "oracle_all_speedup": oracle(table),
        "output_space": [table.configurations[c] for c in space],
        "coverage_curve": curve,
        "oracle_speedup": oracle(table, space),
        "best_single": {"configuration": table.configurations[single], "speedup": gmean(s[:, single])},
        "best_single_share_of_oracle": gmean(s[:, single]) / oracle(table, space),
        "distinct_best_configurations": len(winners),
        "distinct_best_configurations_all": len(winners_all),
        "best_of_2_speedup": b2.speedup,
        "characterisation": characterisation(table),
        "folds": folds,
        "feature_search": {"candidates": len(pool), "screened_to": len(kept), "pairs": len(ranked),
                           "best_pair": best.features, "best_pair_speedup": best.speedup},
        "models": model_results,
        "single_configuration_features": same_configuration,
        "baseline_features": baseline_features,
        "per_region": per_region,
        "pair_points": {"features": [f.name(table) for f in pair], "x": x[:, 0].tolist(), "y": x[:, 1].tolist(),
                        "best": [int(i) for i in best_index], "regions": list(table.regions)},
    }


def cross_machine_document(features: Table, labels: Table, *, features_preset: str, labels_preset: str,
                           folds: int = 10, seed: int = 0, screen: int | None = None,
                           same_machine: dict | None = None) -> dict:
    """Cross-machine training: features measured on one preset, labels and speedups from another.

    The regions both sweeps have are the samples. The configurations to
    choose from are the labels' preset's output space; the candidate
    features are every counter of the features' preset under its own output
    space and baseline. The pair is searched (exhaustive, or screened) and
    every model is cross-validated on it, as on one machine; the
    labels' preset's own best pair is given for comparison. ``same_machine``
    ({"speedup", "features"}) is that pair when the caller has already
    searched it on the same regions, settings and space (evaluation_document
    does); it is used only when every region of ``labels`` is a sample.
    """
    common = [r for r in labels.regions if r in set(features.regions)]
    if len(common) < 4:
        raise LearnError(f"{len(common)} regions swept on both {features_preset} and {labels_preset}: too few "
                         "to cross-validate (at least 4)")
    fi = [features.regions.index(r) for r in common]
    li = [labels.regions.index(r) for r in common]
    f_space, _ = output_space(features)
    f_configs = list(dict.fromkeys(f_space + [features.baseline]))
    n = len(labels.configurations)
    # One table: the labels' configurations (their times give the
    # speedups), then the features' configurations the candidates use
    # (their times are never chosen: they are not outputs).
    table = Table(
        regions=common,
        configurations=list(labels.configurations) + [f"{features_preset}:{features.configurations[c]}"
                                                      for c in f_configs],
        times=np.hstack([labels.times[li], features.times[np.ix_(fi, f_configs)]]),
        counters={name: np.hstack([labels.counters[name][li], features.counters[name][np.ix_(fi, f_configs)]])
                  for name in labels.counters if name in features.counters},
        numa=list(labels.numa) + ["(features)"] * len(f_configs),
        prefetch=list(labels.prefetch) + ["(features)"] * len(f_configs),
        baseline=labels.baseline, outputs=list(labels.outputs))
    space, _ = output_space(table)
    pool = [Feature(n + j, name) for j in range(len(f_configs)) for name in sorted(FEATURES) if name in table.counters]
    kept = screened(table, space, pool, screen, folds=folds, seed=seed)
    _, ranked = pair_search(table, space, kept, k=folds, seed=seed)
    pair = [ranked[0][1], ranked[0][2]]
    if same_machine is None or len(common) != len(labels.regions):
        own_kept = screened(table, space, candidates(table, space), screen, folds=folds, seed=seed)
        own, _ = pair_search(table, space, own_kept, k=folds, seed=seed)
        same_machine = {"speedup": own.speedup, "features": own.features}
    return {
        "label": "simulated; features measured on one preset, labels and speedups from another",
        "features_preset": features_preset,
        "labels_preset": labels_preset,
        "regions": len(common),
        "oracle_speedup": oracle(table, space),
        "best_of_2_speedup": best_of_2(table, space, k=folds, seed=seed).speedup,
        "feature_search": {"candidates": len(pool), "screened_to": len(kept)},
        "models": {m: {"speedup": (e := evaluate(table, m, pair, space, k=folds, seed=seed)).speedup,
                       "features": e.features} for m in MODELS},
        "same_machine_tree": same_machine,
    }
