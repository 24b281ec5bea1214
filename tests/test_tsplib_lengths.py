"""TSPLIB lengths (ptrnet/io/tsplib.py): the published optima reproduced under TSPLIB's EUC_2D
rounding, which is nint (half up), not banker's rounding."""

import numpy as np
import pytest
from shared_data import TSPLIB

from ptrnet.io.tsplib import read_optimal, read_tsplib, tsplib_length
from ptrnet.solvers.tsp import distance_matrix
from ptrnet.solvers.tsp_exact import fast_tsp_near_exact


@pytest.mark.parametrize("name", ["eil51", "berlin52", "st70"])
def test_tsplib_optimum_is_reproduced_under_nint(name):
    """A strong search on TSPLIB's rounded distances meets the published optimum exactly and
    never beats it: the optimum file and the EUC_2D rounding agree."""
    optimum = read_optimal(TSPLIB / "optimal.txt")[name]
    coords = read_tsplib(TSPLIB / f"{name}.tsp").coords
    rounded = np.floor(distance_matrix(coords) + 0.5)
    tour = fast_tsp_near_exact(rounded, budget_s=0.5)
    assert tsplib_length(coords, tour) == optimum
    assert tsplib_length(coords, np.append(tour, tour[0])) == optimum  # closing index tolerated


def test_tsplib_rounding_is_nint_not_banker():
    # Edges of exactly 0.5 and 2.5 round up (nint(d) = int(d + 0.5)), as TSPLIB defines.
    coords = np.array([[0.0, 0.0], [0.5, 0.0], [0.5, 2.5]])
    assert tsplib_length(coords, [0, 1]) == 2  # 0.5 there and back: 1 + 1
    assert tsplib_length(coords, [1, 2]) == 6
