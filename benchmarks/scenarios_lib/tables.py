"""Markdown tables and CSV files of a scorer-benchmark run."""

from __future__ import annotations

import json
import math
from pathlib import Path

from harness.markdown import compared_cells, milli, num, seconds, table, worse_better

from .catalog import HOLDOUT, MAIN, Scenario
from .contenders import REFERENCE
from .paired import METRICS, cell_stats, summary
from .runner import ECE_BINS, RunConfig, RunResult
from .scorers import describe

__all__ = ["fits_frame", "markdown", "write", "read"]

_NAMES = {"brier": "Brier", "log_loss": "log-loss", "ece": "ECE"}


def fits_frame(result: RunResult):
    """Every fit as a DataFrame (the ``fits.csv`` of ``--out``)."""
    import pandas as pd

    return pd.DataFrame(result.rows)


def _scenario_table(result: RunResult) -> list[str]:
    import pandas as pd

    sc = pd.DataFrame(result.scores)
    by_name = {s.name: s for s in result.config.scenarios}
    rows = []
    for name, g in sc.groupby("scenario", sort=False):
        s: Scenario = by_name[name]
        aucs = " / ".join(f"{g[f'auc_{j + 1}'].mean():.3f}" for j in range(s.M))
        scorers = "; ".join(
            f"{describe(x.kind)}, {x.features} features, {x.n_train:,} rows" for x in s.scorers
        )
        rows.append(
            [
                f"`{name}`",
                s.dataset,
                s.role,
                str(s.M),
                scorers,
                ", ".join(f"{n:,}" for n in result.config.cell_sizes(s)),
                f"{int(g['n_test'].iloc[0]):,}",
                f"{100 * g['positive_rate'].mean():.1f} %",
                aucs,
            ]
        )
    return table(
        ["scenario", "data", "role", "M", "scorers (kind, features, training rows)",
         "n_fuse", "test rows", "positives", "scorer test AUC"],
        rows,
        "lllrlrrrr",
    )  # fmt: skip


def _summary_table(summ, labels: dict[str, str]) -> list[str]:
    rows = []
    for _, r in summ.iterrows():
        worst = [
            "—"
            if math.isnan(r[f"{m}_worst"])
            else f"{milli(r[f'{m}_worst'])} ({r[f'{m}_worst_cell']})"
            for m in METRICS
        ]
        rows.append(
            [
                labels.get(r["method"], r["method"]),
                compared_cells(r),
                *worse_better(r, METRICS),
                num(r["ece_mean"]),
                milli(r["ece_mean_diff"]),
                *worst,
                seconds(r["fit_median"]),
                "—" if math.isnan(r["fit_ratio_median"]) else f"{r['fit_ratio_median']:.1f}",
            ]
        )
    return table(
        ["method", "cells", "Brier W / B", "log-loss W / B", "ECE W / B", "mean ECE",
         "mean ΔECE", "worst ΔBrier", "worst Δlog-loss", "worst ΔECE", "median fit s",
         "fit / LR"],
        rows,
        "lrrrrrrlllrr",
    )  # fmt: skip


def _cell_label(scen: str, n: int) -> str:
    return f"`{scen}` {n:,}"


def _metric_table(cells, methods: list[str], labels: dict[str, str], metric: str) -> list[str]:
    rows = []
    for (scen, n), g in cells.groupby(["scenario", "n_fuse"], sort=False):
        g = g.set_index("method")
        row = [
            _cell_label(scen, n),
            num(g.loc[REFERENCE, metric]) if REFERENCE in g.index else "—",
        ]
        for m in methods:
            if m == REFERENCE:
                continue
            if m not in g.index:
                row.append("")
                continue
            r = g.loc[m]
            if r["status"] == "skipped":
                row.append("skip")
            elif r["status"] == "failed":
                row.append("fail")
            else:
                row.append(milli(r[f"{metric}_diff"], r[f"{metric}_flag"]))
        rows.append(row)
    heads = [labels.get(m, m) for m in methods if m != REFERENCE]
    return table(["cell (scenario, n_fuse)", f"{labels.get(REFERENCE, REFERENCE)}", *heads], rows)


def _time_table(cells, methods: list[str], labels: dict[str, str]) -> list[str]:
    rows = []
    for (scen, n), g in cells.groupby(["scenario", "n_fuse"], sort=False):
        g = g.set_index("method")
        row = [_cell_label(scen, n)]
        for m in methods:
            if m not in g.index:
                row.append("")
            elif g.loc[m, "status"] == "skipped":
                row.append("skip")
            else:
                row.append(seconds(g.loc[m, "fit_median"]))
        rows.append(row)
    return table(["cell (scenario, n_fuse)", *[labels.get(m, m) for m in methods]], rows)


def _focus_table(cells, method: str) -> list[str]:
    """One method against the reference, cell by cell: the reference's values, the method's
    mean paired differences, its median fit time and the ratio to the reference's."""
    ref = cells[cells["method"] == REFERENCE].set_index(["scenario", "n_fuse"])
    rows = []
    for _, r in cells[cells["method"] == method].iterrows():
        key = (r["scenario"], r["n_fuse"])
        q = ref.loc[key] if key in ref.index else None
        row = [_cell_label(*key)]
        for m in METRICS:
            row.append(num(q[m]) if q is not None else "—")
            if r["status"] != "ok":
                row.append("skip" if r["status"] == "skipped" else "fail")
            else:
                row.append(milli(r[f"{m}_diff"], r[f"{m}_flag"]))
        ratio = r["fit_ratio"]
        row += [seconds(r["fit_median"]), "—" if math.isnan(ratio) else f"{ratio:.0f}"]
        rows.append(row)
    return table(
        ["cell (scenario, n_fuse)", "LR Brier", "Δ Brier", "LR log-loss", "Δ log-loss",
         "LR ECE", "Δ ECE", "fit s", "fit / LR"],
        rows,
    )  # fmt: skip


def markdown(result: RunResult, command: str | None = None) -> str:
    """The report: scenarios, the summary per method, per-metric paired differences, fit
    times, notes."""

    fits = fits_frame(result)
    cells = cell_stats(fits, REFERENCE)
    methods = list(dict.fromkeys(fits["method"])) if len(fits) else []
    labels = dict(result.labels)
    for m in methods:  # merged rows of an earlier run keep their own label
        labels.setdefault(m, fits.loc[fits["method"] == m, "label"].iloc[0])
    summ = summary(cells, REFERENCE)
    cfg = result.config
    ref = labels.get(REFERENCE, REFERENCE)
    lines = [
        f"Scenario benchmark, set `{cfg.set_name}`: {len(cfg.scenarios)} scenarios, seeds "
        f"{', '.join(str(s) for s in cfg.seeds)}, {len(cells.groupby(['scenario', 'n_fuse']))} "
        f"cells (scenario x n_fuse); {len(fits)} fits in {result.elapsed / 60:.1f} min.",
        "",
    ]
    if command:
        lines += ["```", command, "```", ""]
    lines += ["Scenarios (scorer test AUC: mean over seeds):", "", *_scenario_table(result), ""]
    lines += [
        f"Summary against {ref} (the reference). W / B: cells where the method is clearly "
        "worse / clearly better than the reference, i.e. worse (better) on every seed and the "
        "mean paired difference larger than the sd of the paired differences. mean ECE: over "
        "the cells the method ran on; Δ: method minus reference, mean over seeds, in units of "
        "1e-3 (worst: the largest mean Δ and its cell). Fit times: median over seeds, then "
        "over cells; fit / LR is the median over cells of the per-cell ratio.",
        "",
        *_summary_table(summ, labels),
        "",
    ]
    focus = [m for m in methods if m == "default" or labels[m].endswith("(candidate)")]
    for m in focus:
        lines += [
            f"{labels[m]} against {ref}, per cell: the reference's value, the mean paired "
            "difference (x 1e-3; **W** clearly worse, B clearly better), median fit seconds "
            "and their ratio to the reference's.",
            "",
            *_focus_table(cells, m),
            "",
        ]
    for metric in METRICS:
        lines += [
            f"{_NAMES[metric]}: the reference's value, and each method's mean paired difference "
            "to it (x 1e-3; **W** clearly worse, B clearly better; skip: not fitted at this "
            "size).",
            "",
            *_metric_table(cells, methods, labels, metric),
            "",
        ]
    lines += ["Median fit seconds per cell:", "", *_time_table(cells, methods, labels), ""]
    notes = list(result.notes)
    notes.append(
        f"Metrics on the test rows: Brier score, log-loss (probabilities clipped to "
        f"[1e-15, 1 - 1e-15]), ECE with {ECE_BINS} equal-width bins of the predicted "
        "probability, each bin's |positive rate - mean prediction| weighted by its share of "
        "the rows (fusion.metrics.binned_ece)."
    )
    if len(fits):
        bad = fits[fits["status"] == "error"]
        for (m, err), g in bad.groupby(["method", "error"], sort=False):
            notes.append(f"{labels.get(m, m)} failed in {len(g)} fit(s): {err}")
        ok = fits[fits["status"] == "ok"]
        for m, g in ok.groupby("method", sort=False):
            lo = g["p_min"].min()
            if lo <= 1e-12 or g["p_max"].max() >= 1 - 1e-12:
                notes.append(
                    f"{labels.get(m, m)}: smallest / largest test prediction "
                    f"{lo:.3g} / {g['p_max'].max():.12g}."
                )
    if len(cfg.seeds) < 2:
        notes.append("One seed: no paired sd, so no cell can be flagged W or B.")
    lines += [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"


def write(result: RunResult, out: str | Path, command: str | None = None) -> list[Path]:
    """Write ``report.md``, ``fits.csv``, ``cells.csv``, ``summary.csv``, ``scores.csv`` and
    ``run.json`` (what :func:`read` needs to rebuild the report)."""
    import pandas as pd

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    fits = fits_frame(result)
    cells = cell_stats(fits, REFERENCE)
    names = ("report.md", "fits.csv", "cells.csv", "summary.csv", "scores.csv", "run.json")
    paths = [out / n for n in names]
    paths[0].write_text(markdown(result, command), encoding="utf-8")
    fits.to_csv(paths[1], index=False)
    cells.to_csv(paths[2], index=False)
    summary(cells, REFERENCE).to_csv(paths[3], index=False)
    pd.DataFrame(result.scores).to_csv(paths[4], index=False)
    cfg = result.config
    run_info = {
        "set": cfg.set_name,
        "scenarios": [s.name for s in cfg.scenarios],
        "seeds": list(cfg.seeds),
        "sizes": None if cfg.sizes is None else list(cfg.sizes),
        "max_n": dict(cfg.max_n),
        "elapsed": result.elapsed,
        "notes": list(result.notes),
        "command": command,
    }
    paths[5].write_text(json.dumps(run_info, indent=1) + "\n", encoding="utf-8")
    return paths


def read(out: str | Path) -> tuple[RunResult, str | None]:
    """Rebuild a run's result from the files :func:`write` left in ``out`` (to redo its
    report, e.g. after merging or with a newer report layout). Returns it and the command."""
    import pandas as pd

    out = Path(out)
    fits = pd.read_csv(out / "fits.csv")
    for col in ("error", "warning", "note", "selected", "label"):
        if col in fits:
            fits[col] = fits[col].fillna("")
    info = json.loads((out / "run.json").read_text(encoding="utf-8"))
    by_name = {s.name: s for s in MAIN + HOLDOUT}
    config = RunConfig(
        scenarios=tuple(by_name[n] for n in info["scenarios"]),
        seeds=tuple(info["seeds"]),
        set_name=info["set"],
        sizes=None if info["sizes"] is None else tuple(info["sizes"]),
        max_n=dict(info["max_n"]),
    )
    labels = dict(zip(fits["method"], fits["label"], strict=True))
    result = RunResult(
        rows=fits.to_dict("records"),
        scores=pd.read_csv(out / "scores.csv").to_dict("records"),
        labels=labels,
        config=config,
        notes=list(info["notes"]),
        elapsed=float(info["elapsed"]),
    )
    return result, info.get("command")
