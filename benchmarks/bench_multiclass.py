"""Multi-class fusion benchmark (issue 21): M members x C classes -> one class distribution.

Run from the repository root (Covertype via FUSION_DATA_DIR, see fusion.datasets; digits is
bundled with scikit-learn, the 100-class task and the synthetic ensembles are generated)::

    python benchmarks/bench_multiclass.py --out benchmarks/multiclass   # full run
    python benchmarks/bench_multiclass.py --quick                       # smoke run (< 2 min)
    python benchmarks/bench_multiclass.py --methods default \\
        --candidate mine=my_module:make_estimator                       # a prototype
    python benchmarks/bench_multiclass.py --speed-only                  # speed and memory
    python benchmarks/bench_multiclass.py --report-from benchmarks/multiclass

Cells: digits (10 classes) and Covertype (7) with three trained scorers each, a 100-class
``make_classification`` task with four (MLP, LogisticRegression, RandomForest,
HistGradientBoosting), and synthetic ensembles of 3-4 members at C = 10, 100 and 1,000 with
a known posterior (main set, and a held-out set of other configurations and seeds). The
trained scorers' ``predict_proba`` outputs are cached in ``benchmarks/.cache/multiclass``
(git-ignored), so a rerun costs only the fusion fits. The code is in
``benchmarks/multiclass_lib`` (this folder is on ``sys.path`` when Python runs this file);
results: benchmarks/RESULTS.md, "Multi-class fusion".
"""

from __future__ import annotations

import sys
from pathlib import Path

from multiclass_lib.cli import main

if __name__ == "__main__":
    sys.exit(main(default_cache=str(Path(__file__).resolve().parent / ".cache" / "multiclass")))
