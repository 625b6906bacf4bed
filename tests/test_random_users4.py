"""Random programs of the fourth round of user snippets (``random_users4.py``), alone and
mixed with the first three rounds'.

Each program ``f(x, net, d, p)`` (``p`` a dict holding tuples, a list of dicts and a nested
namedtuple) is compared with central finite differences in reverse mode (``grad`` and
``value_and_grad``) and forward mode (``jvp``), with autograd where it follows the program,
and on a share with second derivatives (``hvp``, ``hessian``, ``grad`` of ``grad``, the
forward Jacobian of ``grad``). The programs are drawn from a fixed seed: the same sample on
every run. A refusal must be a located ``TransformError`` of a kind in :data:`REFUSALS`;
any other exception fails.
"""

from __future__ import annotations

import random

import pytest
from random_check4 import Refused, check
from random_users4 import EARLIER, NO_ORACLE_ALL, RETURNS, SNIPPETS, program

#: Refusals of these kinds are allowed in drawn programs (each documented in the earlier
#: rounds' tests; the rest fail the test).
REFUSALS = (
    "also names",  # a = b = h * 1.0; a += ...: Python writes into b as well
    "another entry or variable also holds",  # hs = [h * 1.0] * 2; hs[0] += 1.0
    "in-place update of a view",
    "second derivatives through complex values",
    "which is bound again later, in code differentiated twice",
    "lambda used as a value",
    "used as a value (",
    "call of a partial object",
    # a name two snippets bind to a local function and to a value
    "local function g also assigned",
    # a name a snippet iterates over a dict's keys (differentiated) that another uses as
    # np.roll's shift
    "argument 'shift' of np.roll with a differentiated value",
)
#: Round-4 snippets refused whatever they are mixed with (each has a test below), not drawn.
REFUSED = {
    "property_params": "property .bias of a differentiated Lin",
    # a local factory's inner def is inlined now; the function it returns is a value
    "local_factory": "local function make_scaler_g used as a value",
}
#: Earlier rounds' snippets refused in any program (see test_random_users3.py).
EARLIER_REFUSED = {
    "class_props",
    "class_list_attr",
    "acc_object",
    "list_methods",
    "helper_mutates",
    "helper_puts",
    "getitem_class",
    "gen_late_binding",
    "list_concat_params",
}
DRAWN = [s for s in SNIPPETS if s.name not in REFUSED]
MIXED = DRAWN + [s for s in EARLIER if s.name not in EARLIER_REFUSED]


def _draw(pool: list, seed: int, least: int, most: int) -> tuple[list, int, int]:
    rng = random.Random(seed)
    return rng.sample(pool, rng.randint(least, most)), rng.randrange(len(RETURNS)), seed


def _run(tmp_path, snippets, ret, seed, *, second=False, earlier=False) -> str:
    source = program(snippets, RETURNS[ret], earlier=earlier)
    try:
        return check(source, snippets, seed, tmp_path, no_oracle=NO_ORACLE_ALL, second=second)
    except Refused as exc:
        assert any(kind in str(exc) for kind in REFUSALS), (source, str(exc))
        return "refused"


@pytest.mark.parametrize("seed", range(40))
def test_random_user_programs_fourth_round(tmp_path, seed):
    snippets, ret, seed = _draw(DRAWN, 4000 + seed, 1, 4)
    _run(tmp_path, snippets, ret, seed)


@pytest.mark.parametrize("seed", range(20))
def test_random_user_programs_mixed_with_earlier_rounds(tmp_path, seed):
    snippets, ret, seed = _draw(MIXED, 5000 + seed, 2, 5)
    _run(tmp_path, snippets, ret, seed, earlier=True)


@pytest.mark.parametrize("seed", range(12))
def test_random_user_programs_fourth_round_second_order(tmp_path, seed):
    snippets, ret, seed = _draw(DRAWN, 6000 + seed, 1, 3)
    _run(tmp_path, snippets, ret, seed, second=True)


@pytest.mark.parametrize("snippet", DRAWN, ids=lambda s: s.name)
def test_each_drawn_snippet_alone(tmp_path, snippet):
    assert _run(tmp_path, [snippet], 0, 7) in ("checked", "skipped", "refused")


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_snippets_are_refused_with_the_construct_and_a_line(tmp_path, name):
    snippets = [s for s in SNIPPETS if s.name == name]
    with pytest.raises(Refused) as info:
        check(program(snippets, RETURNS[0]), snippets, 3, tmp_path, no_oracle=NO_ORACLE_ALL)
    message = str(info.value)
    assert REFUSED[name] in message
    assert "user_prog4_" in message, message
