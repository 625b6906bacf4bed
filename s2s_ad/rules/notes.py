"""What the gradient of a rule means where the function is not smooth or its result not
unique: one short note per rule name, shown on the docs page of supported functions
(``docs/functions.md``, written by ``docs/generate.py``). A test checks that every key
names a registered rule, so a renamed rule cannot leave its note behind.
"""

from __future__ import annotations

_TIES_MAX = "ties: the gradient is split equally among the maximal entries (as JAX)"
_TIES_MIN = "ties: the gradient is split equally among the minimal entries (as JAX)"
_SYMMETRIC = (
    "reads one triangle of its input; the gradient is the symmetric one, valid for "
    "symmetric perturbations (as JAX and autograd)"
)
_EIG = (
    "eigenvectors are defined up to sign (up to rotation for repeated eigenvalues): only "
    "functions invariant to that choice have a gradient, and the eigenvector terms divide "
    "by the gaps between eigenvalues, so they are infinite where two coincide; eigenvalue "
    "gradients are always defined. " + _SYMMETRIC
)
_SVD = (
    "singular vectors are defined up to sign (up to rotation for repeated values): only "
    "functions invariant to that choice have a gradient, infinite where two singular "
    "values coincide or, for a non-square matrix, where one is zero. With "
    "`full_matrices=True` the extra vectors of a non-square matrix are not unique: a "
    "gradient reaching them raises `TransformError` when it runs"
)
_SHAPE_SERIES = (
    "in the shape parameters: series or continued fractions summed to round-off (no closed "
    "form; tested against high-precision differences, not SymPy), for shapes up to 1e6; a "
    "second derivative in them is refused"
)
_KINK = "the derivative at the kink is taken as 0 (the subgradient JAX and autograd use)"

NOTES: dict[str, str] = {
    # reductions and orderings
    "np.max": _TIES_MAX,
    "np.min": _TIES_MIN,
    "np.maximum.reduce": _TIES_MAX,
    "np.minimum.reduce": _TIES_MIN,
    "ndarray.max": _TIES_MAX,
    "ndarray.min": _TIES_MIN,
    "max": "ties: the gradient is split equally among the arguments equal to the result",
    "min": "ties: the gradient is split equally among the arguments equal to the result",
    "np.prod": "exact at zeros: the product of the other entries, never a division by zero",
    "ndarray.prod": "exact at zeros: the product of the other entries, never a division",
    "np.cumprod": "exact at zeros: products of the other entries, never a division by zero",
    "ndarray.cumprod": "exact at zeros: products of the other entries, never a division",
    "np.median": (
        "the gradient goes to the middle entry of each slice (half to each of the two middle "
        "ones for an even length); among equal entries, to the one a stable sort puts there "
        "(as JAX)"
    ),
    "np.nansum": "NaN entries are skipped: their gradient is 0 (as JAX)",
    "np.nanmean": "NaN entries are skipped: their gradient is 0 (as JAX)",
    "np.nanmax": "NaN entries are skipped; ties split the gradient equally",
    "np.nanmin": "NaN entries are skipped; ties split the gradient equally",
    "np.nanprod": "NaN entries are skipped: their gradient is 0",
    "np.nancumsum": "NaN entries are skipped: their gradient is 0",
    "np.nanvar": "NaN entries are skipped: their gradient is 0",
    "np.nanstd": "NaN entries are skipped: their gradient is 0",
    "np.quantile": (
        "method='linear' only (others are refused); the gradient goes to the two order "
        "statistics interpolated, among ties to the one a stable sort puts there"
    ),
    "np.percentile": "as `np.quantile` with `q / 100`",
    "np.einsum": "`optimize=` is accepted (it changes no value)",
    "scipy.linalg.eigh": "the symmetric gradient; `b=` and subsets are refused",
    "scipy.linalg.eigvalsh": "the symmetric gradient; `b=` and subsets are refused",
    "scipy.linalg.qr": (
        "`mode='full'` (the default) of a tall matrix, `pivoting=True` and `mode='raw'` are refused"
    ),
    "scipy.linalg.pinv": "constant rank; `return_rank=True` is refused",
    "np.average": "`returned=True` (a tuple) is refused when its gradient runs",
    "np.cov": "`fweights` and `aweights` are refused when the gradient runs",
    "scipy.linalg.sqrtm": "real square roots only: a complex result is refused",
    "scipy.special.entr": "the derivative is infinite at 0 (the one-sided limit)",
    "scipy.special.rel_entr": "the derivative in `x` is infinite at `x == 0`",
    "scipy.stats.dirichlet.logpdf": (
        "in `alpha` only: `x` must stay on the simplex, so a gradient in `x` is refused"
    ),
    "scipy.stats.dirichlet.pdf": (
        "in `alpha` only: `x` must stay on the simplex, so a gradient in `x` is refused"
    ),
    "np.ptp": "ties: the gradient is split equally among the maximal (and the minimal) entries",
    "ndarray.take": "repeated indices accumulate their gradients (all of `mode`)",
    "np.sort": "ties: each sorted entry's gradient goes back to the entry `argsort` picked",
    "np.linalg.norm": (
        "zero gradient at the zero vector (the norm is not differentiable there); the "
        "nuclear and spectral norms at second order are refused"
    ),
    "np.abs": _KINK,
    "abs": _KINK,
    "np.maximum": "ties: the gradient is split equally between the two arguments (as JAX)",
    "np.minimum": "ties: the gradient is split equally between the two arguments (as JAX)",
    "np.clip": "at a bound the value counts as inside the interval",
    "np.where": "the condition carries no gradient; each branch gets the gradient where chosen",
    "np.sqrt": "infinite at 0 (as the derivative is)",
    "np.interp": (
        "in `x`: the slope of the segment (the right one at a knot), 0 outside the knots; in "
        "`fp`: the interpolation weights; `left`/`right`: where `x` lies outside (with "
        "`period`: none); `xp` is not differentiated"
    ),
    "np.take": "repeated indices accumulate their gradients (all of `mode`)",
    "np.take_along_axis": "repeated indices accumulate their gradients",
    "dict": "a dict copied, or built from (key, value) pairs (the last pair of a key "
    "takes its gradient); `{**a, 'k': x, **b}` merges the same way",
    "np.pad": "the padded entries send their gradient to the entries they copy (`mean` "
    "and `linear_ramp`: that they mix; `maximum`, `minimum`: that the statistic picks, "
    "`median`: the middle one, or the middle two half each); `reflect_type='odd'` is refused",
    "np.sinc": "exact at 0 (derivative 0 there)",
    "np.nan_to_num": "replaced entries (NaN, infinities) get no gradient",
    "np.real": "real input only (complex inputs are refused)",
    "np.real_if_close": "real input only (complex inputs are refused)",
    "np.partition": "the gradient follows the entries as `np.argpartition` moves them",
    "np.cross": "2-vectors count as 3-vectors with a zero third component",
    "np.astype": "an integer or boolean `dtype` cuts the gradient",
    "np.gradient": "linear in `f`; the spacings are not differentiated",
    "np.select": "the conditions carry no gradient",
    # np.linalg
    "np.linalg.cholesky": _SYMMETRIC,
    "np.linalg.eigh": _EIG,
    "np.linalg.eigvalsh": (
        "eigenvalue gradients are defined also for repeated eigenvalues. " + _SYMMETRIC
    ),
    "np.linalg.svd": _SVD,
    "np.linalg.svdvals": "defined also for repeated singular values; not at a zero value",
    "np.linalg.qr": "reduced mode of a matrix with at least as many rows as columns, full rank",
    "np.linalg.pinv": "valid where the rank is constant (full rank, or away from rank changes)",
    "np.linalg.lstsq": "full column rank; the rank and singular values carry no gradient",
    "np.linalg.slogdet": "the sign carries no gradient; the log-determinant is `inv(a).T`",
    "np.linalg.det": "`det(a) inv(a).T`: not defined at a singular matrix (NumPy raises)",
    "np.linalg.inv": "singular matrices raise as NumPy does",
    "np.linalg.matrix_power": "negative powers go through `inv(a)`",
    # SciPy
    "scipy.linalg.cholesky": _SYMMETRIC,
    "scipy.linalg.cho_factor": (
        _SYMMETRIC + "; the returned factor's unused triangle holds arbitrary values and "
        "carries no gradient"
    ),
    "scipy.stats.t.cdf": _SHAPE_SERIES,
    "scipy.stats.t.sf": _SHAPE_SERIES,
    "scipy.stats.t.logcdf": _SHAPE_SERIES,
    "scipy.stats.t.logsf": _SHAPE_SERIES,
    "scipy.stats.beta.cdf": _SHAPE_SERIES,
    "scipy.stats.beta.sf": _SHAPE_SERIES,
    "scipy.stats.beta.logcdf": _SHAPE_SERIES,
    "scipy.stats.beta.logsf": _SHAPE_SERIES,
    "scipy.stats.poisson.logpmf": "the counts `k` are integers: no gradient",
    "scipy.stats.poisson.pmf": "the counts `k` are integers: no gradient",
    "scipy.stats.binom.logpmf": "the counts `k`, `n` are integers: no gradient",
    "scipy.stats.binom.pmf": "the counts `k`, `n` are integers: no gradient",
    "scipy.stats.laplace.logpdf": _KINK + " (at `x == loc`)",
    "scipy.stats.laplace.pdf": _KINK + " (at `x == loc`)",
    "scipy.stats.multivariate_normal.logpdf": (
        "`cov` may be a matrix, a vector (diagonal) or a scalar. " + _SYMMETRIC
    ),
    "scipy.stats.multivariate_normal.pdf": (
        "`cov` may be a matrix, a vector (diagonal) or a scalar. " + _SYMMETRIC
    ),
    "np.maximum.accumulate": "ties: each output's gradient goes to the latest entry equal to it",
    "np.minimum.accumulate": "ties: each output's gradient goes to the latest entry equal to it",
    "np.modf": "the integer part carries no gradient",
    "np.frexp": "the exponent carries no gradient",
    "np.linalg.cond": (
        "`p` of None, 2, -2 through the extreme singular values (infinite where two "
        "coincide); other norms through `norm(x, p) * norm(inv(x), p)` (single matrices)"
    ),
    "np.polyfit": (
        "the coefficients alone (`full=True` and `cov=` are refused); `x` and `y` are "
        "differentiated, `w` is a constant"
    ),
    "scipy.linalg.lu": "square matrices; the pivoting is held fixed and `p` carries no gradient",
    "scipy.linalg.logm": "real logarithms only: a complex one is refused",
    "scipy.linalg.polar": "square matrices of full rank (else the Sylvester equation is singular)",
    "statistics.variance": "`xbar` given is refused (the variance then reads it)",
    "scipy.special.logsumexp": "`return_sign=True`: the sign carries no gradient",
    "scipy.special.gammainc": _SHAPE_SERIES,
    "scipy.special.gammaincc": _SHAPE_SERIES,
    "scipy.stats.gamma.cdf": _SHAPE_SERIES,
    "scipy.stats.gamma.sf": _SHAPE_SERIES,
    "scipy.stats.gamma.logcdf": _SHAPE_SERIES,
    "scipy.stats.gamma.logsf": _SHAPE_SERIES,
    "scipy.special.betainc": _SHAPE_SERIES,
}
