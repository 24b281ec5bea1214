"""0-1 knapsack: the exact solver against brute force, the capacity rule, the decoding mask,
the metrics and costs, and the paper's file format through the commands."""

from __future__ import annotations

import itertools
import re
from fractions import Fraction

import numpy as np
import pytest
import torch

from ptrnet.datasets.batching import collate
from ptrnet.solvers.knapsack import integer_units, ratio_order, solve_knapsack
from ptrnet.tasks import DegenerateInstanceError, SizeRange, from_tokens, get_task, to_tokens
from ptrnet.tasks.knapsack import capacity, item_weights

torch.set_num_threads(1)
KNAPSACK = get_task("knapsack")


def brute_force(weights, values, cap) -> Fraction:
    """The best total value over all subsets, in exact rational arithmetic."""
    w = [Fraction(x) for x in weights]
    v = [Fraction(x) for x in values]
    best = Fraction(0)
    for size in range(len(w) + 1):
        for chosen in itertools.combinations(range(len(w)), size):
            if sum((w[i] for i in chosen), Fraction(0)) <= Fraction(cap):
                best = max(best, sum((v[i] for i in chosen), Fraction(0)))
    return best


def exact_value(values, chosen) -> Fraction:
    return sum((Fraction(float(values[i])) for i in chosen), Fraction(0))


def exact_weight(weights, chosen) -> Fraction:
    return sum((Fraction(float(weights[i])) for i in chosen), Fraction(0))


@pytest.mark.parametrize("seed", range(60))
def test_the_solver_matches_brute_force_over_all_subsets(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 13))
    weights, values = rng.random(n), rng.random(n)
    cap = float(rng.choice([capacity(n), rng.random() * n / 2]))
    chosen = solve_knapsack(weights, values, cap)
    assert exact_weight(weights, chosen) <= Fraction(cap)
    assert exact_value(values, chosen) == brute_force(weights, values, cap)
    left = np.setdiff1d(np.arange(n), chosen)  # filled up: nothing else fits
    assert all(exact_weight(weights, [*chosen, i]) > Fraction(cap) for i in left)


def test_the_solver_is_exact_where_float_sums_round_and_values_tie():
    """0.1 + 0.2 > 0.3 in floats but not exactly for these floats' sum rounded; the solver
    compares exact sums. Ties of value, zero weights and zero values are handled."""
    weights = np.array([0.1, 0.2, 0.3, 0.0, 0.6, 0.25])
    values = np.array([0.5, 0.5, 1.0, 0.0, 0.7, 0.0])
    for cap in (0.3, 0.30000000000000004, 0.6, 1.0):
        chosen = solve_knapsack(weights, values, cap)
        assert exact_weight(weights, chosen) <= Fraction(cap)
        assert exact_value(values, chosen) == brute_force(weights, values, cap)
        assert 3 in chosen  # weight 0 always fits


def test_integers_beyond_int64_and_tiny_floats_stay_exact():
    rng = np.random.default_rng(1)
    weights, values = rng.random(9) * 1e-200, rng.random(9) * 1e200
    cap = float(weights[:4].sum())
    chosen = solve_knapsack(weights, values, cap)
    assert exact_value(values, chosen) == brute_force(weights, values, cap)
    units, (scaled,) = integer_units(np.array([0.5, 2.0**-60]), 3.0)
    assert units == [2**59, 1] and scaled == 3 * 2**60


def test_negative_or_non_finite_items_have_no_reference():
    for bad in ([[0.5, 0.5], [-0.1, 0.3]], [[0.5, -1.0]], [[np.inf, 0.5]]):
        with pytest.raises(DegenerateInstanceError, match="must be finite and >= 0"):
            KNAPSACK.solve(np.array(bad))


def test_item_errors_print_plain_floats(cli, tmp_path):
    """``item 1 has weight np.float64(-1.0)`` before: numpy's repr leaked into the message."""
    with pytest.raises(DegenerateInstanceError) as err:
        KNAPSACK.solve(np.array([[-1.0, 0.5], [0.5, 0.5]]))
    assert str(err.value).endswith("item 1 has weight -1.0")
    (tmp_path / "bad.txt").write_text("-1.0 0.5 0.5 0.5\n")
    status, _, err = cli("solve", "knapsack", "bad.txt", "-o", "t.txt")
    assert status == 1 and err.endswith("item 1 has weight -1.0\n") and "np." not in err


@pytest.mark.parametrize("command", ["solve", "predict"])
def test_numbers_past_float32_are_refused_in_one_line(cli, tmp_path, command):
    """A weight of 5e99 was cast to float32 and reported as ``inf`` by solve, and decoded as
    ``inf`` by predict (exit 0); a value too (the model reads it as float32)."""
    for line, what in (("5e99 0.5 0.5 0.5", "weight 5e+99"), ("0.5 0.5 0.5 4e38", "value 4e+38")):
        (tmp_path / "big.txt").write_text(line + "\n")
        status, out, err = cli(command, "knapsack", "big.txt", "-o", "-", "-q")
        assert status == 1 and out == "" and err.count("\n") == 1, err
        assert err.startswith("ptrnet: error: big.txt:1: knapsack ")
        assert "at most 3.4028235e+38 (float32, what a model reads); item " in err and what in err
    assert KNAPSACK.solve(np.array([[3.4e38, 0.5], [0.5, 3.4e38]])).tolist() == [1]


def test_predict_refuses_negative_weights_in_one_line(cli, tmp_path):
    """``ptrnet predict knapsack`` with a weight of -1 exited 0 with ``"valid": true``."""
    (tmp_path / "neg.txt").write_text("-1.0 0.6 0.3 0.2 0.5 0.9\n")
    status, out, err = cli("predict", "knapsack", "neg.txt", "--output-format", "json", "-o", "-")
    assert status == 1 and out == ""
    assert err == (
        "ptrnet: error: neg.txt:1: knapsack weights must be finite and >= 0; "
        "item 1 has weight -1.0\n"
    )


def test_capacity_follows_bello_et_al_and_caps_at_25():
    assert [capacity(n) for n in (5, 10, 50, 100, 200, 1000)] == [1.25, 2.5, 12.5, 25, 25, 25]
    assert capacity(torch.tensor([50.0, 200.0])).tolist() == [12.5, 25.0]


def test_labels_are_optimal_sets_in_value_per_weight_order():
    points = KNAPSACK.generate(SizeRange(5, 14), 20, seed=3)
    for x in points:
        label = KNAPSACK.solve(x)
        value = exact_value(x[:, 1], label)
        assert value == brute_force(item_weights(x), x[:, 1], capacity(len(x)))
        ratios = x[label, 1] / x[label, 0]
        assert np.all(np.diff(ratios) <= 0) and KNAPSACK.is_valid(x, label)
        assert np.array_equal(KNAPSACK.canonical(x, label[::-1]), label)
    assert ratio_order(np.array([0.5, 0.0, 0.5]), np.array([0.5, 0.1, 0.5])).tolist() == [1, 0, 2]


def test_validity_is_distinct_items_whose_exact_weight_fits():
    x = np.array([[0.5, 0.9], [0.5, 0.8], [0.25, 0.1], [0.5, 0.5]])  # capacity 1.0
    assert KNAPSACK.is_valid(x, np.array([0, 1]))
    assert KNAPSACK.is_valid(x, np.array([], dtype=np.int64))
    assert not KNAPSACK.is_valid(x, np.array([0, 1, 2]))  # 1.25 > 1
    assert not KNAPSACK.is_valid(x, np.array([0, 0]))
    assert not KNAPSACK.is_valid(x, np.array([0, 4]))


def test_the_mask_allows_what_fits_and_ends_only_when_nothing_does():
    x = np.array([[0.5, 0.9], [0.75, 0.8], [0.25, 0.1], [0.5, 0.5]])  # capacity 1.0
    batch = collate([x])
    state = KNAPSACK.decode_state(batch.lengths, "task", batch.points)
    assert state.allowed()[0].tolist() == [False, True, True, True, True]
    state = state.update(torch.tensor([1]))  # 0.5 used
    assert state.allowed()[0].tolist() == [False, False, False, True, True]
    state = state.update(torch.tensor([4]))  # 1.0 used: nothing fits
    assert state.allowed()[0].tolist() == [True, False, False, False, False]


def test_random_walks_under_the_mask_are_filled_feasible_sets():
    """Any walk through the allowed tokens ends in a feasible set to which no item can be
    added: checked in exact arithmetic, against the float64 sums the mask makes."""
    points = KNAPSACK.generate(SizeRange(1, 30), 64, seed=5)
    batch = collate(points)
    state = KNAPSACK.decode_state(batch.lengths, "task", batch.points)
    gen, tokens = torch.Generator().manual_seed(0), []
    for _ in range(31):
        pick = torch.multinomial(state.allowed().float(), 1, generator=gen)[:, 0]
        tokens.append(pick)
        state = state.update(pick)
    assert state.done.all()
    for row, x in enumerate(points):
        seq = from_tokens(torch.stack(tokens, 1)[row].numpy())
        cap = Fraction(capacity(len(x)))
        assert KNAPSACK.is_valid(x, seq)
        left = np.setdiff1d(np.arange(len(x)), seq)
        assert all(exact_weight(x[:, 0], [*seq, i]) > cap for i in left)


def test_metrics_value_gap_and_optimal_rate():
    x = np.array([[0.5, 0.9], [0.75, 0.8], [0.25, 0.1], [0.5, 0.5]])  # capacity 1.0
    ref = KNAPSACK.solve(x)
    assert sorted(ref.tolist()) == [0, 3]  # 1.4; items 1 and 2 give 0.9
    preds = [ref, np.array([1, 2]), np.array([0, 1])]  # optimal, worse, too heavy
    scores = KNAPSACK.metrics([x] * 3, [ref] * 3, preds)
    assert scores["valid_rate"] == pytest.approx(2 / 3)
    assert scores["mean_value"] == pytest.approx((1.4 + 0.9) / 2)
    assert scores["mean_gap"] == pytest.approx((0 + (1 - 0.9 / 1.4)) / 2)
    assert scores["optimal_rate"] == pytest.approx(1 / 3)
    assert KNAPSACK.answer_cost(x, ref) == pytest.approx(1.4)
    assert KNAPSACK.sequence_cost(x, np.array([0, 1])) == np.inf


def test_the_batched_cost_is_the_negated_value_of_each_row():
    points = KNAPSACK.generate(SizeRange(3, 9), 12, seed=2)
    refs = [KNAPSACK.solve(x) for x in points]
    batch = collate(points)
    tokens = torch.nn.utils.rnn.pad_sequence(
        [torch.from_numpy(to_tokens(r)) for r in refs], batch_first=True
    )
    costs = KNAPSACK.batch_cost(batch.points, tokens, batch.lengths)
    want = [KNAPSACK.sequence_cost(x, r) for x, r in zip(points, refs, strict=True)]
    assert costs.tolist() == pytest.approx(want, rel=1e-6)


def test_files_carry_items_as_points_and_outputs_as_1_based_indices(cli, tmp_path):
    assert (
        cli("generate", "knapsack", "-n", "8", "--count", "3", "--seed", "0", "-o", "d.txt")[0] == 0
    )
    lines = (tmp_path / "d.txt").read_text().splitlines()
    x = KNAPSACK.generate(SizeRange(8, 8), 1, seed=0)[0]
    numbers, output = lines[0].split(" output ")
    assert np.array_equal(np.array(numbers.split(), dtype=float).reshape(-1, 2), x)
    assert [int(i) - 1 for i in output.split()] == KNAPSACK.solve(x).tolist()
    (tmp_path / "items.txt").write_text("0.5 0.9\n0.75 0.8\n0.25 0.1\n0.5 0.5\n")
    assert cli("solve", "knapsack", "items.txt", "-o", "s.txt", "-q")[0] == 0
    assert (tmp_path / "s.txt").read_text().split("output")[1].split() == ["1", "4"]
    (tmp_path / "bad.txt").write_text("0.5 0.9 -0.2 0.3\n")
    status, _, err = cli("solve", "knapsack", "bad.txt", "-o", "t.txt")
    assert status == 1 and "weights must be finite and >= 0; item 2" in err


def test_the_greedy_solver_takes_items_by_ratio_while_they_fit():
    x = np.array([[0.5, 0.9], [0.75, 0.8], [0.25, 0.1], [0.5, 0.5]])  # capacity 1.0
    # ratios 1.8, 1.07, 0.4, 1.0: item 1, then 2 overflows, 4 fits, 3 no longer does
    assert KNAPSACK.solve(x, "greedy").tolist() == [0, 3]
    for x in KNAPSACK.generate(SizeRange(5, 40), 30, seed=4):
        greedy, exact = KNAPSACK.solve(x, "greedy"), KNAPSACK.solve(x)
        assert KNAPSACK.is_valid(x, greedy)
        assert exact_value(x[:, 1], greedy) <= exact_value(x[:, 1], exact)
        used = exact_weight(x[:, 0], greedy)
        left = np.setdiff1d(np.arange(len(x)), greedy)
        assert all(used + Fraction(float(x[i, 0])) > Fraction(capacity(len(x))) for i in left)


def test_the_bundled_model_serves_predict_eval_plot_demo_and_the_page(cli, tmp_path):
    """The bundled folder (ptrnet/bundled/knapsack) decodes feasible, filled-up sets by every
    front end: ``predict`` writes ``output`` and the chosen 1-based indices, ``eval`` scores
    them, ``plot`` draws them, the demo compares with Bello et al.'s figure, the page answers."""
    import json

    from fastapi.testclient import TestClient

    from ptrnet import inference
    from ptrnet.web.app import create_app

    assert (
        cli("generate", "knapsack", "-n", "20", "--count", "4", "--seed", "3", "-o", "d.txt")[0]
        == 0
    )
    for decode in (("greedy",), ("beam", "--pick", "shortest"), ("sample", "--samples", "4")):
        status, _, _ = cli("predict", "knapsack", "d.txt", "--decode", *decode, "-o", "p.txt", "-q")
        assert status == 0
        for line, x in zip(
            (tmp_path / "p.txt").read_text().splitlines(),
            KNAPSACK.generate(SizeRange(20, 20), 4, seed=3),
            strict=True,
        ):
            seq = np.array(line.split(" output ")[1].split(), dtype=np.int64) - 1
            assert KNAPSACK.is_valid(x, seq) and len(seq)
    status, out, _ = cli("eval", "knapsack", "d.txt", "--json", "--threads", "1")
    assert status == 0 and json.loads(out)["valid_rate"] == 1.0
    assert cli("plot", "knapsack", "d.txt", "-o", "plot.png")[0] == 0
    status, out, _ = cli("demo", "--tasks", "knapsack", "--count", "2", "--out", "demo")
    assert status == 0 and "| knapsack | 50 | greedy |" in out and "19.86" in out

    loaded = inference.load_model(None, "knapsack")
    client = TestClient(create_app({"knapsack": loaded}), base_url="http://localhost")
    points = KNAPSACK.generate(SizeRange(30, 30), 1, seed=8)[0].tolist()
    answer = client.post("/api/predict", json={"task": "knapsack", "points": points}).json()
    assert answer["metrics"]["valid"] and answer["metrics"]["optimal_cost"] > 0
    tasks = {t["name"]: t for t in client.get("/api/tasks").json()["tasks"]}
    assert tasks["knapsack"]["drawing"] == "subset"


@pytest.mark.parametrize("objective", ["likelihood", "reinforce"])
def test_training_runs_on_exact_labels_and_on_the_value(cli, objective):
    """Teacher forcing on the exact sets (the mask's loss) and REINFORCE on the negated value
    (leave-one-out baseline over sampled sets) both train and validate on the gap."""
    steps = ("--dry-run", "--objective", objective, "--workers", "0", "--threads", "1")
    status, out, _ = cli("train", "knapsack", *steps, "--train-constraints", "task", "--out", "r")
    assert status == 0 and re.search(r"; best mean_gap \d+\.\d\d% at step \d+;", out), out
