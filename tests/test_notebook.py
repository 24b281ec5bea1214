"""docs/notebooks/pointer_networks.ipynb: built from the tutorial, stored without outputs, and
run top to bottom in a Jupyter kernel (the training shortened to a few steps)."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
BUILDER = ROOT / "docs" / "notebooks" / "build_notebook.py"
FAST_STEPS = 30


def _builder():
    spec = importlib.util.spec_from_file_location("build_notebook", BUILDER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_notebook_is_the_tutorial_rebuilt():
    builder = _builder()
    assert builder.NOTEBOOK.read_text(encoding="utf-8") == builder.render(), (
        "run: python docs/notebooks/build_notebook.py"
    )


def test_notebook_is_stored_without_outputs():
    notebook = json.loads(_builder().NOTEBOOK.read_text(encoding="utf-8"))
    code = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    assert code and all(not c["outputs"] and c["execution_count"] is None for c in code)


@pytest.mark.slow
def test_notebook_runs_top_to_bottom(tmp_path, monkeypatch):
    notebook = nbformat.reads(_builder().render(), as_version=4)
    shortened = 0
    for cell in notebook.cells:
        if cell.cell_type == "code" and re.search(r"^STEPS = \d+$", cell.source, re.MULTILINE):
            cell.source = re.sub(r"^STEPS = \d+$", f"STEPS = {FAST_STEPS}", cell.source, flags=re.M)
            shortened += 1
    assert shortened == 1
    monkeypatch.setenv(
        "TMPDIR", str(tmp_path)
    )  # the training run's folder, inherited by the kernel
    monkeypatch.setenv("MPLBACKEND", "Agg")
    client = NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert any(output.get("data", {}).get("image/png") for output in outputs)  # the heatmap
    printed = "".join(o.get("text", "") for o in outputs)
    assert "5. greedy decoding: correct" in printed  # the exercises' solutions pass the check
