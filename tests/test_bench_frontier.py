"""The pure parts of benchmarks/bench_frontier.py (gaps, references, ptrnet's frontier, the
reading by time budget, the tables, the redraw from saved rows) and its heuristics, on small
synthetic inputs against independent oracles; no model, no Kool checkout, elkai only where
installed."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

from benchmarks.bench_frontier import Runner, chosen, extra_models, main
from benchmarks.bench_kool import TestSet
from benchmarks.frontier_methods import (
    Method,
    classic_solver,
    farthest_insertion,
    kool_size,
    methods,
    nearest_neighbour,
)
from benchmarks.frontier_report import (
    best_reference,
    best_within,
    budget_lines,
    budget_rows,
    budget_table,
    frontier,
    gap_text,
    gaps_pct,
    markdown_table,
    pivot_table,
    short,
)
from benchmarks.kool_models import BenchError
from ptrnet.solvers.or_opt import two_opt_or_opt
from ptrnet.solvers.tsp import distance_matrix, tour_length
from ptrnet.solvers.tsp_heuristics import nearest_neighbour_tours


def test_gaps_are_percent_above_the_reference():
    np.testing.assert_allclose(gaps_pct([4.0, 5.0, 3.0], [4.0, 4.0, 2.0]), [0.0, 25.0, 50.0])
    with pytest.raises(ValueError, match="positive references"):
        gaps_pct([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="positive references"):
        gaps_pct([1.0], [0.0])


def test_the_reference_is_the_shorter_tour_and_ties_count_for_both():
    refs, at_best = best_reference({"lkh": [10.0, 7.0, 5.0], "fast": [9.0, 7.0, 6.0]})
    np.testing.assert_allclose(refs, [9.0, 7.0, 5.0])
    assert at_best == {"lkh": 2, "fast": 2}


def brute_frontier(points):
    """The points no other beats on both axes (one strictly), by pairwise comparison."""
    beaten = [any(u <= t and h <= g and (u, h) != (t, g) for u, h in points) for t, g in points]
    return sorted({p for p, b in zip(points, beaten, strict=True) if not b})


def test_frontier_keeps_exactly_the_undominated_points():
    rng = np.random.default_rng(3)
    for _ in range(50):
        points = [(float(t), float(g)) for t, g in rng.integers(1, 8, size=(7, 2))]
        assert sorted(frontier(points)) == brute_frontier(points)


def test_best_within_a_budget_only_improves_as_points_are_added():
    rng = np.random.default_rng(5)
    for _ in range(200):
        points = [(float(10 ** rng.uniform(-3, 1)), float(rng.uniform(0, 10))) for _ in range(6)]
        budget = float(10 ** rng.uniform(-3.5, 1.5))
        fewer = best_within(points[:3], budget)
        more = best_within(points, budget)
        if fewer is not None:
            assert more is not None and more[1] <= fewer[1]
        fast_enough = [g for t, g in points if t <= budget]
        assert (more is None) == (not fast_enough)
        if more is not None:
            assert more[1] == min(fast_enough) and more[0] <= budget
        on_frontier = [p for p in frontier(points) if p[0] <= budget]  # the staircase plotted
        assert (on_frontier[-1] if on_frontier else None) == more


def test_best_within_by_hand():
    points = [(1.0, 10.0), (100.0, 1.0), (50.0, 20.0), (2.0, 10.0)]
    assert best_within(points, 0.5) is None
    assert best_within(points, 1.0) == (1.0, 10.0)
    assert best_within(points, 60.0) == (1.0, 10.0)  # the tie goes to the faster
    assert best_within(points, 100.0) == (100.0, 1.0)


def test_budget_rows_compare_each_peer_row_with_ptrnet_s_best_within_its_time():
    rows = [
        dict(family="ptrnet", method="greedy", s_single=1.0, gap=5.0),
        dict(family="ptrnet", method="rrc", s_single=10.0, gap=1.0),
        dict(family="ptrnet", method="rough", s_single=0.05, gap=30.0),
        dict(family="kool", method="fast", s_single=0.01, gap=4.0),
        dict(family="kool", method="mid", s_single=2.0, gap=4.0),
        dict(family="kool", method="slow", s_single=20.0, gap=1.001),
        dict(family="kool", method="slower", s_single=30.0, gap=0.5),
    ]
    found = {f["peer"]["method"]: f for f in budget_rows(rows, "kool")}
    assert {k: f["verdict"] for k, f in found.items()} == {
        "fast": "none as fast", "mid": "behind", "slow": "level", "slower": "behind"
    }  # fmt: skip
    assert found["mid"]["ours"]["method"] == "greedy" and found["fast"]["ours"] is None
    rows.append(dict(family="ptrnet", method="search", s_single=5.0, gap=0.2))
    after = {f["peer"]["method"]: f["verdict"] for f in budget_rows(rows, "kool")}
    assert after == {"fast": "none as fast", "mid": "behind", "slow": "ahead", "slower": "ahead"}


def test_budget_lines_and_table_name_the_best_row_within_each_time():
    common = dict(set="n = 20", count=2, single=1)
    rows = [
        dict(common, family="ptrnet", method="greedy", gap=1.0, s_single=0.1, per_s_batch=100.0),
        dict(common, family="kool", method="kool greedy", gap=0.5, s_single=0.01,
             per_s_batch=20.0),
    ]  # fmt: skip
    lines = budget_lines(rows)
    assert lines[0] == (
        "n = 20, kool (batch of 1): ptrnet ahead or level within the same time at 0 of 1: "
        "kool greedy 0.50% in 0.01 s: none as fast"
    )
    assert lines[1] == (
        "n = 20, kool (batch): ptrnet ahead or level within the same time at 0 of 1: "
        "kool greedy 0.50% in 0.05 s vs greedy 1.00% in 0.01 s: behind"
    )
    table = budget_table(rows, "n = 20").splitlines()
    assert table[0] == "| budget | ptrnet | kool |"
    assert "| 0.01 s |  | 0.50% (kool greedy) |" in table
    assert "| 0.1 s | 1.00% (greedy) | 0.50% (kool greedy) |" in table


def test_table_has_a_header_and_one_line_per_row():
    row = dict(set="n = 50", method="beam5", count=20, single=3, gap=1.2345,
               s_single=0.123456, per_s_batch=12.3456)  # fmt: skip
    lines = markdown_table([row, dict(row, gap=-1e-15)]).splitlines()
    assert lines[0].startswith("| instances | method |") and len(lines) == 4
    assert lines[2] == "| n = 50 | beam5 | 20 / 3 | 1.23% | 0.1235 | 12.35 |"
    assert "| 0.00% |" in lines[3] and gap_text(-0.004) == "0.00%"


def test_pivot_has_a_column_per_set_and_blanks_where_a_method_did_not_run():
    common = dict(family="ptrnet", single=1, s_single=0.5, per_s_batch=4.0)
    rows = [
        dict(common, set="n = 20", method="greedy", count=20, gap=1.0),
        dict(common, set="n = 50", method="greedy", count=20, gap=2.0),
        dict(common, set="n = 20", method="sample128", count=20, gap=0.25),
    ]
    lines = pivot_table(rows).splitlines()
    assert lines[0] == "| method | n = 20 (20) | n = 50 (20) |"
    assert lines[2] == "| greedy | 1.00%; 0.5 s; 4/s | 2.00%; 0.5 s; 4/s |"
    assert lines[3] == "| sample128 | 0.25%; 0.5 s; 4/s |  |"
    assert [short(x) for x in (4321.5, 12.345, 0.0012345, 0.00001)] == [
        "4,322", "12.3", "0.00123", "0.000010"
    ]  # fmt: skip


def test_nearest_neighbour_is_ptrnets_from_city_zero():
    rng = np.random.default_rng(7)
    for n in (2, 5, 30):
        dist = distance_matrix(rng.random((n, 2)))
        np.testing.assert_array_equal(nearest_neighbour(dist), nearest_neighbour_tours(dist)[0])


def circle(n: int, seed: int) -> tuple[np.ndarray, float]:
    """``n`` shuffled points on a circle (convex position) and their optimal tour's length,
    the polygon's perimeter."""
    angles = np.sort(np.random.default_rng(seed).uniform(0, 2 * np.pi, n))
    ring = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    perimeter = tour_length(ring, np.arange(n))
    return ring[np.random.default_rng(seed + 1).permutation(n)], perimeter


@pytest.mark.parametrize("n", [3, 4, 9, 40])
def test_farthest_insertion_solves_points_in_convex_position(n):
    points, perimeter = circle(n, n)
    tour = farthest_insertion(distance_matrix(points))
    assert sorted(tour.tolist()) == list(range(n))
    assert tour_length(points, tour) == pytest.approx(perimeter, rel=1e-12)


def test_two_opt_and_lkh_solve_points_in_convex_position():
    points, perimeter = circle(30, 1)
    dist = distance_matrix(points)
    assert tour_length(points, classic_solver("nn + 2-opt", 1)(dist)) == pytest.approx(perimeter)
    pytest.importorskip("elkai")
    assert tour_length(points, classic_solver("lkh-3", 1)(dist)) == pytest.approx(perimeter)


def test_or_opt_solves_points_in_convex_position_from_nearest_neighbour():
    points, perimeter = circle(30, 7)
    tour = classic_solver("nn + 2-opt + or-opt", 1)(distance_matrix(points))
    assert tour_length(points, tour) == pytest.approx(perimeter)


def test_each_polished_row_follows_its_base_row_and_runs_where_it_does():
    rows = methods([10, 30, 100])
    names = [m.name for m in rows]
    polished = [m for m in rows if m.polish]
    assert [m.name for m in polished] == [
        "greedy + or-opt", "rrc10 + or-opt", "rrc30 + or-opt", "rrc100 + or-opt",
        "kool greedy + or-opt",
    ]  # fmt: skip
    for m in polished:
        base = rows[names.index(m.base)]
        assert names.index(m.base) < names.index(m.name) and base.max_n == m.max_n


def test_a_polished_row_is_its_bases_tours_locally_searched_with_the_time_added():
    rng = np.random.default_rng(2)
    points = [rng.random((12, 2)) for _ in range(3)]
    test = TestSet("n = 12", points, points, np.ones(3))
    runner = Runner(test, argparse.Namespace(single=1), {None: None})
    tours = [rng.permutation(12) for _ in points]
    runner.done["greedy"] = dict(tours=tours, cpu_single=1.0, cpu_batch=0.5, wall_batch=0.7)
    found = runner.run(Method("ptrnet", "greedy + or-opt", batched=True, base="greedy"))
    for p, before, after in zip(points, tours, found["tours"], strict=True):
        dist = distance_matrix(p)
        assert after.tolist() == two_opt_or_opt(dist, before).tolist()
    extra = found["cpu_batch"] - 0.5
    assert extra >= 0 and found["cpu_single"] - 1.0 == pytest.approx(extra)
    assert runner.done["greedy + or-opt"] is found


def test_kool_model_is_the_nearest_size():
    assert [kool_size(n) for n in (5, 20, 34, 35, 50, 76, 100, 1000)] == [
        20, 20, 20, 20, 50, 100, 100, 100
    ]  # fmt: skip


def test_report_redraws_table_and_plots_from_saved_rows(tmp_path):
    rows = [
        dict(set="n = 20", family="ptrnet", method="greedy", count=2, single=1, gap=1.0,
             s_single=0.1, per_s_batch=20.0),
        dict(set="n = 20", family="kool", method="kool greedy", count=2, single=1, gap=0.5,
             s_single=0.01, per_s_batch=100.0),
    ]  # fmt: skip
    saved = tmp_path / "rows.jsonl"
    saved.write_text("".join(json.dumps(r) + "\n" for r in rows))
    main(["--report", str(saved), "--out", str(tmp_path)])
    table = (tmp_path / "table.md").read_text()
    assert "| n = 20 | kool greedy | 2 / 1 | 0.50% |" in table
    assert (
        "n = 20, kool (batch of 1): ptrnet ahead or level within the same time at 0 of 1" in table
    )
    assert "| 0.1 s | 1.00% (greedy) | 0.50% (kool greedy) |" in table
    assert (tmp_path / "frontier_n20.png").stat().st_size > 1000


def test_a_further_model_has_greedy_and_multistart_rows_polished_at_its_sizes():
    rows = [m for m in methods([10], {"light": (71, 500)}) if m.model]
    assert [m.name for m in rows] == [
        "light greedy", "light greedy + or-opt",
        "light multistart-shortest", "light multistart-shortest + or-opt",
    ]  # fmt: skip
    assert [(m.min_n, m.max_n) for m in rows] == [(71, 500)] * 2 + [(71, 200)] * 2
    assert [m.decoding for m in rows if not m.polish] == ["greedy", "multistart-shortest"]


def test_further_models_need_a_name_and_take_a_size_range():
    assert extra_models(["light=a/b.safetensors@71-1000"]) == {
        "light": ("a/b.safetensors", (71, 1000))
    }
    assert extra_models(["light=folder"]) == {"light": ("folder", (1, None))}
    with pytest.raises(BenchError, match="NAME=MODEL"):
        extra_models(["folder"])
    with pytest.raises(BenchError, match="light=folder@big"):
        extra_models(["light=folder@big"])


def test_only_keeps_the_matching_rows_and_the_reference_solvers():
    args = argparse.Namespace(all_methods=False, only=["kool*"], kool_ok=True, lkh_ok=True)
    names = [m.name for m in chosen(methods([10]), 50, args)]
    assert names == ["kool greedy", "kool greedy + or-opt", "kool sample1280", "fast-tsp", "lkh-3"]
