"""The default method on multi-class scores against a known posterior (issue 13, item 1).

C = 4 classes, M = 3 scorers that miscalibrate the true multinomial posterior in different
ways (too hot, too cold, biased toward class 0), 3,000 fusion rows, 20,000 test rows. The
fused distribution must beat the best single scorer in log-loss, stay within 0.01 of
multinomial logistic regression on the stacked log-probabilities, and have a top-label ECE
within 0.02 of the true posterior's.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss

import fusion
from fusion import metrics

from ...test_multiclass import simulate

N_FUSE, N_TEST = 3_000, 20_000


@pytest.mark.parametrize("seed", [0, 1])
def test_default_fusion_of_miscalibrated_scorers_against_a_known_posterior(seed):
    S, y, truth = simulate(N_FUSE + N_TEST, seed=seed)
    Sf, yf, St, yt, Tt = S[:N_FUSE], y[:N_FUSE], S[N_FUSE:], y[N_FUSE:], truth[N_FUSE:]
    model = fusion.fit(Sf, yf)
    assert isinstance(model, fusion.BernsteinFusion) and model.n_classes_ == 4
    p = model.predict_proba(St)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-9)
    assert np.all((p > 0) & (p < 1))

    def logp(A):
        return np.log(np.clip(A, 1e-12, 1.0)).reshape(A.shape[0], -1)

    lr = LogisticRegression(max_iter=2_000).fit(logp(Sf), yf)
    ours = log_loss(yt, p)
    best_single = min(log_loss(yt, St[:, m], labels=range(4)) for m in range(S.shape[1]))
    assert ours < best_single
    assert ours <= log_loss(yt, lr.predict_proba(logp(St))) + 0.01
    assert abs(metrics.top_label_ece(yt, p) - metrics.top_label_ece(yt, Tt)) <= 0.02
