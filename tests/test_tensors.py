"""fusion/_tensors.py: a network's outputs as they come (a tensor that requires grad, in
bfloat16, on a device), by duck typing; with PyTorch itself when it is installed."""

import numpy as np
import pytest

import fusion
from fusion._tensors import host_array, host_arrays


class FakeTensor:
    """What a PyTorch tensor does to NumPy: ``numpy()`` refuses a tensor that requires grad,
    one on a device and a bfloat16 one (the values here are already bfloat16-exact)."""

    def __init__(self, values, requires_grad=False, device="cpu", dtype="float32"):
        self.values = np.asarray(values)
        self.requires_grad, self.device, self.dtype = requires_grad, device, dtype
        self.ndim, self.shape = self.values.ndim, self.values.shape

    def __len__(self):
        return self.values.shape[0]

    def _like(self, **changes):
        state = {"requires_grad": self.requires_grad, "device": self.device, "dtype": self.dtype}
        return FakeTensor(self.values, **(state | changes))

    def detach(self):
        return self._like(requires_grad=False)

    def cpu(self):
        return self._like(device="cpu")

    def float(self):
        return FakeTensor(self.values.astype(np.float32), self.requires_grad, self.device)

    def numpy(self):
        if self.requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad.")
        if self.device != "cpu":
            raise TypeError("can't convert cuda:0 device type tensor to numpy.")
        if self.dtype == "bfloat16":
            raise TypeError("Got unsupported ScalarType BFloat16")
        return self.values

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.numpy(), dtype=dtype)


class FakeDeviceArray:
    """A CuPy-like array: DLPack on a device, no implicit conversion, ``get()`` copies."""

    def __init__(self, values):
        self.values = np.asarray(values)
        self.ndim, self.shape = self.values.ndim, self.values.shape

    def __len__(self):
        return self.values.shape[0]

    def __dlpack__(self, **kwargs):
        raise BufferError("the array lives on a CUDA device")

    def __dlpack_device__(self):
        return (2, 0)

    def get(self):
        return self.values.copy()


def _bfloat16_exact(a):
    """``a`` rounded to values bfloat16 holds exactly (8 significant bits)."""
    m, e = np.frexp(np.asarray(a, dtype=np.float64))
    return np.ldexp(np.round(m * 256) / 256, e).astype(np.float32)


def _binary(n=400, seed=0):
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=n)
    S = _bfloat16_exact(np.column_stack([latent + rng.normal(size=n), latent]))
    y = (rng.random(n) < 1 / (1 + np.exp(-latent))).astype(int)
    return S, y


@pytest.mark.parametrize(
    "wrap",
    [
        lambda a: FakeTensor(a, requires_grad=True),
        lambda a: FakeTensor(a, device="cuda:0"),
        lambda a: FakeTensor(a, dtype="bfloat16"),
        lambda a: FakeTensor(a, requires_grad=True, device="cuda:0", dtype="bfloat16"),
        FakeDeviceArray,
    ],
)
def test_tensors_are_taken_as_their_values(wrap):
    S, _ = _binary(20)
    np.testing.assert_array_equal(host_array(wrap(S)), S)
    out = host_arrays([wrap(S[:, 0]), S[:, 1]])
    assert isinstance(out, list)
    np.testing.assert_array_equal(out[0], S[:, 0])


def test_other_input_passes_through_unchanged():
    rows = [[0.1, 0.2], [0.3, 0.4]]
    assert host_arrays(rows) is rows
    a = np.ones(3)
    assert host_array(a) is a and host_array(None) is None


def test_fit_and_predict_take_fake_tensors_like_arrays():
    S, y = _binary()
    reference = fusion.fit(S, y, degree=3, lam=1e-2)
    model = fusion.fit(FakeTensor(S, requires_grad=True, dtype="bfloat16"), y, degree=3, lam=1e-2)
    new = FakeTensor(S[:50], requires_grad=True, device="cuda:0")
    np.testing.assert_array_equal(model.predict_proba(new), reference.predict_proba(S[:50]))
    np.testing.assert_array_equal(model.predict(new), reference.predict(S[:50]))


def test_multiclass_scores_as_a_tensor_or_a_list_of_tensors():
    rng = np.random.default_rng(1)
    n, C = 600, 3
    y = rng.integers(0, C, n)
    logits = [rng.normal(size=(n, C)) + 2.0 * np.eye(C)[y] for _ in range(2)]
    logits = [_bfloat16_exact(z) for z in logits]
    reference = fusion.PlattCalibrator().fit(logits, y)
    tensors = [FakeTensor(z, requires_grad=True, dtype="bfloat16") for z in logits]
    model = fusion.PlattCalibrator().fit(tensors, y)
    np.testing.assert_array_equal(model.predict_proba(tensors), reference.predict_proba(logits))
    stacked = FakeTensor(np.stack(logits, axis=1), device="cuda:0")
    np.testing.assert_array_equal(model.predict_proba(stacked), reference.predict_proba(logits))


# -- PyTorch itself (skipped where it is not installed: CI does not install it) -------------


def test_torch_tensors_as_a_network_gives_them():
    torch = pytest.importorskip("torch")
    S, y = _binary()
    reference = fusion.fit(S, y, degree=3, lam=1e-2)
    grad = torch.tensor(S, requires_grad=True) * 1.0  # part of a graph
    model = fusion.fit(grad, torch.tensor(y), degree=3, lam=1e-2)
    half = torch.tensor(S).to(torch.bfloat16)  # exact: the values are bfloat16's
    np.testing.assert_array_equal(model.predict_proba(half), reference.predict_proba(S))
    np.testing.assert_array_equal(model.predict_proba(grad), reference.predict_proba(S))


def test_torch_multiclass_list_of_tensors():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    n, C = 600, 3
    y = rng.integers(0, C, n)
    logits = [_bfloat16_exact(rng.normal(size=(n, C)) + 2.0 * np.eye(C)[y]) for _ in range(2)]
    reference = fusion.PlattCalibrator().fit(logits, y)
    tensors = [torch.tensor(z, requires_grad=True).to(torch.bfloat16) for z in logits]
    model = fusion.PlattCalibrator().fit(tensors, torch.tensor(y))
    np.testing.assert_array_equal(model.predict_proba(tensors), reference.predict_proba(logits))
