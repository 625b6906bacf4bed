"""A ``Variable`` met by NumPy (an operator with an array or a tensor on its left, a ufunc,
a reduction) works on its value, as NumPy's conversion through ``__array__`` gives it:
the class answers NumPy's ``__array_ufunc__`` lookup with NumPy's own default (cheaper
than a missing attribute), which must change neither the values and types of the
results nor what tapes see read."""

import numpy as np
import pytest
from fd import numerical_grad

import s2s_ad.tf as tf
from s2s_ad.variable import EagerTensor

# (name, operation of (left operand, right operand)); each is run once with a Variable
# on the right and once with its plain array
_CASES = [
    ("tensor + variable", lambda t, a, v: t + v),
    ("array * variable", lambda t, a, v: a * v),
    ("array @ variable", lambda t, a, v: a @ v),
    ("array - variable", lambda t, a, v: a - v),
    ("array > variable", lambda t, a, v: a > v),
    ("array == variable", lambda t, a, v: a == v),
    ("float64 scalar * variable", lambda t, a, v: np.float64(2.5) * v),
    ("float32 scalar + variable", lambda t, a, v: np.float32(1.5) + v),
    ("np.add", lambda t, a, v: np.add(a, v)),
    ("np.tanh", lambda t, a, v: np.tanh(v)),
    ("np.maximum.accumulate", lambda t, a, v: np.maximum.accumulate(v)),
    ("np.add.outer", lambda t, a, v: np.add.outer(v, a)),
    ("np.divmod", lambda t, a, v: np.divmod(v, 0.75)[1]),
    ("np.sum", lambda t, a, v: np.sum(v)),
    ("np.mean", lambda t, a, v: np.mean(v)),
    ("dtype given", lambda t, a, v: np.multiply(a, v, dtype=np.float32)),
]


@pytest.mark.parametrize("op", [op for _, op in _CASES], ids=[name for name, _ in _CASES])
def test_numpy_on_a_variable_is_numpy_on_its_value(op):
    value = np.array([0.5, -1.25, 2.0])
    a = np.array([1.0, 0.25, -3.0])
    t = np.array([2.0, -0.5, 1.0]).view(EagerTensor)
    got = op(t, a, tf.Variable(value))
    expected = op(t, a, value)
    assert type(got) is type(expected)
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(got, expected)


def test_a_variable_as_a_ufuncs_output_is_refused_as_before():
    v = tf.Variable(np.zeros(2))
    with pytest.raises(TypeError):
        np.add(np.ones(2), np.ones(2), out=v)
    np.testing.assert_array_equal(v.numpy(), np.zeros(2))


def test_a_dense_layer_written_with_numpy_operators_on_variables():
    """``x @ w + b`` with ``w`` and ``b`` Variables on the right of arrays and tensors: the
    tape sees both read, and the gradients match finite differences."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 3))
    y = rng.standard_normal((6, 2))
    w = tf.Variable(rng.standard_normal((3, 2)) * 0.5)
    b = tf.Variable(np.array([0.1, -0.2]))
    for _ in range(2):  # the second step takes the short path
        with tf.GradientTape() as tape:
            h = np.tanh(x @ w + b)
            loss = np.mean(np.square(h - y))
        gw, gb = tape.gradient(loss, [w, b])

        def plain(w0, b0):
            return np.mean(np.square(np.tanh(x @ w0 + b0) - y))

        ew, eb = numerical_grad(plain, (w.numpy(), b.numpy()), (0, 1))
        np.testing.assert_allclose(gw, ew, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(gb, eb, rtol=1e-6, atol=1e-9)
