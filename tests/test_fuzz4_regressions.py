"""Bugs found by the fourth round of random user programs (``random_users4.py``), each as
the user code that showed it."""

from __future__ import annotations

import collections
import functools
import itertools
import operator

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2s_ad

RS = np.random.RandomState(29)


def _layers(n: int = 2) -> list:
    return [(0.5 * RS.randn(4, 4), 0.5 * RS.randn(4)) for _ in range(n)]


# --- a parameter's name reused as a range loop's counter ----------------------------------

Noise = collections.namedtuple("Noise", ["mean", "t"])


def adam_refined_loss(x, params, prior):
    """``t`` is the prior's temperature, then the step counter of an Adam loop (the
    bias corrections read it): the gradient of the temperature took the loop's terms."""
    (a, b), t = prior
    h = x * t + a - b * x
    m = np.zeros_like(h)
    v = np.zeros_like(h)
    for t in range(1, 4):
        g = h - params[0][1]
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g**2
        h = h - 0.05 * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 0.1)
    for W, b in params:
        h = np.tanh(W @ h + b)
    return np.sum(h**2)


def annealed(x, lr, steps):
    """``lr`` a learning rate, then reused as the step number (0 steps: it stays the
    rate, read after the loop)."""
    for lr in range(1, steps + 1):
        x = x - np.cos(x) / lr
    return np.sum(x**2) * lr


def test_a_parameter_name_reused_as_a_range_counter_has_no_gradient_from_the_loop():
    # the range loop's integer counter took the adjoint (and tangent) of the parameter
    # of the same name: a wrong gradient in reverse and forward mode
    params, x = _layers(), RS.randn(4)
    prior = ((0.5 * RS.randn(4), 0.5 * RS.randn(4)), 0.7)
    s2s_ad.check_grads(adam_refined_loss, (x, params, prior), modes=("rev", "fwd"))
    s2s_ad.check_grads(
        functools.partial(adam_refined_loss, params=params, prior=prior), (x,), order=2
    )
    grads = s2s_ad.grad(adam_refined_loss, 2)(x, params, prior)
    want = autograd.grad(_autograd_adam, 2)(x, params, prior)
    np.testing.assert_allclose(grads[1], want[1], rtol=1e-9)
    np.testing.assert_allclose(grads[0][0], want[0][0], rtol=1e-9)
    for steps in (0, 1, 3):
        s2s_ad.check_grads(
            functools.partial(annealed, steps=steps), (x, 0.3), modes=("rev", "fwd"), order=2
        )


def _autograd_adam(x, params, prior):
    (a, b), t = prior
    h = x * t + a - b * x
    m = anp.zeros(4)
    v = anp.zeros(4)
    for t in range(1, 4):
        g = h - params[0][1]
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g**2
        h = h - 0.05 * (m / (1 - 0.9**t)) / (anp.sqrt(v / (1 - 0.999**t)) + 0.1)
    for W, b in params:
        h = anp.tanh(W @ h + b)
    return anp.sum(h**2)


# --- a helper that dispatches on isinstance: tuple unpacked, dict read, scalar ------------


def apply_any(obj, u):
    if isinstance(obj, dict):
        return u * obj["w"] + obj["g"]
    if isinstance(obj, tuple):
        W, b = obj
        return W @ u + b
    return obj * u


def dispatch_loss(x, p):
    """Parts of a model given as a layer tuple, a gate dict and a plain scale."""
    h = x * 1.0
    for part in [p["enc"], p["gate"], 0.5, p["dec"]]:
        h = np.tanh(apply_any(part, h))
    return np.sum(h**2)


def test_isinstance_dispatch_unpacking_a_tuple_in_one_branch():
    # the helper's adjoint of `obj` started as the number 0.0 and the tuple's adjoint was
    # added to it with `+`: a TypeError inside the generated code
    (W, b), (V, c) = _layers()
    p = {"enc": (W, b), "gate": {"w": 1.0 + RS.randn(4) * 0.3, "g": RS.randn(4)}, "dec": (V, c)}
    x = RS.randn(4)
    s2s_ad.check_grads(dispatch_loss, (x, p), modes=("rev", "fwd"))
    s2s_ad.check_grads(functools.partial(dispatch_loss, p=p), (x,), order=2)
    grads = s2s_ad.grad(dispatch_loss, 1)(x, p)
    assert isinstance(grads["enc"], tuple) and sorted(grads["gate"]) == ["g", "w"]


# --- np.pad differentiated twice through a partial -----------------------------------------


def padded_features(x, params):
    """Shifted copies of the input by zero padding, then a layer."""
    h = np.pad(x, 1)[1:5] + np.pad(x, (2, 0), mode="constant")[:4] * 0.5
    W, b = params[0]
    return np.sum(np.tanh(W @ h + b) ** 2)


def test_pad_second_order_through_a_partial():
    # the transformed VJP of np.pad saw its pad_width as differentiated: a TransformError
    # pointing into the library's own source
    params, x = _layers(), RS.randn(4)
    g = functools.partial(padded_features, params=params)
    s2s_ad.grad(g)(x)
    hv = s2s_ad.hvp(g)(x, np.ones(4))
    np.testing.assert_allclose(hv, s2s_ad.hessian(g)(x) @ np.ones(4), rtol=1e-9)
    s2s_ad.check_grads(g, (x,), order=2, modes=("rev", "fwd"))


# --- a name rebound to a value without tangent, then a matrix product ----------------------


def gram_then_chain(x, params):
    """``M`` first a feature matrix of the input, then the product of the layers."""
    h = x * 1.0
    M = h[..., None] * x[None, ...]
    h = h + M.sum(axis=-1) * 0.1
    M = functools.reduce(np.matmul, [W for W, _ in params])
    h = np.tanh(M @ h)
    return np.sum(h**2)


def test_matrix_product_with_a_name_rebound_to_a_constant():
    # forward mode gave `M` the symbolic zero 0.0 as its tangent and multiplied it with
    # np.matmul: a ValueError in jvp, hvp and the forward Jacobian
    params, x = _layers(), RS.randn(4)
    g = functools.partial(gram_then_chain, params=params)
    out, tangent = s2s_ad.jvp(g, (x,), (np.ones(4),))
    np.testing.assert_allclose(tangent, s2s_ad.grad(g)(x) @ np.ones(4), rtol=1e-9)
    s2s_ad.check_grads(g, (x,), order=2, modes=("rev", "fwd"))
    s2s_ad.check_grads(gram_then_chain, (x, params), modes=("rev", "fwd"))


# --- dict(d) copies and {**a, "k": x} merges of parameter dicts ----------------------------

DEFAULTS = {"scale": 1.0, "shift": 0.0}


def gated_block_loss(x, blocks, overrides):
    """A block's dict copied, a config merged from defaults and overrides, a block with
    one entry replaced (as optax-style updates write it)."""
    first = dict(blocks[0])
    h = np.tanh(x * first["w"] + first["g"])
    cfg = {**DEFAULTS, **overrides}
    h = h * cfg["scale"] + cfg["shift"]
    second = {**blocks[1], "g": blocks[1]["g"] - 0.1 * h}
    pairs = dict([("a", h), ("b", second["w"])] + [("a", h**2)])
    return np.sum((second["w"] * h + second["g"]) ** 2) + np.sum(pairs["a"] * pairs["b"])


def test_dict_copies_and_double_star_merges_of_parameter_dicts():
    # dict(d) was refused ("call to dict"), {**a, "k": x} too ("dict with computed keys")
    blocks = [{"w": 1.0 + 0.3 * RS.randn(4), "g": 0.3 * RS.randn(4)} for _ in range(2)]
    overrides = {"scale": 1.0 + 0.2 * RS.randn(4)}
    x = RS.randn(4)
    s2s_ad.check_grads(gated_block_loss, (x, blocks, overrides), modes=("rev", "fwd"))
    g = functools.partial(gated_block_loss, blocks=blocks, overrides=overrides)
    s2s_ad.check_grads(g, (x,), order=2, modes=("rev", "fwd"))
    grads = s2s_ad.grad(gated_block_loss, (1, 2))(x, blocks, overrides)
    assert [sorted(b) for b in grads[0]] == [["g", "w"], ["g", "w"]]
    assert sorted(grads[1]) == ["scale"]
    assert "_ad.merge(" in s2s_ad.source(s2s_ad.grad(gated_block_loss))


# --- a list changed in place next to an object that keeps state: located refusal ---------


class Running:
    def __init__(self):
        self.values = []

    def add(self, v):
        self.values.append(v)
        return self


def history_loss(x):
    """Feature history kept in a list (``insert``) while a running tracker collects."""
    acc = [x * 2.0, x**2]
    acc.insert(0, np.sin(x))
    run = Running()
    for k in range(3):
        run.add(x[k] ** 2)
    return np.sum(acc[0] * acc[-1]) + sum(run.values)


def test_a_list_method_refused_when_it_runs_names_the_user_line():
    # the refusal (object state mode, checked when the generated code runs) had no file
    # and no line
    with pytest.raises(s2s_ad.TransformError) as info:
        s2s_ad.grad(history_loss)(RS.randn(4))
    err = info.value
    assert "list.insert" in str(err)
    assert err.filename.endswith("test_fuzz4_regressions.py") and err.lineno > 0
    assert "acc.insert(0, np.sin(x))" in str(err)


# --- an object without tangent passed to its method in forward-over-reverse ---------------


class Dense:
    def __init__(self, W, b, act=np.tanh):
        self.W = W
        self.b = b
        self.act = act

    def pre(self, u):
        return self.W @ u + self.b

    def __call__(self, u):
        return self.act(self.pre(u))


def dense_correlation(x, params):
    """Layers built from the parameters, then a generator over pairs whose names (``a,
    b``) the layer comprehension also uses."""
    layers = [Dense(W, b) for W, b in params]
    h = layers[0](x)
    return sum(a * b for a, b in zip(h, x))


def test_hvp_through_a_layer_object_whose_tangent_is_zero():
    # the layer's tangent was the symbolic zero 0.0, passed on to Dense.pre's forward
    # code, which read self.W's tangent from it and multiplied it with np.matmul
    params, x = _layers(1), RS.randn(4)
    g = functools.partial(dense_correlation, params=params)
    hv = s2s_ad.hvp(g)(x, np.ones(4))
    np.testing.assert_allclose(hv, s2s_ad.hessian(g)(x) @ np.ones(4), rtol=1e-9)
    s2s_ad.check_grads(g, (x,), order=2, modes=("rev", "fwd"))


# --- a namedtuple's _replace and _asdict ---------------------------------------------------

Gaussian = collections.namedtuple("Gaussian", ["mean", "log_std"])
Prior = collections.namedtuple("Prior", ["gauss", "weight"])


def prior_penalty(x, prior):
    """A prior's mean moved towards the data with ``_replace``, its fields read back as a
    dict, its weight replaced by a data-dependent one."""
    moved = prior.gauss._replace(mean=0.5 * (prior.gauss.mean + x))
    fields = moved._asdict()
    z = (x - fields["mean"]) * np.exp(-fields["log_std"])
    weighted = prior._replace(weight=prior.weight * np.mean(x**2))
    return weighted.weight * np.sum(z**2) + np.sum(weighted.gauss.log_std)


def test_namedtuple_replace_and_asdict():
    # their source (collections) builds the result with map and zip: refused at a line of
    # the standard library, not the user's
    prior = Prior(Gaussian(RS.randn(4), 0.3 * RS.randn(4)), 0.8)
    x = RS.randn(4)
    s2s_ad.check_grads(prior_penalty, (x, prior), modes=("rev", "fwd"))
    s2s_ad.check_grads(functools.partial(prior_penalty, prior=prior), (x,), order=2)
    grads = s2s_ad.grad(prior_penalty, 1)(x, prior)
    assert type(grads) is Prior and type(grads.gauss) is Gaussian


# --- itertools.chain over parameter groups, itertools.starmap over zip ---------------------


def grouped_l2(x, enc, dec):
    """Every weight of two groups (a list and a tuple) and the input, walked with
    ``itertools.chain``; a pairwise product with ``itertools.starmap``."""
    total = 0.0
    for w in itertools.chain(enc, dec, [x]):
        total = total + np.sum(np.tanh(w * x) ** 2)
    pairs = sum(itertools.starmap(lambda a, b: a * b, zip(x, x[::-1])))
    flat = list(itertools.chain(enc, [x * 2.0]))
    return total + pairs + np.sum(flat[-1] * flat[0])


def test_itertools_chain_and_starmap_over_zip():
    # both were refused (no gradient rule for itertools.chain, for zip under starmap)
    enc, dec, x = [RS.randn(4), RS.randn(4)], (RS.randn(4),), RS.randn(4)
    s2s_ad.check_grads(grouped_l2, (x, enc, dec), modes=("rev", "fwd"))
    s2s_ad.check_grads(functools.partial(grouped_l2, enc=enc, dec=dec), (x,), order=2)
    _, g_enc, g_dec = s2s_ad.grad(grouped_l2, (0, 1, 2))(x, enc, dec)
    assert isinstance(g_enc, list) and isinstance(g_dec, tuple)


# --- itertools.accumulate: running sums, products, an initial value -----------------------


def running_losses(x, W):
    """Cumulative sums of the entries, running products of features, and residual
    updates accumulated from an initial state (``initial=``, ``func=``)."""
    cums = list(itertools.accumulate(x))
    total = sum(c**2 for c in cums) * 0.1
    prods = list(itertools.accumulate([x, np.sin(x), np.cos(x)], lambda a, c: a * c))
    h = prods[-1] + prods[1]
    for r in itertools.accumulate([W @ x, x], func=operator.add, initial=x * 0.5):
        h = h + np.tanh(r)
    peaks = list(itertools.accumulate(x, max))
    return total + np.sum(h**2) + peaks[-1] + len(list(itertools.accumulate([])))


def test_itertools_accumulate():
    # refused: no gradient rule for itertools.accumulate
    W, x = RS.randn(4, 4) * 0.5, RS.randn(4)
    s2s_ad.check_grads(running_losses, (x, W), modes=("rev", "fwd"))
    s2s_ad.check_grads(functools.partial(running_losses, W=W), (x,), order=2)
    np.testing.assert_allclose(
        s2s_ad.value_and_grad(running_losses)(x, W)[0], running_losses(x, W), rtol=1e-12
    )


# --- yield from in a generator helper -------------------------------------------------------


def all_weights(blocks):
    for blk in blocks:
        yield from blk.values()
    yield from (w * 2.0 for w in blocks[0].values())


def tree_energy(x, blocks):
    """A generator walking a list of parameter dicts with ``yield from``."""
    return sum(np.sum(np.tanh(v * x) ** 2) for v in all_weights(blocks))


def test_yield_from_in_a_generator_helper():
    # refused ("'yield from'"): now a loop that yields each item
    blocks = [{"w": RS.randn(4), "g": RS.randn(4)} for _ in range(2)]
    x = RS.randn(4)
    s2s_ad.check_grads(tree_energy, (x, blocks), modes=("rev", "fwd"))
    s2s_ad.check_grads(functools.partial(tree_energy, blocks=blocks), (x,), order=2)


# --- d.update({...}) / d.update(k=v) of a local dict; an entry copied under another key ---


def tuned_config(x, blk):
    """A config copied from a block and updated in place, a later value reading an entry
    the same update replaces (Python reads every value first)."""
    cfg = dict(blk)
    cfg.update({"g": x * 2.0})
    cfg.update(extra=np.sin(x), w=cfg["w"] * 3.0, g=cfg["w"] + cfg["g"])
    return np.sum(cfg["w"] * cfg["g"] + cfg["extra"] ** 2)


def shared_entry(x):
    """One dict entry stored under a second key."""
    cache = {"a": x, "b": x * 2.0}
    first = cache["a"]
    cache["b"] = first
    return np.sum(cache["a"] * cache["b"])


class Tracker:
    def __init__(self):
        self.seen = {}

    def update(self, d):
        self.seen = d


def tracked(x):
    t = Tracker()
    t.update({"a": x})
    return np.sum(x * t.seen["a"])


def test_dict_update_and_an_entry_stored_under_another_key():
    # d.update(...) was refused as an in-place method call; the second derivatives of
    # shared_entry raised a broadcasting ValueError (an adjoint entry zeroed as 0.0 whose
    # tangent came out as dense zeros)
    blk = {"w": RS.randn(4), "g": RS.randn(4)}
    x = RS.randn(4)
    np.testing.assert_allclose(
        s2s_ad.value_and_grad(tuned_config)(x, blk)[0], tuned_config(x, blk), rtol=1e-12
    )
    s2s_ad.check_grads(tuned_config, (x, blk), modes=("rev", "fwd"))
    s2s_ad.check_grads(functools.partial(tuned_config, blk=blk), (x,), order=2)
    s2s_ad.check_grads(shared_entry, (x,), order=2, modes=("rev", "fwd"))
    # an object's own update method is not a dict's: still called as it is
    np.testing.assert_allclose(s2s_ad.grad(tracked)(x), 2.0 * x, rtol=1e-12)
