"""Arrays of deep-learning frameworks as NumPy arrays on the host, without importing any.

A network's outputs come as the framework gives them: a PyTorch tensor that still requires
grad (``.numpy()`` refuses it), one in bfloat16 (NumPy has no such type), one on a GPU (it
must be copied to the host first); a CuPy array (no implicit conversion); a JAX or
TensorFlow array in bfloat16 (NumPy sees an opaque type). :func:`host_array` turns each into
a NumPy array by duck typing: the package depends on none of these frameworks and never
imports them. Anything else is returned unchanged, for the ordinary validation.
"""

from __future__ import annotations

import numpy as np

__all__ = ["host_array", "host_arrays"]


def _is_torch_like(x) -> bool:
    return all(hasattr(x, name) for name in ("detach", "cpu", "numpy"))


def host_array(x):
    """``x`` as a NumPy array on the host when it is a framework's array, else ``x``.

    * An object with ``.detach()``, ``.cpu()`` and ``.numpy()`` (a PyTorch tensor): detached
      from the autograd graph, copied to the host, and converted; a dtype NumPy lacks
      (bfloat16) first becomes float32 (``.float()``), which holds every bfloat16 value
      exactly.
    * An object with ``__dlpack__`` and no ``__array__`` (a CuPy array, some others): through
      ``np.from_dlpack`` on the host, or its ``.get()`` (CuPy's copy to the host) when it
      lives on a device.
    * An array whose NumPy conversion has an opaque dtype (bfloat16 from JAX, TensorFlow or
      ``ml_dtypes``: kind ``"V"``): cast to float32.

    NumPy arrays, lists, DataFrames, dask collections and everything else pass through.
    """
    if x is None or isinstance(x, np.ndarray):
        return x
    if _is_torch_like(x):
        t = x.detach()
        if hasattr(t, "is_conj") and t.is_conj():  # a lazily conjugated complex view
            t = t.resolve_conj()
        t = t.cpu()
        try:
            return t.numpy()
        except TypeError:  # "Got unsupported ScalarType BFloat16" and other such dtypes
            return t.float().numpy()
    if hasattr(x, "__dlpack__") and not hasattr(x, "__array__"):
        try:
            return np.from_dlpack(x)
        except (BufferError, RuntimeError, TypeError, ValueError):
            if hasattr(x, "get"):  # CuPy: an explicit copy from the device
                return np.asarray(x.get())
            raise
    dtype = getattr(x, "dtype", None)
    if dtype is not None and hasattr(x, "__array__") and not hasattr(x, "columns"):
        kind = getattr(dtype, "kind", None)
        if kind == "V" or "bfloat16" in str(dtype):
            return np.asarray(x).astype(np.float32)
    return x


#: Items of a list that are never a framework's array (a list of rows is checked quickly).
_PLAIN = (list, tuple, float, int, bool, str, np.ndarray, np.float64, np.float32)


def host_arrays(x):
    """:func:`host_array` of ``x``, or of every item of a list or tuple ``x`` (one array per
    scorer), keeping its type."""
    if isinstance(x, (list, tuple)):
        if all(type(item) in _PLAIN for item in x):
            return x
        converted = [host_array(item) for item in x]
        if any(a is not b for a, b in zip(converted, x, strict=True)):
            return type(x)(converted) if isinstance(x, list) else tuple(converted)
        return x
    return host_array(x)
