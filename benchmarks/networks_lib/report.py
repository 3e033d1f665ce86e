"""The report of the real-network benchmark: per case a table of every contender, the paired
differences over seeds on the CIFAR-10 cases, and the check against issue 26's targets;
and its CSV / JSON files.

Per case a contender's figure is its mean over seeds (one seed on a given split). A peer
skipped on an M = 1 case as "the same model as ts" (``ts_members``, ``loglinear``) counts
with TS's figures there when means over cases are compared.

Targets (issue 26), with ``peers`` the fitted peers (``uncalibrated`` is not one):

* log-loss: the default's at most the best peer's + :data:`LOG_LOSS_MARGIN`, every case;
* top-label ECE: at most ``min(TS, SMS)`` in every case, and its mean over cases at most
  :data:`MEAN_FACTOR` times the best peer's mean over cases;
* top-label smooth ECE: likewise;
* classwise ECE: at most TS's, every case.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from harness.markdown import num, seconds, table

from .contenders import DEFAULT, REFERENCE
from .runner import ECE_BINS, METRIC_NAMES, METRICS, RunResult

__all__ = [
    "LOG_LOSS_MARGIN",
    "MEAN_FACTOR",
    "SAME_AS_TS",
    "case_means",
    "paired",
    "targets",
    "markdown",
    "write",
    "read",
]

#: The default's log-loss may exceed the best peer's by this much.
LOG_LOSS_MARGIN = 0.0005

#: The default's mean ECE over cases must be at most this times the best peer's.
MEAN_FACTOR = 0.85

#: The skip reason's start that means "this peer is TS here".
SAME_AS_TS = "M = 1: the same model as ts"

_COLUMNS = (*METRICS, "accuracy", "fit_seconds")


def case_means(df):
    """Per (case, method): the mean over seeds of each metric and accuracy, the median fit
    seconds, the number of seeds, the status (``ok``, ``skipped`` or ``failed``) and the
    skip reason or first error.

    Parameters
    ----------
    df : pandas.DataFrame
        The fit rows.

    Returns
    -------
    pandas.DataFrame
    """
    import pandas as pd

    out = []
    for (case, method), g in df.groupby(["case", "method"], sort=False):
        ok = g[g["status"] == "ok"]
        row = {
            "case": case,
            "method": method,
            "label": g["label"].iloc[0],
            "family": g["family"].iloc[0],
            "seeds": len(ok),
        }
        if (g["status"] == "skipped").all():
            row["status"] = "skipped"
        elif len(ok) < len(g):
            row["status"] = "failed"
        else:
            row["status"] = "ok"
        bad = g[g["status"] != "ok"]
        row["reason"] = str(bad["error"].iloc[0]) if len(bad) else ""
        for col in _COLUMNS:
            values = ok[col]
            if col == "fit_seconds":
                row[col] = float(values.median()) if len(values) else math.nan
            else:
                row[col] = float(values.mean()) if len(values) else math.nan
        out.append(row)
    return pd.DataFrame(out)


def _with_ts_stand_ins(means):
    """``means`` where a peer skipped as the same model as TS takes TS's figures."""
    means = means.copy()
    for i, r in means.iterrows():
        if r["status"] == "skipped" and str(r["reason"]).startswith(SAME_AS_TS):
            ts = means[(means["case"] == r["case"]) & (means["method"] == REFERENCE)]
            if len(ts) and ts["status"].iloc[0] == "ok":
                for col in (*METRICS, "accuracy"):
                    means.at[i, col] = ts[col].iloc[0]
                means.at[i, "status"] = "ok"
    return means


def paired(df):
    """Paired differences default - peer over the seeds of the random-split cases.

    Returns
    -------
    pandas.DataFrame
        Per (case, method, metric): ``mean``, ``sd`` (sample, NaN for one seed), ``wins``
        (seeds where the default is lower) and ``seeds``.
    """
    import pandas as pd

    out = []
    random = df[df["split"].isin(["random", "pooled"]) & (df["status"] == "ok")]
    for case, g in random.groupby("case", sort=False):
        ref = g[g["method"] == DEFAULT].set_index("seed")
        for method, h in g.groupby("method", sort=False):
            if method == DEFAULT:
                continue
            h = h.set_index("seed")
            common = ref.index.intersection(h.index)
            for metric in METRICS:
                d = (ref.loc[common, metric] - h.loc[common, metric]).to_numpy(dtype=float)
                out.append(
                    {
                        "case": case,
                        "method": method,
                        "metric": metric,
                        "mean": float(d.mean()) if d.size else math.nan,
                        "sd": float(d.std(ddof=1)) if d.size > 1 else math.nan,
                        "wins": int((d < 0).sum()),
                        "seeds": int(d.size),
                    }
                )
    return pd.DataFrame(out)


def _value(means, case: str, method: str, metric: str) -> float:
    r = means[(means["case"] == case) & (means["method"] == method) & (means["status"] == "ok")]
    return float(r[metric].iloc[0]) if len(r) else math.nan


def _peers(means) -> list[str]:
    return list(dict.fromkeys(means.loc[means["family"] == "peer", "method"]))


def targets(means) -> tuple[list[dict], list[str]]:
    """Issue 26's targets, checked on the per-case means.

    Returns
    -------
    checks : list of dict
        One per (target, case) and one per target over cases: ``target``, ``case``
        (``"mean over cases"`` for those), ``default``, ``bound``, ``against`` (what the bound
        is made of) and ``result`` (``"PASS"``, ``"FAIL"`` or ``"n/a"`` when the bound cannot
        be formed).
    notes : list of str
        What was missing.
    """
    means = _with_ts_stand_ins(means)
    cases = list(dict.fromkeys(means["case"]))
    peers = _peers(means)
    notes = []
    checks: list[dict] = []

    def check(target: str, case: str, value: float, bound: float, against: str) -> None:
        if math.isnan(value) or math.isnan(bound):
            result = "n/a"
        else:
            result = "PASS" if value <= bound else "FAIL"
        checks.append(
            {
                "target": target,
                "case": case,
                "default": value,
                "bound": bound,
                "against": against,
                "result": result,
            }
        )

    def best_peer(case: str, metric: str) -> tuple[float, str]:
        values = {p: _value(means, case, p, metric) for p in peers}
        values = {p: v for p, v in values.items() if not math.isnan(v)}
        if not values:
            return math.nan, "no peer"
        p = min(values, key=values.get)
        return values[p], p

    def ts_sms(case: str, metric: str) -> tuple[float, str]:
        values = {p: _value(means, case, p, metric) for p in (REFERENCE, "sms")}
        values = {p: v for p, v in values.items() if not math.isnan(v)}
        if not values:
            return math.nan, "no TS, no SMS"
        p = min(values, key=values.get)
        return values[p], p + ("" if "sms" in values else " (SMS not fitted)")

    for case in cases:
        best, who = best_peer(case, "log_loss")
        check(
            "log-loss <= best peer + 0.0005",
            case,
            _value(means, case, DEFAULT, "log_loss"),
            best + LOG_LOSS_MARGIN,
            who,
        )
    for metric in ("top_label_ece", "top_label_smece"):
        name = METRIC_NAMES[metric]
        for case in cases:
            bound, who = ts_sms(case, metric)
            check(f"{name} <= min(TS, SMS)", case, _value(means, case, DEFAULT, metric), bound, who)
        full = [p for p in peers if all(not math.isnan(_value(means, c, p, metric)) for c in cases)]
        own = [_value(means, c, DEFAULT, metric) for c in cases]
        if full:
            peer_means = {
                p: sum(_value(means, c, p, metric) for c in cases) / len(cases) for p in full
            }
            p = min(peer_means, key=peer_means.get)
            check(
                f"{name}: mean <= {MEAN_FACTOR} x best peer's mean",
                "mean over cases",
                sum(own) / len(own),
                MEAN_FACTOR * peer_means[p],
                f"{MEAN_FACTOR} x {p} ({peer_means[p]:.4f})",
            )
        else:
            check(
                f"{name}: mean <= {MEAN_FACTOR} x best peer",
                "mean over cases",
                math.nan,
                math.nan,
                "",
            )
    for case in cases:
        check(
            "classwise ECE <= TS",
            case,
            _value(means, case, DEFAULT, "classwise_ece"),
            _value(means, case, REFERENCE, "classwise_ece"),
            REFERENCE,
        )
    if "sms" not in peers or all(
        math.isnan(_value(means, c, "sms", "top_label_ece")) for c in cases
    ):
        notes.append("SMS was not fitted: the ECE bounds are TS's alone.")
    return checks, notes


def _milli(mean: float, sd: float, wins: int, seeds: int) -> str:
    if math.isnan(mean):
        return "—"
    text = f"{1000 * mean:+.2f}"
    if not math.isnan(sd):
        text += f" ± {1000 * sd:.2f}"
    return f"{text} ({wins}/{seeds})"


def _case_lines(means, splits, case: str) -> list[str]:
    rows = means[means["case"] == case]
    info = splits[splits["case"] == case].iloc[0]
    seeds = sorted(set(splits.loc[splits["case"] == case, "seed"]))
    how = (
        f"fitted on the {info['n_fuse']:,} val rows, scored on the {info['n_test']:,} test rows"
        if info["split"] == "given"
        else f"{'val and test rows pooled, ' if info['split'] == 'pooled' else ''}"
        f"stratified {'random splits' if info['split'] == 'pooled' else 'halves'} "
        f"({info['n_fuse']:,} fusion / {info['n_test']:,} test rows), "
        f"mean over {len(seeds)} seed(s) {', '.join(str(s) for s in seeds)}"
    )
    members = " + ".join(str(info[f"member{m + 1}"]) for m in range(int(info["M"])))
    lines = [
        f"### {case}: {members} (M = {info['M']}, C = {info['C']}, {info['scores']})",
        "",
        f"{how}.",
        "",
    ]
    header = ["contender", *(METRIC_NAMES[m] for m in (*METRICS, "accuracy")), "fit s"]
    body = []
    for _, r in rows.iterrows():
        if r["status"] == "skipped":
            body.append([f"`{r['method']}`", f"skipped: {r['reason']}"] + [""] * (len(header) - 2))
            continue
        cells = [num(r[m]) for m in (*METRICS, "accuracy")]
        label = f"`{r['method']}`" + (" **(failed)**" if r["status"] == "failed" else "")
        body.append([label, *cells, seconds(r["fit_seconds"])])
    lines += table(header, body)
    failed = rows[rows["status"] == "failed"]
    for _, r in failed.iterrows():
        lines += ["", f"`{r['method']}` failed: {r['reason']}"]
    return lines + [""]


def _paired_lines(pairs, case: str) -> list[str]:
    if "case" not in pairs:  # no peer was fitted (--methods default)
        return []
    rows = pairs[pairs["case"] == case]
    if rows.empty:
        return []
    header = ["default - peer (x 1e-3)", *(METRIC_NAMES[m] for m in METRICS)]
    body = []
    for method, g in rows.groupby("method", sort=False):
        g = g.set_index("metric")
        body.append(
            [f"`{method}`"]
            + [
                _milli(g.at[m, "mean"], g.at[m, "sd"], int(g.at[m, "wins"]), int(g.at[m, "seeds"]))
                for m in METRICS
            ]
        )
    return [
        f"Paired over seeds, {case}: mean ± sd of the difference, (seeds where the default is "
        "lower):",
        "",
        *table(header, body),
        "",
    ]


def _compact_lines(means) -> list[str]:
    cases = list(dict.fromkeys(means["case"]))
    methods = list(dict.fromkeys(means["method"]))
    lines = []
    for metric in ("log_loss", "top_label_ece", "top_label_smece", "classwise_ece"):
        body = []
        for method in methods:
            cells = []
            for case in cases:
                r = means[(means["case"] == case) & (means["method"] == method)]
                if not len(r) or r["status"].iloc[0] == "skipped":
                    cells.append(
                        "= ts"
                        if len(r) and str(r["reason"].iloc[0]).startswith(SAME_AS_TS)
                        else "—"
                    )
                else:
                    cells.append(num(r[metric].iloc[0]))
            body.append([f"`{method}`", *cells])
        lines += [f"**{METRIC_NAMES[metric]}**", "", *table(["contender", *cases], body), ""]
    return lines


def _target_lines(checks: list[dict], notes: list[str]) -> list[str]:
    body = [
        [
            c["target"],
            c["case"],
            num(c["default"]),
            num(c["bound"]),
            c["against"],
            f"**{c['result']}**" if c["result"] == "FAIL" else c["result"],
        ]
        for c in checks
    ]
    targets_ = list(dict.fromkeys(c["target"] for c in checks))
    overall = []
    for t in targets_:
        results = [c["result"] for c in checks if c["target"] == t]
        verdict = "FAIL" if "FAIL" in results else "n/a" if "n/a" in results else "PASS"
        fails = results.count("FAIL")
        overall.append(
            [
                t,
                verdict
                + (f" ({fails} of {len(results)} failed)" if fails else f" ({len(results)})"),
            ]
        )
    lines = [
        "Each target, overall (PASS only when every case passes):",
        "",
        *table(["target", "result"], overall),
        "",
        *table(["target", "case", "default", "bound", "bound from", "result"], body),
        "",
    ]
    return lines + [f"- {n}" for n in notes] + ([""] if notes else [])


def markdown(result: RunResult | None, command: str, *, df=None, splits=None, notes=None) -> str:
    """The whole report: the command, the targets, the compact tables, then per case its
    table and (random splits) the paired differences.

    Either a :class:`RunResult` or the DataFrames ``df`` (fit rows) and ``splits`` (one row
    per case and seed) with ``notes`` (rebuilding from files).
    """
    import pandas as pd

    if result is not None:
        df = pd.DataFrame(result.rows)
        splits = pd.DataFrame(result.splits)
        notes = result.notes
    means = case_means(df)
    pairs = paired(df)
    checks, target_notes = targets(means)
    lines = [
        "## Real networks (CIFAR): fusion.fit against post-hoc calibrators",
        "",
        f"`{command}`",
        "",
        f"Metrics on the test rows; ECEs with {ECE_BINS} bins (equal width unless said equal "
        "mass), smooth ECE of Blasiok & Nakkiran (`fusion.metrics.top_label_smooth_ece`). "
        "Peers of an ensemble work on the members' mean log-probability (SVS / SMS are given "
        "its softmax); for M = 1 on the network's own log-softmax.",
        "",
        *[f"- {n}" for n in notes or []],
        "",
        "### Targets (issue 26)",
        "",
        *_target_lines(checks, target_notes),
        "### All cases (mean over seeds)",
        "",
        *_compact_lines(means),
    ]
    for case in dict.fromkeys(means["case"]):
        lines += _case_lines(means, splits, case)
        lines += _paired_lines(pairs, case)
    return "\n".join(lines).rstrip() + "\n"


def write(result: RunResult, out: str, command: str) -> list[Path]:
    """Write ``report.md``, ``fits.csv``, ``splits.csv``, ``means.csv``, ``paired.csv``,
    ``targets.csv`` and ``run.json`` to the folder ``out``; returns their paths."""
    import pandas as pd

    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    df = pd.DataFrame(result.rows)
    means = case_means(df)
    checks, _ = targets(means)
    files = {
        "fits.csv": df,
        "splits.csv": pd.DataFrame(result.splits),
        "means.csv": means,
        "paired.csv": paired(df),
        "targets.csv": pd.DataFrame(checks),
    }
    paths = []
    for name, frame in files.items():
        frame.to_csv(folder / name, index=False)
        paths.append(folder / name)
    info = {"command": command, "notes": result.notes, "elapsed": result.elapsed}
    (folder / "run.json").write_text(json.dumps(info, indent=2), encoding="utf-8")
    (folder / "report.md").write_text(markdown(result, command), encoding="utf-8")
    paths += [folder / "run.json", folder / "report.md"]
    (folder / "fits.partial.csv").unlink(missing_ok=True)
    return paths


def read(folder: str) -> str:
    """The report rebuilt from the files :func:`write` left in ``folder``."""
    import pandas as pd

    path = Path(folder)
    info = json.loads((path / "run.json").read_text(encoding="utf-8"))
    df = pd.read_csv(path / "fits.csv", keep_default_na=False, na_values=[""])
    splits = pd.read_csv(path / "splits.csv")
    for col in ("error", "detail", "warning"):  # empty texts come back as NaN
        if col in df:
            df[col] = df[col].fillna("").astype(str)
    return markdown(None, info["command"], df=df, splits=splits, notes=info["notes"])
