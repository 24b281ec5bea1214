"""40 European capitals, by latitude and longitude: ptrnet's great-circle tours against LKH-3
(elkai, the optional ``lkh`` extra) on the same great-circle distances, and how faithful the
plane a model reads is over them.

    python benchmarks/bench_geographic.py [--csv FILE]   # one thread; --csv writes the cities

Every length is great-circle km on the 6371.0088 km sphere (ptrnet.solvers.distances), the
measure ``ptrnet predict tsp capitals.csv`` reports for a CSV with ``lat`` and ``lon`` columns;
each row runs the bundled TSP model through ``ptrnet.load("tsp").solve(points, geo=True)``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import ptrnet
from ptrnet.solvers.distances import GREAT_CIRCLE
from ptrnet.solvers.tsp import distance_matrix
from ptrnet.tasks import get_point_task

CAPITALS = """Amsterdam,52.3676,4.9041
Athens,37.9838,23.7275
Belgrade,44.7866,20.4489
Berlin,52.5200,13.4050
Bern,46.9480,7.4474
Bratislava,48.1486,17.1077
Brussels,50.8503,4.3517
Bucharest,44.4268,26.1025
Budapest,47.4979,19.0402
Chisinau,47.0105,28.8638
Copenhagen,55.6761,12.5683
Dublin,53.3498,-6.2603
Helsinki,60.1699,24.9384
Kyiv,50.4501,30.5234
Lisbon,38.7223,-9.1393
Ljubljana,46.0569,14.5058
London,51.5074,-0.1278
Luxembourg,49.6116,6.1319
Madrid,40.4168,-3.7038
Minsk,53.9006,27.5590
Monaco,43.7384,7.4246
Oslo,59.9139,10.7522
Paris,48.8566,2.3522
Podgorica,42.4304,19.2594
Prague,50.0755,14.4378
Reykjavik,64.1466,-21.9426
Riga,56.9496,24.1052
Rome,41.9028,12.4964
Sarajevo,43.8563,18.4131
Skopje,41.9981,21.4254
Sofia,42.6977,23.3219
Stockholm,59.3293,18.0686
Tallinn,59.4370,24.7536
Tirana,41.3275,19.8187
Vaduz,47.1410,9.5209
Valletta,35.8989,14.5146
Vienna,48.2082,16.3738
Vilnius,54.6872,25.2797
Warsaw,52.2297,21.0122
Zagreb,45.8150,15.9819"""


def capitals() -> tuple[list[str], np.ndarray]:
    """The names and (lon, lat) degrees of the 40 capitals."""
    rows = [line.split(",") for line in CAPITALS.splitlines()]
    return [r[0] for r in rows], np.array([[float(r[2]), float(r[1])] for r in rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", help="also write the cities as name,lat,lon rows")
    args = parser.parse_args()
    torch.set_num_threads(1)
    names, cities = capitals()
    if args.csv:
        rows = "".join(f"{n},{lat},{lon}\n" for n, (lon, lat) in zip(names, cities, strict=True))
        with open(args.csv, "w") as out:
            out.write("name,lat,lon\n" + rows)
    dist = GREAT_CIRCLE.matrix(cities)
    plane = distance_matrix(GREAT_CIRCLE.plane(cities))
    off = ~np.eye(len(cities), dtype=bool)
    print(f"plane vs sphere, worst pair: {100 * np.abs(plane[off] / dist[off] - 1).max():.2f}%")
    task = get_point_task("tsp").with_distances(GREAT_CIRCLE)
    start = time.perf_counter()
    lkh = task.answer_cost(cities, task.solve(cities, "lkh"))
    print(f"LKH-3 (elkai): {lkh:.1f} km, {time.perf_counter() - start:.2f} s")
    near = task.answer_cost(cities, task.solve(cities, "near_exact"))
    print(f"near_exact (fast-tsp): {near:.1f} km")
    solver = ptrnet.load("tsp")
    solver.solve(cities, geo=True, or_opt=True)  # load and compile once, outside the timings
    rrc = {"improve": "rrc", "iterations": 20, "or_opt": True}
    runs = {"greedy": {}, "greedy + --or-opt": {"or_opt": True}, "+ RRC 20 rounds first": rrc}
    for label, options in runs.items():
        start = time.perf_counter()
        result = solver.solve(cities, geo=True, **options)
        took = time.perf_counter() - start
        gap = 100 * (result.cost / lkh - 1)
        print(f"{label}: {result.cost:.1f} km, gap {gap:.2f}%, {took:.2f} s")
    flat = solver.solve(cities[:, ::-1], or_opt=True)  # before: (lat, lon) as a plane, degrees
    km = GREAT_CIRCLE.tour_length(cities, flat.sequence)
    print(f"(lat, lon) as planar degrees, --or-opt: {km:.1f} km, {100 * (km / lkh - 1):.2f}%")
    subsets(solver, task, cities)


def subsets(solver, task, cities: np.ndarray, count: int = 100, size: int = 20) -> None:
    """Mean gaps in great-circle km to the exact optimum over ``count`` random ``size``-city
    subsets: read as cities (geo=True), against the same numbers read as a plane in degrees
    (lon, lat) and in the columns' file order (lat, lon), as ptrnet read them before."""
    rng = np.random.default_rng(0)
    chosen = [cities[rng.choice(len(cities), size, replace=False)] for _ in range(count)]
    optima = [task.answer_cost(p, task.solve(p)) for p in chosen]
    readings = {
        "cities (geo=True)": (lambda p: p, True),
        "planar degrees (lon, lat)": (lambda p: p, False),
        "planar degrees (lat, lon)": (lambda p: p[:, ::-1], False),
    }
    print(f"{count} random {size}-city subsets, mean gap in km to the exact optimum:")
    for label, (frame, geo) in readings.items():
        gaps = []
        for options in ({}, {"or_opt": True}):
            results = solver.solve([frame(p) for p in chosen], geo=geo, **options)
            km = [
                GREAT_CIRCLE.tour_length(p, r.sequence)
                for p, r in zip(chosen, results, strict=True)
            ]
            gaps.append(100 * np.mean(np.array(km) / optima - 1))
        print(f"  {label}: greedy {gaps[0]:.2f}%, + --or-opt {gaps[1]:.2f}%")


if __name__ == "__main__":
    main()
