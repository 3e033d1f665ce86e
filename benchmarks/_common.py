"""Helpers shared by the benchmark scripts (run them from the repository root as
``python benchmarks/<script>.py``; Python puts this folder on the path)."""

from __future__ import annotations

import argparse
import time
import traceback

import numpy as np

import fusion


def median_time(fn, repeats: int) -> float:
    """Median wall-clock seconds of ``repeats`` calls of ``fn()``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def weight_problems(S, y, kw: dict, P: np.ndarray, w: np.ndarray) -> list[str]:
    """What a sweep's trial finds wrong with its fit's weights: predictions ``P`` at ``S``
    of ``fusion.fit(S, y, sample_weight=w, **kw)`` that move when the weights are scaled by
    7.3, or when the rows of zero weight are dropped (1e-8). (``kw`` may hold
    ``sample_weight`` itself: the refits replace it.)"""

    def refit(rows, weights):
        model = fusion.fit(S[rows], y[rows], **{**kw, "sample_weight": weights})
        return model.predict_proba(S)

    problems = []
    scaled = refit(slice(None), w * 7.3)
    if np.abs(P - scaled).max() > 1e-8:
        problems.append(f"weights x 7.3 change predictions by {np.abs(P - scaled).max():.2g}")
    kept = w > 0
    try:
        d = np.abs(P - refit(kept, w[kept])).max()
    except ValueError as err:
        return [*problems, f"refused without the zero-weight rows only: {err}"[:160]]
    if d > 1e-8:
        problems.append(f"zero-weight rows change predictions by {d:.2g}")
    return problems


def run_sweep(description: str, draw, trial, describe) -> int:
    """The command line of a random-configuration sweep (``--trials``, ``--seed``,
    ``--only``): trial ``t`` draws its configuration with ``draw(rng)`` from the generator
    seeded by ``(seed, t)`` (so it is repeatable alone) and runs ``trial(cfg, rng)``, which
    returns its problems (a lone ``"refused: ..."`` is a clear refusal, not a failure); an
    exception is a failure with where it was raised. Prints one line per trial
    (``describe(t, cfg)`` names it) and a summary; returns 1 on any failure."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--trials", type=int, default=40)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--only", type=int, nargs="*", help="rerun these trials alone")
    args = ap.parse_args()
    failures = refusals = 0
    start = time.perf_counter()
    for t in args.only or range(args.trials):
        rng = np.random.default_rng([args.seed, t])
        cfg = draw(rng)
        label = describe(t, cfg)
        t0 = time.perf_counter()
        try:
            problems = trial(cfg, rng)
        except Exception as err:  # noqa: BLE001 - every failure is reported, the sweep goes on
            where = traceback.extract_tb(err.__traceback__)[-1]
            problems = [f"{type(err).__name__}: {err} ({where.filename}:{where.lineno})"]
        took = time.perf_counter() - t0
        refused = len(problems) == 1 and problems[0].startswith("refused")
        refusals += refused
        failures += bool(problems) and not refused
        for p in problems:
            print(f"{label}: {p}", flush=True)
        if not problems:
            print(f"{label}: ok ({took:.1f} s)", flush=True)
    count = len(args.only or range(args.trials))
    print(f"\n{count} trials, {failures} failed, {refusals} refused, "
          f"{time.perf_counter() - start:.0f} s")  # fmt: skip
    return 1 if failures else 0
