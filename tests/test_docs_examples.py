"""The README's Python quick start and every example of docs/api.md run as written."""

import re
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent


def python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(), re.S)


def test_readme_quick_start_is_at_most_ten_lines_and_runs(tmp_path, monkeypatch):
    readme = (ROOT / "README.md").read_text()
    code = re.search(r"## Python quick start\n+```python\n(.*?)```", readme, re.S).group(1)
    assert len(code.strip().splitlines()) <= 10
    monkeypatch.chdir(tmp_path)
    torch.set_num_threads(1)
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)
    assert namespace["result"].valid and len(namespace["result"].sequence) == 21
    assert len(namespace["hulls"]) == 3


def test_api_page_examples_run_in_order(tmp_path, monkeypatch):
    blocks = python_blocks(ROOT / "docs" / "api.md")
    assert len(blocks) >= 7
    monkeypatch.chdir(tmp_path)
    torch.set_num_threads(1)
    namespace: dict = {}
    for number, code in enumerate(blocks, 1):
        try:
            exec(compile(code, f"docs/api.md block {number}", "exec"), namespace)
        except Exception as err:  # name the block that broke
            pytest.fail(f"docs/api.md block {number}: {type(err).__name__}: {err}")


def test_api_page_names_every_public_name():
    import ptrnet

    page = (ROOT / "docs" / "api.md").read_text()
    for name in ptrnet.__all__:
        assert f"ptrnet.{name}" in page, name
