"""What the sweep records besides passing cases: the refusals, and where the oracles are not
compared. ``tests/test_autograd_sweep.py`` runs the cases and ``docs/generate.py`` writes
the coverage table of ``docs/coverage.md`` from the same lists.
"""

from __future__ import annotations

# name -> what is missing (the call is refused with a TransformError).
REFUSED: dict[str, str] = {
    "jax.zeta": "zeta(x, q) in its exponent x: no closed-form derivative (q is differentiated)",
    "jax.logsumexp_sign": "logsumexp(..., return_sign=True) returns a tuple with a sign",
    "jax.tensorinv": "np.linalg.tensorinv has no rule",
    "jax.tensorsolve": "np.linalg.tensorsolve has no rule",
    "jax.cond": "np.linalg.cond has no rule",
    "jax.sla_lu": "scipy.linalg.lu (the permuted factors) has no rule; lu_factor has",
    "jax.sla_block_diag": "scipy.linalg.block_diag has no rule",
    "jax.sla_logm": "scipy.linalg.logm has no rule",
    "jax.sla_polar": "scipy.linalg.polar has no rule",
    "jax.sla_toeplitz": "scipy.linalg.toeplitz has no rule",
    "jax.put_along_axis": "np.put_along_axis writes into its argument in place",
    "jax.fill_diagonal": "np.fill_diagonal writes into its argument in place",
    "jax.diff_append": "np.diff's append= and prepend= are constants (their gradient is refused)",
    "jax.polyfit": "np.polyfit has no rule",
    "jax.vander": "np.vander has no rule",
    "jax.max_initial": "np.max(..., initial=) has no rule",
    "jax.sum_where": "np.sum(..., where=) has no rule",
    "jax.mean_where": "np.mean(..., where=) has no rule",
    "jax.modf": "np.modf (a tuple) has no rule",
    "jax.frexp": "np.frexp (a tuple) has no rule",
    "jax.pad_linear_ramp": "np.pad with mode='linear_ramp' has no rule",
    "jax.pad_mean": "np.pad with mode='mean' has no rule",
    "jax.insert": "np.insert has no rule",
    "jax.delete": "np.delete has no rule",
    "jax.resize": "np.resize has no rule",
    "jax.extract": "np.extract has no rule (index with the mask instead)",
    "jax.piecewise": "np.piecewise calls functions: no rule (use np.where)",
    "jax.logspace": "np.logspace has no rule",
    "jax.geomspace": "np.geomspace has no rule",
    "jax.i0": "np.i0 has no rule (scipy.special.i0 has)",
    "jax.nextafter": "np.nextafter has no rule",
    "jax.spacing": "np.spacing has no rule",
    "kw.kron_3d": "np.kron of arrays with more than two dimensions has no rule",
}
# name -> why forward mode is refused while reverse mode runs.
FWD_REFUSED: dict[str, str] = {
    "extra.svd_named": (
        "forward mode through np.linalg.svd(full_matrices=True) of a non-square matrix: the "
        "extra singular vectors are not unique (reverse mode reads only S here)"
    ),
}
# name -> why the oracle's (autograd's, else JAX's) answer is not compared (it is wrong).
AUTOGRAD_SKIP: dict[str, str] = {
    "np.diag": "autograd 1.9.1's VJP of np.diag(x, k) of a non-square x has the wrong shape",
    "np.dstack": "autograd 1.9.1 gives a zero gradient through np.dstack of 2-D arrays",
    "linalg.norm_inf": "autograd 1.9.1's VJP of norm(x, inf) is NaN off the maximum",
    "linalg.multi_dot": "autograd 1.9.1 does not trace np.linalg.multi_dot (a zero gradient)",
    "np.block": "autograd 1.9.1 does not trace np.block (a zero gradient)",
    "np.block_rows": "autograd 1.9.1 does not trace np.block (a zero gradient)",
    "np.choose": "autograd 1.9.1 does not trace np.choose (a zero gradient)",
    "extra.norm_keep": "autograd 1.9.1's VJP of norm(x, axis, keepdims=True) has the wrong shape",
    "scipy.chi2_logpdf": "autograd 1.9.1's chi2.logpdf has a zero gradient in x",
    "scipy.convolve": "autograd's convolve has its own signature (axes, dot_axes): not swapped in",
    "scipy.convolve_valid": "autograd's convolve has its own signature: not swapped in",
    "jax.norm_vec_inf": "autograd 1.9.1's VJP of norm(x, inf) is NaN off the maximum",
    "jax.where_broadcast": "autograd 1.9.1's VJP of np.where does not undo broadcasting",
    "jax.partition_axis": "jnp.partition orders the entries within each side unlike NumPy",
}
# name -> why autograd's answer is wrong there: JAX's is compared instead.
AUTOGRAD_WRONG: dict[str, str] = {
    "kw.norm_rows_keep": "autograd 1.9.1: norm(x, 2, axis, keepdims=True) has a wrong VJP",
    "kw.norm_batch_nuc": "autograd 1.9.1's nuclear norm over the last two axes of a stack",
    "kw.solve_broadcast": "autograd 1.9.1's VJP of solve(a, b) with b a stack and a one matrix",
    "kw.trapezoid_kw": "autograd 1.9.1 does not trace np.trapezoid (a zero gradient)",
    "kw.multi_dot_kw": "autograd 1.9.1 does not trace np.linalg.multi_dot (a zero gradient)",
}
