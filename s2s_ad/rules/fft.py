"""``np.fft``: the discrete Fourier transforms as linear maps, and their transposes.

Complex values are modelled only downstream of these transforms, and only through the
operations :mod:`s2s_ad.norm_complex` lets them reach. A complex value's adjoint follows
autograd's convention: ``dL/dRe(z) - 1j * dL/dIm(z)``, so that a complex-linear map's
vector-Jacobian product is its transpose (no conjugate) and a holomorphic function's is
``g * f'(z)``, as the elementwise rules already state. A real input's gradient is the
real part of what reaches it.

* ``fft``/``ifft``/``fftn``/``ifftn`` (and ``fft2``/``ifft2``): each is a symmetric
  matrix along its axes (for every ``norm``), so the transpose is the same transform of
  ``g``; the input cropped or zero-padded to ``n`` (``s``) is undone by padding or
  cropping back;
* ``rfft``/``rfftn``: the first ``n // 2 + 1`` rows of the full transform: ``g``
  zero-padded to ``n`` and transformed by the full one, the real part kept;
* ``irfft``/``irfftn``: real-linear in the spectrum (Hermitian symmetry implied):
  ``c * conj(rfft(g))`` with the dual normalization, ``c`` 2 for the bins that stand for
  two, 1 for the constant and Nyquist bins.

Forward mode applies the same transform to the tangent (each is linear).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .registry import set_jvps, vjp_rule

_DUAL = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def _fit(g: Any, shape: tuple[int, ...], axes: Any) -> Any:
    """``g`` cropped or zero-padded along ``axes`` to the sizes of ``shape``."""
    for ax in axes:
        size = shape[ax]
        have = g.shape[ax]
        if have > size:
            g = np.take(g, np.arange(size), axis=ax)
        elif have < size:
            pad = [(0, 0)] * g.ndim
            pad[ax] = (0, size - have)
            g = np.pad(g, pad)
    return g


def _axes(x: Any, s: Any, axes: Any, last: int | None = None) -> list[int]:
    """The axes an n-dimensional transform runs along (NumPy's defaults), as
    non-negative numbers."""
    nd = np.ndim(x)
    if axes is None:
        count = nd if s is None else len(s)
        axes = list(range(nd - count, nd))
    elif np.ndim(axes) == 0:
        axes = [axes]
    return [int(a) % nd for a in axes]


def _real_if(x: Any, g: Any) -> Any:
    """``g`` as the gradient of ``x``: its real part when ``x`` is real."""
    if np.iscomplexobj(x):
        return g
    return np.real(g)


def fft_vjp(
    g: Any, a: Any, n: Any = None, axis: int = -1, norm: Any = None, inverse: bool = False
) -> Any:
    """VJP of ``np.fft.fft`` (``ifft`` with ``inverse``) with respect to ``a``."""
    transform = np.fft.ifft if inverse else np.fft.fft
    out = transform(np.asarray(g, dtype=complex) * np.ones(1), axis=axis, norm=norm)
    return _real_if(a, _fit(out, np.shape(a), [axis % np.ndim(a)]))


def fftn_vjp(
    g: Any, a: Any, s: Any = None, axes: Any = None, norm: Any = None, inverse: bool = False
) -> Any:
    """VJP of ``np.fft.fftn``/``fft2`` (``ifftn``/``ifft2`` with ``inverse``)."""
    ax = _axes(a, s, axes)
    transform = np.fft.ifftn if inverse else np.fft.fftn
    out = transform(np.asarray(g, dtype=complex), axes=ax, norm=norm)
    return _real_if(a, _fit(out, np.shape(a), ax))


def rfft_vjp(g: Any, a: Any, n: Any = None, axis: int = -1, norm: Any = None) -> Any:
    """VJP of ``np.fft.rfft`` with respect to the real ``a``."""
    axis = axis % np.ndim(a)
    size = np.shape(a)[axis] if n is None else n
    full = list(np.shape(g))
    full[axis] = size
    padded = _fit(np.asarray(g, dtype=complex), tuple(full), [axis])
    out = np.fft.fft(padded, axis=axis, norm=norm)
    return np.real(_fit(out, np.shape(a), [axis]))


def rfftn_vjp(g: Any, a: Any, s: Any = None, axes: Any = None, norm: Any = None) -> Any:
    """VJP of ``np.fft.rfftn``/``rfft2``: the full transform's over all but the last
    axis, then :func:`rfft_vjp`'s along it."""
    ax = _axes(a, s, axes)
    sizes = [np.shape(a)[k] for k in ax] if s is None else list(s)
    g = np.asarray(g, dtype=complex)
    if len(ax) > 1:
        g = np.fft.fftn(g, axes=ax[:-1], norm=norm)
        shape = list(g.shape)
        for k, size in zip(ax[:-1], sizes[:-1]):
            shape[k] = size
        g = _fit(g, tuple(shape), ax[:-1])
    last = ax[-1]
    like = list(g.shape)
    like[last] = np.shape(a)[last]
    out = rfft_vjp(g, np.zeros(like), sizes[-1], last, norm)
    return np.real(_fit(out, np.shape(a), ax))


def irfft_vjp(g: Any, a: Any, n: Any = None, axis: int = -1, norm: Any = None) -> Any:
    """VJP of ``np.fft.irfft`` with respect to the spectrum ``a``."""
    axis = axis % np.ndim(a)
    m = np.shape(a)[axis]
    size = 2 * (m - 1) if n is None else n
    spec = np.conj(np.fft.rfft(np.real(g), n=size, axis=axis, norm=_DUAL[norm]))
    bins = spec.shape[axis]
    c = np.full(bins, 2.0)
    c[0] = 1.0
    if size % 2 == 0:
        c[-1] = 1.0
    shape = [1] * spec.ndim
    shape[axis] = bins
    out = _fit(spec * c.reshape(shape), np.shape(a), [axis])
    return _real_if(a, out)


def irfftn_vjp(g: Any, a: Any, s: Any = None, axes: Any = None, norm: Any = None) -> Any:
    """VJP of ``np.fft.irfftn``/``irfft2``: :func:`irfft_vjp`'s along the last axis,
    then the inverse transform's transpose over the others."""
    ax = _axes(a, s, axes)
    last = ax[-1]
    size = 2 * (np.shape(a)[last] - 1) if s is None else s[-1]
    g = np.asarray(g, dtype=float)
    inner = list(np.shape(a))
    if s is not None:
        for k, n in zip(ax[:-1], s[:-1]):
            inner[k] = n
    out = irfft_vjp(g, np.zeros(inner, dtype=complex), size, last, norm)
    if len(ax) > 1:
        out = np.fft.ifftn(out, axes=ax[:-1], norm=norm)
    return _real_if(a, _fit(out, np.shape(a), ax))


# no samples: the registry's walk compares real outputs; these rules are checked on
# programs (tests/test_open_world_fft.py, listed in containers.CHECKED_ON_PROGRAMS)
_ONE = {"n": "None", "axis": "-1", "norm": "None"}
_MANY = {"s": "None", "axes": "None", "norm": "None"}


def _linear(f: Any, params: tuple[str, ...], vjp: str, defaults: dict[str, str]) -> None:
    """The rule of a transform ``f`` (linear in ``a``): its VJP call ``vjp``, its JVP
    the transform of the tangent with the same options."""
    name = f"np.fft.{f.__name__}"
    rule = vjp_rule(name, [f], params, {"a": vjp}, [], defaults=defaults, linear=True)
    set_jvps(rule, a=f"{name}(t, {', '.join(params[1:])})")


def _two_axes(f: Any) -> dict[str, str]:
    """The defaults of an n-dimensional transform (``fft2`` and friends: the last two axes)."""
    return dict(_MANY, axes="(-2, -1)") if f.__name__.endswith("2") else _MANY


_ONE_PARAMS = ("a", "n", "axis", "norm")
_MANY_PARAMS = ("a", "s", "axes", "norm")
for _f, _inv in ((np.fft.fft, False), (np.fft.ifft, True)):
    _linear(_f, _ONE_PARAMS, f"_ad.fft_vjp(g, a, n, axis, norm, {_inv})", _ONE)
for _f, _inv in (
    (np.fft.fftn, False),
    (np.fft.ifftn, True),
    (np.fft.fft2, False),
    (np.fft.ifft2, True),
):
    _linear(_f, _MANY_PARAMS, f"_ad.fftn_vjp(g, a, s, axes, norm, {_inv})", _two_axes(_f))
_linear(np.fft.rfft, _ONE_PARAMS, "_ad.rfft_vjp(g, a, n, axis, norm)", _ONE)
_linear(np.fft.irfft, _ONE_PARAMS, "_ad.irfft_vjp(g, a, n, axis, norm)", _ONE)
for _f, _vjp in (
    (np.fft.rfftn, "rfftn_vjp"),
    (np.fft.rfft2, "rfftn_vjp"),
    (np.fft.irfftn, "irfftn_vjp"),
    (np.fft.irfft2, "irfftn_vjp"),
):
    _linear(_f, _MANY_PARAMS, f"_ad.{_vjp}(g, a, s, axes, norm)", _two_axes(_f))


# --- the operations on complex values the transforms make ------------------------------
# (norm_complex lowers np.abs, np.imag, np.conj of such values to these: the rules of the
# real functions would miss a conjugate)


def cabs(z: Any) -> Any:
    """``np.abs`` of a complex value (a ``0`` modulus gives no gradient)."""
    return np.abs(z)


def cabs_vjp(g: Any, z: Any, ans: Any) -> Any:
    """VJP of :func:`cabs`: ``g * conj(z) / |z|``."""
    safe = np.where(ans == 0, 1.0, ans)
    return g * np.where(ans == 0, 0.0, np.conj(z)) / safe


def cabs_jvp(t: Any, z: Any, ans: Any) -> Any:
    """JVP of :func:`cabs`: ``Re(conj(z) * t) / |z|``."""
    safe = np.where(ans == 0, 1.0, ans)
    return np.real(np.where(ans == 0, 0.0, np.conj(z)) * t) / safe


def creal(z: Any) -> Any:
    """``np.real`` of a complex value."""
    return np.real(z)


def cimag(z: Any) -> Any:
    """``np.imag`` of a complex value."""
    return np.imag(z)


def cconj(z: Any) -> Any:
    """``np.conj`` of a complex value."""
    return np.conj(z)


def lift(x: Any) -> Any:
    """A value that meets a complex one (``H * np.fft.fft(x)``): itself; its adjoint
    comes back real when it is real (:func:`real_if`)."""
    return x


def real_if(x: Any, g: Any) -> Any:
    """``g`` as the adjoint of ``x``: its real part when ``x`` is real."""
    if np.iscomplexobj(x) or not np.iscomplexobj(g):
        return g
    return np.real(g)


_rule = vjp_rule("cabs", [cabs], ("z",), {"z": "_ad.cabs_vjp(g, z, ans)"}, [])
set_jvps(_rule, z="_ad.cabs_jvp(t, z, ans)")
_rule = vjp_rule("creal", [creal], ("z",), {"z": "g"}, [], linear=True)
set_jvps(_rule, z="np.real(t)")
_rule = vjp_rule("cimag", [cimag], ("z",), {"z": "-1j * g"}, [], linear=True)
set_jvps(_rule, z="np.imag(t)")
_rule = vjp_rule("cconj", [cconj], ("z",), {"z": "np.conj(g)"}, [], linear=True)
set_jvps(_rule, z="np.conj(t)")
_rule = vjp_rule("lift", [lift], ("x",), {"x": "_ad.real_if(x, g)"}, [], linear=True)
set_jvps(_rule, x="t")
