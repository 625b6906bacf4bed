"""Random programs of the fifth round (``random_users5.py``): whole programs users bring
(likelihoods, models, numerics, language), drawn together.

Each program ``f(x, net, d, p)`` is compared with central finite differences in reverse
mode (``grad``, ``value_and_grad``) and forward mode (``jvp``), with autograd where it
follows the program, on a share with second derivatives (``hvp``, ``hessian``, ``grad``
of ``grad``, the forward Jacobian of ``grad``), and its vector-valued variant through
``vjp`` and the Jacobians in ``x`` (:mod:`random_check5`). The programs are drawn from a
fixed seed: the same sample on every run. A refusal must be a located ``TransformError``
of a kind in :data:`REFUSALS`; any other exception fails.
"""

from __future__ import annotations

import random

import pytest
from random_check5 import Refused, check
from random_users5 import NO_ORACLE5, RETURNS, SNIPPETS

#: Refusals of these kinds are allowed in drawn programs (none is expected: a family
#: drawn is differentiated alone and with the others).
REFUSALS: tuple[str, ...] = ()
#: Families refused whatever they are mixed with (each checked below), not drawn: what
#: the transformer does not model, refused with the construct and the line.
REFUSED = {
    "namedtuple_fields_loop": "call to getattr (no gradient rule)",
    "match_act_names": "'match' statement",
    "match_specs": "'match' statement",
    "match_inline": "'match' statement",
    # an attribute of a layer built in the loss written after it was built
    "keras_inline_class": "a write to the attribute .act of 'layer'",
}
#: Families checked to first order only: a Newton step after a bisection on the parameter
#: (the bisection's result is piecewise constant, so its second derivative is not the
#: root's that finite differences of the gradient see).
FIRST_ORDER = {"bisect_newton_polish"}
DRAWN = [s for s in SNIPPETS if s.name not in REFUSED]


def _draw(seed: int, least: int, most: int, pool: list | None = None) -> tuple[list, int]:
    rng = random.Random(seed)
    pool = DRAWN if pool is None else pool
    return rng.sample(pool, rng.randint(least, most)), rng.randrange(len(RETURNS))


def _run(tmp_path, snippets, ret, seed, *, second=False) -> str:
    try:
        return check(snippets, RETURNS[ret], seed, tmp_path, no_oracle=NO_ORACLE5, second=second)
    except Refused as exc:
        assert any(kind in str(exc) for kind in REFUSALS), ([s.name for s in snippets], str(exc))
        return "refused"


@pytest.mark.parametrize("seed", range(30))
def test_random_user_programs_fifth_round(tmp_path, seed):
    snippets, ret = _draw(7000 + seed, 2, 4)
    _run(tmp_path, snippets, ret, seed)


@pytest.mark.parametrize("seed", range(10))
def test_random_user_programs_fifth_round_second_order(tmp_path, seed):
    snippets, ret = _draw(8000 + seed, 1, 3, [s for s in DRAWN if s.name not in FIRST_ORDER])
    _run(tmp_path, snippets, ret, seed, second=True)


@pytest.mark.parametrize("snippet", DRAWN, ids=lambda s: s.name)
def test_each_family_alone(tmp_path, snippet):
    assert _run(tmp_path, [snippet], 0, 11) in ("checked", "skipped")


def test_most_families_are_checked_not_skipped(tmp_path):
    """Finite differences skip a program whose point sits on a kink: most families alone
    must be checked, or the test above would pass without checking them."""
    outcomes = [_run(tmp_path, [s], 1, 12) for s in DRAWN[::4]]
    assert outcomes.count("checked") >= 0.8 * len(outcomes), outcomes


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_families_are_refused_with_the_construct_and_a_line(tmp_path, name):
    snippets = [s for s in SNIPPETS if s.name == name]
    with pytest.raises(Refused) as info:
        check(snippets, RETURNS[0], 3, tmp_path, no_oracle=NO_ORACLE5)
    message = str(info.value)
    assert REFUSED[name] in message, message
    assert "user_prog4_" in message, message
