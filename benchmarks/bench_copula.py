"""CopulaFusion: fit and prediction time, discrete scores, where the time goes, KDE libraries.

Usage::

    python benchmarks/bench_copula.py [--repeats 7] [--predict-rows 600000]
        [--tables fit families bandwidth predict discrete cost kde]

Prints Markdown tables: medians over ``--repeats`` runs measured in this process. References
run on the same data in the same process: the copula step done through ``copulae``'s
log-densities (same optimizer, the five families ``copulae`` has), the paper's reported
CopulaFusion training times (Wang & Liu 2020, Sec. 5.3: 1.486 s at n = 500, 1.756 s at
n = 1000; MATLAB, different machine, so only indicative), logistic regression and isotonic
regression (scikit-learn), and statsmodels' kernel density estimators. ``copulae`` and
``statsmodels`` come with the ``test`` extra. The ``discrete`` table imports nothing but the
public API, so it also runs against older versions of the package.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from _common import median_time, table
from scipy import stats

from fusion import BernsteinFusion, CopulaFusion
from fusion.metrics import binned_ece

PAPER_SECONDS = {500: 1.486, 1000: 1.756}


def simulate(n: int, seed: int = 0):
    """Class 1: Clayton copula, Beta margins; class 0: rotated Gumbel, Beta margins."""
    from fusion.copula.families import sample

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

    from fusion.copula.family import maximize_1d as _maximize_1d

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
    from fusion.copula.fit import fit_family

    rows = []
    for n in (500, 1000, 5000, 20_000):
        S, y = simulate(n)
        reps = args.repeats if n <= 5000 else max(3, args.repeats // 2)
        t_fit = median_time(lambda S=S, y=y: CopulaFusion().fit(S, y), reps)
        model = CopulaFusion().fit(S, y)
        U = model.ecdf_.transform(S)
        P = model._pseudo_observations(1, U[y == 1])[0]
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
    from fusion.copula import families as fam
    from fusion.copula.fit import fit_family

    S, y = simulate(1000)
    model = CopulaFusion().fit(S, y)
    P = model._pseudo_observations(1, model.ecdf_.transform(S)[y == 1])[0]
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


# -- discrete scores ---------------------------------------------------------------------------

#: Latent class-conditional bivariate normals: class -> (mean, correlation).
LATENT = {0: ((0.0, 0.0), 0.5), 1: ((1.0, 0.8), 0.3)}
BINARY_CUT = 0.5
FIVE_CUTS = np.array([-0.6, 0.0, 0.5, 1.1])


def simulate_discrete(kind: str, n: int, seed: int):
    """Two binary scorers (thresholded latent normals), or a 5-valued and a continuous one."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.4).astype(int)
    Z = np.empty((n, 2))
    for label, (mu, rho) in LATENT.items():
        rows = y == label
        Z[rows] = rng.multivariate_normal(mu, [[1, rho], [rho, 1]], size=int(rows.sum()))
    if kind == "binary":
        return (Z > BINARY_CUT).astype(float), y
    return np.column_stack([np.searchsorted(FIVE_CUTS, Z[:, 0]), Z[:, 1]]).astype(float), y


def discrete_truth(kind: str, S: np.ndarray, prior: float = 0.4) -> np.ndarray:
    """The exact P(y = 1 | s) of :func:`simulate_discrete`."""
    log_joint = []
    for label, (mu, rho) in LATENT.items():
        if kind == "binary":
            edges = np.array([-np.inf, BINARY_CUT, np.inf])
            mvn = stats.multivariate_normal([0, 0], [[1, rho], [rho, 1]])
            cells, inverse = np.unique(S.astype(int), axis=0, return_inverse=True)
            cell_p = [mvn.cdf(edges[c + 1] - mu, lower_limit=edges[c] - mu) for c in cells]
            p = np.asarray(cell_p)[inverse.reshape(-1)]
        else:
            edges = np.r_[-np.inf, FIVE_CUTS, np.inf]
            k, z2 = S[:, 0].astype(int), S[:, 1] - mu[1]
            m, sd = mu[0] + rho * z2, np.sqrt(1 - rho * rho)
            cell = stats.norm.cdf((edges[k + 1] - m) / sd) - stats.norm.cdf((edges[k] - m) / sd)
            p = stats.norm.pdf(z2) * cell
        log_joint.append(np.log(prior if label else 1 - prior) + np.log(p))
    return 1.0 / (1.0 + np.exp(log_joint[0] - log_joint[1]))


def bench_discrete(args) -> str:
    from sklearn.isotonic import IsotonicRegression
    from sklearn.linear_model import LogisticRegression

    methods = {
        "CopulaFusion": lambda S, y, T: CopulaFusion().fit(S, y).predict_proba(T)[:, 1],
        "BernsteinFusion": lambda S, y, T: (
            BernsteinFusion(random_state=0).fit(S, y).predict_proba(T)[:, 1]
        ),
        "isotonic on the mean score": lambda S, y, T: (
            IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip")
            .fit(S.mean(1), y)
            .predict(T.mean(1))
        ),
        "logistic regression": lambda S, y, T: (
            LogisticRegression().fit(S, y).predict_proba(T)[:, 1]
        ),
        "true posterior": lambda S, y, T: discrete_truth(kind, T),
    }
    rows = []
    for kind, label in (("binary", "two 0/1 scorers"), ("five", "5-valued + continuous")):
        res = {name: [] for name in methods}
        for seed in range(5):
            S, y = simulate_discrete(kind, 2000, seed)
            T, y_test = simulate_discrete(kind, 50_000, 100 + seed)
            exact = discrete_truth(kind, T)
            for name, method in methods.items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    p = method(S, y, T)
                res[name].append((binned_ece(y_test, p), np.mean(np.abs(p - exact))))
        for name, values in res.items():
            v = 100 * np.mean(values, axis=0)
            rows.append([label, name, f"{v[0]:.2f}", f"{v[1]:.2f}"])
    return table(
        ["scores (n = 2,000; 5 seeds)", "method", "ECE % (50,000 test rows)", "mean |p - truth| %"],
        rows,
    )


# -- where the time goes -----------------------------------------------------------------------


def bench_cost(args) -> str:
    from sklearn.linear_model import LogisticRegression

    from fusion.copula.dependence import tau_correlation
    from fusion.copula.estimator import estimated_fit_seconds
    from fusion.copula.fit import fit_family

    rows = []
    families = ("gaussian", "student", "clayton", "gumbel", "frank")
    for n, M in ((10_000, 8), (100_000, 8)):
        rng = np.random.default_rng(0)
        y = rng.integers(0, 2, n)
        S = rng.multivariate_normal(np.zeros(M), 0.4 + 0.6 * np.eye(M), size=n)
        S += y[:, None] * np.linspace(0.5, 1.5, M)
        w = rng.exponential(size=n)
        reps = 3 if n <= 10_000 else 1
        t_lr = median_time(lambda S=S, y=y: LogisticRegression().fit(S, y), reps)
        t_fit = median_time(lambda S=S, y=y: CopulaFusion().fit(S, y), reps)
        t_wfit = median_time(lambda S=S, y=y, w=w: CopulaFusion().fit(S, y, sample_weight=w), reps)
        model = CopulaFusion(families="independence").fit(S, y)
        P = model._pseudo_observations(1, model.ecdf_.transform(S)[y == 1])[0]
        ones = np.ones(P.shape[0])
        parts = [
            f"{f} {median_time(lambda f=f, P=P, o=ones: fit_family(f, P, o), reps):.2f}"
            for f in families
        ]
        t_tau = median_time(lambda P=P, w=w, y=y: tau_correlation(P, w[y == 1]), reps)
        parts.append(f"weighted Kendall's tau (28 pairs) {t_tau:.2f}")
        est = [
            sum(estimated_fit_seconds(int((y == c).sum()), M, families, wt) for c in (0, 1))
            for wt in (False, True)
        ]
        rows.append(
            [
                f"{n:,} x {M}",
                f"{t_lr:.2f}",
                f"{t_fit:.2f} (est. {est[0]:.1f})",
                f"{t_wfit:.2f} (est. {est[1]:.1f})",
                "; ".join(parts),
            ]
        )
    return table(
        [
            "n x M",
            "LogisticRegression s",
            "CopulaFusion fit s",
            "same, weighted s",
            "class 1 alone, s: per family (unweighted) and the weighted tau",
        ],
        rows,
    )


# -- KDE libraries -----------------------------------------------------------------------------


def bench_kde(args) -> str:
    from statsmodels.nonparametric.kde import KDEUnivariate
    from statsmodels.nonparametric.kernel_density import KDEMultivariate

    from fusion.copula import kde

    def sm_fft(x, h):
        k = KDEUnivariate(x)
        k.fit(kernel="gau", bw=h, fft=True)
        return k

    def sm_weighted(x, w, h, G):
        k = KDEUnivariate(x)
        k.fit(kernel="gau", bw=h, fft=False, weights=w, gridsize=G)
        return k

    rows = []
    rng = np.random.default_rng(0)
    for n in (1_000, 100_000):
        x = rng.beta(1.0, 2.0, n)  # density 2 (1 - x): 2 at 0, 0 at 1
        w = rng.exponential(size=n)
        h = kde.bandwidth_rule(x, np.ones(n), "silverman")
        G = kde.grid_size(h)
        t_ours = median_time(lambda a=(x, w, h, G): kde.reflected_kde(*a), args.repeats)
        log_pdf, _ = kde.reflected_kde(x, np.ones(n), h, G)
        t_fft = median_time(lambda a=(x, h): sm_fft(*a), args.repeats)
        t_w = median_time(lambda a=(x, w, h, G): sm_weighted(*a), 1)
        k = sm_fft(x, h)
        inside = (k.support >= 0) & (k.support <= 1)
        mass = np.trapezoid(k.density[inside], k.support[inside])
        rows.append(
            [
                f"{n:,}",
                f"{t_ours * 1e3:.1f}",
                f"{t_fft * 1e3:.1f} (unweighted only)",
                f"{t_w * 1e3:.0f}",
                f"{np.exp(log_pdf[0]):.2f} / {k.evaluate(np.array([0.0]))[0]:.2f}",
                f"1.000 / {mass:.3f}",
            ]
        )
    out = table(
        [
            "n (Beta(1, 2) sample on [0, 1])",
            "ours: reflected KDE, weighted, ms",
            "KDEUnivariate(fft=True) ms",
            "KDEUnivariate(weights=, fft=False) ms",
            "f(0) (truth 2): ours / statsmodels",
            "mass in [0, 1]: ours / statsmodels",
        ],
        rows,
    )
    rows = []
    for n in (500, 2_000):
        x = rng.beta(2.0, 5.0, n)
        t_cv = median_time(lambda x=x: kde.cv_bandwidth(x, np.ones_like(x)), args.repeats)
        start = time.perf_counter()
        km = KDEMultivariate([x], var_type="c", bw="cv_ml")
        t_km = time.perf_counter() - start
        h_cv = kde.cv_bandwidth(x, np.ones_like(x))
        rows.append(
            [f"{n:,}", f"{t_cv * 1e3:.0f}", f"{t_km * 1e3:.0f}", f"{h_cv:.4f} / {km.bw[0]:.4f}"]
        )
    out += "\n\n" + table(
        [
            "n (Beta(2, 5))",
            "ours: bandwidth='cv' ms",
            "KDEMultivariate(bw='cv_ml') ms",
            "h: ours (reflected) / statsmodels (plain)",
        ],
        rows,
    )
    return out


TABLES = {
    "fit": ("CopulaFusion fit time (M = 2, default settings)", bench_fit),
    "families": ("Per-family maximum-likelihood fit", bench_families),
    "bandwidth": ("Bandwidth selection", bench_bandwidth),
    "predict": ("Prediction", bench_predict),
    "discrete": ("Discrete scores: calibration", bench_discrete),
    "cost": ("Where the time goes at M = 8", bench_cost),
    "kde": ("KDE libraries: statsmodels against fusion.copula.kde", bench_kde),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--predict-rows", type=int, default=600_000)
    parser.add_argument("--tables", nargs="+", choices=list(TABLES), default=list(TABLES))
    args = parser.parse_args()
    CopulaFusion().fit(*simulate_discrete("five", 500, 0))  # warm-up (imports, caches)
    for name in args.tables:
        title, fn = TABLES[name]
        print(f"## {title}\n")
        print(fn(args))
        print()


if __name__ == "__main__":
    main()
