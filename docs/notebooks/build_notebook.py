"""Write docs/notebooks/pointer_networks.ipynb from docs/tutorial.md, so the two never differ.

    python docs/notebooks/build_notebook.py

The notebook is the tutorial, block for block (its prose as markdown cells, its code as code
cells), a cell that shows the heatmap inline, then the exercises' solutions written out by
``ptrnet.lessons.exercises`` and checked against ptrnet's own functions. It is stored without
outputs; tests/test_notebook.py checks it equals this script's output and runs it top to
bottom with a Jupyter kernel (nbclient), the training shortened as the tutorial's test does.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
TUTORIAL = HERE.parent / "tutorial.md"
NOTEBOOK = HERE / "pointer_networks.ipynb"
BLOCK = re.compile(r"^```python\n(.*?)^```$\n?", re.MULTILINE | re.DOTALL)

INTRO = """\
# Pointer networks, hands on

This notebook is [the tutorial](../tutorial.md) to run cell by cell: pointer attention,
masking, convex-hull labels, tour cost, greedy decoding, then a small sorter trained and its
pointer heatmap read. Every cell ends in `assert`s, so a wrong answer stops you. Install first,
from the repository's folder: `pip install torch==2.13.0 -e .` (and `pip install jupyter` for the
notebook itself). The last section writes the same five pieces as the exercises' solutions
(`ptrnet exercises DIR` writes them as stubs for you to fill in) and checks them.
"""

EXERCISES_INTRO = """\
## 8. The same pieces, written by you

`ptrnet exercises DIR` writes the five pieces above as stubs (each docstring states the
contract: shapes, dtypes, errors) and `ptrnet exercises check DIR` compares them with ptrnet's
own on random cases, naming a mistake in one line. Here the worked solutions are written and
checked instead; print one to read it, then try the stubs in a folder of your own."""

EXERCISES = """\
import tempfile
from pathlib import Path

from ptrnet.lessons.exercises.check import check_folder
from ptrnet.lessons.exercises.write import write_exercises

folder = tempfile.mkdtemp(prefix="ptrnet-exercises-")
write_exercises(folder, solutions=True)  # solutions=False: the stubs, for you to fill in
for exercise, problem in check_folder(folder):
    print(f"{exercise.number}. {exercise.title}: {problem or 'correct'}")
assert all(problem is None for _, problem in check_folder(folder))
print(Path(folder, "ex5_greedy_decoding.py").read_text())"""

SHOW_HEATMAP = """\
from IPython.display import Image

Image(filename=f"{run_dir}/heatmap.png")"""


def cells() -> list[nbformat.NotebookNode]:
    """The notebook's cells: the intro, the tutorial's prose and code in order (its first
    paragraph replaced by the intro), then the inline heatmap."""
    text = TUTORIAL.read_text(encoding="utf-8")
    out = [nbformat.v4.new_markdown_cell(INTRO.strip())]
    position = text.index("```python")  # the title and first paragraph: the intro says it
    for match in BLOCK.finditer(text, position):
        prose = text[position : match.start()].strip()
        if prose:
            out.append(nbformat.v4.new_markdown_cell(prose))
        out.append(nbformat.v4.new_code_cell(match.group(1).rstrip("\n")))
        position = match.end()
    out.append(nbformat.v4.new_code_cell(SHOW_HEATMAP))
    prose = text[position:].strip()
    if prose:
        out.append(nbformat.v4.new_markdown_cell(prose))
    out.append(nbformat.v4.new_markdown_cell(EXERCISES_INTRO))
    out.append(nbformat.v4.new_code_cell(EXERCISES))
    return out


def build() -> nbformat.NotebookNode:
    """The notebook, without outputs, with stable cell ids (so a rebuild changes nothing)."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    notebook.cells = cells()
    for number, cell in enumerate(notebook.cells):
        cell.id = f"cell-{number:02d}"
    return notebook


def render() -> str:
    """The notebook file's text."""
    return nbformat.writes(build()) + "\n"


if __name__ == "__main__":
    NOTEBOOK.write_text(render(), encoding="utf-8")
    sys.stdout.write(f"wrote {NOTEBOOK}\n")
