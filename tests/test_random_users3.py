"""Property test: random programs of the third round of user snippets (``random_users3.py``),
alone and mixed with the first two rounds' (``random_users.py``).

Each program is compared with central finite differences in reverse and forward mode,
with autograd or JAX where they follow it, and on a share with second derivatives
(``hvp``, ``hessian``, ``grad`` of ``grad``, forward Jacobians). A refusal must be a
located ``TransformError`` of a kind in :data:`REFUSALS`; any other exception fails.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from random_users import RETURNS, Refused
from random_users import SNIPPETS as EARLIER
from random_users3 import SNIPPETS, check, program

#: Refusals of these kinds are allowed (each documented; the rest fail the test).
REFUSALS = (
    "also names",  # a = b = h * 1.0; a += ...: Python writes into b as well
    "another entry or variable also holds",  # hs = [h * 1.0] * 2; hs[0] += 1.0
    "in-place update of a view",
    "second derivatives through complex values",
    "which is bound again later, in code differentiated twice",
    "lambda used as a value",
    "used as a value (",
    "call of a partial object",
)
#: Snippets refused whatever they are mixed with (each has a test below), not drawn.
REFUSED = {
    "class_props": "property .first of a differentiated Model",
    "class_list_attr": "in-place change of the value held in the attribute .values",
    "acc_object": "in-place method call acc.step()",
    "list_methods": "in-place method call acc.reverse()",
    "helper_mutates": "call to bump_, which may write into its argument 'h'",
    "helper_puts": "call to put, which may write into its argument 'cache'",
    "getitem_class": "Params defines __getitem__",
    "gen_late_binding": "call to next",
}
DRAWN = [s for s in SNIPPETS if s.name not in REFUSED]
MIXED = DRAWN + [s for s in EARLIER if s.name != "list_concat_params"]
_EXAMPLES = int(os.environ.get("S2S_AD_EXAMPLES", "12"))
_SETTINGS = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
}


def _run(tmp_path, snippets, ret, seed, second):
    source = program(snippets, RETURNS[ret])
    try:
        return check(source, snippets, seed, tmp_path, second=second)
    except Refused as exc:
        assert any(kind in str(exc) for kind in REFUSALS), (source, str(exc))
        return "refused"


@settings(max_examples=_EXAMPLES, **_SETTINGS)
@given(
    st.lists(st.sampled_from(DRAWN), min_size=1, max_size=4),
    st.integers(0, len(RETURNS) - 1),
    st.integers(0, 2**16),
)
def test_random_user_programs_third_round(tmp_path, snippets, ret, seed):
    _run(tmp_path, snippets, ret, seed, second=False)


@settings(max_examples=max(_EXAMPLES // 2, 5), **_SETTINGS)
@given(
    st.lists(st.sampled_from(MIXED), min_size=2, max_size=5),
    st.integers(0, len(RETURNS) - 1),
    st.integers(0, 2**16),
)
def test_random_user_programs_mixed_rounds(tmp_path, snippets, ret, seed):
    _run(tmp_path, snippets, ret, seed, second=False)


@settings(max_examples=max(_EXAMPLES // 4, 5), **_SETTINGS)
@given(
    st.lists(st.sampled_from(DRAWN), min_size=1, max_size=3),
    st.integers(0, len(RETURNS) - 1),
    st.integers(0, 2**16),
)
def test_random_user_programs_third_round_second_order(tmp_path, snippets, ret, seed):
    _run(tmp_path, snippets, ret, seed, second=True)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_snippets_are_refused_at_the_user_line(tmp_path, name):
    snippets = [s for s in SNIPPETS if s.name == name]
    with pytest.raises(Refused, match="user_prog_") as info:
        check(program(snippets, RETURNS[0]), snippets, 3, tmp_path)
    assert REFUSED[name] in str(info.value)
