"""Regression tests for silent wrong gradients and crashes found on code we did not write.

Each test is written the way a user brings the code (an MLP over ``[(W, b), ...]``, a
dict filled in a loop, a helper followed by an in-place write) and checked against
central finite differences; what the transformer does not model must raise
``TransformError``.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from s2s_ad import TransformError, check_grads, grad
from tests.fd import flatten, numerical_grad

RNG = np.random.default_rng(7)


def _close(got, want, tol=1e-6):
    np.testing.assert_allclose(flatten(got), flatten(want), rtol=tol, atol=tol)


def _same_structure(got, like):
    assert type(got) is type(like), (type(got), type(like))
    if isinstance(like, (list, tuple)):
        assert len(got) == len(like)
        for g, v in zip(got, like):
            _same_structure(g, v)
    elif isinstance(like, dict):
        assert got.keys() == like.keys()
        for k in like:
            _same_structure(got[k], like[k])
    else:
        assert np.shape(got) == np.shape(like)


def _layers(mixed: bool = False):
    params = []
    for i, (n, m) in enumerate([(3, 5), (5, 4), (4, 2)]):
        W, b = RNG.normal(size=(n, m)), RNG.normal(size=m)
        params.append([W, b] if mixed and i % 2 else (W, b))
    return params


X = RNG.normal(size=(6, 3))


# --- nested containers of parameters -------------------------------------------------------


def mlp_unpack_in_for(params, X):
    h = X
    for W, b in params[:-1]:
        h = np.tanh(h @ W + b)
    W, b = params[-1]
    return np.sum(h @ W + b)


def mlp_indexed_layers(params, X):
    h = X
    for i in range(len(params)):
        W, b = params[i]
        h = np.tanh(h @ W + b)
    return np.sum(h**2)


def mlp_double_index(params, X):
    h = X
    for i in range(len(params)):
        h = np.tanh(h @ params[i][0] + params[i][1])
    return np.mean(h**2)


def mlp_layer_objects(params, X):
    h = X
    for k, layer in enumerate(params):
        W = layer[0]
        h = np.tanh(h @ W + layer[1]) * (k + 1)
    return np.mean(h)


@pytest.mark.parametrize(
    "f", [mlp_unpack_in_for, mlp_indexed_layers, mlp_double_index, mlp_layer_objects]
)
@pytest.mark.parametrize("mixed", [False, True], ids=["tuples", "lists-and-tuples"])
def test_mlp_over_nested_parameter_containers(f, mixed):
    params = _layers(mixed)
    g = grad(f)(params, X)
    _same_structure(g, params)
    _close(g, numerical_grad(f, (params, X), 0))


def test_dict_of_layers_gradient_keeps_structure():
    def net(p, X):
        h = X
        for layer in p["hidden"]:
            h = np.tanh(h @ layer["W"] + layer["b"])
        return np.sum(h @ p["out"])

    p = {
        "hidden": [{"W": RNG.normal(size=(3, 4)), "b": RNG.normal(size=4)}],
        "out": RNG.normal(size=4),
    }
    g = grad(net)(p, X)
    _same_structure(g, p)
    _close(g, numerical_grad(net, (p, X), 0))


# --- dicts filled in loops -----------------------------------------------------------------


def test_dict_filled_key_by_key_in_a_loop():
    def f(x):
        out = {}
        for k in ["a", "b", "c"]:
            out[k] = x * len(k) + 1.0
        return np.sum(out["a"] * out["b"]) + np.sum(out["c"])

    x = RNG.normal(size=4)
    _close(grad(f)(x), numerical_grad(f, (x,), 0))


def test_dict_of_features_built_from_names():
    def features(w, data):
        scores = {}
        for name in data:
            scores[name] = np.dot(data[name], w)
        total = 0.0
        for name in data:
            total = total + np.tanh(scores[name])
        return total

    w = RNG.normal(size=3)
    data = {"u": RNG.normal(size=3), "v": RNG.normal(size=3)}
    _close(grad(features)(w, data), numerical_grad(features, (w, data), 0))


# --- values that leave the modelled world are refused, never constants ----------------------


def test_dict_constructor_calls_are_differentiated():
    def by_keywords(x):
        d = dict(weight=x, bias=2.0 * x)
        return np.sum(d["weight"] ** 2 + d["bias"])

    def from_pairs(x):
        d = dict([("weight", x), ("bias", np.sin(x))])
        return np.sum(d["weight"] * d["bias"])

    x = RNG.normal(size=3)
    for f in (by_keywords, from_pairs):
        _close(grad(f)(x), numerical_grad(f, (x,), 0))


def _scale(p, t):
    return p * t


def index_trick_r(x):
    return np.sum(np.r_[x, 2 * x] ** 2)


def index_trick_c(x):
    return np.sum(np.c_[x, 2 * x] ** 2)


def mapped_partial(p):
    data = [1.0, 2.0, 3.0]
    return sum(map(functools.partial(_scale, p), data))


def zipped_into_dict(x):
    d = dict(zip(["a", "b"], [x, 2 * x]))
    return np.sum(d["a"] * d["b"])


def test_dict_of_zip_is_modelled():
    # once refused (a constructor called with differentiated values): now a dict comprehension
    x = np.array([0.3, -0.4, 1.2])
    np.testing.assert_allclose(grad(zipped_into_dict)(x), 4 * x)


def sin_into_out(x):
    y = np.zeros(3)
    np.sin(x, out=y)
    return np.sum(y)


def multiply_into_out(x):
    y = np.empty(3)
    z = np.multiply(x, x, out=y)
    return np.sum(y) + 0.0 * np.sum(z)


def ufunc_positional_out(x):
    y = np.zeros(3)
    np.add(x, 1.0, y)
    return np.sum(y * y)


class Affine:
    def __init__(self, w):
        self.w = w


def object_built_from_parameter(w):
    layer = Affine(w)
    return np.sum(layer.w**2)


@pytest.mark.parametrize("f", [index_trick_r, index_trick_c])
def test_index_tricks_are_modelled(f):
    """np.r_[...] / np.c_[...] without slices have a rule (s2s_ad/rules/shapes.py)."""
    x = np.array([0.3, -0.4, 1.2])
    np.testing.assert_allclose(grad(f)(x), 10.0 * x)


@pytest.mark.parametrize(
    "f",
    [
        sin_into_out,
        multiply_into_out,
        ufunc_positional_out,
    ],
)
def test_unmodelled_uses_of_differentiated_arrays_are_refused(f):
    with pytest.raises(TransformError) as info:
        grad(f)(np.array([0.3, -0.4, 1.2]))
    assert "test_wrong_results.py" in str(info.value)


def test_an_object_built_from_a_parameter_is_a_record():
    """Formerly refused: a class whose __init__ only stores its arguments builds a record
    (s2s_ad/built_objects.py) whose attributes carry the gradient."""
    w = np.array([0.3, -0.4, 1.2])
    np.testing.assert_allclose(grad(object_built_from_parameter)(w), 2.0 * w)
    check_grads(object_built_from_parameter, (w,), order=1, modes=("rev", "fwd"))


def test_a_partial_mapped_over_data_is_differentiated():
    """map(partial(f, p), data) is a loop calling f(p, item): no longer refused."""
    check_grads(mapped_partial, (0.7,), order=2, modes=("rev", "fwd"))


def test_a_write_through_a_view_of_a_local_is_followed():
    """Formerly refused: the write is made into y (norm_views), which the sum reads."""

    def f(x):
        y = x * 1.0
        v = y[1:3]
        v[0] = 3.0
        return np.sum(y * x)

    x = np.array([0.3, -0.4, 1.2])
    np.testing.assert_allclose(grad(f)(x), [0.6, 3.0, 2.4])
    check_grads(f, (x,), order=1, modes=("rev", "fwd"))


def test_a_write_through_a_view_of_a_parameter_is_refused():
    def f(x):
        v = x[1:3]
        v[0] = 3.0
        return np.sum(x * x)

    with pytest.raises(TransformError, match="view"):
        grad(f)(np.array([0.3, -0.4, 1.2]))


def test_an_element_write_into_an_aliased_array_is_refused():
    def f(x):
        y = x * 2.0
        z = y
        y[0] = 0.0
        return np.sum(z * x)

    with pytest.raises(TransformError, match="another variable"):
        grad(f)(np.array([0.3, -0.4, 1.2]))


def test_copy_then_write_is_differentiated():
    def f(x):
        y = x * 2.0
        v = y[1:3].copy()
        v[0] = 3.0 * x[0]
        z = np.copy(y)
        z[2] = np.sin(z[2])
        return np.sum(v * x[:2]) + np.sum(z * y)

    x = np.array([0.3, -0.4, 1.2])
    _close(grad(f)(x), numerical_grad(f, (x,), 0))


# --- augmented assignment followed by an alias ----------------------------------------------


def test_augmented_assignment_then_alias():
    def f(a, b):
        a -= b
        s = a
        return np.sum(s * s)

    a, b = RNG.normal(size=3), RNG.normal(size=3)
    want = numerical_grad(f, (a.copy(), b), 0)
    _close(grad(f)(a.copy(), b), want)


def test_augmented_assignment_then_alias_in_a_loop():
    def f(x):
        acc = x * 1.0
        prev = acc
        total = 0.0
        for k in range(3):
            acc = acc * 1.0
            acc += x * k
            prev = acc
            total = total + np.sum(prev * x)
        return total

    x = RNG.normal(size=3)
    _close(grad(f)(x), numerical_grad(f, (x,), 0))


def test_aliased_in_place_update_in_a_branch_is_still_refused():
    def f(x, flag):
        y = x * 1.0
        if flag:
            z = y
        y += 1.0
        return np.sum(y * x) + (np.sum(z) if flag else 0.0)

    x = RNG.normal(size=3)
    _close(grad(f)(x, False), numerical_grad(lambda u: f(u, False), (x,), 0))
    with pytest.raises(TransformError, match="another variable"):
        grad(f)(x, True)


# --- a callee's saved values and the caller's later in-place writes -------------------------


def _double_sine(u):
    return np.sin(u) * 2.0


def _normalize_rows(M):
    norms = np.sqrt(np.sum(M * M, axis=1, keepdims=True))
    return M / norms


def test_callee_saved_values_survive_a_later_write_by_the_caller():
    def f(a, x):
        v = a * x
        w = _double_sine(v)
        v[0] = 0.0
        return np.sum(w) + np.sum(v)

    x = np.array([0.3, -0.4, 1.2])
    _close(grad(f)(0.7, x), numerical_grad(f, (0.7, x), 0))


def test_helper_then_masking_loop_over_rows():
    def loss(W, X):
        H = X @ W
        N = _normalize_rows(H)
        for i in range(H.shape[0]):
            H[i, 0] = 0.0
        return np.sum(N**2 * np.arange(1.0, 4.0)) + np.sum(H**2)

    W, Xd = RNG.normal(size=(4, 3)), RNG.normal(size=(5, 4))
    _close(grad(loss)(W, Xd), numerical_grad(loss, (W, Xd), 0))


def _zero_first(u):
    u[0] = 0.0
    return np.sum(u * u)


def test_a_callee_writing_into_its_differentiated_argument_is_refused():
    def f(x):
        v = x * 2.0
        w = _zero_first(v)
        return w + np.sum(v)

    with pytest.raises(TransformError, match="write into its argument 'v'"):
        grad(f)(np.array([0.3, -0.4, 1.2]))


def test_a_callee_writing_into_a_copy_of_its_argument_is_differentiated():
    def zero_first_copy(u):
        u = u.copy()
        u[0] = 0.0
        return np.sum(u * u)

    def f(x):
        v = x * 2.0
        return zero_first_copy(v) + np.sum(v)

    x = np.array([0.3, -0.4, 1.2])
    _close(grad(f)(x), numerical_grad(f, (x,), 0))


# --- a helper redefined after its caller's gradient was made (a notebook cell run again) ---


def test_a_redefined_global_helper_is_followed(tmp_path):
    import importlib.util

    path = tmp_path / "notebook_cells.py"
    path.write_text(
        "import numpy as np\n\n"
        "def act(u):\n    return np.tanh(u)\n\n"
        "def loss(w, x):\n    return np.sum(act(x @ w) ** 2)\n"
    )
    spec = importlib.util.spec_from_file_location("notebook_cells", path)
    cells = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cells)
    w, x = RNG.normal(size=3), RNG.normal(size=(4, 3))
    dloss = grad(cells.loss)
    _close(dloss(w, x), numerical_grad(cells.loss, (w, x), 0))
    cell = tmp_path / "cell_2.py"  # the cell defining act is edited and run again
    cell.write_text("def act(u):\n    return u ** 3\n")
    exec(compile(cell.read_text(), str(cell), "exec"), cells.__dict__)
    _close(dloss(w, x), numerical_grad(cells.loss, (w, x), 0))
    _close(grad(cells.loss)(w, x), numerical_grad(cells.loss, (w, x), 0))
    cells.act = np.sin  # now a library function: the adjoint cannot follow it
    with pytest.raises(TransformError, match="rebound"):
        dloss(w, x)


def test_loop_that_rebinds_then_writes_an_element_each_trip():
    """Found by the structured property test: the adjoint zero-filled at the end of a
    backward trip was a float the next trip wrote into (TypeError in generated code)."""

    def f(a, b):
        c = a * b
        for _ in range(3):
            c = c * 1.0
            a = _double_sine(c)
            c[0] = 0.5
            a[0] = np.sum(c - a) * 0.3 + a[0]
        return np.sum(a * b) + np.sum(c)

    a, b = np.array([0.3, -0.4, 1.2]), np.array([0.5, 0.1, -0.7])
    _close(grad(f)(a.copy(), b), numerical_grad(f, (a, b), 0))


def test_while_whose_condition_calls_a_local_function_that_assigns():
    """The backward sweep undid a trip's condition before its body (pops out of order:
    ``float / None`` in generated code, or wrong values) when the condition's inlined
    call recorded values."""

    def newton_sqrt(a):
        def step(x):
            z = x * 1.0
            return 0.5 * (z + a / z)

        x = np.ones_like(a)
        while np.max(np.abs(step(x) - x)) > 1e-12:
            x = step(x)
        return np.sum(x)

    a = np.array([2.0, 9.0, 0.3])
    _close(grad(newton_sqrt)(a), 0.5 / np.sqrt(a))
    _close(grad(newton_sqrt)(np.float64(2.0)), 0.5 / np.sqrt(2.0))
    _close(grad(grad(newton_sqrt))(np.array(2.0)), -0.25 * 2.0**-1.5)
