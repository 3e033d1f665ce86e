"""Fit time and accuracy of the 1-D calibrators (ENIR, RPR) against the classic baselines.

Usage::

    python benchmarks/bench_univariate.py [--repeats 3] [--max-n 1000000] [--paper-grid]

Prints Markdown tables, medians over ``--repeats`` runs measured in this process:

1. the nearly-isotonic solution path and the whole ENIR fit at N up to ``--max-n``, next to
   scikit-learn's ``IsotonicRegression`` on the same data (ratio = ours / scikit-learn);
2. RPR fit time including its cross-validation (default grids, 3 folds), next to a fit with
   fixed degree and ``lam`` and to isotonic regression; ``--paper-grid`` adds one fit with the
   paper's full grids (degrees 4..20 times 5^-10..5^10, 2 folds) at n = 500;
3. L2 distance to the true calibrating function of every calibrator on two known truths.

Wall-clock and CPU (``time.process_time``) times are both shown: CPU time is less affected
when other jobs share the machine.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from _common import table
from scipy.stats import t as student_t
from sklearn.isotonic import IsotonicRegression

from fusion import (
    ENIRCalibrator,
    HistogramBinningCalibrator,
    IsotonicCalibrator,
    PlattCalibrator,
    RPRCalibrator,
)
from fusion.univariate.nearly_isotonic import near_isotonic_path


def timed(fn, repeats: int) -> tuple[float, float, object]:
    """Median wall and CPU seconds over ``repeats`` calls, and the last result."""
    walls, cpus, out = [], [], None
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return float(np.median(walls)), float(np.median(cpus)), out


def fat_tailed_truth(s):
    """Monotone, non-sigmoid truth of t(1.5) scores: plateaus at 0.1 and 0.9."""
    return 0.1 + 0.8 * student_t.cdf(s, 1.5) ** 3


def dip_truth(s):
    """Nearly monotone truth of uniform scores with a local dip at 0.6."""
    return 0.15 + 0.7 * s - 0.25 * np.exp(-(((s - 0.6) / 0.05) ** 2))


def draw(truth, n: int, seed: int):
    rng = np.random.default_rng(seed)
    s = rng.standard_t(1.5, n) if truth is fat_tailed_truth else rng.random(n)
    return s, (rng.random(n) < truth(s)).astype(int)


def bench_enir(max_n: int, repeats: int) -> str:
    rows = []
    n = 10_000
    while n <= max_n:
        s, y = draw(fat_tailed_truth, n, 0)
        y_sorted = y[np.argsort(s, kind="stable")].astype(float)
        r = 1 if n >= 1_000_000 else repeats
        sk_w, sk_c, _ = timed(
            lambda s=s, y=y: IsotonicRegression(out_of_bounds="clip").fit(s, y), r
        )
        path_w, path_c, path = timed(lambda ys=y_sorted: near_isotonic_path(ys), r)
        enir_w, enir_c, model = timed(lambda s=s, y=y: ENIRCalibrator().fit(s, y), r)
        rows.append(
            [
                f"{n:,}",
                f"{path.n_breakpoints:,}",
                f"{model.model_weights_.size}",
                f"{sk_w:.3f} / {sk_c:.3f}",
                f"{path_w:.3f} / {path_c:.3f}",
                f"{enir_w:.3f} / {enir_c:.3f}",
                f"{path_c / sk_c:.1f}",
                f"{enir_c / sk_c:.1f}",
            ]
        )
        n *= 10
    header = [
        "N",
        "breakpoints",
        "models kept",
        "sklearn isotonic s (wall / cpu)",
        "path s",
        "ENIR fit s",
        "path / sklearn (cpu)",
        "ENIR / sklearn (cpu)",
    ]
    return table(header, rows)


def bench_rpr(repeats: int, paper_grid: bool) -> str:
    rows = []
    for n in (500, 2000, 10_000):
        s, y = draw(fat_tailed_truth, n, 1)
        r = repeats if n <= 2000 else 1
        iso_w, iso_c, _ = timed(lambda s=s, y=y: IsotonicCalibrator().fit(s, y), r)
        fix_w, fix_c, _ = timed(lambda s=s, y=y: RPRCalibrator(degree=8, lam=625.0).fit(s, y), r)
        cv_w, cv_c, m = timed(lambda s=s, y=y: RPRCalibrator().fit(s, y), r)
        n_cand = m.cv_scores_.size
        rows.append(
            [
                f"{n:,}",
                f"default ({n_cand} candidates, 3 folds)",
                f"{iso_w:.3f} / {iso_c:.3f}",
                f"{fix_w:.3f} / {fix_c:.3f}",
                f"{cv_w:.2f} / {cv_c:.2f}",
                f"{m.degree_}, {m.lam_:g}",
            ]
        )
    if paper_grid:
        s, y = draw(fat_tailed_truth, 500, 1)
        grid = {"degree_grid": range(4, 21), "lam_grid": 5.0 ** np.arange(-10, 11), "cv": 2}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cv_w, cv_c, m = timed(lambda: RPRCalibrator(**grid).fit(s, y), 1)
        rows.append(
            [
                "500",
                f"paper ({m.cv_scores_.size} candidates, 2 folds)",
                "",
                "",
                f"{cv_w:.1f} / {cv_c:.1f}",
                f"{m.degree_}, {m.lam_:g}",
            ]
        )
    header = [
        "n",
        "RPR grid",
        "isotonic s (wall / cpu)",
        "RPR fixed k=8, lam=625 s",
        "RPR with CV s",
        "chosen degree, lam",
    ]
    return table(header, rows)


def bench_accuracy(n: int, seeds: int) -> str:
    models = {
        "RPR": lambda seed: RPRCalibrator(),
        "ENIR": lambda seed: ENIRCalibrator(),
        "Platt (logit)": lambda seed: PlattCalibrator(),
        "isotonic": lambda seed: IsotonicCalibrator(),
        "histogram (10 bins)": lambda seed: HistogramBinningCalibrator(),
    }
    rows = []
    for name, make in models.items():
        row = [name]
        for truth in (fat_tailed_truth, dip_truth):
            errs = []
            for seed in range(seeds):
                s, y = draw(truth, n, seed)
                s_test, _ = draw(truth, 20_000, 1000 + seed)
                p = make(seed).fit(s, y).predict_proba(s_test)[:, 1]
                errs.append(np.sqrt(np.mean((p - truth(s_test)) ** 2)))
            row.append(f"{np.mean(errs):.4f} ± {np.std(errs):.4f}")
        rows.append(row)
    return table(
        ["calibrator", "fat-tailed monotone truth", "monotone truth with a dip"],
        rows,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-n", type=int, default=1_000_000)
    parser.add_argument("--paper-grid", action="store_true")
    parser.add_argument("--accuracy-n", type=int, default=2000)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()

    print("### Nearly-isotonic path and ENIR vs scikit-learn IsotonicRegression\n")
    print(bench_enir(args.max_n, args.repeats))
    print("\n### RPR fit time including cross-validation\n")
    print(bench_rpr(args.repeats, args.paper_grid))
    print(f"\n### L2 distance to the truth (n = {args.accuracy_n}, {args.seeds} seeds)\n")
    print(bench_accuracy(args.accuracy_n, args.seeds))


if __name__ == "__main__":
    main()
