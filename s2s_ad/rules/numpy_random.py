"""Random draws of ``np.random``: no gradient flows through them.

Loaded once ``numpy.random`` is imported (``REGISTRY.defer``): ``import numpy`` does not
import it, and importing it costs more than the rest of the rules (about 40 ms).
"""

from __future__ import annotations

import numpy as np

from .nondiff import _names
from .notes import NOTES
from .registry import REGISTRY, nondiff, set_jvps, vjp_rule

random = nondiff(
    "np.random",
    _names(
        np.random,
        "rand randn randint random random_sample standard_normal seed default_rng "
        "RandomState binomial poisson",
    ),
)


# --- draws differentiated by reparameterisation -------------------------------------------
# A draw of a location-scale family is ``loc + scale * z`` for a standard draw ``z`` that
# does not depend on the parameters (as JAX's and autograd's users write it): the draw's
# derivative in ``loc`` is 1 and in ``scale`` is ``z = (ans - loc) / scale``, recovered
# from the value drawn, so the random stream is the one the user's call consumes. Rules
# for the methods of every ``np.random.Generator`` and ``np.random.RandomState`` (also
# the global state's ``np.random.normal``); a parameter without a template (``shape`` of
# ``gamma``) is refused by name.

_Z = "((ans - loc) / scale)"
_LOC_SCALE = {
    "loc": "_ad.unbroadcast(g, loc)",
    "scale": f"_ad.unbroadcast(g * {_Z}, scale)",
}
_LOC_SCALE_T = {"loc": "t + np.zeros(np.shape(ans))", "scale": f"t * {_Z}"}
_U = "((ans - low) / (high - low))"
_LOGNORMAL_Z = "((np.log(ans) - mean) / sigma)"

# method name -> (parameters with defaults, reverse templates, forward templates)
_DRAWS: dict[str, tuple[dict[str, str], dict[str, str], dict[str, str]]] = {
    "normal": ({"loc": "0.0", "scale": "1.0"}, _LOC_SCALE, _LOC_SCALE_T),
    "laplace": ({"loc": "0.0", "scale": "1.0"}, _LOC_SCALE, _LOC_SCALE_T),
    "logistic": ({"loc": "0.0", "scale": "1.0"}, _LOC_SCALE, _LOC_SCALE_T),
    "gumbel": ({"loc": "0.0", "scale": "1.0"}, _LOC_SCALE, _LOC_SCALE_T),
    "uniform": (
        {"low": "0.0", "high": "1.0"},
        {
            "low": f"_ad.unbroadcast(g * (1.0 - {_U}), low)",
            "high": f"_ad.unbroadcast(g * {_U}, high)",
        },
        {"low": f"t * (1.0 - {_U})", "high": f"t * {_U}"},
    ),
    "exponential": (
        {"scale": "1.0"},
        {"scale": "_ad.unbroadcast(g * ans / scale, scale)"},
        {"scale": "t * ans / scale"},
    ),
    "gamma": (
        {"shape": "1.0", "scale": "1.0"},
        {"scale": "_ad.unbroadcast(g * ans / scale, scale)"},
        {"scale": "t * ans / scale"},
    ),
    "lognormal": (
        {"mean": "0.0", "sigma": "1.0"},
        {
            "mean": "_ad.unbroadcast(g * ans, mean)",
            "sigma": f"_ad.unbroadcast(g * ans * {_LOGNORMAL_Z}, sigma)",
        },
        {"mean": "t * ans", "sigma": f"t * ans * {_LOGNORMAL_Z}"},
    ),
}

# their names, for the rules' tests (checked on programs: each call draws anew)
DRAW_RULES = frozenset(f"np.random.Generator.{name}" for name in _DRAWS)


def _register_draws() -> None:
    for name, (params, vjps, jvps) in _DRAWS.items():
        rule = vjp_rule(
            f"np.random.Generator.{name}",
            [],
            (*params, "size"),
            {**vjps, "size": "0.0"},
            [],
            defaults={**params, "size": "None"},
        )
        set_jvps(rule, **jvps, size="0.0")
        NOTES[rule.name] = (
            "reparameterised: the derivative of the value drawn at fixed standard draws; "
            f"also `np.random.RandomState`'s and `np.random.{name}`; second derivatives "
            "through a generator reached at run time are refused"
        )
        for kind in (np.random.Generator, np.random.RandomState):
            REGISTRY.add_instance_method(kind, name, rule)


_register_draws()
