"""The page's scripts know no task by name: they branch on what GET /api/tasks says about a task
(its ``drawing`` kind, its ``dim``), so a new task needs no JavaScript (docs/architecture.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ptrnet.tasks import DRAWINGS, TASKS

STATIC = Path(__file__).parents[1] / "ptrnet" / "web" / "static"
NAMES = "|".join(sorted(map(re.escape, TASKS)))
# A task's name as a whole string literal ("tsp", 'sort', `delaunay`) or as an object key
# (`convex_hull: ...`, a table keyed by task): what a branch or a per-task table needs.
# An HTML tag's name (``createElement("span")``) is not a task's, though a task has that name.
BY_NAME = re.compile(
    rf"""(?<!createElement\()(["'`])({NAMES})\1|(?:^|[{{,])\s*({NAMES})\s*:""", re.MULTILINE
)


def task_names_in(source: str) -> list[str]:
    """``line: name`` for every place ``source`` names a task as a literal or a key."""
    return [
        f"{source.count(chr(10), 0, m.end()) + 1}: {m.group(2) or m.group(3)}"
        for m in BY_NAME.finditer(source)
    ]


@pytest.mark.parametrize("script", sorted(STATIC.glob("*.js")), ids=lambda p: p.name)
def test_page_scripts_name_no_task(script: Path) -> None:
    found = task_names_in(script.read_text(encoding="utf-8"))
    assert not found, f"{script.name} branches on task names: {found}"


def test_the_check_finds_task_names_in_conditions_and_tables() -> None:
    source = 'if (task === "sort") x();\nconst ROWS = {\n  convex_hull: (m) => [],\n};\n'
    assert task_names_in(source) == ["1: sort", "3: convex_hull"]
    assert task_names_in('values.sort((a, b) => a - b); const d = { drawing: "bars" };') == []
    assert task_names_in('document.createElement("span"); if (t === "span") x();') == ["1: span"]


@pytest.mark.parametrize("kind", DRAWINGS)
def test_the_board_draws_every_drawing_kind(kind: str) -> None:
    """Each kind a task may declare (``Task.drawing``) has its branch in the board's code."""
    assert f'drawing === "{kind}"' in (STATIC / "board.js").read_text(encoding="utf-8")
