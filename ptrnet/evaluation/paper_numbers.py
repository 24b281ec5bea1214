"""The paper's reported numbers (Vinyals et al. 2015, Tables 1-2 and Sec. 4.3), for comparison.

Rates are fractions in [0, 1]; TSP entries are mean closed-tour lengths. Keys are
``(task, model, n)`` with ``model`` naming what the paper trained: ``"ptr 5-50"`` is the one hull
Ptr-Net trained on n = 5..50, ``"ptr 5-20"`` the one TSP Ptr-Net trained on n = 5..20, ``"ptr n"``
a Ptr-Net trained at the tested n.
"""

from __future__ import annotations

PAPER_RESULTS: dict[tuple[str, str, int], dict[str, float]] = {
    # Table 1: convex hull, accuracy / area coverage.
    ("convex_hull", "lstm n", 5): {"accuracy": 0.877, "area_coverage": 0.996},
    ("convex_hull", "lstm n", 50): {"accuracy": 0.019},
    ("convex_hull", "attention n", 50): {"accuracy": 0.389, "area_coverage": 0.997},
    ("convex_hull", "ptr n", 50): {"accuracy": 0.726, "area_coverage": 0.999},
    ("convex_hull", "ptr 5-50", 5): {"accuracy": 0.920, "area_coverage": 0.996},
    ("convex_hull", "ptr 5-50", 10): {"accuracy": 0.870, "area_coverage": 0.998},
    ("convex_hull", "ptr 5-50", 50): {"accuracy": 0.696, "area_coverage": 0.999},
    ("convex_hull", "ptr 5-50", 100): {"accuracy": 0.503, "area_coverage": 0.999},
    ("convex_hull", "ptr 5-50", 200): {"accuracy": 0.221, "area_coverage": 0.999},
    ("convex_hull", "ptr 5-50", 500): {"accuracy": 0.013, "area_coverage": 0.992},
    # Sec. 4.3: Delaunay, accuracy / triangle coverage.
    ("delaunay", "ptr n", 5): {"accuracy": 0.807, "triangle_coverage": 0.930},
    ("delaunay", "ptr n", 10): {"accuracy": 0.226, "triangle_coverage": 0.813},
    ("delaunay", "ptr n", 50): {"triangle_coverage": 0.528},
    # Table 2: TSP mean tour length.
    ("tsp", "optimal", 5): {"mean_length": 2.12},
    ("tsp", "optimal", 10): {"mean_length": 2.87},
    ("tsp", "optimal", 20): {"mean_length": 3.83},
    ("tsp", "ptr n", 5): {"mean_length": 2.12},
    ("tsp", "ptr n", 10): {"mean_length": 2.88},
    ("tsp", "ptr 5-20", 5): {"mean_length": 2.12},
    ("tsp", "ptr 5-20", 10): {"mean_length": 2.87},
    ("tsp", "ptr 5-20", 20): {"mean_length": 3.88},
    ("tsp", "ptr 5-20", 25): {"mean_length": 4.30},
    ("tsp", "ptr 5-20", 30): {"mean_length": 4.72},
    ("tsp", "ptr 5-20", 40): {"mean_length": 5.91},
    ("tsp", "ptr 5-20", 50): {"mean_length": 7.66},
}

# The Ptr-Net row the bundled default model of each task compares with.
BUNDLED_COMPARISON = {"convex_hull": "ptr 5-50", "tsp": "ptr 5-20", "delaunay": "ptr n"}


def paper_result(task: str, model: str, n: int) -> dict[str, float]:
    """The paper's numbers for ``(task, model, n)``; empty when the paper reports none."""
    return PAPER_RESULTS.get((task, model, n), {})
