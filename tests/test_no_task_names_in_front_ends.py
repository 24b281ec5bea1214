"""No front end branches on a task's name: ``ptrnet/cli``, ``api``, ``web``, ``viz``,
``evaluation`` and ``reproduce`` read what a task's card declares (its searches, its drawing,
whether it reads TSPLIB files, ...), so a new task reaches every door without an edit there
(docs/architecture.md, "Adding a task"). The check is on the syntax tree: a comparison
(``==``, ``!=``, ``in``, ``not in``, ``is``) one of whose sides is a string literal spelling a
registered task's name, or a tuple, list or set literal holding one; a ``match`` case on one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import ptrnet
from ptrnet.tasks import TASKS

PACKAGE = Path(ptrnet.__file__).parent
FRONT_ENDS = ("cli", "api", "web", "viz", "evaluation", "reproduce")


def named_tasks(node: ast.AST, names: frozenset[str]) -> list[str]:
    """The task names ``node`` spells as a literal: a string, or the strings of a tuple, list
    or set literal."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value] if node.value in names else []
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [name for item in node.elts for name in named_tasks(item, names)]
    return []


def name_comparisons(source: str, names: frozenset[str]) -> list[str]:
    """``line: name`` for each comparison or match case in ``source`` against a task's name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            found += [
                f"{node.lineno}: {name}" for side in sides for name in named_tasks(side, names)
            ]
        elif isinstance(node, ast.MatchValue):
            found += [f"{node.lineno}: {name}" for name in named_tasks(node.value, names)]
    return found


def front_end_files() -> list[Path]:
    return sorted(path for unit in FRONT_ENDS for path in (PACKAGE / unit).rglob("*.py"))


@pytest.mark.parametrize("path", front_end_files(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_front_end_compares_a_task_name(path: Path) -> None:
    found = name_comparisons(path.read_text(encoding="utf-8"), frozenset(TASKS))
    assert not found, f"{path.relative_to(PACKAGE)} compares task names: {found}"


@pytest.mark.parametrize(
    "source",
    [
        'if task.name == "tsp":\n    pass\n',
        'ok = "sort" != task.name\n',
        'if args.task not in ("tsp", "knapsack"):\n    pass\n',
        'x = name in {"convex_hull"}\n',
        'match task.name:\n    case "delaunay":\n        pass\n',
    ],
)
def test_the_check_finds_a_comparison_with_a_task_name(source: str) -> None:
    assert name_comparisons(source, frozenset(TASKS))


@pytest.mark.parametrize(
    "source",
    [
        'if folder.name == "bundled":\n    pass\n',  # a name, but no task's
        'if args.format in ("auto", "tsplib"):\n    pass\n',
        "if task.reads_tsplib:\n    pass\n",
        'label = "tsp"\n',  # a literal, not compared
    ],
)
def test_the_check_passes_what_is_no_task_name_comparison(source: str) -> None:
    assert name_comparisons(source, frozenset(TASKS)) == []
