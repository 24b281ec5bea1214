"""The methods of benchmarks/bench_frontier.py: each turns a list of instances (one size, or
TSPLIB's mixed sizes) into one open tour per instance.

* ptrnet (the bundled TSP folder through the public inference API): greedy, beam search of
  width 5, the shortest of 128 samples, four averaged views (``--average-views 4``), greedy from
  every city keeping the shortest (``--multistart 1 --pick shortest``), Random Re-Construct
  after greedy (``--improve rrc --iterations K``), and greedy or RRC then 2-opt and Or-opt
  (``--or-opt``; the rows named ``... + or-opt``);
* Kool et al.'s public TSP models (greedy; the shortest of 1,280 samples), the model trained on
  the size nearest n (benchmarks/kool_models.py);
* nearest neighbour from city 0, farthest insertion, nearest neighbour + 2-opt to a local
  optimum, nearest neighbour + 2-opt + Or-opt (the local search without the model), fast-tsp's
  time-budgeted search (``near_exact``), LKH-3 through elkai.

Classic heuristics and solvers see each instance's distance matrix (TSPLIB's rounded EUC_2D
one for TSPLIB instances, so they optimise what is measured); the models see the unit-square
points, as they were trained.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

Tours = list[np.ndarray]


@dataclass(frozen=True)
class Method:
    """One row of the benchmark: ``family`` (ptrnet, kool, classic, fast-tsp, lkh), a ``name``,
    the largest n it runs at (None: every n; TSPLIB counts as its largest instance), and
    whether it decodes many instances together (``batched``; otherwise instances are solved
    one at a time and the batch time is the sum of the single ones). ``rrc``: rounds of RRC
    after ptrnet's greedy tours (0: none). ``polish``: the tours of the row named ``base``,
    then 2-opt and Or-opt to a local optimum of both, its time added. ``model``: the
    ``--ptrnet-model`` NAME a ptrnet row decodes with (None: the bundled folder); such a row
    is named ``NAME decoding``. ``min_n``: the smallest n it runs at."""

    family: str
    name: str
    max_n: int | None = None
    batched: bool = False
    rrc: int = 0
    base: str | None = None
    model: str | None = None
    min_n: int = 1

    @property
    def decoding(self) -> str:
        """The ptrnet decoding name of the row (bench_kool's: greedy, beam5, ...)."""
        return self.name.split(" ", 1)[1] if self.model else self.name

    @property
    def polish(self) -> bool:
        return self.base is not None


def nearest_neighbour(dist: np.ndarray) -> np.ndarray:
    """The nearest-neighbour tour from city 0 (ties: the lowest index), O(n^2)."""
    n = len(dist)
    tour, free = [0], np.ones(n, dtype=bool)
    free[0] = False
    for _ in range(n - 1):
        city = int(np.argmin(np.where(free, dist[tour[-1]], np.inf)))
        tour.append(city)
        free[city] = False
    return np.array(tour, dtype=np.int64)


def farthest_insertion(dist: np.ndarray) -> np.ndarray:
    """Farthest insertion: start from the two cities farthest apart, then repeatedly take the
    city farthest from the tour and insert it where it lengthens the tour least; O(n^2)."""
    n = len(dist)
    if n <= 3:
        return np.arange(n, dtype=np.int64)
    a, b = np.unravel_index(int(np.argmax(dist)), dist.shape)
    tour = [int(a), int(b)]
    free = np.ones(n, dtype=bool)
    free[tour] = False
    to_tour = np.minimum(dist[a], dist[b])  # (n,) each city's distance to the tour
    for _ in range(n - 2):
        city = int(np.argmax(np.where(free, to_tour, -np.inf)))
        here = np.array(tour)
        after = np.roll(here, -1)
        cost = dist[here, city] + dist[city, after] - dist[here, after]  # (len(tour),)
        tour.insert(int(np.argmin(cost)) + 1, city)
        free[city] = False
        to_tour = np.minimum(to_tour, dist[city])
    return np.array(tour, dtype=np.int64)


def classic_solver(name: str, lkh_runs: int) -> Callable[[np.ndarray], np.ndarray]:
    """The function from a distance matrix to a tour for a classic ``name``."""
    from ptrnet.solvers.or_opt import two_opt_or_opt
    from ptrnet.solvers.tsp_exact import fast_tsp_near_exact
    from ptrnet.solvers.tsp_heuristics import lkh_tour, two_opt

    return {
        "nearest neighbour": nearest_neighbour,
        "farthest insertion": farthest_insertion,
        "nn + 2-opt": lambda d: two_opt(d, nearest_neighbour(d)),
        "nn + 2-opt + or-opt": lambda d: two_opt_or_opt(d, nearest_neighbour(d)),
        "fast-tsp": fast_tsp_near_exact,
        "lkh-3": lambda d: lkh_tour(d, runs=lkh_runs),
    }[name]


def open_tour(seq: np.ndarray) -> np.ndarray:
    """``seq`` without a closing index (``[a, b, c, a]`` -> ``[a, b, c]``)."""
    seq = np.asarray(seq, dtype=np.int64)
    return seq[:-1] if len(seq) > 1 and seq[0] == seq[-1] else seq


def ptrnet_decoder(name: str) -> Callable[[object, Sequence[np.ndarray]], Tours]:
    """``(loaded, points) -> closed tours`` for a ptrnet decoding ``name`` (bench_kool's
    names: greedy, beamK, sampleK, views4, multistart-shortest)."""
    try:
        from benchmarks.bench_kool import ptrnet_options
    except ImportError:  # run as a script
        from bench_kool import ptrnet_options
    from ptrnet.inference import predict

    options = ptrnet_options(name)
    return lambda loaded, points: predict(loaded, "tsp", list(points), options)


def rrc_tours(loaded, points: Sequence[np.ndarray], closed: Tours, rounds: int) -> Tours:
    """RRC from closed greedy tours, batch size as ``ptrnet eval`` (seed 0)."""
    from ptrnet.searches.rebuild import improve_tours_of

    return improve_tours_of(loaded, list(points), closed, rounds, 0)


def kool_size(n: int) -> int:
    """The size of Kool et al.'s pretrained model nearest ``n`` (20, 50 or 100)."""
    return min((20, 50, 100), key=lambda size: (abs(size - n), size))


def kool_decoder(checkout: str, n: int, decode: str) -> Callable[[Sequence[np.ndarray]], Tours]:
    """``points -> open tours`` with Kool's model nearest ``n`` (greedy or ``sampleK``), the
    instances grouped by size as their model needs."""
    try:
        from benchmarks.bench_kool import by_size
        from benchmarks.kool_models import kool_tours, load_kool
    except ImportError:
        from bench_kool import by_size
        from kool_models import kool_tours, load_kool

    model = load_kool(checkout, kool_size(n))
    samples = int(re.sub(r"\D", "", decode) or 0)
    return lambda points: by_size(lambda pts: kool_tours(model, pts, samples), list(points))


def model_methods(name: str, sizes: tuple[int, int | None] = (1, None)) -> list[Method]:
    """The rows of a ``--ptrnet-model NAME=MODEL[@LO-HI]`` at n in ``sizes`` (LO, HI or None):
    greedy, and the shortest of greedy from every city (up to n = 200), each also followed by
    2-opt and Or-opt."""
    low, high = sizes
    rows = []
    for decoding, cap in (("greedy", high), ("multistart-shortest", min(200, high or 200))):
        plain = Method("ptrnet", f"{name} {decoding}", cap, True, model=name, min_n=low)
        rows += [plain, Method("ptrnet", f"{plain.name} + or-opt", cap, True,
                               base=plain.name, model=name, min_n=low)]  # fmt: skip
    return rows


def methods(rrc_rounds: Sequence[int], models: dict | None = None) -> list[Method]:
    """Every row, cheapest first within a family, with the largest n each runs at by default:
    the costly searches stop where they would take minutes per size on one core (sampling 128
    and multi-start beyond n = 50, RRC of more than 30 rounds beyond n = 100), Kool's sampling
    at n = 100, the largest size of their models. ``models``: {name: (LO, HI)} of further
    ptrnet models (:func:`model_methods`). Kool's greedy tours get the same 2-opt and Or-opt as
    ptrnet's (``kool greedy + or-opt``), so that the search is compared on both."""
    ptrnet = [
        Method("ptrnet", "greedy", batched=True),
        Method("ptrnet", "beam5", 200, batched=True),
        Method("ptrnet", "views4", 200, batched=True),
        Method("ptrnet", "sample128", 50, batched=True),
        Method("ptrnet", "multistart-shortest", 50, batched=True),
    ]
    ptrnet += [Method("ptrnet", f"rrc{k}", 100 if k > 30 else None, True, k) for k in rrc_rounds]
    ptrnet += [
        Method("ptrnet", f"{m.name} + or-opt", m.max_n, True, base=m.name)
        for m in ptrnet
        if m.name == "greedy" or m.rrc
    ]
    ptrnet += [row for name, sizes in (models or {}).items() for row in model_methods(name, sizes)]
    return [
        *ptrnet,
        Method("kool", "kool greedy", batched=True),
        Method("kool", "kool greedy + or-opt", batched=True, base="kool greedy"),
        Method("kool", "kool sample1280", 100),
        Method("classic", "nearest neighbour"),
        Method("classic", "farthest insertion"),
        Method("classic", "nn + 2-opt"),
        Method("classic", "nn + 2-opt + or-opt"),
        Method("fast-tsp", "fast-tsp"),
        Method("lkh", "lkh-3"),
    ]
