"""In-place updates through NumPy views (``v = h[1:]; v *= 1.5`` changes ``h``).

User-style programs (an RNN state buffer written through row views, a finite-difference
stencil through a named interior view, a layer normalising the rows of ``W.T`` in place,
a Keras-style layer) are checked against finite differences in reverse and forward mode
and to second order, and against autograd on a functional rewrite of the same program
(autograd cannot write into arrays). What NumPy makes a copy (``reshape`` of a transpose,
an integer index of a vector) keeps its copy semantics; what is not modelled (a view of a
parameter, of an object's attribute, a called function writing its argument) is refused
at the user's line.
"""

from __future__ import annotations

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2s_ad
from s2s_ad import TransformError, check_grads

RNG = np.random.default_rng(7)

# --- the shapes of the brief ---------------------------------------------------------------


def slice_view_scaled(x):
    h = np.tanh(x) * 1.0
    v = h[1:]
    v *= 1.5
    return np.sum(h**2)  # h changed through v


def slice_view_scaled_ag(x):
    h = anp.tanh(x) * 1.0
    h = anp.concatenate([h[:1], h[1:] * 1.5])
    return anp.sum(h**2)


def reshape_view_row_update(x):
    h = x * 2.0
    M = h.reshape(2, 3)
    M[0] += np.sin(M[1])
    return np.sum(h * x)


def reshape_view_row_update_ag(x):
    M = (x * 2.0).reshape(2, 3)
    M = anp.stack([M[0] + anp.sin(M[1]), M[1]])
    return anp.sum(M.reshape(-1) * x)


def buffer_filled_through_view(x):
    h = np.zeros(6)
    row = h[:3]
    row[:] = x[:3] ** 2
    return np.sum(h * np.cos(x))


def buffer_filled_through_view_ag(x):
    h = anp.concatenate([x[:3] ** 2, anp.zeros(3)])
    return anp.sum(h * anp.cos(x))


def rows_of_a_matrix_scaled(x):
    M = np.outer(x[:2], x) * 1.0
    for row in M:  # iterating a 2-D array yields views of its rows
        row *= 2.0
        row[0] = row[1] * row[2]
    return np.sum(np.sin(M))


def rows_of_a_matrix_scaled_ag(x):
    rows = []
    for row in anp.outer(x[:2], x) * 2.0:
        rows.append(anp.concatenate([row[1:2] * row[2:3], row[1:]]))
    return anp.sum(anp.sin(anp.stack(rows)))


def transposed_views_written(x):
    W = np.outer(x[:2], x[2:5]) + 1.0
    Wt = W.T
    Wt[0] *= x[5]
    Wt2 = W.transpose()
    Wt2[1, :] = np.exp(Wt2[2])
    return np.sum(W * W)


def raveled_and_flattened_views(x):
    A = np.outer(x[:2], x[2:]) * 1.0
    flat = A.ravel()
    flat[2] = x[0] ** 3
    flat2 = A.reshape(-1)
    flat2 *= x[1]
    return np.sum(A**2) + np.sum(flat)


def ellipsis_write(x):
    h = x * 1.0
    v = h[2:]
    v[...] = np.sin(v)
    return np.sum(h**2)


def view_read_after_base_write(x):
    h = x * 2.0
    v = h[:2]
    h[0] = x[1] ** 2  # v sees it
    return np.sum(v * x[:2])


def view_read_after_base_write_ag(x):
    v = anp.concatenate([x[1:2] ** 2, x[1:2] * 2.0])
    return anp.sum(v * x[:2])


def chained_views(x):
    h = x * 1.0
    a = h[1:]
    b = a[::2]
    b *= 3 * x[0]
    return np.sum(h**2) + np.sum(a)


def chained_views_ag(x):
    picked = anp.array([0.0, 1.0, 0.0, 1.0, 0.0, 1.0])  # h[1:][::2]
    h = x * (1.0 + picked * (3 * x[0] - 1.0))
    return anp.sum(h**2) + anp.sum(h[1:])


def base_updated_in_place(x):
    h = x * 1.0
    v = h[::2]
    h += x**2  # in place: v sees it
    return np.sum(v * x[::2])


# --- programs users write ------------------------------------------------------------------


def rnn_state_buffer(W, U, xs):
    """States kept in one preallocated buffer, each written through its row view."""
    T = xs.shape[0]
    H = np.zeros((T + 1, W.shape[0]))
    for t in range(T):
        state = H[t + 1]
        state[:] = np.tanh(W @ H[t] + U @ xs[t])
    return np.sum(H[-1] ** 2) + 0.1 * np.sum(H)


def rnn_state_buffer_ag(W, U, xs):
    states = [anp.zeros(W.shape[0])]
    for t in range(xs.shape[0]):
        states.append(anp.tanh(W @ states[-1] + U @ xs[t]))
    H = anp.stack(states)
    return anp.sum(H[-1] ** 2) + 0.1 * anp.sum(H)


def heat_stencil(u0, kappa):
    """Explicit heat equation: the interior updated through a named view."""
    u = u0.copy()
    interior = u[1:-1]
    for _ in range(4):
        interior += kappa * (u[2:] - 2 * u[1:-1] + u[:-2])
    return np.sum(u**2)


def heat_stencil_ag(u0, kappa):
    u = u0
    for _ in range(4):
        inner = u[1:-1] + kappa * (u[2:] - 2 * u[1:-1] + u[:-2])
        u = anp.concatenate([u[:1], inner, u[-1:]])
    return anp.sum(u**2)


def normalized_columns(W0, x):
    """A layer whose weight columns (rows of W.T) are normalised in place."""
    W = W0 * 1.0
    for row in W.T:
        row /= np.sqrt(np.sum(row**2))
    return np.sum(np.tanh(W @ x))


def normalized_columns_ag(W0, x):
    W = W0 / anp.sqrt(anp.sum(W0**2, axis=0, keepdims=True))
    return anp.sum(anp.tanh(W @ x))


class Recurrent:
    """A Keras-style layer: ``call`` fills a state buffer through views of it."""

    def __init__(self, units):
        self.units = units

    def __call__(self, inputs, kernel, recurrent):
        steps = inputs.shape[0]
        n = self.units
        buf = np.zeros(steps * n + n)
        for t in range(steps):
            prev = buf[t * n : t * n + n]
            nxt = buf[t * n + n : t * n + 2 * n]
            nxt += np.tanh(inputs[t] @ kernel + prev @ recurrent)
        return buf


def keras_style_loss(kernel, recurrent, inputs):
    out = Recurrent(2)(inputs, kernel, recurrent)
    return np.sum(out[-2:] ** 2) + 0.5 * np.sum(out)


def keras_style_loss_ag(kernel, recurrent, inputs):
    states = [anp.zeros(2)]
    for t in range(inputs.shape[0]):
        states.append(anp.tanh(inputs[t] @ kernel + states[-1] @ recurrent))
    out = anp.concatenate(states)
    return anp.sum(out[-2:] ** 2) + 0.5 * anp.sum(out)


X6 = np.linspace(0.3, 1.1, 6)

VECTOR_PROGRAMS = [
    (slice_view_scaled, slice_view_scaled_ag),
    (reshape_view_row_update, reshape_view_row_update_ag),
    (buffer_filled_through_view, buffer_filled_through_view_ag),
    (rows_of_a_matrix_scaled, rows_of_a_matrix_scaled_ag),
    (transposed_views_written, None),
    (raveled_and_flattened_views, None),
    (ellipsis_write, None),
    (view_read_after_base_write, view_read_after_base_write_ag),
    (chained_views, chained_views_ag),
    (base_updated_in_place, None),
]


def _args(name):
    if name == "rnn":
        return [0.5 * RNG.normal(size=(3, 3)), RNG.normal(size=(3, 2)), RNG.normal(size=(4, 2))]
    if name == "stencil":
        return [RNG.normal(size=7), 0.2]
    if name == "columns":
        return [RNG.normal(size=(3, 4)), RNG.normal(size=4)]
    return [RNG.normal(size=(3, 2)), 0.5 * RNG.normal(size=(2, 2)), RNG.normal(size=(4, 3))]


USER_PROGRAMS = [
    ("rnn", rnn_state_buffer, rnn_state_buffer_ag),
    ("stencil", heat_stencil, heat_stencil_ag),
    ("columns", normalized_columns, normalized_columns_ag),
    ("keras", keras_style_loss, keras_style_loss_ag),
]


@pytest.mark.parametrize(
    ("fun", "oracle"), VECTOR_PROGRAMS, ids=lambda f: getattr(f, "__name__", "")
)
def test_writes_through_views_match_finite_differences(fun, oracle):
    check_grads(fun, [X6.copy()], modes=("rev", "fwd"))
    check_grads(fun, [X6.copy()], order=2)
    x = X6.copy()
    assert np.isclose(s2s_ad.value_and_grad(fun)(x.copy())[0], fun(x.copy()))
    if oracle is not None:
        assert np.isclose(oracle(x), fun(x.copy()))  # the rewrite is the same function
        np.testing.assert_allclose(s2s_ad.grad(fun)(x.copy()), autograd.grad(oracle)(x))


@pytest.mark.parametrize(
    ("name", "fun", "oracle"), USER_PROGRAMS, ids=[p[0] for p in USER_PROGRAMS]
)
def test_user_programs_writing_through_views(name, fun, oracle):
    args = _args(name)
    check_grads(fun, args, modes=("rev", "fwd"))
    assert np.isclose(oracle(*args), fun(*args))
    wrt = tuple(k for k, a in enumerate(args) if isinstance(a, np.ndarray))
    got = s2s_ad.grad(fun, wrt)(*args)
    want = autograd.grad(oracle, wrt)(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize(
    ("name", "fun", "oracle"), USER_PROGRAMS[:3], ids=["rnn", "stencil", "columns"]
)
def test_second_order_through_views(name, fun, oracle):
    args = _args(name)
    v = RNG.normal(size=np.shape(args[0]))
    got = s2s_ad.hvp(fun)(*args, v)
    want = autograd.grad(lambda a: np.sum(autograd.grad(oracle)(a, *args[1:]) * v))(args[0])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
    _, tangent = s2s_ad.jvp(fun, args, [v] + [np.zeros_like(np.asarray(a)) for a in args[1:]])
    assert np.isclose(tangent, np.sum(autograd.grad(oracle)(*args) * v))


# --- NumPy's copies stay copies --------------------------------------------------------------


def reshape_of_transpose_is_a_copy(x):
    A = x.reshape(2, 3) * 1.0
    M = A.T.reshape(-1)  # not contiguous: NumPy copies, A does not change
    M[0] = 7.0 * x[0]
    return np.sum(A**2) + np.sum(M**2)


def entry_of_a_vector_is_a_scalar(x):
    h = np.sin(x)
    s = h[0]  # a NumPy scalar: s += 1.0 does not change h
    s += 1.0
    h[1] = 2.0 * s
    return np.sum(h) * s


def row_rebound_in_the_loop(x):
    M = np.outer(x[:2], x) * 1.0
    for row in M:
        row = row * 2.0  # a new array: M keeps its rows
        row *= 3.0
    return np.sum(M) + np.sum(row)


@pytest.mark.parametrize(
    "fun",
    [reshape_of_transpose_is_a_copy, entry_of_a_vector_is_a_scalar, row_rebound_in_the_loop],
)
def test_copies_keep_numpy_semantics(fun):
    x = X6.copy()
    value, _ = s2s_ad.value_and_grad(fun)(x.copy())
    assert np.isclose(value, fun(x.copy()))
    check_grads(fun, [x], modes=("rev", "fwd"))


def test_generated_code_writes_the_base_and_checks_the_view():
    text = s2s_ad.source(s2s_ad.grad(slice_view_scaled))
    assert "_ad.view_of(v, h" in text
    assert "h[1:] = " in text


# --- what stays refused, at the user's line -----------------------------------------------


def view_of_a_parameter(x):
    v = x[1:]  # writing it would change the caller's array
    v *= 2.0
    return np.sum(x**2)


class Accumulator:
    def __init__(self, n):
        self.n = n
        self.buf = np.zeros(2 * n)

    def __call__(self, x):
        head = self.buf[: self.n]  # a view of an object's array: not followed
        head += np.sin(x)
        return np.sum(self.buf**2)


ACCUMULATOR = Accumulator(3)


def view_of_an_attribute(x):
    return ACCUMULATOR(x)


def _scale(v):
    v *= 2.0
    return v


def callee_writes_a_view(x):
    h = x * 1.0
    _scale(h[1:])
    return np.sum(h**2)


def callee_writes_a_local(x):
    h = x * 1.0
    _scale(h)
    return np.sum(h**2)


def callee_result_rebinds(x):
    h = x * 1.0
    h = _scale(h)  # the caller reads the result: fine
    return np.sum(h**2)


@pytest.mark.parametrize(
    ("fun", "construct"),
    [
        (view_of_a_parameter, "in-place update of a view"),
        (view_of_an_attribute, "in-place update of a view"),
        (callee_writes_a_view, "writes its argument 'v' in place"),
        (callee_writes_a_local, "writes its argument 'v' in place"),
    ],
)
def test_unmodelled_writes_are_refused_at_the_line(fun, construct):
    with pytest.raises(TransformError, match=construct) as info:
        s2s_ad.grad(fun)(X6[:3].copy() if fun is view_of_an_attribute else X6.copy())
    assert "test_views_inplace.py:" in str(info.value)


def test_a_callee_whose_result_is_assigned_is_differentiated():
    check_grads(callee_result_rebinds, [X6.copy()], modes=("rev", "fwd"))


def test_a_tape_block_follows_a_write_through_a_view():
    # the write into v is what changes h: the tape's slice of the block keeps it
    x = X6.copy()
    w = s2s_ad.Variable(x)
    with s2s_ad.GradientTape() as tape:
        h = w * 1.0
        v = h[1:]
        v *= 3.0
        y = np.sum(h**2)
    got = np.asarray(tape.gradient(y, w))
    want = autograd.grad(lambda a: anp.sum(anp.concatenate([a[:1], 3.0 * a[1:]]) ** 2))(x)
    np.testing.assert_allclose(got, want)
