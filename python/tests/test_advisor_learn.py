"""numaware.advisor.learn on synthetic tables whose answer is known."""

import numpy as np
import pytest

from numaware.advisor import learn as L


def synthetic(n=60, seed=1):
    """Three kinds of region; counter 'x' under configuration 0 tells them
    apart; configuration k+1 is best (speedup 2) for kind k, others 1."""
    rng = np.random.default_rng(seed)
    kind = np.arange(n) % 3
    cfgs = ["base", "a", "b", "c"]
    times = np.ones((n, 4))
    for r in range(n):
        times[r, 1 + kind[r]] = 0.5
    x = np.zeros((n, 4)); x[:, 0] = kind + rng.normal(0, 0.05, n)
    noise = rng.normal(0, 1, (n, 4))
    return L.Table(regions=[f"r{i}" for i in range(n)], configurations=cfgs, times=times,
                   counters={"x": x, "noise": noise}, numa=["n0", "n0", "n1", "n1"],
                   prefetch=["p0", "p1", "p0", "p1"], baseline=0)

def test_oracle_and_output_space():
    t = synthetic()
    assert L.oracle(t) == pytest.approx(2.0)
    space, curve = L.output_space(t)
    assert sorted(space) == [1, 2, 3] and curve[-1] == pytest.approx(1.0)
    assert curve == sorted(curve)

def test_tree_finds_the_telling_feature_and_beats_best_of_2():
    t = synthetic()
    space, _ = L.output_space(t)
    good = L.evaluate(t, "tree", [L.Feature(0, "x"), L.Feature(0, "noise")], space)
    assert good.speedup == pytest.approx(2.0)
    b2 = L.best_of_2(t, space)
    assert b2.speedup < good.speedup
    bad = L.evaluate(t, "tree", [L.Feature(1, "noise"), L.Feature(2, "noise")], space)
    assert bad.speedup < good.speedup
    best, ranked = L.pair_search(t, space, [L.Feature(c, n) for c in range(4) for n in ("x", "noise")])
    assert best.speedup == pytest.approx(2.0)
    assert ranked[0][0] >= ranked[-1][0]

@pytest.mark.parametrize("model", L.MODELS)
def test_every_model_learns_a_separable_problem(model):
    t = synthetic()
    space, _ = L.output_space(t)
    # The telling feature alone (Ward clusters without labels: a noise
    # dimension of the same scale would split its groups).
    e = L.evaluate(t, model, [L.Feature(0, "x")], space)
    assert e.speedup > 1.9, model

def test_characterisation():
    t = synthetic()
    c = L.characterisation(t)
    assert c["coupled"] == pytest.approx(2.0)
    assert c["numa_only"] <= c["greedy"] <= c["coupled"]

def test_bad_tables():
    with pytest.raises(L.LearnError, match="times has shape"):
        L.Table(["r"], ["c"], np.ones((2, 1)), {}, ["n"], ["p"], 0)
    with pytest.raises(L.LearnError, match="finite and > 0"):
        L.Table(["r"], ["c"], np.zeros((1, 1)), {}, ["n"], ["p"], 0)
    t = synthetic()
    with pytest.raises(L.LearnError, match="unknown counter 'y'"):
        L.feature_matrix(t, [L.Feature(0, "y")])


def test_distinct_bests_count_only_material_wins_outside_the_output_space():
    from numaware.advisor.evaluate import distinct_bests
    # Region 0's best is c (2.0), region 1's is d by 0.5% over c, region 2's e by 5% over c.
    times = np.array([[1.0, 0.5, 1.0, 1.0],
                      [1.0, 0.5, 0.4975, 1.0],
                      [1.0, 0.5, 1.0, 0.4762]])
    t = L.Table(regions=["r0", "r1", "r2"], configurations=["base", "c", "d", "e"], times=times, counters={},
                numa=["n"] * 4, prefetch=["p"] * 4, baseline=0)
    assert distinct_bests(t, [1]) == {"c", "e"}
    assert distinct_bests(t, [1, 2, 3]) == {"c", "d", "e"}
