"""Where the read-only shared data lives: ``../shared`` beside the repository (as in CI)."""

from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared"
PAPER_DATA = SHARED / "data" / "paper"
TSPLIB = SHARED / "data" / "tsplib"
