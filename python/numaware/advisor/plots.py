"""The advisor's plots, from an evaluation document (``evaluate.py``).

Three PNG files, every title labelled simulated:

- ``per_region.png``: each region's speedup against the baseline under the
  oracle (its best of the output space), the decision tree's choice and
  best-of-2;
- ``coverage.png``: the coverage curve, the share of the oracle that the
  first k configurations of the output space reach;
- ``tree_regions.png``: the regions in the plane of the best feature pair,
  coloured by their best configuration, over the decision regions of a
  tree fitted to all of them.

Matplotlib's Agg backend; nothing is shown on screen.
"""

from __future__ import annotations

import os

from .learn import LearnError

FILES = ("per_region.png", "coverage.png", "tree_regions.png")


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def write_plots(doc: dict, out_dir: str) -> list[str]:
    """Writes the three PNGs into out_dir (created if needed); returns their paths."""
    for key in ("per_region", "coverage_curve", "pair_points", "output_space", "preset"):
        if key not in doc:
            raise LearnError(f"evaluation document: missing '{key}'")
    os.makedirs(out_dir, exist_ok=True)
    plt = _pyplot()
    paths = [os.path.join(out_dir, f) for f in FILES]
    title = f"{doc['preset']}, simulated (throughput model)"

    rows = doc["per_region"]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.35 * len(rows)), 4.5))
    xs = range(len(rows))
    for offset, key, label in ((-0.27, "oracle", "oracle"), (0.0, "tree", "decision tree"),
                               (0.27, "best_of_2", "best-of-2")):
        if all(key in r for r in rows):
            ax.bar([x + offset for x in xs], [r[key] for r in rows], width=0.27, label=label)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(list(xs))
    ax.set_xticklabels([r["region"] for r in rows], rotation=90, fontsize=7)
    ax.set_ylabel("speedup over the baseline")
    ax.set_title(f"Per region: oracle, tree, best-of-2 — {title}", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(paths[0], dpi=100)
    plt.close(fig)

    curve = doc["coverage_curve"]
    fig, ax = plt.subplots(figsize=(5.5, 4))
    ax.plot(range(1, len(curve) + 1), curve, marker="o")
    ax.axhline(0.99, color="grey", linestyle="--", linewidth=0.8, label="99%")
    ax.set_xlabel("configurations chosen (greedy)")
    ax.set_ylabel("share of the oracle's geometric mean")
    ax.set_title(f"Coverage — {title}", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(paths[1], dpi=100)
    plt.close(fig)

    import numpy as np
    from sklearn.tree import DecisionTreeClassifier

    pts = doc["pair_points"]
    x, y, best = np.asarray(pts["x"]), np.asarray(pts["y"]), np.asarray(pts["best"])
    fig, ax = plt.subplots(figsize=(6, 4.5))
    if len(set(best.tolist())) > 1:
        tree = DecisionTreeClassifier(random_state=0).fit(np.column_stack([x, y]), best)
        pad_x, pad_y = (np.ptp(x) or 1.0) * 0.05, (np.ptp(y) or 1.0) * 0.05
        gx, gy = np.meshgrid(np.linspace(x.min() - pad_x, x.max() + pad_x, 200),
                             np.linspace(y.min() - pad_y, y.max() + pad_y, 200))
        zz = tree.predict(np.column_stack([gx.ravel(), gy.ravel()])).reshape(gx.shape)
        ax.contourf(gx, gy, zz, alpha=0.25, levels=np.arange(-0.5, len(doc["output_space"]) + 0.5), cmap="tab20")
    ax.scatter(x, y, c=best, cmap="tab20", vmin=-0.5, vmax=len(doc["output_space"]) - 0.5, edgecolors="black")
    ax.set_xlabel(pts["features"][0], fontsize=6)
    ax.set_ylabel(pts["features"][1], fontsize=6)
    ax.set_title(f"Best configuration by region, tree decision regions — {title}", fontsize=8)
    fig.tight_layout()
    fig.savefig(paths[2], dpi=100)
    plt.close(fig)
    return paths
