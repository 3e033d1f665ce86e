"""Real-network calibration benchmark (issue 26): CIFAR networks trained by others.

Run from the repository root; the networks' outputs are found through FUSION_DATA_DIR (the
folder holding ``networks/``, see its README)::

    FUSION_DATA_DIR=../shared/datasets OMP_NUM_THREADS=1 \\
        python benchmarks/bench_networks.py --out benchmarks/networks   # full run
    FUSION_DATA_DIR=../shared/datasets python benchmarks/bench_networks.py --quick
    python benchmarks/bench_networks.py --report-from benchmarks/networks

Cases: two CIFAR-100 networks (M = 1, logits; fitted on the 5,000 val rows, scored on the
10,000 test rows), and a CIFAR-10 ensemble of two networks with each member alone (10,000
rows split into stratified halves, 5 seeds). Contenders: ``fusion.fit(S, y)`` and the
post-hoc calibrators users fit (temperature scaling, per member, the log-linear pool,
ensemble temperature scaling, vector scaling, SVS / SMS from probmetrics, which needs the
optional extra: ``pip install torch==2.13.0`` or another CPU build of torch first, then
``pip install -e ".[networks]"``; without it SVS and SMS are skipped). The report checks
issue 26's targets and prints PASS / FAIL. The code is in ``benchmarks/networks_lib``;
results: benchmarks/RESULTS.md, "Real networks (CIFAR)".
"""

from __future__ import annotations

import sys

from networks_lib.cli import main

if __name__ == "__main__":
    sys.exit(main())
