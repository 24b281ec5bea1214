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
    ("searches",),  # searches after decoding (RRC needs a loaded model; TSPLIB eval runs them)
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


def module_name(path: Path, package: Path | None = None) -> str:
    """``<package>/decoding/views.py`` -> ``ptrnet.decoding.views`` (``package``: PACKAGE)."""
    parts = path.relative_to((package or PACKAGE).parent).with_suffix("").parts
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


def module_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Every module of ``package`` -> the modules of it that it imports, from the source.

    Every import counts, at any depth of the file: at module level, deferred into a function,
    or under ``if TYPE_CHECKING`` (a type-only import is still a dependency, and a cycle hidden
    behind one breaks as soon as someone needs the name at run time). ``from ptrnet.a import b``
    is an edge to ``ptrnet.a.b`` when that is a module, else to ``ptrnet.a``. Not counted: the
    implicit import of a module's own package, which would put every package whose
    ``__init__`` imports its modules in a cycle with them.
    """
    paths = {module_name(path, package): path for path in package.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        own = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = own.split(".")
                    base = ".".join([*parts[: len(parts) - node.level + 1], base]).rstrip(".")
                targets |= {
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in paths else base
                    for alias in node.names
                }
        graph[name] = {target for target in targets if target in paths and target != name}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (its modules in import order, the first repeated at the end) per strongly
    connected group of modules that import each other; [] when the imports form a DAG."""
    cycles, state = [], dict.fromkeys(graph, 0)  # 0 unseen, 1 on the path, 2 finished
    for root in sorted(graph):
        if state[root]:
            continue
        path, stack = [root], [iter(sorted(graph[root]))]
        state[root] = 1
        while stack:
            target = next(stack[-1], None)
            if target is None:
                state[path.pop()] = 2
                stack.pop()
            elif state[target] == 1:
                cycles.append([*path[path.index(target) :], target])
            elif state[target] == 0:
                state[target] = 1
                path.append(target)
                stack.append(iter(sorted(graph[target])))
    return cycles


def test_the_package_has_no_import_cycles():
    assert import_cycles(module_graph()) == []


def test_the_cycle_finder_finds_cycles_through_deferred_and_type_only_imports(tmp_path):
    package = tmp_path / "ptrnet"
    (package / "a").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a" / "__init__.py").write_text("from ptrnet.a import x\n")
    (package / "a" / "x.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ptrnet.a.y import Y\n"
    )
    (package / "a" / "y.py").write_text("def f():\n    from . import z\n")
    (package / "a" / "z.py").write_text("from ptrnet.a import x\n")
    graph = module_graph(package)
    assert graph["ptrnet.a"] == {"ptrnet.a.x"} and graph["ptrnet.a.y"] == {"ptrnet.a.z"}
    assert import_cycles(graph) == [["ptrnet.a.x", "ptrnet.a.y", "ptrnet.a.z", "ptrnet.a.x"]]
    (package / "a" / "z.py").write_text("import numpy\n")
    assert import_cycles(module_graph(package)) == []


def test_matplotlib_is_not_imported_by_the_package():
    code = "import ptrnet, ptrnet.viz, sys; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_decoding_options_do_not_import_torch():
    """Front ends build DecodeOptions from their flags before anything heavy is loaded."""
    code = "import sys, ptrnet.decoding.options; sys.exit('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
