"""Predictions of a fixed set of fits, for checking that a refactor changes nothing.

Run from the repository root, before and after a change (for example with ``git stash`` or a
``git worktree`` of the old commit on ``PYTHONPATH``), then compare::

    OMP_NUM_THREADS=1 python benchmarks/snapshot_predictions.py save before.npz [--dask]
    OMP_NUM_THREADS=1 python benchmarks/snapshot_predictions.py save after.npz [--dask]
    python benchmarks/snapshot_predictions.py compare before.npz after.npz

The fits: the default model at M = 2, 3, 5 (on rows) and M = 2 at 60,000 rows (on cells),
weighted; the rank-only model at M = 2, 3 and with ``structure="auto"`` at M = 4; bootstrap
intervals of both models; CopulaFusion, MR-MIC, RPR, ENIR and the Platt, isotonic and
histogram calibrators; the default, rank-only and RPR fits on an ECDF sketch
(``ecdf_knots=300``); the default model and ENIR with missing scores; the class-shared,
per-class and ``"auto"`` multi-class models (C = 10), the class-shared one with given folds
and with fixed penalties, and the per-class rank-only and ENIR ones; more paths of the
binary models (a degree search, fixed and infinite penalties, the pairwise structure, cells
with given folds, bootstrap intervals on cells, a splitter that is not K-fold, a reversed
score); with ``--dask``, the default model (searched, weighted, fixed, on the exact ECDF,
with a reversed score), the rank-only model (searched and fixed) and the class-shared model
on a local cluster. Entries ending in ``.state`` hold a fit's chosen penalty, iterations,
cells and cross-validation scores. ``compare`` prints, for every entry, "identical" or the
largest difference, and exits with 1 unless all are bit-identical.
"""

from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np
from scipy.special import expit, softmax

import fusion
from fusion import BernsteinFusion


def binary(n, M, seed):
    r = np.random.default_rng(seed)
    S = r.normal(size=(n, M))
    p = expit(S @ np.linspace(1.5, 0.3, M) + 0.3 * S[:, 0] ** 2 - 0.2)
    return S, (r.random(n) < p).astype(int)


def state(model) -> np.ndarray:
    """A Bernstein fit's chosen penalty, iterations, cells and cross-validation scores (in
    key order), so that a change of path that happens to give the same predictions shows."""
    scores = getattr(model, "cv_scores_", None) or {}
    lam = getattr(model, "lam_", None)
    cells = getattr(model, "n_cells_", None)
    head = [np.nan if lam is None else lam, model.n_iter_, -1 if cells is None else cells]
    return np.array(head + [scores[k] for k in sorted(scores, key=repr)], dtype=float)


def predictions(dask: bool) -> dict[str, np.ndarray]:
    """Every fit's predictions on fresh rows, by name."""
    warnings.simplefilter("ignore")
    out = {}

    def record(name, model, St):
        out[name] = model.predict_proba(St)
        out[name + ".state"] = state(model)

    for M in (2, 3, 5):
        S, y = binary(3000, M, M)
        St, _ = binary(2000, M, 100 + M)
        out[f"default{M}"] = BernsteinFusion().fit(S, y).predict_proba(St)
        if M <= 3:
            out[f"rankonly{M}"] = BernsteinFusion(base=None).fit(S, y).predict_proba(St)
    S, y = binary(3000, 4, 44)
    St, _ = binary(2000, 4, 144)
    out["rankonly4auto"] = (
        BernsteinFusion(base=None, degree_grid=[1, 2, 3]).fit(S, y).predict_proba(St)
    )
    S, y = binary(60000, 2, 7)  # cells path
    St, _ = binary(2000, 2, 107)
    out["cells"] = BernsteinFusion().fit(S, y).predict_proba(St)
    S, y = binary(1500, 2, 8)
    m = BernsteinFusion(n_bootstrap=20).fit(S, y)
    out["interval_lo"], out["interval_hi"] = m.predict_interval(St)
    m = BernsteinFusion(base=None, degree=3, n_bootstrap=10).fit(S, y)
    out["interval_ro_lo"], out["interval_ro_hi"] = m.predict_interval(St)
    w = np.random.default_rng(3).random(1500)
    out["weighted"] = BernsteinFusion().fit(S, y, sample_weight=w).predict_proba(St)
    for method in ("copula", "mrmic", "rpr", "enir"):
        try:
            out[method] = fusion.fit(S, y, method=method).predict_proba(St)
        except Exception as e:  # noqa: BLE001
            print(method, e)
    for name, cls in (
        ("platt", fusion.PlattCalibrator),
        ("isotonic", fusion.IsotonicCalibrator),
        ("histogram", fusion.HistogramBinningCalibrator),
    ):
        out[name] = cls().fit(S, y).predict_proba(St)
    # the ECDF sketch (ecdf_knots below the distinct values), and missing scores
    S, y = binary(3000, 2, 11)
    St, _ = binary(2000, 2, 111)
    out["sketch_default"] = BernsteinFusion(ecdf_knots=300).fit(S, y).predict_proba(St)
    out["sketch_rankonly"] = (
        BernsteinFusion(base=None, degree=3, ecdf_knots=300).fit(S, y).predict_proba(St)
    )
    out["sketch_rpr"] = fusion.fit(S, y, method="rpr", ecdf_knots=300).predict_proba(St)
    Sm = S.copy()
    Sm[::7, 0] = np.nan
    Stm = St.copy()
    Stm[::5, 1] = np.nan
    out["missing_default"] = BernsteinFusion(missing="marginal").fit(Sm, y).predict_proba(Stm)
    out["missing_enir"] = fusion.fit(Sm, y, method="enir", missing="marginal").predict_proba(Stm)
    # more paths of the binary models: a degree search, fixed penalties, structures, cells
    # with given folds, bootstrap on cells, a splitter that is not K-fold, a reversed score
    from sklearn.model_selection import KFold, ShuffleSplit

    S, y = binary(1500, 2, 21)
    St, _ = binary(1000, 2, 121)
    record("default_degcv", BernsteinFusion(degree="cv", degree_grid=[2, 4]).fit(S, y), St)
    record("default_lamfixed", BernsteinFusion(lam=1e-3).fit(S, y), St)
    record("cells_kfold", BernsteinFusion(bins=16, cv=KFold(4, shuffle=True, random_state=0))
           .fit(S, y), St)  # fmt: skip
    m = BernsteinFusion(bins=8, n_bootstrap=5).fit(S, y)
    out["interval_cells_lo"], out["interval_cells_hi"] = m.predict_interval(St)
    m = BernsteinFusion(base=None, degree=3, bins=8, n_bootstrap=5).fit(S, y)
    out["interval_ro_cells_lo"], out["interval_ro_cells_hi"] = m.predict_interval(St)
    record("rankonly_shuffle", BernsteinFusion(
        base=None, degree_grid=[1, 2, 3], cv=ShuffleSplit(3, test_size=0.3, random_state=0)
    ).fit(S, y), St)  # fmt: skip
    Sr, Str = S.copy(), St.copy()
    Sr[:, 1], Str[:, 1] = -Sr[:, 1], -Str[:, 1]
    record("reversed", BernsteinFusion().fit(Sr, y), Str)
    S, y = binary(2000, 3, 22)
    St, _ = binary(1000, 3, 122)
    record("default_laminf", BernsteinFusion(lam=np.inf).fit(S, y), St)
    record("default_pairwise3", BernsteinFusion(structure="pairwise").fit(S, y), St)
    record("cells_bins8", BernsteinFusion(bins=8).fit(S, y), St)
    record("rankonly_additive3", BernsteinFusion(base=None, degree=3, structure="additive")
           .fit(S, y), St)  # fmt: skip
    # multi-class
    C, M, n = 10, 3, 3000
    r = np.random.default_rng(5)
    T = r.normal(size=(n + 1000, C)) * 2
    yy = np.array([r.choice(C, p=q) for q in softmax(T, axis=1)])
    Smc = np.stack(
        [softmax(T / t + r.normal(size=T.shape) * 0.5, axis=1) for t in (0.7, 1.0, 1.6)], axis=1
    )
    out["shared"] = BernsteinFusion(multiclass="shared").fit(Smc[:n], yy[:n]).predict_proba(Smc[n:])
    out["perclass"] = (
        BernsteinFusion(multiclass="per-class").fit(Smc[:n], yy[:n]).predict_proba(Smc[n:])
    )
    out["auto_mc"] = fusion.fit(Smc[:n], yy[:n]).predict_proba(Smc[n:])
    out["perclass_rankonly"] = (
        BernsteinFusion(base=None, degree=2).fit(Smc[:n], yy[:n]).predict_proba(Smc[n:])
    )
    out["perclass_enir"] = fusion.fit(Smc[:n], yy[:n], method="enir").predict_proba(Smc[n:])
    out["shared_kfold"] = (
        BernsteinFusion(multiclass="shared", cv=KFold(3, shuffle=True, random_state=1))
        .fit(Smc[:n], yy[:n]).predict_proba(Smc[n:])
    )  # fmt: skip
    out["shared_fixed"] = (
        BernsteinFusion(multiclass="shared", lam=1e-2, bias_penalty=np.inf,
                        top_label_penalty=np.inf)
        .fit(Smc[:n], yy[:n]).predict_proba(Smc[n:])
    )  # fmt: skip
    if dask:
        import dask.array as da
        from distributed import Client, LocalCluster

        with LocalCluster(n_workers=2, threads_per_worker=1, processes=False) as cl, Client(cl):
            S, y = binary(20000, 3, 9)
            Sd, yd = da.from_array(S, chunks=(5000, 3)), da.from_array(y, chunks=5000)
            St, _ = binary(2000, 3, 109)
            record("dask_default", BernsteinFusion().fit(Sd, yd), St)
            out["dask_rankonly"] = (
                BernsteinFusion(base=None, degree_grid=[1, 2, 3]).fit(Sd, yd).predict_proba(St)
            )
            Smd = da.from_array(Smc[:n], chunks=(1000, 3, C))
            w = np.random.default_rng(4).random(20000)
            wd = da.from_array(w, chunks=5000)
            record("dask_weighted", BernsteinFusion().fit(Sd, yd, wd), St)
            out["dask_rankonly_fixed"] = (
                BernsteinFusion(base=None, degree=3).fit(Sd, yd).predict_proba(St)
            )
            out["dask_default_fixed"] = (
                BernsteinFusion(lam=1e-3, degree=6).fit(Sd, yd).predict_proba(St)
            )
            out["dask_exact"] = BernsteinFusion(ecdf_knots=None).fit(Sd, yd).predict_proba(St)
            Sr, Str = S.copy(), St.copy()
            Sr[:, 1], Str[:, 1] = -Sr[:, 1], -Str[:, 1]
            out["dask_reversed"] = (
                BernsteinFusion().fit(da.from_array(Sr, chunks=(5000, 3)), yd).predict_proba(Str)
            )
            out["dask_shared"] = (
                BernsteinFusion(multiclass="shared")
                .fit(Smd, da.from_array(yy[:n], chunks=1000))
                .predict_proba(Smc[n:])
            )
    return out


def compare(a_path: str, b_path: str) -> int:
    a, b = np.load(a_path), np.load(b_path)
    bad = 0
    for k in sorted(set(a) | set(b)):
        if k not in a or k not in b:
            print(f"{k:16s} only in one file")
            bad += 1
            continue
        same = np.array_equal(a[k], b[k], equal_nan=a[k].dtype.kind == "f")
        if same:
            diff = "identical"
        elif a[k].shape != b[k].shape:  # a state with other cross-validation scores
            diff = f"differs: shape {a[k].shape} -> {b[k].shape}"
        else:
            diff = f"differs: max {np.max(np.abs(a[k] - b[k])):.3g}"
        print(f"{k:16s} {diff}")
        bad += not same
    print("all bit-identical" if not bad else f"{bad} differ")
    return int(bad > 0)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    save = sub.add_parser("save")
    save.add_argument("path")
    save.add_argument("--dask", action="store_true")
    cmp = sub.add_parser("compare")
    cmp.add_argument("before")
    cmp.add_argument("after")
    args = p.parse_args()
    if args.command == "compare":
        return compare(args.before, args.after)
    out = predictions(args.dask)
    np.savez(args.path, **out)
    print(f"saved {len(out)} predictions to {args.path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
