"""Data shipped inside the package: the paper's released test files and 29 TSPLIB instances.

Provenance and licences are in the README of each folder. Only paths live here (no file is read
on import), so ``import ptrnet.data`` stays free.
"""

from __future__ import annotations

from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent
PAPER_DIR = DATA_DIR / "paper"  # convex_hull_5_test.txt, tsp5_test.txt (the paper's format)
TSPLIB_DIR = DATA_DIR / "tsplib"  # NAME.tsp (EUC_2D, 51-200 cities) and optimal.txt
TSPLIB_OPTIMAL = TSPLIB_DIR / "optimal.txt"  # "name : length", proven optimal tour lengths
