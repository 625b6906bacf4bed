"""The package's modules form layers: each imports only its own layer and those below at
module level (ir/errors/runtime -> rules -> normalize/analysis -> reverse/forward ->
optimize -> emit -> api). Imports of a higher layer happen inside functions, at the
time they run (a transform calls back into the API for the functions it calls).
"""

from __future__ import annotations

import ast
import json
import pathlib
import subprocess
import sys

import pytest

import s2s_ad

PACKAGE = pathlib.Path(s2s_ad.__file__).parent

#: Layer of each module, lowest first (a module of a sub-package takes its package's).
LAYERS: list[set[str]] = [
    # foundation: the IR, errors, generated-code items, the runtime helpers
    {"errors", "ir", "irtrees", "codegen", "codefacts", "cstwalk", "duck", "positions"}
    | {"simplify", "built_objects", "passed_objects", "along"}
    | {"shape_facts", "html", "source", "runtime", "rebind", "aliasing", "endless"}
    | {"view_checks", "view_facts", "state_slots"},
    # derivative rules and what user code marks (custom rules, targets, Variables)
    {"rules", "custom", "targets", "varargs", "packing", "variable", "batching"},
    # the normal form and the facts read from it
    {"normalize", "normal_forms", "analysis", "shifts", "stmt_facts", "value_kinds"}
    | {"call_plans", "shape_analysis", "loop_exits", "scatter", "ordering", "partials"}
    | {"norm_base", "norm_calls", "norm_comps", "norm_exits", "norm_inline", "norm_queries"}
    | {"norm_exprs", "norm_imports", "norm_loops", "norm_scan", "norm_stmts", "norm_try"}
    | {"norm_complex", "container_names", "norm_views", "lazy_values"}
    | {"norm_walrus", "norm_del", "norm_repeat", "object_state", "norm_concat"}
    | {"norm_passed", "norm_restore", "norm_init", "init_facts", "norm_super", "norm_split"}
    | {"norm_append", "norm_classmethod", "norm_variadic", "norm_decorated", "norm_piecewise"},
    # the sweeps
    {"sweep_base", "forward", "reverse", "reverse_calls", "reverse_fwd", "reverse_contribs"}
    | {"reverse_control", "records", "recompute", "hoist", "list_copies"},
    # the optimizer of generated code
    {"optimize", "fold", "fold_early", "rewrite", "gather", "reuse", "trip_records", "release"},
    # emission, and the programs built on emitted code
    {"emit", "lower", "cotangents", "forward_batch", "reverse_batch", "dispatch"}
    | {"second_order"},
    # the API and what is built on it
    {"api", "wrapper", "transforms", "stages", "testing", "tape", "tape_block", "replay"}
    | {"tape_nested", "tape_inner", "tape_fast", "tf", "__init__", "__main__"},
]
LAYER = {name: k for k, names in enumerate(LAYERS) for name in names}


def _modules() -> list[str]:
    """Every top-level module or sub-package of s2s_ad."""
    names = {p.stem for p in PACKAGE.glob("*.py")}
    names |= {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    return sorted(names)


def _module_level_imports(path: pathlib.Path) -> set[str]:
    """The top-level s2s_ad modules ``path`` imports outside functions and classes."""
    tree = ast.parse(path.read_text())
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                out.add(node.module.split(".")[0])
            else:
                out.update(alias.name for alias in node.names)
    return out


def test_every_module_has_a_layer():
    missing = [name for name in _modules() if name not in LAYER]
    assert not missing, f"place these modules in tests/test_layers.py LAYERS: {missing}"


@pytest.mark.parametrize("name", _modules())
def test_module_level_imports_stay_at_or_below_the_layer(name):
    path = PACKAGE / f"{name}.py"
    if not path.exists():
        path = PACKAGE / name / "__init__.py"
    higher = {
        dep: LAYER[dep]
        for dep in _module_level_imports(path)
        if dep in LAYER and LAYER[dep] > LAYER.get(name, len(LAYERS))
    }
    assert not higher, f"{name} (layer {LAYER.get(name)}) imports higher layers: {higher}"


_PROBE = """
import importlib, json, sys
for name in json.loads(sys.argv[1]):
    importlib.import_module("s2s_ad." + name if name != "__init__" else "s2s_ad")
print(json.dumps(sorted({m.split(".")[1] for m in sys.modules if m.startswith("s2s_ad.")})))
"""


@pytest.mark.parametrize("k", range(1, len(LAYERS) - 1))
def test_importing_the_lower_layers_loads_nothing_above_them(k):
    # the package's __init__ loads the API: import the modules of layers <= k directly
    below = sorted(n for n in LAYER if LAYER[n] <= k and n not in ("__init__", "__main__"))
    probe = "import sys, types; sys.modules.setdefault('s2s_ad', types.ModuleType('s2s_ad'))"
    probe += f"; sys.modules['s2s_ad'].__path__ = [{str(PACKAGE)!r}]" + _PROBE
    out = subprocess.run(
        [sys.executable, "-c", probe, json.dumps(below)],
        capture_output=True,
        text=True,
        check=True,
        cwd=PACKAGE.parent,
    )
    loaded = json.loads(out.stdout)
    above = sorted(m for m in loaded if LAYER.get(m, -1) > k)
    assert not above, f"importing layers <= {k} loaded {above}"


_FRESH = """
import json, sys
import s2s_ad
light = {m: m in sys.modules for m in ("libcst", "numpy.random", "scipy")}
sys.path.insert(0, sys.argv[1])
import noisy
import numpy as np
x = np.array([0.5, -1.0, 2.0])
got = s2s_ad.grad(noisy.loss)(x)
print(json.dumps({"light": light, "grad": list(got), "want": list(noisy.expected(x))}))
"""

_NOISY = """
import numpy as np


def loss(x):
    noise = np.random.rand(3) * 0.0  # a draw: no gradient flows through it
    jitter = np.random.default_rng(0).standard_normal(3)
    return np.sum(x * x) + np.sum(noise * x) + np.random.randint(1, 2) * np.sum(jitter)


def expected(x):
    return 2.0 * x
"""


def test_import_loads_no_parser_nor_random_module_and_draws_still_cut_gradients(tmp_path):
    (tmp_path / "noisy.py").write_text(_NOISY)
    out = subprocess.run(
        [sys.executable, "-c", _FRESH, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=PACKAGE.parent,
    )
    found = json.loads(out.stdout)
    assert found["light"] == {"libcst": False, "numpy.random": False, "scipy": False}
    assert found["grad"] == pytest.approx(found["want"])
