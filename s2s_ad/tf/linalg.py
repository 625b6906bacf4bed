"""``tf.linalg``: matrix products and decompositions over NumPy's ``linalg`` (their
gradients come from the transformer's rules)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..custom import defgrad, stop_gradient
from ..variable import Tensor, tensor
from .ops import einsum, matmul, tensordot


def inv(matrix: Any, adjoint: bool = False, name: str | None = None) -> Tensor:
    return tensor(np.linalg.inv(matrix))


def solve(matrix: Any, rhs: Any, adjoint: bool = False, name: str | None = None) -> Tensor:
    return tensor(np.linalg.solve(matrix, rhs))


def det(matrix: Any, name: str | None = None) -> Tensor:
    return tensor(np.linalg.det(matrix))


def slogdet(matrix: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """The sign (no gradient) and the log of the absolute determinant."""
    sign, _ = np.linalg.slogdet(stop_gradient(matrix))
    return tensor(sign), logdet(matrix)


def logdet(matrix: Any, name: str | None = None) -> Tensor:
    return tensor(np.linalg.slogdet(np.asarray(matrix))[1])


def _logdet_grad(g: Any, matrix: Any, name: Any = None) -> Any:
    return np.asarray(g)[..., None, None] * np.swapaxes(np.linalg.inv(matrix), -1, -2)


defgrad(logdet, _logdet_grad)


def _lower(a: np.ndarray) -> np.ndarray:
    """The lower triangle with the diagonal halved."""
    low = np.tril(a)
    return low - 0.5 * np.eye(a.shape[-1]) * a


def cholesky(matrix: Any, name: str | None = None) -> Tensor:
    """The lower Cholesky factor (of the symmetric matrix the lower triangle defines)."""
    return tensor(np.linalg.cholesky(np.asarray(matrix)))


def _cholesky_grad(g: Any, matrix: Any, name: Any = None) -> Any:
    # the gradient with respect to a symmetric perturbation (TensorFlow's convention)
    low = np.linalg.cholesky(np.asarray(matrix))
    inv = np.linalg.inv(low)
    middle = _lower(low.T @ np.asarray(g))
    grad = inv.T @ middle @ inv
    return 0.5 * (grad + grad.T)


defgrad(cholesky, _cholesky_grad)


def eigh(tensor_: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """Eigenvalues (ascending) and eigenvectors of the symmetric matrix the lower triangle
    defines."""
    values, vectors = np.linalg.eigh(np.asarray(tensor_))
    return tensor(values), tensor(vectors)


def _eigh_grad(g: Any, tensor_: Any, name: Any = None) -> Any:
    g_values, g_vectors = g
    values, vectors = np.linalg.eigh(np.asarray(tensor_))
    inner = np.zeros((len(values), len(values)))
    if not _zero(g_values):
        inner = inner + np.diag(np.asarray(g_values))
    if not _zero(g_vectors):
        gaps = values[None, :] - values[:, None]
        np.fill_diagonal(gaps, np.inf)
        inner = inner + (vectors.T @ np.asarray(g_vectors)) / gaps
    grad = vectors @ inner @ vectors.T
    # the op reads the lower triangle: a perturbation there moves both symmetric entries
    return np.tril(grad + grad.T) - np.diag(np.diag(grad))


def _zero(g: Any) -> bool:
    return g is None or (type(g) is float and g == 0.0)


defgrad(eigh, _eigh_grad)


def eigvalsh(tensor_: Any, name: str | None = None) -> Tensor:
    values, vectors = eigh(tensor_)
    return values


def svd(
    tensor_: Any, full_matrices: bool = False, compute_uv: bool = True, name: Any = None
) -> Any:
    """TensorFlow's order: ``s, u, v`` (``v`` not transposed), or ``s`` alone.

    Gradients flow through ``s``, ``u`` and ``v`` (NumPy's SVD rule). Singular vectors
    are defined up to sign, so only functions that do not change when a pair ``u[:, i],
    v[:, i]`` flips sign have a gradient; where singular values repeat (or, for a
    non-square matrix, one is zero) the gradient through the vectors is infinite, as in
    TensorFlow.
    """
    if not compute_uv:
        return tensor(np.linalg.svd(tensor_, compute_uv=False))
    u, s, vh = np.linalg.svd(tensor_, full_matrices=full_matrices)
    return tensor(s), tensor(u), tensor(np.swapaxes(vh, -1, -2))


def norm(
    tensor_: Any, ord: Any = "euclidean", axis: Any = None, keepdims: bool = False, name: Any = None
) -> Tensor:  # noqa: A002
    if ord in ("euclidean", "fro", 2) and axis is None:
        return tensor(np.sqrt(np.sum(np.square(tensor_))))
    if ord in ("euclidean", 2) and isinstance(axis, int):
        return tensor(np.sqrt(np.sum(np.square(tensor_), axis=axis, keepdims=keepdims)))
    axes = tuple(axis) if isinstance(axis, (list, tuple)) else axis
    order = None if ord == "euclidean" else ord
    return tensor(np.linalg.norm(tensor_, ord=order, axis=axes, keepdims=keepdims))


def trace(x: Any, name: str | None = None) -> Tensor:
    return tensor(np.trace(x, axis1=-2, axis2=-1))


def diag_part(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    return tensor(np.diagonal(input, axis1=-2, axis2=-1))


def diag(diagonal: Any, name: str | None = None) -> Tensor:
    return tensor(np.diag(diagonal))


def matvec(a: Any, b: Any, name: str | None = None) -> Tensor:
    return tensor(np.matmul(a, b))


def transpose(a: Any, name: str | None = None) -> Tensor:
    return tensor(np.swapaxes(a, -1, -2))


adjoint = transpose

__all__ = [
    "adjoint",
    "cholesky",
    "det",
    "diag",
    "diag_part",
    "eigh",
    "eigvalsh",
    "einsum",
    "inv",
    "logdet",
    "matmul",
    "matvec",
    "norm",
    "slogdet",
    "solve",
    "svd",
    "tensordot",
    "trace",
    "transpose",
]
