"""The pictures the docs show exist, and every picture in docs/images is shown somewhere."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[1]
PICTURE = re.compile(r"""(?:\]\(|src=")((?:docs/)?images/[^)"\s]+)""")


def referenced() -> dict[Path, set[Path]]:
    """Markdown file -> the images it refers to (resolved from its own folder)."""
    refs = {}
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        found = PICTURE.findall(doc.read_text(encoding="utf-8"))
        base = ROOT if doc.parent == ROOT else doc.parent
        refs[doc] = {(base / f).resolve() for f in found}
    return refs


def test_every_picture_a_doc_shows_exists():
    missing = [
        f"{doc.name}: {img.relative_to(ROOT)}"
        for doc, images in referenced().items()
        for img in images
        if not img.is_file()
    ]
    assert not missing, missing


def test_every_picture_in_docs_images_is_shown():
    shown = set().union(*referenced().values())
    unused = [p.name for p in (ROOT / "docs" / "images").glob("*.png") if p.resolve() not in shown]
    assert not unused, unused
