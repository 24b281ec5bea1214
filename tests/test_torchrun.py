"""``torchrun --standalone --nproc-per-node=2 -m ptrnet train`` on the CPU (gloo): the 2-rank run
ends where the 1-rank run with the same seed and global batch ends, its replicas agree after
every step, rank 0 alone writes, and ``--resume`` works across rank counts.

The global batch of 7 rows does not divide over 2 ranks (4 + 3 rows, weighted shares). Plain SGD
with a large learning rate makes the 4 steps move the weights by about 0.1 while keeping the
comparison exact up to float rounding; Adam divides each gradient entry by its own magnitude,
which magnifies rounding in entries that are nearly zero (docs/distributed.md).
"""

import os
import shutil
import subprocess
import sys

import pytest
import torch

from ptrnet.cli.main import main
from ptrnet.model import build_model
from ptrnet.runs.checkpoint import load_checkpoint
from ptrnet.runs.csvlog import read_log
from ptrnet.training.distributed import TRACE_ENV

torch.set_num_threads(1)

ARGS = [
    "train",
    "sort",
    "-n",
    "5-6",
    "--batch-size",
    "7",
    "--val-count",
    "8",
    "--val-every",
    "2",
    "--log-every",
    "1",
    "--optimizer",
    "sgd",
    "--lr",
    "100",
    "--seed",
    "3",
    "--threads",
    "1",
    "--workers",
    "0",
    # fp32: "auto" is bf16 on a CPU with native bf16, whose rounding is far above the 1e-4
    # the comparison allows
    "--precision",
    "fp32",
]
FRESH = ["--hidden", "16", "--init", "default"]
RUN_FILES = {"config.json", "log.csv", "last.safetensors", "best.safetensors", "best.json"}


def torchrun(cwd, *args):
    """``torchrun --standalone --nproc-per-node=2 -m ptrnet ARGS`` from this venv, in ``cwd``."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", TRACE_ENV: str(cwd / "trace")}
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    command += ["--nproc-per-node=2", "-m", "ptrnet", *ARGS, *args]
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """1 rank for 4 steps; 2 ranks for 2 steps, resumed under 2 ranks to 4 and, from a copy of
    its step-2 directory, under 1 rank to 4."""
    root = tmp_path_factory.mktemp("torchrun")
    assert main([*ARGS, *FRESH, "--steps", "4", "--out", str(root / "one")]) == 0
    stdout = torchrun(root, *FRESH, "--steps", "2", "--out", "two")
    shutil.copytree(root / "two", root / "cross")
    stdout += torchrun(root, "--steps", "4", "--out", "two", "--resume")
    assert main([*ARGS, "--steps", "4", "--out", str(root / "cross"), "--resume"]) == 0
    return root, stdout


def weights(run_dir):
    ckpt = load_checkpoint(run_dir / "last.safetensors")
    assert ckpt.step == 4
    return ckpt.model_state


@pytest.mark.parametrize("other", ["two", "cross"])
def test_two_ranks_end_where_one_rank_ends(runs, other):
    """Equal up to float rounding: the distance between the runs' weights is a tiny fraction of
    the distance either travelled from the initial weights."""
    root, _ = runs
    one, two = weights(root / "one"), weights(root / other)
    config = load_checkpoint(root / "one" / "last.safetensors").config
    torch.manual_seed(config.train.seed)
    start = build_model(config.model).state_dict()
    moved = distance(one, start)
    assert moved > 0.1
    assert distance(two, one) < 1e-4 * moved


def distance(a, b):
    """L2 distance between two state dicts with the same keys."""
    return sum(float(((a[k] - b[k]) ** 2).sum()) for k in a) ** 0.5


def test_the_logged_loss_and_validation_are_the_global_ones(runs):
    root, _ = runs
    one, two = read_log(root / "one" / "log.csv"), read_log(root / "two" / "log.csv")
    assert [row["step"] for row in two] == ["1", "2", "3", "4"]  # rank 0 alone, once per step
    for a, b in zip(one, two, strict=True):
        assert float(b["loss"]) == pytest.approx(float(a["loss"]), rel=1e-5)
        assert b["val_exact_match"] == a["val_exact_match"]
        for key in ("val_tf_loss", "val_position_accuracy"):
            assert float(b[key] or 0) == pytest.approx(float(a[key] or 0), rel=1e-5, abs=1e-6)


LEFT = "left the group, DDP wrappers alive: "


def trace_lines(root, rank):
    """Rank ``rank``'s trace: its ``step digest`` lines and its lines on leaving the group."""
    lines = (root / f"trace.rank{rank}").read_text().splitlines()
    return [x for x in lines if not x.startswith(LEFT)], [x for x in lines if x.startswith(LEFT)]


def test_replicas_are_identical_after_every_step(runs):
    root, _ = runs
    (steps0, _), (steps1, _) = trace_lines(root, 0), trace_lines(root, 1)
    assert [line.split()[0] for line in steps0] == ["1", "2", "3", "4"]
    assert steps0 == steps1


def test_no_ddp_wrapper_outlives_the_process_group(runs):
    """Each rank of both runs left its group with no DDP wrapper alive: one alive keeps the
    gloo group until interpreter teardown, which aborted rank 1 of a resumed run now and then
    (``terminate called without an active exception``)."""
    root, _ = runs
    for rank in (0, 1):
        assert trace_lines(root, rank)[1] == [LEFT + "0"] * 2


def test_rank_zero_alone_writes_and_prints(runs):
    root, stdout = runs
    assert {p.name for p in root.iterdir()} == {"one", "two", "cross", "trace.rank0", "trace.rank1"}
    assert {p.name for p in (root / "two").iterdir()} == RUN_FILES
    reports = [line for line in stdout.splitlines() if line.startswith("ptrnet: sort:")]
    assert len(reports) == 2 and "2 steps" in reports[0] and "4 steps" in reports[1]
