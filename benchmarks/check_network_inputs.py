"""One network's logits, log-probabilities, probabilities and logits shifted by a constant:
the default fits of each (on the CIFAR-100 networks' val rows) and the largest difference of
their test predictions from the logits' fit, in double and single precision.

    FUSION_DATA_DIR=../shared/datasets OMP_NUM_THREADS=1 python benchmarks/check_network_inputs.py
"""

from __future__ import annotations

import warnings

import numpy as np
from networks_lib.data import CASES, data_dir, load_split
from scipy.special import log_softmax, softmax

import fusion


def forms(L: np.ndarray) -> dict[str, np.ndarray]:
    L = L.astype(np.float64)
    return {
        "logits": L,
        "log-probabilities": log_softmax(L, axis=-1),
        "probabilities": softmax(L, axis=-1),
        "logits + 7.3": L + 7.3,
    }


def main() -> int:
    warnings.simplefilter("ignore")
    print("| network | precision | input | lam_ | top_label_penalty_ | max |P - P(logits)| |")
    print("| --- | --- | --- | ---: | ---: | ---: |")
    for case in [c for c in CASES if c.split == "given"]:
        sp = load_split(case, 0, data_dir())
        for dtype in (np.float64, np.float32):
            fit_forms, test_forms = forms(sp.S_fuse), forms(sp.S_test)
            ref = None
            for name, S in fit_forms.items():
                model = fusion.fit(S.astype(dtype), sp.y_fuse)
                P = model.predict_proba(test_forms[name].astype(dtype))
                ref = P if ref is None else ref
                print(f"| {case.name} | {np.dtype(dtype).name} | {name} | {model.lam_:g} | "
                      f"{model.top_label_penalty_:g} | {np.abs(P - ref).max():.1e} |")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
