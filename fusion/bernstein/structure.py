"""The component structure of a Bernstein polynomial (the score axes every component spans
and its degree along each) and the layout of a parameter vector over it.

Every Bernstein model of :class:`~fusion.bernstein.BernsteinFusion` is a sum of tensor
components, one :class:`Structure`: the fitted models (``components_`` and ``degree_``: one
degree per axis), the richer model of the bootstrap refits (whose components may give one
axis different degrees) and the class-shared multi-class model (one univariate component
per scorer). A :class:`Layout` puts linear coefficients in front of a structure's
coefficients: the parameter vector of the penalized logistic and multinomial fits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .basis import (
    DEFAULT_CHUNK_ELEMENTS,
    design_rows,
    evaluate,
    make_components,
)

__all__ = ["Structure", "Layout"]


@dataclass(frozen=True)
class Structure:
    """A sum of tensor Bernstein components.

    ``components`` holds one ``(axes, degrees)`` pair per component: the score axes it
    spans and its degree along each. Its coefficients are a tensor of shape
    ``degrees + 1``; the structure's coefficient vector is the components' tensors
    flattened in C order, one after the other.
    """

    components: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]

    @classmethod
    def of(cls, degrees: Sequence[int], axes: Sequence[Sequence[int]]) -> Structure:
        """Components on ``axes`` (one tuple of score axes each) with degree ``degrees[a]``
        along axis ``a`` (the fitted state's ``degree_`` and ``components_``)."""
        return cls(
            tuple(
                (tuple(int(a) for a in comp), tuple(int(degrees[a]) for a in comp)) for comp in axes
            )
        )

    @classmethod
    def named(cls, name: str, degrees: Sequence[int]) -> Structure:
        """The ``"tensor"``, ``"additive"`` or ``"pairwise"`` structure over
        ``len(degrees)`` axes (:func:`fusion.bernstein.basis.make_components`)."""
        return cls.of(degrees, make_components(name, len(degrees)))

    @property
    def axes(self) -> tuple[tuple[int, ...], ...]:
        """The score axes of every component."""
        return tuple(axes for axes, _ in self.components)

    @property
    def shapes(self) -> tuple[tuple[int, ...], ...]:
        """The shape of every component's coefficient tensor."""
        return tuple(tuple(int(k) + 1 for k in degrees) for _, degrees in self.components)

    @property
    def sizes(self) -> list[int]:
        return [int(np.prod(s)) for s in self.shapes]

    @property
    def n_coef(self) -> int:
        return int(sum(self.sizes))

    def is_tensor(self, M: int) -> bool:
        """Whether this is the full tensor over ``M`` axes."""
        return self.axes == (tuple(range(M)),)

    def name(self, M: int) -> str:
        """``"tensor"``, ``"additive"`` or ``"pairwise"`` (any other sum of components of
        two axes or more) over ``M`` axes."""
        if self.is_tensor(M):
            return "tensor"
        return "additive" if all(len(axes) == 1 for axes in self.axes) else "pairwise"

    def design_rows(self, U: np.ndarray) -> np.ndarray:
        """The transposed design ``(n_coef, n)`` at normalized points ``U``."""
        rows = [design_rows(U[:, list(axes)], degrees) for axes, degrees in self.components]
        return rows[0] if len(rows) == 1 else np.concatenate(rows, axis=0)

    def design(self, U: np.ndarray) -> np.ndarray:
        """The design ``(n, n_coef)`` at normalized points ``U``."""
        rows = [design_rows(U[:, list(axes)], degrees) for axes, degrees in self.components]
        return np.concatenate(rows, axis=0).T

    def split(self, coef: np.ndarray) -> list[np.ndarray]:
        """Every component's coefficient tensor (views of a flat ``coef``)."""
        flat = np.asarray(coef, dtype=float).reshape(-1)
        bounds = np.cumsum([0, *self.sizes])
        return [
            flat[a:b].reshape(s)
            for a, b, s in zip(bounds[:-1], bounds[1:], self.shapes, strict=True)
        ]

    def evaluate(
        self, coef: np.ndarray, U: np.ndarray, chunk_elements: int = DEFAULT_CHUNK_ELEMENTS
    ) -> np.ndarray:
        """The polynomial with coefficients ``coef`` at ``U``: the tensor's coefficient
        tensor, or the flat vector of the components'."""
        if self.is_tensor(U.shape[1]):
            return evaluate(np.asarray(coef).reshape(self.shapes[0]), U, chunk_elements)
        out = np.zeros(U.shape[0])
        for axes, c in zip(self.axes, self.split(coef), strict=True):
            out += evaluate(c, U[:, list(axes)], chunk_elements)
        return out


@dataclass(frozen=True)
class Layout:
    """The parameter vector ``x = (c, theta)``: ``n_linear`` linear coefficients, then the
    coefficients of ``structure``.

    ``free_constant``: the first component's 0-corner coefficient is free (it carries the
    model's constant, as in the binary model); False pins every component's 0-corner at 0
    (a softmax ignores a constant shared by all classes: the class-shared multi-class model).
    """

    n_linear: int
    structure: Structure
    free_constant: bool = True

    @property
    def shapes(self) -> tuple[tuple[int, ...], ...]:
        return self.structure.shapes

    @property
    def sizes(self) -> list[int]:
        return self.structure.sizes

    @property
    def n_coef(self) -> int:
        return self.n_linear + sum(self.sizes)

    def split(self, x: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """``c`` and the list of component tensors (views of ``x``)."""
        c = x[: self.n_linear]
        bounds = np.cumsum([self.n_linear, *self.sizes])
        parts = [
            x[a:b].reshape(s) for a, b, s in zip(bounds[:-1], bounds[1:], self.shapes, strict=True)
        ]
        return c, parts
