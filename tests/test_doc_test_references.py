"""The tests the documentation cites exist: every ``tests/FILE.py`` named in the docs, the
bundled models' notes and the benchmarks is a file, and every ``tests/FILE.py::NAME`` (or a
following ``::NAME``, which means the file of the last ``FILE.py::`` before it) is a function or
class defined in that file. A test renamed or moved without its citations fails here."""

from __future__ import annotations

import ast
import fnmatch
import re
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# A ``path.py::name`` or ``::name`` citation (``::1``, an IPv6 address, is not one), or a bare
# ``tests/FILE.py``. Names may hold ``*`` (``::test_tsplib_*`` cites a family).
CITATION = re.compile(r"([\w./-]+\.py)?::([A-Za-z_][\w*]*)|(tests/[\w/]+\.py)")


def citing_files() -> list[Path]:
    """The text that cites tests: top-level and docs/ Markdown, the bundled models' notes and
    the benchmarks."""
    found = [*ROOT.glob("*.md"), *(ROOT / "docs").rglob("*.md"), *(ROOT / "ptrnet").rglob("*.md")]
    found += [p for p in (ROOT / "benchmarks").rglob("*") if p.suffix in (".py", ".md")]
    return sorted(found)


def defined_names(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return [node.name for node in ast.walk(tree) if isinstance(node, kinds)]


def unresolved(text: str, names_in: Callable[[str], list[str] | None]) -> list[str]:
    """The citations in ``text`` of a test file or test that does not exist. ``names_in(path)``
    gives the names a test file defines, or None when there is no such file."""
    missing, current = [], None
    for match in CITATION.finditer(text):
        path, name, bare = match.groups()
        if bare:
            if names_in(bare) is None:
                missing.append(bare)
            continue
        current = path or current
        if current is None:
            missing.append(f"{match.group(0)} (no file before it)")
        elif current.startswith("tests/"):
            names = names_in(current)
            if names is None or not fnmatch.filter(names, name):
                missing.append(f"{current}::{name}")
    return missing


def names_in_repository(relative: str) -> list[str] | None:
    path = ROOT / relative
    return defined_names(path) if path.is_file() else None


def test_every_cited_test_file_and_test_exists() -> None:
    missing = {
        path.relative_to(ROOT).as_posix(): unresolved(path.read_text(), names_in_repository)
        for path in citing_files()
    }
    assert {path: names for path, names in missing.items() if names} == {}


def test_a_moved_or_renamed_test_is_caught() -> None:
    files = {"tests/test_a.py": ["test_one", "test_two_cases"], "tests/test_b.py": ["test_b"]}
    text = (
        "| `tests/test_a.py::test_one`, `::test_two_*`, `::test_three` | `tests/test_b.py` |\n"
        "| `ptrnet/io/text.py::hold_input` | `::not_a_test`, `tests/test_gone.py` |\n"
        "`tests/test_b.py::test_one`, served on [::1]; `::test_b`"
    )
    assert unresolved(text, files.get) == [
        "tests/test_a.py::test_three",
        "tests/test_gone.py",
        "tests/test_b.py::test_one",
    ]
    assert unresolved("`::test_one` first", files.get) == ["::test_one (no file before it)"]
