"""Synthetic ensembles with a known posterior: M members x C classes, C up to 1,000.

Truth
-----
Every row ``i`` has a *signal class* ``c_i`` (uniform) and true logits

    t_ik = spread * g_ik + beta_k + d_i * [k = c_i],   d_i ~ N(log C + signal, 1),

with ``g`` standard normal and ``beta_k ~ N(0, class_bias^2)`` a per-class shift of the
priors. The true posterior is ``softmax(t_i)``; the label is drawn from it. ``log C`` in the
margin keeps the top class's probability comparable across C: with the default ``signal``
the true posterior's top-class accuracy is about 65-75 % at C = 10, 100 and 1,000.

Members
-------
Member ``m`` sees the truth through noise common to every member and its own noise, with its
own temperature and per-class bias:

    l_imk = (t_ik + shared_noise * e_ik + noise_m * e_imk) / T_m + bias_m * b_mk
            + shared_bias * B_k

(``e``, ``b``, ``B`` standard normal; ``T_m < 1`` over-confident, ``T_m > 1``
under-confident; ``B`` is a class bias every member shares, which no fusion of the members
can see as a bias of one member). Its output is ``softmax(l_im)`` then, in order, the
member's distortions:

* ``"smooth"`` -- label smoothing, ``p -> 0.9 p + 0.1 / C``;
* ``"forest"`` -- a forest-like member: the class counts of ``trees`` draws from ``p``,
  divided by ``trees`` (probabilities are multiples of ``1 / trees``, mostly exact zeros);
* ``"float32"`` -- the probabilities (or logits) stored as float32: tiny probabilities
  underflow to exactly 0;
* ``"logits"`` -- the member outputs logits (shifted by an arbitrary amount per row) instead
  of probabilities; :func:`generate` hands every contender probabilities, the softmax of
  those logits in double precision (:func:`member_probabilities`).

The scores ``S`` are float32 when every member's probabilities are, else float64.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
from scipy.special import softmax

from .data import ScoreSet, member_metrics

__all__ = [
    "DISTORTIONS",
    "Member",
    "SyntheticSetup",
    "SYNTHETIC_SETUPS",
    "HELDOUT_SETUPS",
    "QUICK_SYNTHETIC_SETUPS",
    "SPEED_MEMBERS",
    "speed_setup",
    "member_output",
    "member_probabilities",
    "generate",
]

#: The distortions a member may have (see the module doc).
DISTORTIONS = ("smooth", "forest", "float32", "logits")


@dataclass(frozen=True)
class Member:
    """One member of a synthetic ensemble (see the module doc).

    Attributes
    ----------
    name : str
        Its name in the tables.
    temperature : float
        ``T_m``: its logits are divided by it (< 1 over-confident, > 1 under-confident).
    noise : float
        Standard deviation of its own noise on every true logit.
    bias : float
        Standard deviation of its per-class bias.
    output : tuple of str
        Its distortions, in order (:data:`DISTORTIONS`); ``"logits"`` only with ``"float32"``.
    """

    name: str
    temperature: float = 1.0
    noise: float = 1.0
    bias: float = 0.3
    output: tuple[str, ...] = ()

    def __post_init__(self):
        unknown = [d for d in self.output if d not in DISTORTIONS]
        if unknown:
            raise ValueError(f"unknown distortion(s) {unknown}; known: {DISTORTIONS}.")
        if "logits" in self.output and set(self.output) - {"logits", "float32"}:
            raise ValueError("a member that outputs logits takes no other distortion but float32.")
        if self.temperature <= 0 or self.noise < 0 or self.bias < 0:
            raise ValueError(f"member {self.name!r}: T > 0, noise >= 0 and bias >= 0.")

    @property
    def float32(self) -> bool:
        """Whether its probabilities are float32 (float32 logits give float64 probabilities)."""
        return "float32" in self.output and "logits" not in self.output

    def describe(self) -> str:
        text = f"{self.name} (T {self.temperature:g}, noise {self.noise:g}, bias {self.bias:g}"
        return text + "".join(f", {d}" for d in self.output) + ")"


@dataclass(frozen=True)
class SyntheticSetup:
    """A synthetic ensemble: the truth's parameters, the members, the row budget.

    Attributes
    ----------
    name : str
        Name in the tables and on the command line.
    C : int
        Number of classes.
    members : tuple of Member
    n_fuse : tuple of int
        Fusion sample sizes (nested prefixes of a pool of ``max(n_fuse)`` rows).
    n_test : int
        Test rows.
    seeds : tuple of int
        Seeds of a full run.
    group : str
        ``"main"`` or ``"heldout"``.
    signal, spread, class_bias : float
        The truth (module doc).
    shared_noise, shared_bias : float
        Noise and per-class bias common to every member.
    trees : int
        Draws of a ``"forest"`` member.
    """

    name: str
    C: int
    members: tuple[Member, ...]
    n_fuse: tuple[int, ...]
    n_test: int
    seeds: tuple[int, ...]
    group: str = field(default="main", compare=False)
    signal: float = 1.5
    spread: float = 1.0
    class_bias: float = 0.5
    shared_noise: float = 0.5
    shared_bias: float = 0.0
    trees: int = 100

    dataset = "synthetic"

    @property
    def M(self) -> int:
        return len(self.members)

    @property
    def n_pool(self) -> int:
        return max(self.n_fuse)

    @property
    def scorers(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.members)

    def describe(self) -> str:
        """The truth's and the members' parameters, for the report."""
        extra = f", shared class bias {self.shared_bias:g}" if self.shared_bias else ""
        return (
            f"signal {self.signal:g}, class bias {self.class_bias:g}, shared noise "
            f"{self.shared_noise:g}{extra}; " + "; ".join(m.describe() for m in self.members)
        )

    def scores(self, seed: int, cache_dir=None, loader=None) -> tuple[ScoreSet, bool]:
        """The members' outputs of ``seed`` (generated; never cached)."""
        return generate(self, seed), False


def _rng(name: str, seed: int) -> np.random.Generator:
    tag = int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "little")
    return np.random.default_rng(np.random.SeedSequence([int(seed), tag]))


def member_output(
    member: Member, logits: np.ndarray, rng: np.random.Generator, trees: int = 100
) -> np.ndarray:
    """What ``member`` outputs for its logits ``l`` (n, C): probabilities with its
    distortions, or (``"logits"``) shifted logits."""
    C = logits.shape[1]
    if "logits" in member.output:
        out = logits + rng.normal(scale=3.0, size=(logits.shape[0], 1))
        return out.astype(np.float32) if "float32" in member.output else out
    p = softmax(logits, axis=1)
    for step in member.output:
        if step == "smooth":
            p = 0.9 * p + 0.1 / C
        elif step == "forest":
            p = rng.multinomial(trees, p / p.sum(axis=1, keepdims=True)) / trees
        elif step == "float32":
            p = p.astype(np.float32)
    return p


def member_probabilities(member: Member, output: np.ndarray) -> np.ndarray:
    """The probabilities every contender gets of ``member``'s ``output``."""
    if "logits" in member.output:
        return softmax(np.asarray(output, dtype=float), axis=1)
    return output


def generate(setup: SyntheticSetup, seed: int) -> ScoreSet:
    """The pool (``max(n_fuse)`` rows) and the test rows of ``setup`` for ``seed``, with the
    test rows' true posterior (``truth_test``). Labels are ``0 .. C - 1``."""
    rng = _rng(setup.name, seed)
    C, n_pool, n = setup.C, setup.n_pool, setup.n_pool + setup.n_test
    beta = setup.class_bias * rng.normal(size=C)
    signal_class = rng.integers(C, size=n)
    margin = np.log(C) + setup.signal + rng.normal(size=n)
    t = setup.spread * rng.normal(size=(n, C)) + beta
    t[np.arange(n), signal_class] += margin
    truth = softmax(t, axis=1)
    u = rng.random(n)
    y = np.minimum((np.cumsum(truth, axis=1) < u[:, None]).sum(axis=1), C - 1)
    shared = setup.shared_noise * rng.normal(size=(n, C))
    shared += t
    class_shift = setup.shared_bias * rng.normal(size=C)
    dtype = np.float32 if all(m.float32 for m in setup.members) else np.float64
    S = np.empty((n, setup.M, C), dtype=dtype)
    acc, nll = [], []
    for m, member in enumerate(setup.members):
        logits = shared + member.noise * rng.normal(size=(n, C))
        logits /= member.temperature
        logits += member.bias * rng.normal(size=C) + class_shift
        P = member_probabilities(member, member_output(member, logits, rng, setup.trees))
        S[:, m] = P
        a, ll = member_metrics(P[n_pool:], y[n_pool:]) if setup.n_test else (np.nan, np.nan)
        acc.append(a)
        nll.append(ll)
    truth_test = truth[n_pool:]
    t_acc, t_ll = member_metrics(truth_test, y[n_pool:]) if setup.n_test else (np.nan, np.nan)
    info = {
        "scorer_accuracy": acc,
        "scorer_log_loss": nll,
        "truth_accuracy": t_acc,
        "truth_log_loss": t_ll,
        "n_pool": n_pool,
        "n_test": setup.n_test,
        "dtype": np.dtype(dtype).name,
    }
    return ScoreSet(
        setup.name,
        int(seed),
        np.arange(C),
        S[:n_pool],
        y[:n_pool],
        S[n_pool:],
        y[n_pool:],
        info,
        key=f"synthetic-{setup.name}-{seed}",
        truth_test=truth_test,
    )


_F32 = ("float32",)

#: Main set: C = 10 (M = 3), 100 (M = 4), 1,000 (M = 4, float32); 20,000 test rows (10,000
#: at C = 1,000, which bounds memory).
SYNTHETIC_SETUPS: tuple[SyntheticSetup, ...] = (
    SyntheticSetup(
        "syn10",
        10,
        (
            Member("hot", 0.5, 0.8, 0.3, _F32),
            Member("cold", 2.0, 0.6, 0.5),
            Member("smoothed", 0.8, 1.0, 0.3, ("smooth",)),
        ),
        (2_000, 10_000),
        20_000,
        (0, 1, 2),
    ),
    SyntheticSetup(
        "syn100",
        100,
        (
            Member("hot", 0.6, 0.8, 0.4, _F32),
            Member("cold", 1.8, 0.7, 0.3),
            Member("forest", 1.0, 0.9, 0.2, ("forest",)),
            Member("logits", 0.9, 1.2, 0.5, ("logits",)),
        ),
        (2_000, 10_000),
        20_000,
        (0, 1, 2),
    ),
    SyntheticSetup(
        "syn1000",
        1000,
        (
            Member("hot", 0.5, 0.8, 0.3, _F32),
            Member("cold", 2.0, 0.7, 0.3, _F32),
            Member("smoothed", 0.8, 1.0, 0.4, ("smooth", "float32")),
            Member("forest", 1.0, 0.9, 0.2, ("forest", "float32")),
        ),
        (10_000,),
        10_000,
        (0, 1, 2),
    ),
)

#: Held-out set: other seeds and other mixes (only under-confident members, a nearly useless
#: member, a strong class bias shared by every member, a forest / smoothed / logits mix at
#: C = 1,000).
HELDOUT_SETUPS: tuple[SyntheticSetup, ...] = (
    SyntheticSetup(
        "ho_cold10",
        10,
        (
            Member("cold", 1.5, 0.5, 0.2),
            Member("colder", 2.5, 0.8, 0.4, _F32),
            Member("coldest", 3.5, 0.6, 0.3, ("smooth",)),
        ),
        (2_000, 10_000),
        20_000,
        (10, 11, 12),
        group="heldout",
        signal=1.0,
    ),
    SyntheticSetup(
        "ho_useless100",
        100,
        (
            Member("hot", 0.7, 0.7, 0.3),
            Member("cold", 1.5, 0.8, 0.3, _F32),
            Member("useless", 1.0, 6.0, 1.0),
            Member("forest", 1.0, 0.8, 0.2, ("forest",)),
        ),
        (2_000, 10_000),
        20_000,
        (10, 11, 12),
        group="heldout",
    ),
    SyntheticSetup(
        "ho_bias100",
        100,
        (
            Member("hot", 0.7, 0.8, 0.2, _F32),
            Member("cold", 1.3, 0.8, 0.2),
            Member("logits", 1.0, 1.0, 0.3, ("logits",)),
        ),
        (2_000, 10_000),
        20_000,
        (10, 11, 12),
        group="heldout",
        class_bias=1.0,
        shared_bias=1.5,
    ),
    SyntheticSetup(
        "ho_mix1000",
        1000,
        (
            Member("forest", 1.0, 0.7, 0.2, ("forest", "float32")),
            Member("smoothed", 0.6, 1.0, 0.3, ("smooth", "float32")),
            Member("logits", 1.5, 0.8, 0.5, ("logits", "float32")),
        ),
        (10_000,),
        10_000,
        (10, 11, 12),
        group="heldout",
        signal=2.0,
    ),
)

#: The smoke run's synthetic cells.
QUICK_SYNTHETIC_SETUPS: tuple[SyntheticSetup, ...] = (
    SyntheticSetup("syn10", 10, SYNTHETIC_SETUPS[0].members, (1_000,), 5_000, (0,)),
    SyntheticSetup(
        "ho_useless100", 100, HELDOUT_SETUPS[1].members, (1_000,), 2_000, (10,), group="heldout"
    ),
)

#: The members of the speed and memory measurements (float32 probabilities, as syn1000's),
#: with a fifth, well-calibrated one for the ImageNet-scale measurement (M = 5).
SPEED_MEMBERS: tuple[Member, ...] = (
    *SYNTHETIC_SETUPS[2].members,
    Member("plain", 1.0, 1.0, 0.3, _F32),
)


def speed_setup(C: int, M: int, n: int, members: tuple[Member, ...] = SPEED_MEMBERS):
    """A setup of ``n`` pool rows, no test rows and the first ``M`` of ``members``."""
    if M > len(members):
        raise ValueError(f"M = {M} but only {len(members)} members are defined.")
    return SyntheticSetup(f"speed{C}", C, tuple(members[:M]), (n,), 0, (0,))
