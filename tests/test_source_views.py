"""``s2s_ad.source`` of what ``vjp`` hands out: the forward and backward sweeps it runs."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad


def softmax_xent(logits, labels):
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    logp = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(labels * logp, axis=1))


def test_pullback_source_is_the_pair_of_sweeps_it_runs():
    rng = np.random.default_rng(0)
    logits, labels = rng.normal(size=(4, 3)), np.eye(3)[[0, 2, 1, 1]]
    out, pullback = s2s_ad.vjp(softmax_xent, logits, labels)
    text = s2s_ad.source(pullback)
    assert text.startswith("def softmax_xent_fwd(logits, labels):")
    assert "\ndef softmax_xent_bwd(_saved, " in text
    assert "# L13: logp = shifted - np.log(" in text
    # the pullback runs those sweeps: its gradient is softmax - labels, scaled
    (g_logits, g_labels) = pullback(2.0)
    probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(g_logits, 2.0 * (probs - labels) / 4, rtol=1e-12)
    assert np.isclose(out, softmax_xent(logits, labels))
    assert g_labels.shape == labels.shape


def test_source_of_a_plain_function_is_refused():
    with pytest.raises(TypeError, match="pullback"):
        s2s_ad.source(softmax_xent)
