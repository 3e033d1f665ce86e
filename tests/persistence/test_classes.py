"""Which classes a file may hold and which fitted attributes each may carry
(fusion/persistence/_classes.py)."""

from __future__ import annotations

import io
import json
import pickle
import zipfile

import pytest

import fusion
from fusion.persistence import (
    PersistenceError,
    fitted_attributes,
    saveable_classes,
)

from ._helpers import SAVEABLE_NAMES, archive, fitted, load_fails, write

pytestmark = pytest.mark.filterwarnings("error")


def test_every_public_estimator_is_saveable_under_a_stable_name():
    table = saveable_classes()
    assert len(set(table.values())) == len(table), "one name per class"
    assert {k: table[k] for k in fusion.METHODS} == fusion.METHODS
    assert table["platt"] is fusion.PlattCalibrator
    assert table["isotonic"] is fusion.IsotonicCalibrator
    assert table["histogram"] is fusion.HistogramBinningCalibrator
    assert table["ecdf"] is fusion.ECDFNormalizer
    public = {
        getattr(fusion, n)
        for n in fusion.__all__
        if isinstance(getattr(fusion, n), type)
        and issubclass(getattr(fusion, n), fusion.FusionEstimator)
        and getattr(fusion, n) is not fusion.FusionEstimator
    }
    assert public <= set(table.values())


def _fitted_names(est) -> set[str]:
    return {k for k in vars(est) if k.endswith("_") and not k.startswith("_")}


#: Every saveable class: the estimators, and ECDFNormalizer (inside them).
ALL_NAMES = [*SAVEABLE_NAMES, "ecdf"]


def _instance(name):
    return fitted("platt")[0].ecdf_ if name == "ecdf" else fitted(name)[0]


@pytest.mark.parametrize("name", ALL_NAMES)
def test_every_fitted_attribute_is_declared(name):
    est = _instance(name)
    assert _fitted_names(est) <= fitted_attributes(type(est)), type(est).__name__


def test_declarations_add_up_along_the_mro_and_docstrings_do_not_count():
    class Base:
        _fitted_attributes = ("a_",)

    class Declared(Base):
        """Attributes
        ----------
        b_ : int
        c_ : int
        """

        _fitted_attributes = ("b_",)

    class Undeclared(Base):
        """Attributes
        ----------
        c_ : int
        """

    class Bad(Base):
        _fitted_attributes = "b_"

    assert fitted_attributes(Declared) == {"a_", "b_"}
    assert fitted_attributes(Undeclared) == {"a_"}  # inherits; its docstring adds nothing
    with pytest.raises(TypeError, match="must be a tuple of names"):
        fitted_attributes(Bad)


def test_save_refuses_an_undeclared_attribute(tmp_path):
    est, _ = fitted("platt")
    est = pickle.loads(pickle.dumps(est))
    est.slope_ = 1.0
    with pytest.raises(PersistenceError, match=r"'slope_' is not declared by PlattCalibrator"):
        est.save(tmp_path / "m.fusion")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("attribute", ["slope_", "cv_scores_", "coef"])
def test_load_refuses_an_undeclared_attribute(attribute, tmp_path):
    meta, arrays = archive("platt")
    meta["attributes"][attribute] = 1.0
    load_fails(
        write(tmp_path / "m.fusion", meta, arrays), rf"unknown fitted attribute '{attribute}'"
    )


@pytest.mark.parametrize("name", ["platt", "isotonic", "histogram"])
def test_calibrators_save_under_their_stable_names(name):
    est, S = fitted(name)
    buf = io.BytesIO()
    est.save(buf)
    buf.seek(0)
    with zipfile.ZipFile(buf) as zf:
        assert json.loads(zf.read("meta.json"))["estimator"] == name
    buf.seek(0)
    assert type(fusion.load(buf)) is type(est)
