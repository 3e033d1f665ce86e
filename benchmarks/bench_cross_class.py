"""How much a cross-class term would close the log-loss gap to structured matrix scaling (SMS)
on the CIFAR-10 networks of ``bench_networks.py`` (issue 26), and whether monotonicity would
bind it.

A study, not a contender of the package: on the fusion rows, the default's fused
log-probabilities are cross-fitted (5 folds, ``fusion.fit`` on four, predicted on the fifth);
a matrix ``B_m`` (C x C) per network is fitted on top of them by the multinomial likelihood,
``log P + sum_m B_m z_m`` with ``z_m`` the network's centred log-probabilities, under a ridge
``(lam / 2) |B|^2`` whose ``lam`` is chosen by 5-fold cross-validation on those rows; then
``B`` is applied to the default fitted on all fusion rows, at the test rows.

The default is monotone in every network's score for each class; with ``B`` added to its
logits before the top-label correction it stays so when, for every network ``m`` and classes
``j != k``, ``B_m[j, k] - B_m[k, k] + (R_k - R_j) / C <= c_m`` (``R``: the row sums of
``B_m``; ``c_m``: the model's ``base_coef_``). Then a rise of the network's logit for ``k``
raises the fused logit of ``k`` at least as much as that of any ``j`` (the model's own part
contributes at least ``c_m`` to the difference, away from the log-probability floors), which
the top-label correction's proof needs. The column ``slack`` is the largest left side minus
``c_m``: negative means the unconstrained fit already satisfies the bound, so the constrained
fit would be the same.

    FUSION_DATA_DIR=../shared/datasets OMP_NUM_THREADS=1 python benchmarks/bench_cross_class.py

``--before-correction`` also places the matrix before the default's top-label correction:
the default without the correction cross-fitted, the matrix fitted on it, and the
correction chosen by cross-validation on the matrix's held-out output.

``--diagonal`` gives the stage per-class slopes and biases on the fused logits as well,
``(1 + a) * eta + b + sum_m B_m z_m`` (ridge ``lam / 100`` on ``a`` and ``b``): the
design the study's first run pointed to. The bound then reads ``... <= min(1 + a) c_m``.

``--dominant`` constrains the matrices instead so that nothing is borrowed from the model's
own part: ``B_m[k, k] - B_m[l, k] - (R_k - R_l) / C >= 0`` for every ``m`` and ``k != l``
(``scipy.optimize.minimize``'s SLSQP; the slopes ``1 + a >= 0``). A rise of a network's
logit for ``k`` moves its centred logits by ``e_k - 1 / C``, whatever the other classes'
probabilities, so the matrix's term then moves class ``k``'s logit at least as much as any
other's on its own, and the model's part does the same at every floor pattern: the stage is
monotone for every finite logit and every positive probability, floors or not. Its slopes
then act on the default's class-shared logits before the softmax (each non-decreasing in
the network's score for its class and non-increasing in the others'; per-class slopes on
log-probabilities would not keep that), fitted before the top-label correction
(``--before-correction`` gives the number that counts). ``--no-sms`` skips the references.

References beside it: SMS itself (on the networks' mean log-probability, as in
``bench_networks.py``); SMS fitted on the default's cross-fitted probabilities and applied to
its test probabilities (``SMS on default``), a cross-class stage on the *fused*
log-probabilities, whose monotonicity nothing bounds; and SVS the same way (``SVS on
default``: per-class slopes, non-negative in practice, and biases on the fused
log-probabilities, a map that keeps monotonicity when every slope is non-negative).
``drops`` counts, on 500 test rows, the (row, network, class) triples where raising that
network's logit for the class by 0.1 lowers the class's probability: the default has none;
a cross-class term that keeps the guarantee must have none either.

SMS needs the optional extra ``networks`` (see ``bench_networks.py``); without it its columns
are left empty.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from networks_lib.contenders import (
    ProbmetricsCalibrator,
    member_log_probabilities,
    probmetrics_missing,
)
from networks_lib.data import CASES, data_dir, load_split
from scipy.optimize import minimize
from scipy.special import log_softmax, softmax
from sklearn.model_selection import StratifiedKFold

import fusion
from fusion.metrics import top_label_ece

LAMS = (1e-3, 1e-2, 3e-2, 1e-1, 3e-1, 1.0, 3.0)
STUDIED = ("c10_lenet5", "c10_wideresnet16_4", "c10_ensemble")


def centred(S: np.ndarray) -> np.ndarray:
    """Every network's log-probabilities (n, M, C), centred in each row."""
    Z = np.stack([member_log_probabilities(S[:, m]) for m in range(S.shape[1])], axis=1)
    return Z - Z.mean(axis=2, keepdims=True)


def _parts(theta: np.ndarray, M: int, C: int):
    """``theta`` as the slopes' excess ``a`` and biases ``b`` (C each, empty without
    ``--diagonal``) and the matrices ``B`` (M, C, C)."""
    d = theta.shape[0] - M * C * C
    return theta[: d // 2], theta[d // 2 : d], theta[d:].reshape(M, C, C)


def logits(eta: np.ndarray, Z: np.ndarray, theta: np.ndarray) -> np.ndarray:
    M, C = Z.shape[1], Z.shape[2]
    a, b, B = _parts(theta, M, C)
    out = eta + np.einsum("nmk,mjk->nj", Z, B)
    if a.size:
        out += a * eta + b
    return out


def objective(theta, eta, Z, y, lam):
    n, M, C = y.shape[0], Z.shape[1], Z.shape[2]
    a, b, B = _parts(theta, M, C)
    # the diagonal's few parameters get a ridge a hundred times lighter than the matrix's
    ridge = np.r_[np.full(a.size + b.size, lam / 100), np.full(B.size, lam)]
    L = log_softmax(logits(eta, Z, theta), axis=1)
    f = -L[np.arange(n), y].mean() + 0.5 * theta @ (ridge * theta)
    G = np.exp(L)
    G[np.arange(n), y] -= 1.0
    G /= n
    g = np.einsum("nj,nmk->mjk", G, Z).ravel()
    if a.size:
        g = np.r_[(G * eta).sum(axis=0), G.sum(axis=0), g]
    return f, g + ridge * theta


def dominance(M: int, C: int, d: int) -> np.ndarray:
    """Rows ``A`` with ``A @ theta >= 0`` exactly when, for every network ``m`` and classes
    ``k != l``, ``B_m[k, k] - B_m[l, k] - (R_k - R_l) / C >= 0``: a rise of the network's
    logit for ``k`` (its centred logits move by ``e_k - 1 / C``) moves the matrix's term for
    ``k`` at least as much as that for any ``l``, with nothing borrowed from the model's own
    part (``d``: the slopes' and biases' count before the matrices in ``theta``)."""
    rows = []
    for m in range(M):
        for k in range(C):
            for j in range(C):
                if j == k:
                    continue
                r = np.zeros((C, C))
                r[k, k] += 1.0
                r[j, k] -= 1.0
                r[k, :] -= 1.0 / C
                r[j, :] += 1.0 / C
                full = np.zeros(d + M * C * C)
                full[d + m * C * C : d + (m + 1) * C * C] = r.ravel()
                rows.append(full)
    return np.array(rows)


def fit_matrix(eta, Z, y, lam, diagonal: bool = False, dominant: bool = False) -> np.ndarray:
    M, C = Z.shape[1], Z.shape[2]
    d = 2 * C if diagonal else 0
    x0 = np.zeros(M * C**2 + d)
    if not dominant:
        res = minimize(objective, x0, args=(eta, Z, y, lam), jac=True, method="L-BFGS-B")
        return res.x
    A = dominance(M, C, d)
    bounds = [(-1.0, None)] * (d // 2) + [(None, None)] * (x0.size - d // 2)
    res = minimize(
        objective, x0, args=(eta, Z, y, lam), jac=True, method="SLSQP", bounds=bounds,
        constraints=[{"type": "ineq", "fun": lambda t: A @ t, "jac": lambda t: A}],
        options={"maxiter": 500, "ftol": 1e-10},
    )  # fmt: skip
    return res.x


def fused_logits(model, S: np.ndarray, raw: bool) -> np.ndarray:
    """The default's fused logits at ``S``: with ``raw`` its class-shared logits before the
    softmax (``bias + sum_m c_m z_m + g_m(u_m)``; each non-decreasing in the network's score
    for its class and non-increasing in the others', so per-class slopes on them keep
    monotonicity), else its log-probabilities (after any top-label correction)."""
    if not raw:
        return np.log(model.predict_proba(S))
    from fusion.bernstein.multiclass.model import MemberTerms
    from fusion.bernstein.scale import log_probabilities

    sm = model._shared_model()
    eta = np.zeros((S.shape[0], S.shape[2])) + sm.bias
    for m in range(S.shape[1]):
        z = log_probabilities(S[:, m], sm.scales[m], sm.floors[m])
        MemberTerms(sm.lookups[m], sm.coefs[m], sm.c[m]).add(eta, z)
    return eta


def log_loss(logp: np.ndarray, y: np.ndarray) -> float:
    return float(-logp[np.arange(y.shape[0]), y].mean())


def canonical(S: np.ndarray, probabilities: bool) -> np.ndarray:
    """``S`` in double precision, probabilities renormalized: the point the raised copies
    differ from in the raised entry only (float32 input would otherwise differ everywhere
    by its rounding)."""
    if not probabilities:
        return np.array(S, dtype=float)
    members = [softmax(member_log_probabilities(S[:, m]), axis=1) for m in range(S.shape[1])]
    return np.stack(members, axis=1)


def raised(S: np.ndarray, m: int, k: int, step: float, probabilities: bool) -> np.ndarray:
    """Canonical ``S`` with network ``m``'s logit for class ``k`` raised by ``step``."""
    out = S.copy()
    if probabilities:
        L = np.log(S[:, m])
        L[:, k] += step
        out[:, m] = softmax(L, axis=1)
    else:
        out[:, m, k] += step
    return out


def drops(predict, S: np.ndarray, probabilities: bool, step: float = 0.1) -> int:
    """Triples (row, network, class) where raising the network's logit for the class lowers
    the class's probability under ``predict``."""
    S = canonical(S, probabilities)
    base = predict(S)
    count = 0
    for m in range(S.shape[1]):
        for k in range(S.shape[2]):
            P = predict(raised(S, m, k, step, probabilities))
            count += int(np.sum(P[:, k] < base[:, k] - 1e-12))
    return count


def corrected(eta_heldout, fold, y, eta_test) -> np.ndarray:
    """The top-label correction (fusion/bernstein/multiclass/toplabel.py) chosen by
    cross-validation on held-out logits ``eta_heldout`` (test folds ``fold``), as the model
    chooses it, applied to ``eta_test``."""
    from fusion.bernstein.multiclass import toplabel
    from fusion.bernstein.plan import TOP_LABEL_GRID

    sample = toplabel.sample_rows(softmax(eta_heldout, 1), y, np.ones(y.shape[0]), fold)
    top = toplabel.choose(sample, TOP_LABEL_GRID)
    return toplabel.reweight(softmax(eta_test, 1), np.asarray(top.theta))


def before_correction(
    S, y, St, yt, seed: int, lam: float, diagonal: bool = False, dominant: bool = False
) -> tuple[float, float]:
    """Test log-loss and top-label ECE of the matrix placed *before* the top-label
    correction: the default without it cross-fitted, the matrix (penalty ``lam``) fitted on
    it and cross-fitted again, then the correction chosen on that held-out output."""
    eta = np.empty((y.shape[0], S.shape[2]))
    folds = StratifiedKFold(5, shuffle=True, random_state=seed).split(S[:, 0, 0], y)
    for fit, held in folds:
        m = fusion.fit(S[fit], y[fit], top_label_penalty=np.inf)
        eta[held] = fused_logits(m, S[held], dominant)
    plain = fusion.fit(S, y, top_label_penalty=np.inf)
    Z, Zt = centred(S), centred(St)
    inner = StratifiedKFold(5, shuffle=True, random_state=seed + 1).split(Z[:, 0, 0], y)
    out, fold = np.empty_like(eta), np.empty(y.shape[0], dtype=int)
    for f, (fit, held) in enumerate(inner):
        out[held] = logits(
            eta[held], Z[held], fit_matrix(eta[fit], Z[fit], y[fit], lam, diagonal, dominant)
        )
        fold[held] = f
    theta = fit_matrix(eta, Z, y, lam, diagonal, dominant)
    P = corrected(out, fold, y, logits(fused_logits(plain, St, dominant), Zt, theta))
    return log_loss(np.log(P), yt), top_label_ece(yt, P)


def one(
    case,
    seed: int,
    sms: bool,
    before: bool = False,
    diagonal: bool = False,
    dominant: bool = False,
) -> dict:
    split = load_split(case, seed, data_dir())
    S, y, St, yt = split.S_fuse, split.y_fuse, split.S_test, split.y_test
    probabilities = case.scores == "probabilities"
    eta = np.empty((y.shape[0], split.C))
    folds = StratifiedKFold(5, shuffle=True, random_state=seed).split(S[:, 0, 0], y)
    for fit, held in folds:
        eta[held] = np.log(fusion.fit(S[fit], y[fit]).predict_proba(S[held]))
    model = fusion.fit(S, y)
    eta_t = np.log(model.predict_proba(St))
    Z, Zt = centred(S), centred(St)
    cv = []
    inner = list(StratifiedKFold(5, shuffle=True, random_state=seed + 1).split(Z[:, 0, 0], y))
    for lam in LAMS:
        total = 0.0
        for fit, held in inner:
            theta = fit_matrix(eta[fit], Z[fit], y[fit], lam, diagonal, dominant)
            total += log_loss(log_softmax(logits(eta[held], Z[held], theta), axis=1), y[held])
        cv.append(total / len(inner))
    best = int(np.argmin(cv))
    if best in (0, len(LAMS) - 1):
        warnings.warn(
            f"{case.name} seed {seed}: lam at the grid's edge ({LAMS[best]})", stacklevel=2
        )
    theta = fit_matrix(eta, Z, y, LAMS[best], diagonal, dominant)
    a, _, B = _parts(theta, S.shape[1], split.C)
    # with slopes 1 + a the model's part of the difference is at least min(1 + a) c_m
    least = 1.0 + (a.min() if a.size else 0.0)
    off = ~np.eye(split.C, dtype=bool)
    slack = -np.inf
    for m in range(S.shape[1]):
        R = B[m].sum(axis=1)
        rise = B[m] - np.diag(B[m])[None, :] + (R[None, :] - R[:, None]) / split.C
        slack = max(slack, float(rise[off].max() - least * model.base_coef_[m]))
    logp_mat = log_softmax(logits(eta_t, Zt, theta), axis=1)
    row = {
        "case": case.name,
        "seed": seed,
        "lam": LAMS[best],
        "slack": slack,
        "ll_default": log_loss(eta_t, yt),
        "ll_matrix": log_loss(logp_mat, yt),
        "ece_default": top_label_ece(yt, np.exp(eta_t)),
        "ece_matrix": top_label_ece(yt, np.exp(logp_mat)),
        "ll_sms": np.nan,
        "ece_sms": np.nan,
        "ll_sms_fused": np.nan,
        "ece_sms_fused": np.nan,
        "ll_svs_fused": np.nan,
        "ece_svs_fused": np.nan,
    }
    if before:
        row["ll_before"], row["ece_before"] = before_correction(
            S, y, St, yt, seed, LAMS[best], diagonal, dominant
        )
    check = St[:500]

    def with_matrix(X):
        return np.exp(log_softmax(logits(np.log(model.predict_proba(X)), centred(X), theta), 1))

    row["drops_default"] = drops(model.predict_proba, check, probabilities)
    row["drops_matrix"] = drops(with_matrix, check, probabilities)
    row["drops_sms_fused"] = row["drops_svs_fused"] = np.nan
    if sms:
        from probmetrics.calibrators import get_calibrator

        P = ProbmetricsCalibrator("sms").fit(S, y).predict_proba(St)
        row["ll_sms"] = log_loss(np.log(P), yt)
        row["ece_sms"] = top_label_ece(yt, P)
        for kind in ("sms", "svs"):
            stage = get_calibrator(kind)
            stage.fit(np.exp(eta), y)
            Q = stage.predict_proba(np.exp(eta_t))
            row[f"ll_{kind}_fused"] = log_loss(np.log(Q), yt)
            row[f"ece_{kind}_fused"] = top_label_ece(yt, Q)
            row[f"drops_{kind}_fused"] = drops(
                lambda X, stage=stage: stage.predict_proba(model.predict_proba(X)),
                check,
                probabilities,
            )
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", nargs="+", default=list(STUDIED))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument(
        "--before-correction",
        action="store_true",
        help="also place the matrix before the top-label correction (refitted on its output)",
    )
    parser.add_argument(
        "--diagonal",
        action="store_true",
        help="the stage also gets per-class slopes and biases on the fused logits",
    )
    parser.add_argument(
        "--dominant",
        action="store_true",
        help="constrain the matrices to column dominance (nothing borrowed from the model)",
    )
    parser.add_argument("--no-sms", action="store_true", help="skip the SMS references")
    args = parser.parse_args(argv)
    sms = probmetrics_missing() is None and not args.no_sms
    rows = []
    for case in CASES:
        if case.name not in args.cases:
            continue
        for seed in args.seeds:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", category=UserWarning, module="fusion")
                rows.append(
                    one(case, seed, sms, args.before_correction, args.diagonal, args.dominant)
                )
            r = rows[-1]
            print(
                f"{r['case']} seed {seed}: lam {r['lam']:g}, slack {r['slack']:+.3f}, log-loss "
                f"{r['ll_default']:.4f} -> {r['ll_matrix']:.4f} (SMS {r['ll_sms']:.4f})",
                flush=True,
            )
    print(
        "\n| case | seeds | log-loss default | + matrix | SVS on default | SMS on default | SMS "
        "| Δ matrix (x 1e-3) | gap to SMS closed by matrix | top-label ECE default | + matrix "
        "| SVS on default | SMS on default | SMS | largest slack "
        "| drops default / matrix / SVS on default / SMS on default |"
    )
    print("| --- |" + " ---: |" * 15)
    for name in dict.fromkeys(r["case"] for r in rows):
        sel = [r for r in rows if r["case"] == name]

        def mean(key, sel=sel):
            return float(np.mean([r[key] for r in sel]))

        d = np.array([r["ll_matrix"] - r["ll_default"] for r in sel]) * 1e3
        sd = d.std(ddof=1) if d.size > 1 else np.nan
        gap = mean("ll_default") - mean("ll_sms")
        closed = (mean("ll_default") - mean("ll_matrix")) / gap if gap > 0 else np.nan
        total = {k: int(np.sum([r[f"drops_{k}"] for r in sel])) for k in ("default", "matrix")}
        fused = np.sum([r["drops_sms_fused"] for r in sel])
        diagonal = np.sum([r["drops_svs_fused"] for r in sel])
        print(
            f"| {name} | {len(sel)} | {mean('ll_default'):.4f} | {mean('ll_matrix'):.4f} | "
            f"{mean('ll_svs_fused'):.4f} | {mean('ll_sms_fused'):.4f} | {mean('ll_sms'):.4f} | "
            f"{d.mean():+.2f} ± {sd:.2f} | {closed:.0%} | {mean('ece_default'):.4f} | "
            f"{mean('ece_matrix'):.4f} | {mean('ece_svs_fused'):.4f} | "
            f"{mean('ece_sms_fused'):.4f} | {mean('ece_sms'):.4f} | "
            f"{max(r['slack'] for r in sel):+.3f} | "
            f"{total['default']} / {total['matrix']} / {diagonal:g} / {fused:g} |"
        )
    if args.before_correction:
        print("\n| case | log-loss + matrix before the correction | top-label ECE |")
        print("| --- | ---: | ---: |")
        for name in dict.fromkeys(r["case"] for r in rows):
            sel = [r for r in rows if r["case"] == name]
            ll = np.mean([r["ll_before"] for r in sel])
            ece = np.mean([r["ece_before"] for r in sel])
            print(f"| {name} | {ll:.4f} | {ece:.4f} |")
    checked = 500 * len(rows)
    print(f"\n(drops: out of 500 rows x M x C per split, {checked:,} rows x M x C in all)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
