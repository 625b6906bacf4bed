"""Programs our other tests never wrote: a differentiated float passed where a library
takes an integer (``polygamma``'s order, a Poisson's count, ``np.triu``'s diagonal,
``np.linalg.norm``'s ``ord``), loops zipped with ``itertools.count()``, and the ownership
of an adjoint rebound to an entry of itself."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as st
from numpy import flip, reshape

import s2s_ad
from s2s_ad.api import _resolve_callee, normalized_for
from s2s_ad.reverse import Reverse
from tests.user_checks import check_program

# --- a differentiated value where an integer is taken ------------------------------------


def trigamma_series(n, x):
    """The n-th polygamma at x, n read from the data."""
    return np.sum(sp.polygamma(n, x))


def poisson_fit(rate, counts):
    """A Poisson log-likelihood whose counts are (wrongly) scaled by the rate."""
    return np.sum(st.poisson.logpmf(counts * rate, rate))


def p_norm(p, x):
    """A vector p-norm whose order is a parameter."""
    return np.linalg.norm(x, ord=p)


def band_energy(width, m):
    """The sum of a band of a matrix, the band's offset learnt."""
    return np.sum(np.triu(m * width, k=width))


def repeated(s, x):
    """Each entry repeated s times."""
    return np.sum(np.repeat(x * s, s))


@pytest.mark.parametrize(
    ("fun", "args", "param"),
    [
        (trigamma_series, (1.0, np.array([1.5, 2.5])), "n"),
        (poisson_fit, (1.5, np.array([1.0, 2.0, 4.0])), "k"),
        (p_norm, (1.5, np.array([1.0, -2.0, 3.0])), "ord"),
        (band_energy, (1.0, np.ones((3, 3))), "k"),
        (repeated, (2.0, np.array([1.0, 2.0])), "repeats"),
    ],
)
def test_float_in_integer_parameter_is_refused(fun, args, param):
    """Each of these ran and gave a zero derivative for the count (the p-norm's is not
    zero): refused in both modes, naming the parameter and the line."""
    with pytest.raises(s2s_ad.TransformError, match=f"argument '{param}'"):
        s2s_ad.grad(fun)(*args)
    tangent = (1.0,) + tuple(np.zeros_like(a) for a in args[1:])
    with pytest.raises(s2s_ad.TransformError, match=f"argument '{param}' .*test_closed_world"):
        s2s_ad.jvp(fun, args, tangent)


def smooth_band(m, width=1):
    """Integers in the integer parameters, the matrix differentiated."""
    upper = np.triu(m, k=width)
    lower = np.tril(m, -width)
    return np.sum(upper**2) + np.sum(np.diff(lower, n=1, axis=0) ** 2) + np.linalg.norm(m[0], 3)


def polygamma_sum(x):
    n = 1
    return np.sum(sp.polygamma(n, x)) + np.sum(st.poisson.logpmf(np.arange(3), x))


def test_integers_in_integer_parameters_still_differentiate():
    rs = np.random.RandomState(0)
    check_program(smooth_band, (rs.standard_normal((4, 4)),), rs=rs)
    check_program(polygamma_sum, (np.array([1.5, 2.5, 3.5]),), rs=rs, twin=None)


def binomial_prior(n, k):
    """Generalized binomial coefficients: both arguments may be floats, and differentiate."""
    return np.sum(np.log(sp.binom(n, k)))


def test_float_binomial_coefficient_differentiates():
    rs = np.random.RandomState(3)
    n, k = np.array([5.3, 7.1, 6.4]), np.array([2.5, 1.2, 3.3])
    check_program(binomial_prior, (n, k), 0, rs=rs, twin=None)
    check_program(binomial_prior, (n, k), 1, rs=rs, twin=None)


def test_count_taken_from_an_integer_attribute_in_a_tape():
    """In a tape every attribute read may be a Variable: an integer ``self.k`` passes."""
    import s2s_ad.tf as tf  # here: importing it registers the tf rules other modules walk

    class Band(tf.Module):
        def __init__(self):
            super().__init__()
            self.k = 1
            self.w = tf.Variable(np.arange(9.0).reshape(3, 3))

        def __call__(self):
            return np.sum(np.triu(self.w * self.w, self.k))

    band = Band()
    with s2s_ad.GradientTape() as tape:
        y = band()
    np.testing.assert_allclose(tape.gradient(y, band.w), np.triu(2 * band.w.numpy(), 1))


# --- loops zipped with itertools.count() --------------------------------------------------


def weighted_by_position(x):
    total = 0.0
    for i, xi in zip(itertools.count(), x):
        total = total + i * xi**2
    return total


def damped(x, rate):
    total = 0.0
    for xi, t in zip(x, itertools.count(1, 0.5)):
        total = total + np.sin(xi) * np.exp(-rate * t)
    return total


def first_above(x):
    """A lone count broken out of, as ``while True`` would be."""
    acc = 0.0
    for i in itertools.count():
        acc = acc + x[i] ** 2
        if acc > 3.0:
            break
    return acc


def test_zip_with_count_differentiates():
    rs = np.random.RandomState(1)
    x = rs.standard_normal(4)
    check_program(weighted_by_position, (x,), rs=rs)
    check_program(damped, (x, 0.3), rs=rs)
    check_program(damped, (x, 0.3), 1, rs=rs)
    check_program(first_above, (np.array([1.0, 0.5, 1.5, 2.0]),), rs=rs)


def cycled(x):
    total = 0.0
    for w, xi in zip(itertools.cycle([1.0, -1.0]), x):
        total = total + w * xi
    return total


def test_endless_iterator_other_than_count_is_refused():
    with pytest.raises(s2s_ad.TransformError, match="cycle"):
        s2s_ad.grad(cycled)(np.ones(3))


# --- an adjoint rebound to an entry of its own container ----------------------------------


def rebinds_to_entry(x):
    t = x * 2.0
    s = np.sin(t)
    t = {"p": t, "q": x}
    u = t["p"] + t["q"]
    return np.sum(u * s)


def test_adjoint_rebound_to_its_entry_loses_ownership():
    """``t_bar = _ad.getitem(t_bar, 'p')`` rebinds ``t_bar`` to an entry of the dict (not
    copied, and shared with ``x_bar``): it may not be updated in place afterwards. The
    check used to compare the name with a set (always different) and kept it owned."""
    rs = np.random.RandomState(2)
    check_program(rebinds_to_entry, (rs.standard_normal(3),), rs=rs)
    _, fn = normalized_for(rebinds_to_entry, ("x",))
    rev = Reverse(fn, ["x"], functools.partial(_resolve_callee, pure=False, variables=False))
    rev.owned = {"t_bar", "u_bar"}
    rev.line("t_bar = _ad.getitem(t_bar, 'p')")
    assert "t_bar" not in rev.owned
    rev.owned = {"t_bar", "u_bar"}
    rev.line("x_bar = _ad.getitem(t_bar, 'q')")
    assert rev.owned == {"t_bar", "u_bar"}  # getitem leaves the dict it reads alone
    rev.line("x_bar = u_bar")
    assert rev.owned == {"t_bar"}  # now shared with x_bar


# --- functools.partial of a function with *args / **kwargs --------------------------------


def regularized(params, x, **opts):
    scale = opts.get("scale", 1.0)
    penalty = opts.get("l2", 0.0) * np.sum(params["W"] ** 2)
    return scale * np.sum(np.tanh(x @ params["W"]) ** 2) + penalty


def powered(w, *xs, power=2):
    return sum(np.sum((w * x) ** power) for x in xs)


def test_partial_binding_keywords_into_kwargs():
    """``partial(f, scale=2.0)`` of ``f(params, x, **opts)``: the partial's signature hides
    the bound keywords inside ``**opts`` (was refused); a call may still override them."""
    rs = np.random.RandomState(4)
    params, x = {"W": rs.standard_normal((3, 2))}, rs.standard_normal((5, 3))
    loss = functools.partial(regularized, scale=2.0, l2=0.1)
    check_program(loss, (params, x), rs=rs, twin=None)
    got = s2s_ad.grad(loss)(params, x, l2=0.5)
    want = s2s_ad.grad(regularized)(params, x, scale=2.0, l2=0.5)
    np.testing.assert_allclose(got["W"], want["W"], rtol=1e-12)
    value, _ = s2s_ad.value_and_grad(loss)(params, x, scale=3.0)
    np.testing.assert_allclose(value, regularized(params, x, scale=3.0, l2=0.1))


def test_partial_of_star_args():
    rs = np.random.RandomState(5)
    cubes = functools.partial(powered, power=3)
    args = (rs.standard_normal(3), rs.standard_normal(3), rs.standard_normal(3))
    check_program(cubes, args, 0, rs=rs, twin=None)
    check_program(cubes, args, 2, rs=rs, twin=None)
    fixed = functools.partial(powered, np.ones(3))
    check_program(fixed, args[:2], 1, rs=rs, twin=None)


# --- views made by functions the alias check did not know -----------------------------------


def flipped(x):
    y = x * 1.0
    z = np.flip(y)
    y[0] = 5.0 * y[1] ** 2
    return np.sum(z * x)


def rotated(x):
    y = np.outer(x, x)
    z = np.rot90(y)
    y[0, 1] = 2.0 * y[1, 1]
    return np.sum(z**2)


def diagonal_of(x):
    y = np.outer(x, x)
    z = np.diag(y)
    y[1, 1] = 3.0 * y[0, 1]
    return np.sum(z * x)


def cast_in_place(x):
    y = x * 1.0
    z = y.astype(np.float64, copy=False)
    y[0] = 4.0 * y[1] ** 2
    return np.sum(z * x)


def conjugated(x):
    y = x * 1.0
    z = y.conj()
    y[0] = 4.0 * y[1] ** 2
    return np.sum(z * x)


def flipped_by_name(x):
    y = x * 1.0
    z = flip(y)  # imported from NumPy by name
    y[0] = 5.0 * y[1] ** 2
    return np.sum(z * x)


def flipped_by_keyword(x):
    y = x * 1.0
    z = np.flip(m=y)
    y[0] = 5.0 * y[1] ** 2
    return np.sum(z * x)


def reshaped_by_name(x):
    y = x * 1.0
    z = reshape(y, (2, 2))
    y[3] = 2.0 * y[0] ** 2
    return np.sum(z[0] * x[:2])


@pytest.mark.parametrize(
    "fun",
    [
        flipped,
        rotated,
        diagonal_of,
        cast_in_place,
        conjugated,
        flipped_by_name,
        flipped_by_keyword,
        reshaped_by_name,
    ],
)
def test_write_seen_through_a_view_is_refused(fun):
    """Each returns a view of ``y`` (``np.flip``, ``np.rot90``, ``np.diag`` of a matrix,
    ``astype(copy=False)``, ``conj`` of a real array): the write into ``y`` changes ``z``.
    The first four gave a wrong gradient, silently, and so did the view functions called
    by a bare name or with the array as a keyword."""
    with pytest.raises(s2s_ad.TransformError, match="in-place update"):
        s2s_ad.grad(fun)(np.array([0.5, 1.5, -0.7, 2.0]))


def flipped_then_copied(x):
    y = x * 1.0
    z = np.flip(y).copy()
    y[0] = 4.0 * y[1] ** 2
    return np.sum(z * y) + np.sum(x.conj() * np.fliplr(np.outer(x, x)))


def flipped_before_write(x):
    y = x * 1.0
    head = np.sum(np.flip(y) * x)
    y[0] = 4.0 * y[1] ** 2
    return np.sum(y) + head


def test_views_not_read_after_the_write_differentiate():
    rs = np.random.RandomState(6)
    check_program(flipped_then_copied, (rs.standard_normal(4),), rs=rs, twin=None)
    # the gradient's own code reads the view after restoring y: forward mode over it
    # refuses the write (the alias check of generated code), so no Hessian-vector product
    check_program(flipped_before_write, (rs.standard_normal(4),), rs=rs, twin=None, hvp=False)
