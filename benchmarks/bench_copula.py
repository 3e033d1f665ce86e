"""Fit and prediction time of CopulaFusion (selection among all copula families).

Usage::

    python benchmarks/bench_copula.py [--repeats 7] [--predict-rows 600000]

Prints Markdown tables: medians over ``--repeats`` runs measured in this process. References
run on the same data in the same process: the copula step done through ``copulae``'s
log-densities (same optimizer, the five families ``copulae`` has), and the paper's reported
CopulaFusion training times (Wang & Liu 2020, Sec. 5.3: 1.486 s at n = 500, 1.756 s at
n = 1000; MATLAB, different machine, so only indicative).
"""

from __future__ import annotations

import argparse

import numpy as np
from _common import median_time, table
from scipy import stats

from fusion import CopulaFusion
from fusion.copula import families as fam
from fusion.copula.family import maximize_1d as _maximize_1d
from fusion.copula.fit import fit_family
from fusion.copula.families import sample

PAPER_SECONDS = {500: 1.486, 1000: 1.756}


def simulate(n: int, seed: int = 0):
    """Class 1: Clayton copula, Beta margins; class 0: rotated Gumbel, Beta margins."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.4).astype(int)
    S = np.empty((n, 2))
    truth = {
        1: ("clayton", {"theta": 3.0}, [stats.beta(3, 1.5), stats.beta(2.5, 1)]),
        0: ("gumbel_rot180", {"theta": 1.8}, [stats.beta(1.5, 3), stats.beta(1.2, 2)]),
    }
    for label, (family, params, margins) in truth.items():
        rows = y == label
        U = sample(family, params, int(rows.sum()), random_state=rng)
        for m, dist in enumerate(margins):
            S[rows, m] = dist.ppf(U[:, m])
    return S, y


def copulae_fit(P: np.ndarray) -> None:
    """Reference: the same bounded fits, each likelihood evaluated through ``copulae``."""
    from copulae import ClaytonCopula, FrankCopula, GaussianCopula, GumbelCopula, StudentCopula
    from copulae.elliptical.student import StudentParams

    def one(cls, transform, lo, hi):
        c = cls(dim=2)

        def ll(t):
            c.params = transform(t)
            return float(np.sum(c.pdf(P, log=True)))

        _maximize_1d(ll, lo, hi)

    one(GaussianCopula, np.tanh, -3.8, 3.8)
    one(ClaytonCopula, np.exp, np.log(1e-4), np.log(50))
    one(GumbelCopula, np.exp, 0.0, np.log(50))
    # copulae's Frank returns NaN for negative theta: positive side only
    one(FrankCopula, float, 1e-4, 50.0)
    c = StudentCopula(dim=2)

    def profile(log_df):
        def ll(r):
            c.params = StudentParams(float(np.exp(log_df)), [float(np.tanh(r))])
            return float(np.sum(c.pdf(P, log=True)))

        return _maximize_1d(ll, -3.8, 3.8, n_grid=3)[1]

    _maximize_1d(profile, np.log(2), np.log(50), n_grid=5, xatol=1e-3)


def bench_fit(args) -> str:
    rows = []
    for n in (500, 1000, 5000, 20_000):
        S, y = simulate(n)
        reps = args.repeats if n <= 5000 else max(3, args.repeats // 2)
        t_fit = median_time(lambda S=S, y=y: CopulaFusion().fit(S, y), reps)
        model = CopulaFusion().fit(S, y)
        U = model.ecdf_.transform(S)
        P = model._pseudo_observations(1, U[y == 1])
        ours5 = median_time(
            lambda P=P: [
                fit_family(f, P, np.ones(len(P)))
                for f in ("gaussian", "student", "clayton", "gumbel", "frank")
            ],
            reps,
        )
        if n <= 1000:
            ref = median_time(lambda P=P: copulae_fit(P), 3)
            ref_cells = [f"{ref * 1e3:.0f}", f"{ref / ours5:.1f}x"]
        else:
            ref_cells = ["-", "-"]
        paper = PAPER_SECONDS.get(n)
        rows.append(
            [
                f"{n:,}",
                f"{t_fit * 1e3:.0f}",
                f"{paper:.3f}" if paper else "-",
                f"{paper / t_fit:.0f}x" if paper else "-",
                f"{ours5 * 1e3:.1f}",
                *ref_cells,
                "/".join(model.copula_families_[k] for k in (0, 1)),
            ]
        )
    return table(
        [
            "n",
            "fit ms (all 9 families, both classes)",
            "paper s",
            "paper / ours",
            "5 copulae families, class 1, ours ms",
            "same via copulae ms",
            "copulae / ours",
            "selected (class 0 / 1)",
        ],
        rows,
    )


def bench_families(args) -> str:
    S, y = simulate(1000)
    model = CopulaFusion().fit(S, y)
    P = model._pseudo_observations(1, model.ecdf_.transform(S)[y == 1])
    w = np.ones(len(P))
    rows = []
    for family in fam.FAMILIES:
        t = median_time(lambda f=family: fit_family(f, P, w), args.repeats)
        rows.append([family, f"{t * 1e3:.2f}"])
    return table([f"family (class 1 of n = 1,000: {len(P)} rows)", "fit ms"], rows)


def bench_bandwidth(args) -> str:
    S, y = simulate(1000)
    rows = []
    for bw in ("silverman", "scott", "cv"):
        t = median_time(lambda b=bw: CopulaFusion(bandwidth=b).fit(S, y), args.repeats)
        rows.append([bw, f"{t * 1e3:.0f}"])
    return table(["bandwidth (n = 1,000)", "fit ms"], rows)


def bench_predict(args) -> str:
    S, y = simulate(2000)
    S_new, _ = simulate(args.predict_rows, seed=1)
    rows = []
    for family in ("independence", "gaussian", "clayton", "gumbel", "frank", "student"):
        model = CopulaFusion(families=family).fit(S, y)
        t = median_time(lambda m=model: m.predict_proba(S_new), max(3, args.repeats // 2))
        rows.append([family, f"{t:.2f}", f"{t / args.predict_rows * 1e9:.0f}"])
    return table(
        [f"copula (both classes), {args.predict_rows:,} rows", "predict s", "ns/row"], rows
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--predict-rows", type=int, default=600_000)
    args = parser.parse_args()
    CopulaFusion().fit(*simulate(500))  # warm-up (imports, caches)
    print("## CopulaFusion fit time (M = 2, default settings)\n")
    print(bench_fit(args))
    print("\n## Per-family maximum-likelihood fit\n")
    print(bench_families(args))
    print("\n## Bandwidth selection\n")
    print(bench_bandwidth(args))
    print("\n## Prediction\n")
    print(bench_predict(args))


if __name__ == "__main__":
    main()
