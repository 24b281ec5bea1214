"""benchmarks/training_compute.py and benchmarks/flop_count.py: the FLOP count against hand
computations and torch's own counter, and the summing of multi-sitting run logs."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from benchmarks.flop_count import count_flops, flops_per_example, training_flops
from benchmarks.run_logs import RUNS_DIR, LogError, read_run, sum_log
from benchmarks.training_compute import MODELS, Bundled, model_row, run_flops
from ptrnet.datasets.batching import collate
from ptrnet.model import build_model
from ptrnet.model.config import ModelConfig
from ptrnet.runs.config import TrainConfig


def lstm_forward_by_hand(steps: int, rows: int, width: int, hidden: int) -> int:
    """The four gates' input and recurrent products: 2 FLOPs per multiply-add."""
    return 2 * steps * rows * 4 * hidden * (width + hidden)


@pytest.fixture
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_fused_lstm_count_equals_the_hand_count_and_torchs_unfused_count(one_thread):
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(3, 8, batch_first=True)
    x = torch.randn(2, 5, 3)  # (B, T, in)
    forward = lstm_forward_by_hand(5, 2, 3, 8)
    assert torch.backends.mkldnn.is_available()  # the fused oneDNN kernel of CPU training
    assert count_flops(lambda: lstm(x)) == forward
    with torch.backends.mkldnn.flags(enabled=False), FlopCounterMode(display=False) as torchs:
        lstm(x)  # unfused: per-step matrix products FlopCounterMode counts itself
    assert torchs.get_total_flops() == forward
    # backward: gradients of the inputs (x_t, h_(t-1)) and of both weights, one product each
    assert count_flops(lambda: lstm(x)[0].sum().backward()) == 3 * forward


def test_unfused_backward_differs_only_by_the_gradients_autograd_skips(one_thread):
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(3, 8, batch_first=True)
    x = torch.randn(2, 5, 3)  # no gradient wanted for x, none for the zero initial state
    with torch.backends.mkldnn.flags(enabled=False), FlopCounterMode(display=False) as torchs:
        lstm(x)[0].sum().backward()
    skipped = 2 * 5 * 2 * (4 * 8) * 3 + 2 * 1 * 2 * (4 * 8) * 8  # d/dx over 5 steps, d/dh_0
    assert torchs.get_total_flops() == 3 * lstm_forward_by_hand(5, 2, 3, 8) - skipped


def ptr_net_forward_by_hand(n: int, rows: int, dim: int, d: int) -> int:
    """Forward FLOPs of the Ptr-Net on ``rows`` instances of n inputs, labels of n + 1 steps."""
    steps = n + 1  # output steps: n pointers and the end token
    return (
        lstm_forward_by_hand(n, rows, dim, d)  # encoder
        + lstm_forward_by_hand(steps, rows, dim, d)  # decoder
        + 2 * rows * (n + 1) * d * d  # W1 e_j over the end vector and the n inputs
        + 2 * rows * steps * d * d  # W2 d_i
        + 2 * rows * steps * (n + 1) * d  # v^T tanh(...) for every step and position
    )


def test_ptr_net_training_flops_equal_a_hand_count(one_thread):
    d, n, rows = 8, 4, 3
    model = build_model(ModelConfig(kind="pointer", input_dim=2, hidden=d)).train()
    rng = np.random.default_rng(0)
    batch = collate([rng.random((n, 2)) for _ in range(rows)], [rng.permutation(n)] * rows)
    # backward: every product has one product of the same size per input needing a gradient
    # (weights and activations both do here), so twice the forward
    assert training_flops(model, batch) == 3 * ptr_net_forward_by_hand(n, rows, 2, d)
    assert all(p.grad is not None for p in model.parameters())


def test_flops_per_example_average_the_training_sizes(one_thread):
    model = build_model(ModelConfig(input_dim=1, hidden=8))
    cfg = TrainConfig(task="sort", sizes="4-6", steps=1, train_constraints="task")
    by_hand = [3 * ptr_net_forward_by_hand(n, 1, 1, 8) for n in (4, 5, 6)]
    assert flops_per_example(model, cfg, 2, 0) == pytest.approx(sum(by_hand) / 3)


def rows_of(*rows: tuple[int, float, float]) -> list[dict[str, str]]:
    return [{"step": str(s), "examples_per_s": str(r), "elapsed_s": str(e)} for s, r, e in rows]


def test_a_resumed_run_sums_its_sittings():
    rows = rows_of((50, 100, 10), (100, 50, 30), (150, 100, 4), (200, 100, 9), (250, 25, 2))
    record = sum_log(rows, 4, "run")
    assert (record.steps, record.sittings, record.examples) == (250, 3, 1000)
    assert record.wall_s == pytest.approx(30 + 9 + 2)
    assert record.train_s == pytest.approx(200 / 100 + 200 / 50 + 200 / 100 + 200 / 100 + 200 / 25)


@pytest.mark.parametrize(
    "rows, where",
    [
        (rows_of((50, 100, 10), (50, 100, 20)), "run:3"),
        (rows_of((50, 100, 10), (100, 0, 20)), "run:3"),
        ([{"step": "50", "examples_per_s": "", "elapsed_s": "1"}], "run:2"),
        ([], "run"),
    ],
)
def test_a_log_that_cannot_be_summed_is_named_with_its_line(rows, where):
    with pytest.raises(LogError, match=f"^{where}: "):
        sum_log(rows, 4, "run")


def test_the_bundled_logs_add_up_to_what_the_commands_say():
    hull = read_run("convex_hull")  # COMMAND.md: five sittings, 112,000 steps, about 3 h 46 min
    assert (hull.sittings, hull.steps) == (5, 112000)
    assert abs(hull.wall_s / 60 - 226) < 2
    n5 = next(m for m in MODELS if m.folder == "delaunay/n5")  # 6 h 10 min, 74M pairs
    runs = [read_run(run) for run in n5.runs]
    assert round(sum(r.examples for r in runs) / 1e6) == 74
    assert abs(sum(r.wall_s for r in runs) / 60 - 370) < 2


def test_every_listed_run_has_a_log_and_every_bundled_point_model_is_listed():
    for model in MODELS:
        for run in model.runs:
            assert (RUNS_DIR / run / "log.csv").is_file(), run
    bundled = RUNS_DIR.parent.parent / "ptrnet" / "bundled"
    folders = {str(p.parent.relative_to(bundled)) for p in bundled.rglob("best.safetensors")}
    # left out: the sentence tasks, and cvrp's two models (REINFORCE, not teacher forcing)
    assert folders - {m.folder for m in MODELS} == {"copy", "span", "cvrp", "cvrp/n50"}


def test_a_line_is_priced_at_each_runs_own_sizes(one_thread):
    runs = ("tsp/heavy10-30/8-n20", "tsp/heavy40-52/1-on-40-52")  # 20 cities, then 40-52
    small, large = (run_flops(run, 1, 0) for run in runs)
    assert large > 1.8 * small  # the heavy decoder's work grows with the cities left
    row = model_row(Bundled("tsp/heavy40-52", runs), per_size=1, seed=0, gpu_tflops=100.0)
    examples = [read_run(run).examples for run in runs]
    assert row["total_flops"] == pytest.approx(examples[0] * small + examples[1] * large)
    assert small < row["flops_per_example"] < large
    assert [r["flops_per_example"] for r in row["runs"]] == [small, large]
