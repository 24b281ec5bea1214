"""Data-parallel training without a process group: the torchrun environment, the device a rank
takes, row sharding, and the weighted shares whose gradients add up to the 1-rank gradient."""

import numpy as np
import pytest
import torch

from ptrnet.datasets.batching import IGNORE_INDEX, collate
from ptrnet.datasets.generation import generate_dataset
from ptrnet.io.errors import UsageError
from ptrnet.io.paper_format import write_examples
from ptrnet.model import ModelConfig, build_model
from ptrnet.runs.config import TrainConfig
from ptrnet.tasks import get_task
from ptrnet.training.cpu import cpu_plan
from ptrnet.training.data import TrainingData
from ptrnet.training.distributed import (
    Ranks,
    backend_for,
    rank_device,
    row_range,
    session,
    shard_batch,
)
from ptrnet.training.losses import teacher_forced_loss

torch.set_num_threads(1)


def test_ranks_from_torchrun_environment():
    assert Ranks.from_environ({}) == Ranks(0, 1, 0, 1)
    env = {"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2"}
    ranks = Ranks.from_environ(env)
    assert ranks == Ranks(3, 4, 1, 2) and ranks.distributed and not ranks.main
    assert Ranks.from_environ({"WORLD_SIZE": "2"}) == Ranks(0, 2, 0, 2)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"WORLD_SIZE": "two"}, "not integers"),
        ({"WORLD_SIZE": "2", "RANK": "2"}, "inconsistent"),
        ({"WORLD_SIZE": "2", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "1"}, "inconsistent"),
    ],
)
def test_bad_torchrun_environment_is_a_usage_error(env, message):
    with pytest.raises(ValueError, match=message):
        Ranks.from_environ(env)
    with pytest.raises(UsageError, match=message), session("cpu", environ=env):
        pass


def test_each_rank_takes_the_gpu_of_its_local_rank():
    two = Ranks(3, 4, 1, 2)
    assert rank_device("cuda", two, cuda_available=True) == "cuda:1"
    assert rank_device("auto", two, cuda_available=True) == "cuda:1"
    assert rank_device("auto", two, cuda_available=False) == "cpu"
    assert rank_device("cpu", two, cuda_available=True) == "cpu"
    assert rank_device("cuda:1", Ranks(), cuda_available=True) == "cuda:1"  # one rank: as given
    with pytest.raises(ValueError, match="each rank takes the GPU"):
        rank_device("cuda:0", two, cuda_available=True)


def test_backend_follows_the_device():
    assert backend_for(torch.device("cpu")) == "gloo"
    assert backend_for(torch.device("cuda", 1)) == "nccl"


def test_single_process_session_without_a_process_group():
    with session("cpu", "fp32", environ={}) as single:
        assert single.main and single.device == torch.device("cpu")
        model = torch.nn.Linear(2, 2)
        assert single.wrap(model) is model and single.sum(2.5) == 2.5
        assert single.broadcast({"a": 1}) == {"a": 1}
    with pytest.raises(UsageError, match="fp16 needs a CUDA device"), session("cpu", "fp16", {}):
        pass


@pytest.mark.parametrize("world", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("rows", [0, 1, 2, 7, 8, 128, 129])
def test_rows_are_split_in_consecutive_blocks_differing_by_at_most_one(rows, world):
    ranges = [row_range(rows, world, r) for r in range(world)]
    assert ranges[0][0] == 0 and ranges[-1][1] == rows
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:], strict=False))  # disjoint cover
    sizes = [hi - lo for lo, hi in ranges]
    assert sizes == [rows // world + (r < rows % world) for r in range(world)]


def make_batch(sizes, seed=0):
    rng = np.random.default_rng(seed)
    points = [rng.random((n, 1)) for n in sizes]
    return collate(points, [np.argsort(p[:, 0], kind="stable") for p in points])


def test_shard_keeps_its_rows_and_trims_their_padding():
    batch = make_batch([3, 4, 9, 5, 3])
    first = shard_batch(batch, Ranks(0, 2), by_tokens=True)
    second = shard_batch(batch, Ranks(1, 2), by_tokens=True)
    assert first.batch.size == 3 and second.batch.size == 2
    assert first.batch.points.shape[1] == 9 and second.batch.points.shape[1] == 5
    assert torch.equal(second.batch.points, batch.points[3:, :5])
    assert torch.equal(second.batch.targets, batch.targets[3:, :6])  # 5 pointers + end token
    assert first.share + second.share == pytest.approx(1.0)
    assert second.share == pytest.approx((6 + 4) / int((batch.targets != IGNORE_INDEX).sum()))
    assert shard_batch(batch, Ranks(), by_tokens=True).batch is batch


def flat_grad(model):
    return torch.cat([p.grad.flatten() for p in model.parameters()])


@pytest.mark.parametrize(("sizes", "world"), [([3, 4, 9, 5, 3, 6, 2], 3), ([4, 7], 3)])
@pytest.mark.parametrize("by_tokens", [True, False])
def test_weighted_rank_gradients_average_to_the_global_gradient(sizes, world, by_tokens):
    """What DDP computes, without DDP: the mean over ranks of each rank's gradient of
    ``K * share * local mean`` is the gradient of the global mean; with 2 rows on 3 ranks the
    third rank's borrowed row has weight 0."""
    torch.manual_seed(0)
    model = build_model(ModelConfig(input_dim=1, hidden=8, init="default"))
    batch = make_batch(sizes)

    def mean_loss(rows):
        per_token = teacher_forced_loss(model, rows, "none").view(rows.size, -1)  # (B, T)
        if by_tokens:
            return per_token.sum() / (rows.targets != IGNORE_INDEX).sum()
        return (per_token.sum(dim=1) / (rows.targets != IGNORE_INDEX).sum(dim=1)).mean()

    model.zero_grad()
    mean_loss(batch).backward()
    want = flat_grad(model)
    total = torch.zeros_like(want)
    shares = []
    for rank in range(world):
        shard = shard_batch(batch, Ranks(rank, world), by_tokens)
        model.zero_grad()
        (world * shard.share * mean_loss(shard.batch)).backward()
        total += flat_grad(model) / world  # DDP's average
        shares.append(shard.share)
    assert sum(shares) == pytest.approx(1.0)
    assert (0.0 in shares) == (len(sizes) < world)
    torch.testing.assert_close(total, want, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(
    ("cores", "busy", "ranks", "plan"),
    [
        (16, 0, 2, (6, 2)),
        (16, 0, 4, (3, 1)),
        (2, 0, 2, (1, 0)),
        (2, 1, 2, (1, 0)),
        (8, 0, 1, (6, 2)),
    ],
)
def test_ranks_on_one_machine_split_its_free_cores(cores, busy, ranks, plan):
    assert cpu_plan(None, None, cores, busy, ranks=ranks) == plan
    threads, workers = plan
    assert ranks * (threads + workers) <= max(ranks, cores - busy)  # never oversubscribed


def test_file_batches_shard_into_the_rows_of_the_global_batch(tmp_path):
    """``--data FILE``: 3 ranks' rows of each step are, in rank order, the 1-rank batch's rows
    (the epoch's last batch has 2 rows: the third rank borrows one with weight 0)."""
    path = tmp_path / "train.txt"
    write_examples(path, generate_dataset("sort", "3-7", 12, seed=9, workers=1))
    cfg = TrainConfig(task="sort", sizes="3-7", data=str(path), batch_size=5, epochs=1, seed=4)
    data = TrainingData(get_task("sort"), cfg, [])
    assert data.total_steps() == 3
    for step in range(3):
        batch = data.batch(step)
        shards = [shard_batch(batch, Ranks(r, 3), by_tokens=True) for r in range(3)]
        kept = [s for s in shards if s.share > 0]
        assert sum(s.batch.size for s in kept) == batch.size
        lengths = torch.cat([s.batch.lengths for s in kept])
        assert torch.equal(lengths, batch.lengths)
        for s, lo in zip(kept, np.cumsum([0] + [s.batch.size for s in kept]), strict=False):
            width = s.batch.points.shape[1]
            assert torch.equal(s.batch.points, batch.points[lo : lo + s.batch.size, :width])
        assert (len(kept) < 3) == (batch.size < 3)
