"""Import structure: the package stays light to import, and its layers import one way.

The layers, lowest first (docs/architecture.md): a module may import from its own package and
from lower layers only. Function-level imports count too: an import deferred into a function is
still a dependency, and hiding a cycle that way is what this test exists to stop.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import ptrnet

PACKAGE = Path(ptrnet.__file__).parent

# Top-level modules and packages of ptrnet by layer, lowest first. Packages in one layer may not
# import each other. Training, evaluation and inference are one layer in docs/architecture.md;
# here they are ordered so that no two of them form a cycle: evaluation may call inference
# (TSPLIB files), training may call evaluation (validation metrics).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("ptrnet", "data", "quoting"),  # the package root, the data files' paths, quote() for errors
    ("solvers",),
    ("tasks",),
    ("io", "datasets", "compute"),  # files; labelled datasets and batches; devices, precision
    ("model",),
    ("decoding",),
    ("runs",),
    ("inference",),  # loading models (load.py) and the one decoding pass (predict.py)
    ("evaluation",),
    ("training",),
    ("text",),  # the sentence tasks (copy): format, pointer-generator training and decoding
    ("induction",),  # the induction-head lesson: attention-only model, training, measurements
    ("viz",),
    ("web", "reproduce"),  # the page; the paper's tables and the demo table
    ("lessons",),  # the student's exercises and the traps' experiments
    ("api",),  # ptrnet.load, Solver, Result, ptrnet.train
    ("cli",),
    ("__main__",),  # `python -m ptrnet` (and torchrun -m ptrnet) runs the cli
)
RANK = {name: rank for rank, layer in enumerate(LAYERS) for name in layer}


def unit_of(module: str) -> str:
    """``ptrnet.decoding.views`` -> ``decoding``; ``ptrnet`` -> ``ptrnet``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every ptrnet import in ``path``, at any depth of the file."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                found.append((node.lineno, ".".join([*base, node.module or ""]).rstrip(".")))
            else:
                found.append((node.lineno, node.module or ""))
    return [(line, module) for line, module in found if module.split(".")[0] == "ptrnet"]


def layer_violations() -> list[str]:
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = unit_of(module_name(path))
        if source not in RANK:
            problems.append(f"{path}: {source} is in no layer; add it to LAYERS")
            continue
        for line, module in imported_modules(path):
            target = unit_of(module)
            if target == source:
                continue
            if target not in RANK or RANK[target] >= RANK[source]:
                problems.append(f"{path}:{line}: {source} imports {module} (layer order)")
    return problems


def test_layers_import_one_way():
    assert layer_violations() == []


@pytest.mark.parametrize(
    "source, imported, allowed",
    [
        ("ptrnet.inference", "ptrnet.evaluation.evaluate", False),
        ("ptrnet.evaluation.evaluate", "ptrnet.inference", True),
        ("ptrnet.decoding.decode", "ptrnet.runs.checkpoint", False),
        ("ptrnet.io.errors", "ptrnet.datasets.generation", False),  # same layer
        ("ptrnet.cli.eval", "ptrnet.web.app", True),
    ],
)
def test_the_layer_rule_itself(source, imported, allowed):
    """The check the test above runs, on imports that must and must not pass."""
    assert (RANK[unit_of(imported)] < RANK[unit_of(source)]) == allowed


def test_function_level_and_relative_imports_are_found(tmp_path, monkeypatch):
    package = tmp_path / "ptrnet" / "inference"
    package.mkdir(parents=True)
    path = package / "x.py"
    path.write_text("def f():\n    from ptrnet.evaluation import evaluate\n    from . import y\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", tmp_path / "ptrnet")
    assert imported_modules(path) == [(2, "ptrnet.evaluation"), (3, "ptrnet.inference")]


def test_matplotlib_is_not_imported_by_the_package():
    code = "import ptrnet, ptrnet.viz, sys; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_decoding_options_do_not_import_torch():
    """Front ends build DecodeOptions from their flags before anything heavy is loaded."""
    code = "import sys, ptrnet.decoding.options; sys.exit('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
