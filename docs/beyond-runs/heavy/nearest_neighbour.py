"""Mean gap of the nearest-neighbour tour from city 0 (the reference row of the heavy-decoder
probe): python docs/beyond-runs/heavy/nearest_neighbour.py FILE..."""

import sys

import numpy as np

from ptrnet.io.paper_format import read_examples
from ptrnet.solvers.tsp import tour_length
from ptrnet.solvers.tsp_heuristics import nearest_neighbour_tours
from ptrnet.tasks import get_task

for path in sys.argv[1:]:
    gaps = []
    for ex in read_examples(path, get_task("tsp")):
        dist = np.linalg.norm(ex.points[:, None] - ex.points[None], axis=-1)
        tour = nearest_neighbour_tours(dist)[0]
        gaps.append(tour_length(ex.points, tour) / tour_length(ex.points, ex.seq) - 1)
    print(f"{path}: {len(gaps)} instances, nearest neighbour from city 0, gap {np.mean(gaps):.4f}")
