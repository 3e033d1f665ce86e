"""Multi-class fusion benchmark (issue 13): M scorers x C classes -> one class distribution.

Run from the repository root (Covertype via FUSION_DATA_DIR, see fusion.datasets; digits is
bundled with scikit-learn)::

    python benchmarks/bench_multiclass.py --out bench-out/multiclass   # full run
    python benchmarks/bench_multiclass.py --quick                       # smoke run
    python benchmarks/bench_multiclass.py --methods default \\
        --candidate mine=my_module:make_estimator                       # a prototype
    python benchmarks/bench_multiclass.py --speed-only                  # fit time vs LR

Three scorers per data set (digits: random forest, MLP, Gaussian naive Bayes; Covertype:
HistGradientBoosting, random forest, MLP), each trained on its own rows; their
``predict_proba`` outputs on the fusion pool and the test set are cached in
``benchmarks/.cache/multiclass`` (git-ignored), so a rerun costs only the fusion fits.
Contenders, peers, the paired comparison with the best peer per cell and the speed
comparison: :mod:`fusion.bench.multiclass`; results: benchmarks/RESULTS.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fusion.bench.multiclass.cli import main

if __name__ == "__main__":
    sys.exit(main(default_cache=str(Path(__file__).resolve().parent / ".cache" / "multiclass")))
