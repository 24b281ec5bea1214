"""The heavy decoder (LEHD idea, ptrnet.model.heavy): its slow reference of one step (run by
test_permutation_decoders.py, with what it shares with the light decoder), its refusals,
training from the command line and sub-sampled label steps."""

from dataclasses import replace

import numpy as np
import pytest
import torch

from ptrnet.cli.main import main
from ptrnet.datasets.batching import collate
from ptrnet.inference import load_model
from ptrnet.model import ModelConfig, build_model
from ptrnet.model.heavy import HeavyPointer
from ptrnet.runs.config import RunConfig, TrainConfig
from ptrnet.tasks import get_task
from ptrnet.training.losses import sample_label_steps, teacher_forced_loss

torch.set_num_threads(1)
HEAVY = dict(encoder="transformer", encoder_layers=1, decoder="heavy", decoder_layers=2, heads=2)


def make_model(seed=0, input_dim=2, **kw):
    torch.manual_seed(seed)
    config = ModelConfig(input_dim=input_dim, **{"hidden": 16, **HEAVY, **kw})
    return build_model(config).eval()


def tsp_batch(sizes=(7, 5, 6), seed=1):
    task, rng = get_task("tsp"), np.random.default_rng(seed)
    points = [rng.random((n, 2)) for n in sizes]
    return collate(points, [task.solve(p) for p in points]), points


def reference_logits(model, points, n, prefix):
    """One step written out for a single instance: re-encode [first, last, remaining inputs]
    with the decoder layers and score each column as the module docstring says."""
    nodes = model.encode(points[None], torch.tensor([n])).nodes[0]  # (n, d)
    chosen = [t for t in prefix if t > 0]
    first, last = (chosen[0], prefix[-1]) if chosen else (0, 0)
    rest = [j for j in range(n) if j + 1 not in chosen]
    f = model.first_proj(nodes[first - 1]) if first else model.first_start
    la = model.last_proj(nodes[last - 1]) if last else model.last_start
    out = model.decoder(torch.cat([f[None], la[None], nodes[rest]])[None])[0]  # (c+2, d)
    logits = torch.full((n + 1,), float("-inf"))
    logits[0] = model.stop(out[1])[0]
    for i, j in enumerate(rest):
        logits[j + 1] = model.point(out[2 + i])[0]
    if first and not rest and last != first:
        logits[first] = model.close(out[0])[0]
    return logits


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"encoder": "lstm"}, "the heavy decoder needs the transformer encoder"),
        ({"glimpses": 1}, "glimpses apply to the lstm decoder only"),
        ({"decoder": "gru"}, "unknown decoder 'gru'"),
        ({"decoder_layers": 0}, "decoder_layers must be a positive integer"),
        ({"kind": "seq2seq", "max_n": 5}, "apply to the pointer model only"),
    ],
)
def test_bad_heavy_choices_are_refused(kw, message):
    with pytest.raises(ValueError, match=message):
        ModelConfig(input_dim=2, hidden=16, **{**HEAVY, **kw})


@pytest.mark.parametrize("task", ["convex_hull", "delaunay"])
def test_tasks_whose_output_is_no_permutation_are_refused(task, capsys, tmp_path):
    with pytest.raises(ValueError, match=f"--decoder heavy needs .* \\(sort, tsp\\), not {task}"):
        RunConfig(ModelConfig(hidden=16, **HEAVY), TrainConfig(task=task, sizes="5", steps=1))
    args = ["train", task, "--dry-run", "--decoder", "heavy", "--out", str(tmp_path / "r")]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("ptrnet: error: --decoder heavy needs") and "\n" not in err


@pytest.mark.parametrize("extra", [[], ["--objective", "reinforce", "--baseline", "pomo"]])
def test_ptrnet_train_runs_it_and_takes_the_light_encoder_by_default(extra, tmp_path):
    out = tmp_path / "run"
    args = ["train", "tsp", "--dry-run", "--decoder", "heavy", "--heads", "2", "-q"]
    assert main([*args, "--decoder-layers", "1", "--threads", "1", *extra, "--out", str(out)]) == 0
    model = load_model(out, "tsp")
    assert isinstance(model.model, HeavyPointer)
    assert (model.config.model.encoder, model.config.model.encoder_layers) == ("transformer", 1)


def test_ptrnet_train_takes_label_steps(tmp_path):
    out = tmp_path / "run"
    args = ["train", "tsp", "--dry-run", "--decoder", "heavy", "--heads", "2", "-q"]
    assert main([*args, "--label-steps", "3", "--threads", "1", "--out", str(out)]) == 0
    assert load_model(out, "tsp").config.train.label_steps == 3
    shared = tmp_path / "shared"
    extra = ["--label-steps", "3", "--shared-label-steps", "--bucket", "--threads", "1"]
    assert main([*args, *extra, "--out", str(shared)]) == 0
    assert load_model(shared, "tsp").config.train.shared_label_steps


def test_shared_label_steps_take_the_same_distances_from_every_rows_end():
    batch, _ = tsp_batch(sizes=(7, 7, 5, 3))  # 9, 9, 7 and 5 real steps
    real = batch.targets != -100
    length = real.sum(dim=1)
    for seed in range(6):
        draw = sample_label_steps(batch.targets, 4, torch.Generator().manual_seed(seed), True)
        assert not (draw & ~real).any()  # never a pad
        distances = [
            {int(length[b]) - 1 - t for t in draw[b].nonzero()[:, 0].tolist()}
            for b in range(len(length))
        ]
        assert len(distances[0]) == 4  # the longest rows take all k drawn distances
        assert distances[0] == distances[1]  # rows of one length run the same steps
        for b in range(2, len(length)):  # shorter rows: exactly the drawn ones they have
            assert distances[b] == {d for d in distances[0] if d < int(length[b])}
    draws = [
        sample_label_steps(batch.targets, 4, torch.Generator().manual_seed(s), True)[0]
        for s in range(12)
    ]
    assert sum(d.long() for d in draws).gt(0).sum() == 9  # every step of a row gets drawn


def test_shared_label_steps_need_label_steps():
    with pytest.raises(ValueError, match="shared_label_steps needs label_steps"):
        TrainConfig(task="tsp", sizes="5", steps=1, shared_label_steps=True)
    with pytest.raises(ValueError, match="shared_label_steps must be true or false"):
        TrainConfig(task="tsp", sizes="5", steps=1, label_steps=2, shared_label_steps=1)


def test_sampled_label_steps_are_k_real_steps_of_each_row():
    batch, _ = tsp_batch(sizes=(7, 5, 3))  # a closed tour and the end: n + 2 real steps
    real = batch.targets != -100
    assert real.sum(dim=1).tolist() == [9, 7, 5]
    draw = sample_label_steps(batch.targets, 6, torch.Generator().manual_seed(3))
    assert not (draw & ~real).any()  # never a pad
    assert draw.sum(dim=1).tolist() == [6, 6, 5]  # k, or every real step of a short row
    again = sample_label_steps(batch.targets, 6, torch.Generator().manual_seed(3))
    assert torch.equal(draw, again)
    others = [
        sample_label_steps(batch.targets, 6, torch.Generator().manual_seed(s)) for s in range(8)
    ]
    assert any(not torch.equal(draw, o) for o in others)  # the draw depends on the generator
    counts = sum(o[0].long() for o in others + [draw])  # over 9 draws, every step gets picked
    assert (counts[: int(real[0].sum())] > 0).all()


def test_active_steps_give_the_full_logits_and_the_loss_only_scores_them():
    model, (batch, _) = make_model(seed=4), tsp_batch()
    full = model(batch.points, batch.lengths, batch.targets)  # (B, T, n+1)
    active = sample_label_steps(batch.targets, 3, torch.Generator().manual_seed(5))
    part = model(batch.points, batch.lengths, batch.targets, active)
    torch.testing.assert_close(part[active], full[active])
    assert (part[~active] == 0).all()
    per_token = teacher_forced_loss(model, batch, "none").view(active.shape)
    want = per_token[active].mean()
    torch.testing.assert_close(teacher_forced_loss(model, batch, active=active), want)
    model.zero_grad()
    teacher_forced_loss(model, batch, active=active).backward()
    assert all(p.grad is not None for p in model.decoder.parameters())


def test_label_steps_are_refused_without_the_heavy_decoder_or_with_reinforce(capsys, tmp_path):
    train = TrainConfig(task="tsp", sizes="5", steps=1, label_steps=4)
    with pytest.raises(ValueError, match="label_steps .* needs --decoder heavy"):
        RunConfig(ModelConfig(hidden=16), train)
    with pytest.raises(ValueError, match="label_steps .* needs --decoder heavy"):
        RunConfig(ModelConfig(hidden=16, **HEAVY), replace(train, objective="reinforce"))
    with pytest.raises(ValueError, match="label_steps must be a non-negative integer"):
        TrainConfig(task="tsp", sizes="5", steps=1, label_steps=-1)
    args = ["train", "tsp", "--dry-run", "--label-steps", "2", "--out", str(tmp_path / "r")]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("ptrnet: error: label_steps") and "\n" not in err
