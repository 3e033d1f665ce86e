"""Scenario benchmark (issue 12): realistic scorers, every fusion method, the peers users fit.

Run from the repository root (the data via FUSION_DATA_DIR, see fusion.datasets)::

    python benchmarks/bench_scorers.py --out bench-out/scorers            # main set
    python benchmarks/bench_scorers.py --holdout --out bench-out/holdout  # held-out set
    python benchmarks/bench_scorers.py --quick                             # smoke run
    python benchmarks/bench_scorers.py --methods default lr_logit \\
        --candidate mine=my_module:make_estimator                          # a prototype

Scorers (HistGradientBoosting, overfit boosting and MLP, random forest, Gaussian naive
Bayes, kNN, logistic regression; ExtraTrees and SVC in the held-out set) are trained on
rows disjoint from the fusion and test rows; their outputs are cached in
``benchmarks/.cache/scores`` (git-ignored), so a rerun costs only the fusion fits. Every
contender is compared with logistic regression on the logits by paired differences per
cell (scenario x fusion sample size). Scenarios, contenders and the flag definitions:
``benchmarks/scenarios_lib`` (this folder is on ``sys.path`` when Python runs this file);
results: benchmarks/RESULTS.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

from scenarios_lib.cli import main

if __name__ == "__main__":
    sys.exit(main(default_cache=str(Path(__file__).resolve().parent / ".cache" / "scores")))
