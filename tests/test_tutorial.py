"""docs/tutorial.md runs: every ```python block, in order, in one namespace (fast settings)."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib

TUTORIAL = Path(__file__).resolve().parent.parent / "docs" / "tutorial.md"
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)
FAST_STEPS = 30  # the training block's STEPS, so the whole page runs in seconds


def tutorial_blocks() -> list[str]:
    """The python blocks of the tutorial, with the training run shortened to FAST_STEPS."""
    blocks = BLOCK.findall(TUTORIAL.read_text(encoding="utf-8"))
    fast = [
        re.sub(r"^STEPS = \d+$", f"STEPS = {FAST_STEPS}", b, flags=re.MULTILINE) for b in blocks
    ]
    assert sum(a != b for a, b in zip(blocks, fast, strict=True)) == 1, "one STEPS = line"
    return fast


def test_the_tutorial_has_its_seven_steps():
    assert len(tutorial_blocks()) == 8  # imports, then the seven steps


def test_every_block_of_the_tutorial_runs_in_order(tmp_path, monkeypatch):
    matplotlib.use("Agg")
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the training run's temporary folder
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    namespace: dict = {"__name__": "tutorial"}
    for number, block in enumerate(tutorial_blocks()):
        code = compile(block, f"{TUTORIAL.name} block {number}", "exec")
        exec(code, namespace)  # noqa: S102 - the tutorial is ours
    assert (Path(namespace["run_dir"]) / "heatmap.png").stat().st_size > 5_000
