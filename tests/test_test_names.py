"""Tests are named by subject, never by history: no file under tests/ and no function, fixture,
class or module-level name in its Python files says ``review``, ``hardening`` or ``item1``
(the issue or round that asked for a test says nothing about what the test checks)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

TESTS = Path(__file__).resolve().parent
# "preview" and "items" are words of their own; "review", "reviewer", "hardening", "item3" and
# "item_3" name where a test came from.
HISTORY = re.compile(r"(?<![a-z])review|hardening|item_?\d", re.IGNORECASE)


def history_names(names: Iterable[str]) -> list[str]:
    """The names, in order, that name a test by its history."""
    return [name for name in names if HISTORY.search(name)]


def defined_names(source: str) -> list[str]:
    """Every function, class and module-level variable name ``source`` defines, nested ones
    (helpers inside tests) included."""
    names = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        targets += [node.target] if isinstance(node, ast.AnnAssign) else []
        names += [t.id for t in targets if isinstance(t, ast.Name)]
    return names


def names_in(folder: Path) -> list[str]:
    """The file names under ``folder`` (relative paths) and the names its .py files define."""
    names = []
    for path in sorted(folder.rglob("*")):
        if "__pycache__" in path.parts or not path.is_file():
            continue
        names.append(path.relative_to(folder).as_posix())
        if path.suffix == ".py":
            names += defined_names(path.read_text(encoding="utf-8"))
    return names


def test_no_test_file_or_name_says_where_it_came_from() -> None:
    assert history_names(names_in(TESTS)) == []


def test_the_check_catches_a_planted_history_name(tmp_path: Path) -> None:
    (tmp_path / "test_review_copy.py").write_text(
        "REVIEWED = 1\n\n\ndef test_item3_huge_index():\n"
        "    def hardening_helper():\n        pass\n\n\n"
        "def test_preview_items_are_subjects(tmp_path):\n    pass\n",
        encoding="utf-8",
    )
    (tmp_path / "later").mkdir()
    (tmp_path / "later" / "test_hardening_web.py").write_text("", encoding="utf-8")
    (tmp_path / "test_item_5_limits.py").write_text("", encoding="utf-8")
    assert history_names(names_in(tmp_path)) == [
        "later/test_hardening_web.py",
        "test_item_5_limits.py",
        "test_review_copy.py",
        "test_item3_huge_index",
        "hardening_helper",
        "REVIEWED",
    ]


def test_subject_words_that_contain_a_history_word_pass() -> None:
    subjects = ["test_preview_shows_the_tour", "test_counted_items_without_a_total_show_no_eta"]
    assert history_names(subjects) == []
