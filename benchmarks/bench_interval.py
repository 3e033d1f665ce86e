"""Coverage of ``BernsteinFusion.predict_interval`` on known truths, route against route.

Usage::

    python benchmarks/bench_interval.py [--seeds 10] [--n 500 2000 10000] [--n-bootstrap 200]
        [--truths cubic rare product stacking] [--models default rank-only] [--csv FILE]

For every truth, fusion-sample size ``n`` and seed: two scores and labels drawn from a known
``P(Y = 1 | s)``; the model is fitted, and on 5,000 fresh points the share of points whose
true probability lies inside the nominal 90 % interval (``alpha=0.1``) is measured, overall
and per band of the true probability (p < 0.1, 0.1-0.5, 0.5-0.9, > 0.9), with the mean
width. Every route uses the same resamples (``random_state``):

default model (``base="auto"``)
    ``old``: refits of the fitted model (its degree and components) at ``lam_ / 10``,
    percentile (the implementation before issue 23); ``fitted``: the same at ``lam_``;
    ``rich fixed lam``: the richer model of :func:`fusion.bernstein.binary.bootstrap.interval_basis`
    at ``lam_``; ``rich``: the richer model with the penalty chosen again on every resample,
    percentile; ``rich normal``: the same refits, ``mean +- z sd`` on the logit scale (a
    studentized-type interval); ``rich + envelope``: ``predict_interval`` (the richer
    refits, the monotone envelope where the data hold one class, the point prediction
    inside).
rank-only model (``base=None``)
    ``rich``: the refits of ``predict_interval`` (the default model's refits without the
    linear features, on the normalized scores: :func:`fusion.bernstein.binary.bootstrap.
    logistic_refits` with ``linear=False``), percentile; ``rich + envelope``:
    ``predict_interval``.

Truths (independent standard normal scores unless said): ``cubic`` ``sigmoid(2 s1 +
s2^3)``; ``rare`` ``sigmoid(-5.8 + 1.2 s1 + exp(s2 - 0.5))`` (base rate 3.3 %);
``product`` ``0.05 + 0.9 Phi(s1) Phi(s2 - 0.3)`` (correlation 0.5, the truth of the
benchmark before issue 23); ``stacking``: the scores are probabilities ``sigmoid(l_m)`` and
the truth is logistic in their logits, ``sigmoid(-1 + 1.2 l1 + 0.8 l2)`` (plain stacking is
right). Prints one Markdown table per model (mean over seeds, and the range of the overall
coverage) and, with ``--csv``, every seed's row.
"""

from __future__ import annotations

import argparse
import csv
import time
import warnings

import numpy as np
from _common import table
from scipy.special import expit, logit
from scipy.stats import norm

from fusion import BernsteinFusion
from fusion.bernstein import newton
from fusion.bernstein.binary import bootstrap
from fusion.bernstein.binary.source import MemoryRows
from fusion.bernstein.scale import OwnScale
from fusion.bernstein.structure import Structure

BANDS = (0.0, 0.1, 0.5, 0.9, 1.0 + 1e-12)
BAND_NAMES = ("p < 0.1", "0.1-0.5", "0.5-0.9", "> 0.9")
N_TEST = 5_000


def simulate(truth: str, n: int, seed: int):
    """Scores ``(n, 2)``, labels and true probabilities of one truth."""
    rng = np.random.default_rng(seed)
    if truth == "product":
        S = rng.multivariate_normal([0.0, 0.0], [[1.0, 0.5], [0.5, 1.0]], size=n)
        p = 0.05 + 0.9 * norm.cdf(S[:, 0]) * norm.cdf(S[:, 1] - 0.3)
    else:
        S = rng.normal(size=(n, 2))
        if truth == "cubic":
            p = expit(2 * S[:, 0] + S[:, 1] ** 3)
        elif truth == "rare":
            p = expit(-5.8 + 1.2 * S[:, 0] + np.exp(S[:, 1] - 0.5))
        elif truth == "stacking":
            p = expit(-1.0 + 1.2 * S[:, 0] + 0.8 * S[:, 1])
            S = expit(S)
        else:
            raise ValueError(f"unknown truth {truth!r}")
    return S, (rng.random(n) < p).astype(int), p


def coverage(lo: np.ndarray, hi: np.ndarray, p: np.ndarray) -> dict:
    inside = (p >= lo) & (p <= hi)
    band = np.digitize(p, BANDS) - 1
    out = {"coverage": float(inside.mean()), "width": float(np.mean(hi - lo))}
    for k, name in enumerate(BAND_NAMES):
        sel = band == k
        out[name] = float(inside[sel].mean()) if sel.any() else np.nan
    return out


def percentile(P: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    return tuple(np.quantile(P, [alpha / 2, 1 - alpha / 2], axis=1))


def logit_normal(P: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    L = logit(np.clip(P, 1e-15, 1 - 1e-15))
    z = norm.ppf(1 - alpha / 2)
    mean, sd = L.mean(1), L.std(1)
    return expit(mean - z * sd), expit(mean + z * sd)


def fitted_basis(model) -> Structure:
    return Structure.of(model.degree_, model.components_)


def bootstrap_proba(model, Ut, Zt=None) -> np.ndarray:
    """The probabilities of the model's own refits at ``Ut`` (``Zt``: their features)."""
    basis = Structure(model.bootstrap_basis_)
    return bootstrap.logistic_proba(model.bootstrap_coef_, basis, Ut, Zt, 35.0)


def default_routes(model, S, y, S_test, alpha: float, quick: bool = False) -> dict:
    """Intervals of every default-model route at ``S_test`` (``quick``: only those from
    the model's own refits)."""
    n = S.shape[0]
    U, w = model.ecdf_.transform(S), np.ones(n)
    scale = OwnScale.fit(model.base, model.ecdf_)
    Z = scale.features(U, S)
    Ut = model.ecdf_.transform(S_test)
    Zt = scale.features(Ut, S_test)
    settings = {"eps_abs": model.eps_abs, "eps_rel": model.eps_rel, "max_iter": model.max_iter}
    ridge = newton.base_ridge(n)
    source = MemoryRows(U, S, y, w)

    def refit_proba(basis, lams):
        resamples = bootstrap.resamples(n, model.n_bootstrap, model.random_state)
        coef = bootstrap.logistic_refits(source, Z, basis, lams, resamples, settings, ridge)
        return bootstrap.logistic_proba(coef, basis, Ut, Zt, 35.0)

    fitted = fitted_basis(model)
    rich_basis = Structure(model.bootstrap_basis_)
    P_rich = bootstrap_proba(model, Ut, Zt)
    routes = {}
    if not quick:
        routes = {
            "old": percentile(refit_proba(fitted, [model.lam_ * 0.1]), alpha),
            "fitted": percentile(refit_proba(fitted, [model.lam_]), alpha),
            "rich fixed lam": percentile(refit_proba(rich_basis, [model.lam_]), alpha),
        }
    return routes | {
        "rich": percentile(P_rich, alpha),
        "rich normal": logit_normal(P_rich, alpha),
        "rich + envelope": model.predict_interval(S_test, alpha),
    }


def rank_only_routes(model, S, y, S_test, alpha: float, quick: bool = False) -> dict:
    Ut = model.ecdf_.transform(S_test)
    return {
        "rich": percentile(bootstrap_proba(model, Ut), alpha),
        "rich + envelope": model.predict_interval(S_test, alpha),
    }


def run_one(model_name: str, truth: str, n: int, seed: int, args) -> list[dict]:
    params = {"base": None} if model_name == "rank-only" else {}
    S, y, _ = simulate(truth, n, seed)
    S_test, _, p_test = simulate(truth, N_TEST, 10_000 + seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # grid-edge warnings of small samples
        start = time.perf_counter()
        BernsteinFusion(**params).fit(S, y)
        plain = time.perf_counter() - start
        start = time.perf_counter()
        model = BernsteinFusion(n_bootstrap=args.n_bootstrap, **params).fit(S, y)
        with_boot = time.perf_counter() - start
        routes = (rank_only_routes if params else default_routes)(
            model, S, y, S_test, args.alpha, args.quick
        )
    rows = []
    for route, (lo, hi) in routes.items():
        row = {"model": model_name, "truth": truth, "n": n, "seed": seed, "route": route}
        row.update(coverage(lo, hi, p_test))
        row.update(fit_s=plain, fit_bootstrap_s=with_boot)
        rows.append(row)
    return rows


def summarize(rows: list[dict], model_name: str, alpha: float) -> str:
    keys = sorted(
        {(r["truth"], r["n"], r["route"]) for r in rows if r["model"] == model_name},
        key=lambda k: (k[0], k[1]),
    )
    order = list(dict.fromkeys(r["route"] for r in rows if r["model"] == model_name))
    keys.sort(key=lambda k: (k[0], k[1], order.index(k[2])))
    out = []
    for truth, n, route in keys:
        sel = [
            r
            for r in rows
            if (r["model"], r["truth"], r["n"], r["route"]) == (model_name, truth, n, route)
        ]
        cov = [r["coverage"] for r in sel]
        bands = [np.nanmean([r[b] for r in sel]) for b in BAND_NAMES]
        fit = np.median([r["fit_s"] for r in sel])
        boot = np.median([r["fit_bootstrap_s"] for r in sel])
        out.append(
            [
                truth,
                f"{n:,}",
                route,
                f"{np.mean(cov):.3f} ({min(cov):.2f}-{max(cov):.2f})",
                *(f"{b:.2f}" for b in bands),
                f"{np.mean([r['width'] for r in sel]):.4f}",
                f"{fit:.1f} / {boot:.1f}",
            ]
        )
    nominal = f"{1 - alpha:.0%}"
    head = [
        "truth",
        "n",
        "route",
        f"coverage of {nominal}: mean (range)",
        *BAND_NAMES,
        "mean width",
        "fit s without / with bootstrap",
    ]
    return table(head, out)


def read_rows(paths: list[str]) -> list[dict]:
    rows = []
    for path in paths:
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                for k in r:
                    if k in ("n", "seed"):
                        r[k] = int(r[k])
                    elif k not in ("model", "truth", "route"):
                        r[k] = float(r[k])
                rows.append(r)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--n", type=int, nargs="+", default=[500, 2000, 10000])
    parser.add_argument("--n-bootstrap", type=int, default=200)
    parser.add_argument("--alpha", type=float, default=0.1)
    parser.add_argument("--truths", nargs="+", default=["cubic", "rare", "product", "stacking"])
    parser.add_argument("--models", nargs="+", default=["default", "rank-only"])
    parser.add_argument("--csv", help="append every seed's rows to this CSV file")
    parser.add_argument(
        "--quick", action="store_true", help="only the routes of the model's own refits"
    )
    parser.add_argument(
        "--summarize", nargs="+", metavar="CSV", help="only print the tables of these CSV files"
    )
    args = parser.parse_args()
    if args.summarize:
        rows = read_rows(args.summarize)
        models = list(dict.fromkeys(r["model"] for r in rows))
        for model_name in models:
            seeds = len({r["seed"] for r in rows if r["model"] == model_name})
            print(f"\n{model_name} model, {seeds} seeds\n")
            print(summarize(rows, model_name, args.alpha))
        return
    rows = []
    for model_name in args.models:
        for truth in args.truths:
            for n in args.n:
                for seed in range(args.first_seed, args.first_seed + args.seeds):
                    new = run_one(model_name, truth, n, seed, args)
                    rows += new
                    print(
                        model_name,
                        truth,
                        n,
                        seed,
                        " ".join(f"{r['route']}={r['coverage']:.3f}" for r in new),
                        flush=True,
                    )
                    if args.csv:
                        with open(args.csv, "a", newline="") as f:
                            writer = csv.DictWriter(f, fieldnames=list(new[0]))
                            if f.tell() == 0:
                                writer.writeheader()
                            writer.writerows(new)
    for model_name in args.models:
        print(
            f"\n{model_name} model: coverage of the true probability by the "
            f"{1 - args.alpha:.0%} interval, {args.seeds} seeds, "
            f"n_bootstrap={args.n_bootstrap}, {N_TEST:,} test points per seed\n"
        )
        print(summarize(rows, model_name, args.alpha))


if __name__ == "__main__":
    main()
