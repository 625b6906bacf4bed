"""``python -m s2s_ad FILE.py:FUNC --stage S``: each stage of the transformer as text.

The normal form must be Python that computes what the user's function computes (checked
over the whole corpus by running it), activity marks must follow the data flow of the
parameters differentiated, and the sweeps before and after the optimizer must both be
valid Python, the optimized one never longer.
"""

from __future__ import annotations

import ast
import copy
import textwrap

import numpy as np
import pytest
from corpus import collect
from fd import flatten

from s2s_ad.__main__ import main
from s2s_ad.emit import AD
from s2s_ad.stages import STAGES, stage

CASES = collect()


def _plain(fun):
    """The Python function under a corpus entry (a decorated, wrapped or bound one unwrapped)."""
    fun = getattr(fun, "__wrapped__", fun)
    fun = getattr(fun, "fun", fun)
    return getattr(fun, "__func__", fun)


@pytest.mark.parametrize("case", CASES, ids=[c.label for c in CASES])
def test_normal_form_computes_what_the_function_computes(case):
    fun = _plain(case.fun)
    text = stage(case.fun, "normal", ())
    namespace = dict(fun.__globals__, _ad=AD)
    if fun.__closure__:
        cells = (cell.cell_contents for cell in fun.__closure__)
        namespace.update(zip(fun.__code__.co_freevars, cells, strict=True))
    exec(text, namespace)  # noqa: S102 (the stage's text is what is under test)
    normal = namespace[text[4 : text.index("(")]]
    for point in case.points:
        args = case.args(point)
        bound = getattr(case.fun, "__self__", None)
        args_normal = args if bound is None else (bound, *args)
        want = case.fun(*copy.deepcopy(args))
        got = normal(*copy.deepcopy(args_normal))
        np.testing.assert_allclose(flatten(got), flatten(want), rtol=1e-12, atol=0)


MODEL = textwrap.dedent(
    """
    import numpy as np


    def mlp_loss(params, x, labels):
        def dense(layer, h):
            W, b = layer
            return np.tanh(h @ W + b)

        h = x
        for layer in params:
            h = dense(layer, h)
        n = len(labels)
        shift = np.max(h, axis=1, keepdims=True)
        logp = h - shift - np.log(np.sum(np.exp(h - shift), axis=1, keepdims=True))
        return -np.sum(logp[np.arange(n), labels]) / n
    """
)


@pytest.fixture
def model_file(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    return path


def _assignments(text: str) -> dict[str, str]:
    """Target -> activity comment of each assignment line of the ``activity`` stage."""
    out = {}
    for line in text.splitlines():
        code, _, mark = line.strip().partition("  # ")
        if " = " in code and not code.startswith("#"):
            out.setdefault(code.split(" = ")[0], mark)
    return out


def test_activity_marks_follow_the_parameters(model_file, capsys):
    assert main([f"{model_file}:mlp_loss", "--stage", "activity", "--wrt", "params"]) == 0
    marks = _assignments(capsys.readouterr().out)
    assert marks["n"] == "useful"  # len(labels): needed by the loss, not varied by params
    assert marks["h"] == "active"
    assert marks["logp"] == "active"
    assert marks["shift"] == "varied"  # a stabilising shift: the loss does not depend on it
    # with respect to the data only, the labels' count is still not varied
    assert main([f"{model_file}:mlp_loss", "--stage", "activity", "--wrt", "x"]) == 0
    assert _assignments(capsys.readouterr().out)["n"] == "useful"


def test_sweeps_and_optimized_are_python_and_the_optimizer_only_removes(model_file, capsys):
    texts = {}
    for name in ("sweeps", "optimized"):
        assert main([f"{model_file}:mlp_loss", "--stage", name, "--wrt", "params"]) == 0
        texts[name] = capsys.readouterr().out
        ast.parse(texts[name])
        assert texts[name].startswith("def mlp_loss_grad(params, x, labels):")
    assert len(texts["optimized"].splitlines()) <= len(texts["sweeps"].splitlines())
    # the default stage is the optimized code
    assert main([f"{model_file}:mlp_loss", "--wrt", "params"]) == 0
    assert capsys.readouterr().out == texts["optimized"]


def test_forward_mode_stages(model_file, capsys):
    for name in ("sweeps", "optimized"):
        assert main([f"{model_file}:mlp_loss", "--stage", name, "--mode", "forward"]) == 0
        assert "def mlp_loss_jvp(" in capsys.readouterr().out


def test_normal_form_keeps_user_lines_as_comments(model_file, capsys):
    assert main([f"{model_file}:mlp_loss", "--stage", "normal"]) == 0
    out = capsys.readouterr().out
    assert "    # L15: logp = h - shift - np.log(" in out
    assert out.startswith("def mlp_loss(params, x, labels):")


def test_unknown_stage_is_a_one_line_error(model_file, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([f"{model_file}:mlp_loss", "--stage", "parsed"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.startswith("error: ")
    assert set(STAGES) == {"normal", "activity", "sweeps", "optimized"}


PARAMS_MODULE = textwrap.dedent(
    """
    from __future__ import annotations

    from dataclasses import dataclass

    import numpy as np


    @dataclass(frozen=True)
    class Config:
        ridge: float = 0.1


    def predict_loss(w, b, x, y, config=Config()):
        r = x @ w + b - y
        return np.mean(r * r) + config.ridge * np.sum(w * w)
    """
)


def test_a_file_defining_a_dataclass_loads(tmp_path, capsys):
    """The file is a module while it runs: ``@dataclass`` looks its module up by name."""
    path = tmp_path / "fit.py"
    path.write_text(PARAMS_MODULE)
    assert main([f"{path}:predict_loss", "--wrt", "w,b"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("def predict_loss_grad(w, b, x, y, config):")
    assert "config.ridge" in out
