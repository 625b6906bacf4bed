"""What the sweep records besides passing cases: the refusals, and where the oracles are not
compared. ``tests/test_autograd_sweep.py`` runs the cases and ``docs/generate.py`` writes
the coverage table of ``docs/coverage.md`` from the same lists.
"""

from __future__ import annotations

# name -> what is missing (the call is refused with a TransformError).
REFUSED: dict[str, str] = {
    "jax.zeta": "zeta(x, q) in its exponent x: no closed-form derivative (q is differentiated)",
    "jax.put_along_axis": "np.put_along_axis writes into its argument in place",
    "jax.fill_diagonal": "np.fill_diagonal writes into its argument in place",
    "jax.sum_where": "np.sum(..., where=) is refused (not bound by the rule)",
    "jax.mean_where": "np.mean(..., where=) is refused (not bound by the rule)",
    "jax.nextafter": "np.nextafter is not differentiable (JAX has no rule either)",
    "jax.spacing": "np.spacing is not differentiable (JAX has no rule either)",
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
    "open.clipped_peak": (
        "autograd 1.9.1's VJP of np.max(..., initial=) is NaN where initial is the maximum"
    ),
    "open.copy_params": (
        "autograd 1.9.1 cuts copy.copy(w) of a box that copy.deepcopy has copied (a zero "
        "gradient for that term)"
    ),
    "kw.multi_dot_kw": "autograd 1.9.1 does not trace np.linalg.multi_dot (a zero gradient)",
}
