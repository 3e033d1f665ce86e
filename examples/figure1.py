"""The paper's Figure 1 (Wang & Liu 2020, Sec. 5.1) on SUSY.

200 random rows train two feed-forward networks (hidden sizes 10 and 20); 400 other rows fit
MR-MIC (lambda = 1e-5), CopulaFusion and BernsteinFusion (K1 = K2 = 5). Panel (a) shows those
400 calibration samples on the normalized square, panels (b)-(d) the three calibrating
functions as contours. Only BernsteinFusion is non-decreasing in both scores everywhere.

Run (needs the ``plot`` and ``bench`` extras and the SUSY file, see fusion.datasets)::

    FUSION_DATA_DIR=../shared/datasets python examples/figure1.py [figure1.png] [--seed 0]
"""

import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import fusion  # noqa: E402
from fusion.bench.protocol import make_scorer, mlp_logit  # noqa: E402
from fusion.datasets import load_susy  # noqa: E402
from fusion.plot import contour  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("out", nargs="?", default="figure1.png", help="PNG to write")
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()

data = load_susy()
rng = np.random.default_rng(args.seed)
perm = rng.permutation(data.y.shape[0])
train, calib = perm[:200], perm[200:600]
numeric = list(data.X.columns)
scores = []
for hidden in (10, 20):
    scorer = make_scorer([], numeric, hidden, random_state=args.seed)
    scorer.fit(data.X.iloc[train], data.y[train])
    scores.append(mlp_logit(scorer, data.X.iloc[calib]))
S, y = np.column_stack(scores), data.y[calib]

models = {
    "(b) MR-MIC, λ = 1e-5": ("mrmic", {"lam": 1e-5}),
    "(c) CopulaFusion": ("copula", {}),
    "(d) BernsteinFusion, K = 5": ("bernstein", {"degree": 5}),
}
fig, axes = plt.subplots(1, 4, figsize=(19, 4.4), layout="constrained")
U = fusion.ECDFNormalizer().fit(S).transform(S)
axes[0].scatter(U[y == 0, 0], U[y == 0, 1], s=8, c="tab:blue", label="background (0)")
axes[0].scatter(U[y == 1, 0], U[y == 1, 1], s=8, c="tab:red", marker="^", label="signal (1)")
axes[0].set(
    xlim=(0, 1),
    ylim=(0, 1),
    aspect="equal",
    title="(a) 400 calibration samples",
    xlabel="normalized score 1 (10 hidden)",
    ylabel="normalized score 2 (20 hidden)",
)
axes[0].legend(loc="upper left", fontsize=8)
for ax, (title, (method, params)) in zip(axes[1:], models.items(), strict=True):
    if method not in fusion.METHODS:
        ax.text(
            0.5,
            0.5,
            f"{method!r} is not available\nin this version of fusion",
            ha="center",
            va="center",
        )
        ax.set(title=title, xticks=[], yticks=[])
        continue
    model = fusion.fit(S, y, method=method, **params)
    contour(model, ax=ax, title=title, colorbar=ax is axes[-1])
fig.savefig(args.out, dpi=120)
print(f"wrote {args.out}")
