"""Speed and memory of the default multi-class fit (issue 21, ``--speed-only`` runs only this).

All on synthetic members (:mod:`.synthetic`), fits alternating in one process, medians over
``repeats``:

* (a) ``fusion.fit`` against temperature scaling of the averaged log-probabilities
  (averaging plus the bounded 1-D search, timed as one fit) at C = 1,000, M = 4,
  n = 10,000, float32 probabilities (target: ratio <= 60);
* (b) ``fusion.fit`` against multinomial ``LogisticRegression(max_iter=1000)`` on the
  stacked log-probabilities, unscaled and standardized, at C = 10, M = 3, n = 5,000
  (target: ratio <= 10);
* (c) peak memory of the default fit over the input's size at C = 1,000 (float32 input), in
  a subprocess: its maximum resident set size (``resource.getrusage``) minus its resident
  size after loading the data;
* (d) fit seconds of the default against ``n x C`` (C = 100 and 1,000): seconds per million
  (row, class) pairs, which is flat when the time grows linearly;
* (e) ImageNet scale (issue 26): C = 1,000, M = 5, n = 50,000, float32 probabilities, one
  fit in a subprocess as (c): its seconds (target 90) and peak memory over the input's size
  (target 3).

(c) and (e) also time the fitted model's ``predict_proba`` on every row against temperature
scaling's (after the peak memory is read).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .contenders import DefaultFusion, TemperatureOfAverage, log_probabilities
from .synthetic import SYNTHETIC_SETUPS, generate, speed_setup

__all__ = [
    "TS_TARGET",
    "LR_TARGET",
    "FULL",
    "QUICK",
    "StackedLR",
    "alternate",
    "memory_child",
    "measure_memory",
    "measure",
    "memory_lines",
    "imagenet_lines",
    "speed_lines",
]

#: The issues' targets: fit / TS fit at C = 1,000 and fit / LR at C = 10; at ImageNet scale
#: the fit's seconds and its peak memory over the input's size.
TS_TARGET = 60.0
LR_TARGET = 10.0
IMAGENET_SECONDS = 90.0
IMAGENET_MEMORY = 3.0

#: Sizes of a full run and of --quick.
FULL = {
    "ts": {"C": 1000, "M": 4, "n": 10_000},
    "lr": {"C": 10, "M": 3, "n": 5_000},
    "memory": {"C": 1000, "M": 4, "n": 10_000},
    "scaling": {100: (2_500, 5_000, 10_000, 20_000), 1000: (2_500, 5_000, 10_000)},
    "imagenet": {"C": 1000, "M": 5, "n": 50_000},
}
QUICK = {
    "ts": {"C": 100, "M": 4, "n": 2_000},
    "lr": {"C": 10, "M": 3, "n": 1_000},
    "memory": {"C": 100, "M": 4, "n": 2_000},
    "scaling": {100: (1_000, 2_000)},
}


class StackedLR:
    """``LogisticRegression(max_iter=1000)`` (multinomial, lbfgs, ``C = 1``) on the stacked
    ``M * C`` clipped log-probabilities, standardized when ``scale``."""

    def __init__(self, scale: bool):
        self.scale = scale

    def fit(self, S, y):
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        L = log_probabilities(S)
        lr = LogisticRegression(max_iter=1000)
        self.model_ = make_pipeline(StandardScaler(), lr) if self.scale else lr
        self.model_.fit(L.reshape(L.shape[0], -1), y)
        return self


def alternate(
    factories: dict[str, Callable[[], object]], S, y, repeats: int
) -> dict[str, list[float]]:
    """Fit seconds of every factory's estimator on ``(S, y)``, the factories alternating,
    ``repeats`` rounds."""
    times: dict[str, list[float]] = {k: [] for k in factories}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(repeats):
            for key, make in factories.items():
                t0 = time.perf_counter()
                make().fit(S, y)
                times[key].append(time.perf_counter() - t0)
    return times


def _median(values) -> float:
    return float(np.median(values))


def _data(C: int, M: int, n: int, members=None):
    setup = speed_setup(C, M, n) if members is None else speed_setup(C, M, n, members)
    ss = generate(setup, 0)
    return ss.S_pool, ss.y_pool


def _status_bytes(field: str) -> int:
    """A ``kB`` field of ``/proc/self/status`` (``VmRSS``, ``VmHWM``) in bytes; 0 where there
    is none (not Linux)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _reset_peak() -> bool:
    """Reset the process's peak resident size (``VmHWM``, ``ru_maxrss``) to its current one
    (Linux >= 4.0: ``echo 5 > /proc/self/clear_refs``); False where that is not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def memory_child(path: str, threads: int = 1) -> dict:
    """In a fresh process: load ``S`` and ``y`` from ``path`` (``.npz``), fit the default once
    on 500 rows (imports and caches the fit loads lazily), reset the peak resident size,
    fit the default on every row; return the input's bytes, the resident size before the
    fit and the peak during it (``peak_reset`` says whether the peak could be reset; if not
    it is the process's peak since it started). Then, after the peak is read, the seconds of
    the fitted model's ``predict_proba`` on every row and of temperature scaling's (of the
    averaged log-probabilities, fitted on the first 5,000 rows), its reference."""
    import resource

    from threadpoolctl import threadpool_limits

    import fusion

    with np.load(path) as z:
        S, y = z["S"], z["y"]
    with threadpool_limits(limits=threads), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # Column j holds class j; the 500-row warm-up fit misses most classes, which
        # fusion refuses to guess when the labels could number the columns from 0 or 1.
        classes = np.arange(S.shape[-1])
        fusion.fit(S[:500], y[:500], classes=classes)
        reset = _reset_peak()
        rss_loaded = _status_bytes("VmRSS")
        t0 = time.perf_counter()
        model = fusion.fit(S, y, classes=classes)
        seconds = time.perf_counter() - t0
        peak = _status_bytes("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        t0 = time.perf_counter()
        model.predict_proba(S)
        predict_seconds = time.perf_counter() - t0
        ts = TemperatureOfAverage().fit(S[:5000], y[:5000])
        t0 = time.perf_counter()
        ts.predict_proba(S)
        ts_predict_seconds = time.perf_counter() - t0
    return {
        "input_bytes": int(S.nbytes),
        "dtype": str(S.dtype),
        "rss_loaded": int(rss_loaded),
        "peak_rss": int(peak),
        "peak_reset": reset,
        "seconds": seconds,
        "predict_seconds": predict_seconds,
        "ts_predict_seconds": ts_predict_seconds,
        "fusion": str(Path(fusion.__file__).resolve().parent),
    }


def measure_memory(C: int, M: int, n: int, threads: int = 1) -> dict:
    """:func:`memory_child` in a subprocess on float32 synthetic members; adds ``extra``
    (peak minus the resident size before the fit) and ``ratio`` (``extra`` over the
    input's bytes)."""
    S, y = _data(C, M, n)
    S = S.astype(np.float32, copy=False)
    import fusion

    here = Path(__file__).resolve().parent.parent
    # the child imports the same fusion as this process (not the one of its working folder)
    fusion_root = Path(fusion.__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scores.npz"
        np.savez(path, S=S, y=y)
        del S
        code = (
            "import json, sys; sys.path[:0] = [sys.argv[4], sys.argv[1]]; "
            "from multiclass_lib.speed import memory_child; "
            "print(json.dumps(memory_child(sys.argv[2], int(sys.argv[3]))))"
        )
        env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
        done = subprocess.run(
            [sys.executable, "-c", code, str(here), str(path), str(threads), str(fusion_root)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
    if done.returncode != 0:
        return {"C": C, "M": M, "n": n, "error": done.stderr.strip()[-300:]}
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out["extra"] = max(out["peak_rss"] - out["rss_loaded"], 0)
    out["ratio"] = out["extra"] / out["input_bytes"]
    out.update(C=C, M=M, n=n)
    return out


def measure(
    repeats: int = 3, quick: bool = False, threads: int = 1, log=None, sizes: dict | None = None
) -> dict:
    """Every measurement of the module doc at :data:`FULL`'s sizes (``quick``:
    :data:`QUICK`'s; ``sizes``: these); ``log(text)`` is told what is being measured."""
    sizes = sizes or (QUICK if quick else FULL)
    say = log or (lambda text: None)
    out: dict = {"repeats": repeats, "quick": quick}

    a = sizes["ts"]
    say(f"speed (a): fusion.fit vs TS at C={a['C']}, n={a['n']}")
    S, y = _data(a["C"], a["M"], a["n"])
    times = alternate({"default": DefaultFusion, "ts": TemperatureOfAverage}, S, y, repeats)
    out["ts"] = {
        **a,
        "dtype": str(S.dtype),
        "times": times,
        "default_seconds": _median(times["default"]),
        "ts_seconds": _median(times["ts"]),
    }
    out["ts"]["ratio"] = out["ts"]["default_seconds"] / out["ts"]["ts_seconds"]

    scaling = []
    for C, ns in sizes["scaling"].items():
        S_all, y_all = (S, y) if C == a["C"] and max(ns) <= a["n"] else _data(C, 4, max(ns))
        for n in ns:
            say(f"speed (d): fusion.fit at C={C}, n={n}")
            if C == a["C"] and n == a["n"] and S_all is S:
                fits = times["default"]
            else:
                fits = alternate({"default": DefaultFusion}, S_all[:n], y_all[:n], repeats)
                fits = fits["default"]
            sec = _median(fits)
            scaling.append(
                {
                    "C": C,
                    "M": 4,
                    "n": n,
                    "times": fits,
                    "seconds": sec,
                    "per_million_pairs": sec / (n * C / 1e6),
                }
            )
    out["scaling"] = scaling
    del S, y

    b = sizes["lr"]
    say(f"speed (b): fusion.fit vs LogisticRegression at C={b['C']}, n={b['n']}")
    S, y = _data(b["C"], b["M"], b["n"], SYNTHETIC_SETUPS[0].members)
    times = alternate(
        {
            "default": DefaultFusion,
            "lr_raw": lambda: StackedLR(False),
            "lr_scaled": lambda: StackedLR(True),
        },
        S,
        y,
        repeats,
    )
    out["lr"] = {**b, "times": times, **{f"{k}_seconds": _median(v) for k, v in times.items()}}
    for key in ("lr_raw", "lr_scaled"):
        out["lr"][f"ratio_{key}"] = out["lr"]["default_seconds"] / out["lr"][f"{key}_seconds"]

    c = sizes.get("memory")  # None: not measured
    if c:
        say(f"speed (c): peak memory at C={c['C']}, n={c['n']}")
    out["memory"] = measure_memory(c["C"], c["M"], c["n"], threads) if c else None
    e = sizes.get("imagenet")
    if e:
        say(f"speed (e): ImageNet scale, C={e['C']}, M={e['M']}, n={e['n']}")
    out["imagenet"] = measure_memory(e["C"], e["M"], e["n"], threads) if e else None
    return out


def _s(x: float) -> str:
    return f"{x:.3f}" if x < 1 else f"{x:.2f}" if x < 10 else f"{x:.1f}"


def _mark(ratio: float, target: float) -> str:
    return f"{ratio:.1f} ({'meets' if ratio <= target else 'above'} target <= {target:g})"


def memory_lines(mem: dict | None) -> list[str]:
    """The (c) paragraph of :func:`measure_memory`'s result (nothing for None)."""
    if mem is None:
        return []
    if "error" in mem:
        return [f"(c) memory: the subprocess failed: {mem['error']}", ""]
    how = (
        "peak RSS during the fit (reset before it)"
        if mem["peak_reset"]
        else "the process's peak RSS (could not be reset: an upper bound)"
    )
    return [
        f"(c) Peak memory of the default fit at C = {mem['C']:,}, M = {mem['M']}, "
        f"n = {mem['n']:,} ({mem['dtype']} input of {mem['input_bytes'] / 2**20:.0f} MiB), "
        f"in a subprocess that has loaded the data and fitted 500 rows once: {how} minus "
        f"the RSS before it = {mem['extra'] / 2**20:.0f} MiB, **{mem['ratio']:.2f} x the "
        f"input** (fit {_s(mem['seconds'])} s). " + _predict_sentence(mem),
        "",
    ]


def speed_lines(speed: dict | None) -> list[str]:
    """The Markdown section of :func:`measure`'s result."""
    if not speed:
        return []
    reps = speed["repeats"]
    lines = ["## Speed and memory", ""]
    if speed.get("quick"):
        lines += ["(--quick: small sizes, not the issue's.)", ""]
    a = speed["ts"]
    lines += [
        f"Synthetic members (float32 probabilities unless stated), fits alternating in one "
        f"process, median of {reps}.",
        "",
        "| measurement | C | M | n | fusion.fit s | reference | reference s | ratio |",
        "| --- | ---: | ---: | ---: | ---: | --- | ---: | --- |",
        f"| (a) vs TS of the average | {a['C']:,} | {a['M']} | {a['n']:,} | "
        f"{_s(a['default_seconds'])} | TS fit (average + 1-D search) | {_s(a['ts_seconds'])} | "
        f"{_mark(a['ratio'], TS_TARGET)} |",
    ]
    b = speed["lr"]
    for key, name in (("lr_raw", "unscaled"), ("lr_scaled", "standardized")):
        lines.append(
            f"| (b) vs LogisticRegression | {b['C']:,} | {b['M']} | {b['n']:,} | "
            f"{_s(b['default_seconds'])} | LogisticRegression(max_iter=1000), {name} | "
            f"{_s(b[f'{key}_seconds'])} | {_mark(b[f'ratio_{key}'], LR_TARGET)} |"
        )
    lines += ["", "(b) uses syn10's members (float64 probabilities).", ""]
    lines += memory_lines(speed["memory"])
    lines += [
        "(d) Fit seconds of the default against n x C (M = 4):",
        "",
        "| C | n | pairs n x C | fit s | s per million pairs |",
        "| ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in speed["scaling"]:
        lines.append(
            f"| {r['C']:,} | {r['n']:,} | {r['n'] * r['C']:,} | {_s(r['seconds'])} | "
            f"{r['per_million_pairs']:.2f} |"
        )
    return lines + [""] + imagenet_lines(speed.get("imagenet"))


def imagenet_lines(mem: dict | None) -> list[str]:
    """The (e) paragraph: the ImageNet-scale fit's seconds and memory against the targets."""
    if mem is None:
        return []
    if "error" in mem:
        return [f"(e) ImageNet scale: the subprocess failed: {mem['error']}", ""]
    seconds, ratio = mem["seconds"], mem["ratio"]
    time_mark = "meets" if seconds <= IMAGENET_SECONDS else "above"
    memory_mark = "meets" if ratio <= IMAGENET_MEMORY else "above"
    return [
        f"(e) ImageNet scale, C = {mem['C']:,}, M = {mem['M']}, n = {mem['n']:,} "
        f"({mem['dtype']} input of {mem['input_bytes'] / 2**20:.0f} MiB), one fit in a "
        f"subprocess as (c): **{_s(seconds)} s** ({time_mark} target <= "
        f"{IMAGENET_SECONDS:g}), peak memory {mem['extra'] / 2**20:.0f} MiB = "
        f"**{ratio:.2f} x the input** ({memory_mark} target <= {IMAGENET_MEMORY:g}). "
        + _predict_sentence(mem),
        "",
    ]


def _predict_sentence(mem: dict) -> str:
    if "predict_seconds" not in mem:
        return ""
    ratio = mem["predict_seconds"] / max(mem["ts_predict_seconds"], 1e-12)
    return (
        f"`predict_proba` on the {mem['n']:,} rows: {_s(mem['predict_seconds'])} s, "
        f"{ratio:.1f} x temperature scaling's ({_s(mem['ts_predict_seconds'])} s)."
    )
