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


def readme_paragraphs(text: str) -> list[str]:
    """The README's prose paragraphs: blocks between blank lines outside code fences, each list
    item its own paragraph; tables, headings and HTML left out."""
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    paragraphs = []
    for block in re.split(r"\n\s*\n", prose):
        lines = [line for line in block.strip().splitlines() if line.strip()]
        if not lines or lines[0].startswith(("|", "#", "<")):
            continue
        items = re.split(r"\n(?=- )", "\n".join(lines))
        paragraphs += [" ".join(item.split()) for item in items]
    return paragraphs


def test_readme_stays_short_for_a_newcomer():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 120
    for paragraph in readme_paragraphs(readme):
        assert len(paragraph.split()) <= 80, paragraph[:80]
    quick_start = re.search(r"## Quick start\n+```bash\n(.*?)```", readme, re.S).group(1)
    assert quick_start.strip().splitlines()[0] == "pip install torch==2.13.0 -e . && ptrnet demo"
    assert len(quick_start.strip().splitlines()) == 2  # .ci/run runs exactly two commands
    assert readme.count("<img ") + readme.count("![") == 1  # one picture
    results = re.search(r"## Results\n(.*?)\n## ", readme, re.S).group(1)
    rows = [line for line in results.splitlines() if line.startswith("|")]
    assert len(rows) - 2 <= 8  # the header and its rule, then at most eight rows


def section_anchors(markdown: str) -> set[str]:
    """GitHub's anchors of the headings of ``markdown`` (code blocks left out)."""
    prose = re.sub(r"^```.*?^```", "", markdown, flags=re.S | re.M)
    titles = re.findall(r"^#{1,6} (.*)$", prose, re.M)
    return {
        re.sub(r"[^\w\- ]", "", t.strip().lower().replace("`", "")).replace(" ", "-")
        for t in titles
    }


@pytest.mark.parametrize("page", ["README.md", "docs/results.md", "docs/training-notes.md"])
def test_section_links_name_a_heading_that_exists(page):
    path = ROOT / page
    for target, anchor in re.findall(r"\]\(([\w./-]*\.md)?#([^)]+)\)", path.read_text()):
        linked = (path.parent / target) if target else path
        assert anchor in section_anchors(linked.read_text()), f"{page}: {target}#{anchor}"
