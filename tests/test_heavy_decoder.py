"""The heavy decoder (LEHD idea, ptrnet.model.heavy): its decoding through every decoder, the
agreement of its training and decoding paths, a slow reference of one step, order invariance,
learning, checkpoints and its refusals."""

from dataclasses import replace

import numpy as np
import pytest
import torch

import ptrnet
from ptrnet.cli.main import main
from ptrnet.datasets.batching import Batch, collate
from ptrnet.decoding.decode import decode
from ptrnet.decoding.likelihood import masked_sequence_log_likelihood
from ptrnet.decoding.options import DecodeOptions
from ptrnet.inference import load_model
from ptrnet.model import ModelConfig, build_model
from ptrnet.model.heavy import HeavyPointer
from ptrnet.model.shapes import state_shapes
from ptrnet.runs.checkpoint import load_checkpoint, save_checkpoint
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


OPTIONS = [
    DecodeOptions(),
    DecodeOptions(strategy="beam", beam_width=3),
    DecodeOptions(strategy="sample", samples=4),
    DecodeOptions(multistart=1),
    DecodeOptions(average_views=4),
    DecodeOptions(search_views=8, average_views=4),
]


@pytest.mark.parametrize(
    "options", OPTIONS, ids=lambda o: f"{o.strategy}-{o.multistart}-{o.view_words}"
)
def test_every_decoder_gives_valid_tours_under_the_task_masks(options):
    model, (batch, points) = make_model(), tsp_batch()
    result = decode(model, get_task("tsp"), batch, options, generator=torch.Generator())
    assert all(
        get_task("tsp").is_valid(p, s) for p, s in zip(points, result.sequences, strict=True)
    )


def test_without_task_masks_the_model_itself_never_repeats_an_input():
    """The model's own mask: each input at most once, except the first closing a full tour."""
    model, (batch, _) = make_model(seed=2), tsp_batch(sizes=(9, 6))
    options = DecodeOptions(strategy="sample", constraints="none")
    for seed in range(5):
        generator = torch.Generator().manual_seed(seed)
        result = decode(model, get_task("tsp"), batch, options, generator=generator)
        for seq, n in zip(result.sequences, batch.lengths.tolist(), strict=True):
            closed = len(seq) == n + 1 and seq[-1] == seq[0]
            body = seq[:-1] if closed else seq
            assert len(set(body.tolist())) == len(body) <= n


def test_sort_decodes_to_permutations():
    model, rng = make_model(input_dim=1), np.random.default_rng(3)
    points = [rng.random((n, 1)) for n in (6, 3, 8)]
    result = decode(model, get_task("sort"), collate(points), DecodeOptions(strategy="beam"))
    for p, s in zip(points, result.sequences, strict=True):
        assert sorted(s.tolist()) == list(range(len(p)))


@pytest.mark.parametrize("strategy", ["greedy", "beam"])
def test_teacher_forced_likelihood_equals_the_decoded_step_log_probs(strategy):
    """The training path (all steps in one batched pass) and the decoding path (one step at a
    time through the search loop) score the decoded tours alike."""
    model, (batch, _) = make_model(seed=4), tsp_batch()
    result = decode(model, get_task("tsp"), batch, DecodeOptions(strategy=strategy, beam_width=3))
    with torch.no_grad():
        forced = masked_sequence_log_likelihood(
            model, get_task("tsp"), batch.points, batch.lengths, result.tokens, "task"
        )
    torch.testing.assert_close(forced, result.log_prob, atol=1e-4, rtol=1e-5)


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


def test_a_step_matches_a_slow_reference_of_the_heavy_decoder():
    model, (batch, _) = make_model(seed=5), tsp_batch(sizes=(6, 4))
    tokens = torch.tensor([[1, 4, 2, 6, 3, 5, 1, 0], [1, 3, 2, 4, 1, 0, -100, -100]])
    with torch.no_grad():
        logits = model(batch.points, batch.lengths, tokens)  # (2, 8, 7)
        for b, n in enumerate(batch.lengths.tolist()):
            for i in range(n + 2):
                prefix = [0] + tokens[b, :i].tolist()
                want = reference_logits(model, batch.points[b, :n], n, prefix)
                torch.testing.assert_close(logits[b, i, : n + 1], want, atol=1e-5, rtol=1e-5)
                assert torch.isinf(logits[b, i, n + 1 :]).all()  # pads


def test_reordering_the_inputs_permutes_the_logits():
    """No positional encoding: a label scored on reordered inputs gets the same logits, column
    for column, and greedy decoding finds the same tour (the perm keeps city 0 first, which
    the TSP masks start from)."""
    model = make_model(seed=6)
    points = torch.rand(1, 8, 2, generator=torch.Generator().manual_seed(7))
    perm = torch.tensor([0, 5, 2, 7, 1, 3, 6, 4])  # new input i = old input perm[i]
    inverse = torch.argsort(perm)
    tokens = torch.tensor([[1, 3, 8, 2, 5, 4, 7, 6, 1, 0]])
    moved_tokens = torch.where(tokens > 0, inverse[(tokens - 1).clamp(min=0)] + 1, tokens)
    lengths = torch.tensor([8])
    with torch.no_grad():
        base = model(points, lengths, tokens)
        moved = model(points[:, perm], lengths, moved_tokens)
    torch.testing.assert_close(moved[..., 1:], base[..., 1 + perm], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(moved[..., 0], base[..., 0], atol=1e-5, rtol=1e-5)
    first = decode(model, get_task("tsp"), Batch(points, lengths)).sequences[0]
    second = decode(model, get_task("tsp"), Batch(points[:, perm], lengths)).sequences[0]
    np.testing.assert_array_equal(perm.numpy()[second], first)


def test_it_learns_a_few_fixed_instances():
    task, rng = get_task("tsp"), np.random.default_rng(8)
    points = [rng.random((6, 2)) for _ in range(4)]
    labels = [task.solve(p) for p in points]
    batch = collate(points, labels)
    model = make_model(seed=9, hidden=32, heads=4).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(150):
        optimizer.zero_grad()
        teacher_forced_loss(model, batch).backward()
        optimizer.step()
    decoded = decode(model.eval(), task, batch, DecodeOptions(constraints="none")).sequences
    assert all(np.array_equal(s, label) for s, label in zip(decoded, labels, strict=True))


def test_a_checkpoint_rebuilds_the_same_model(tmp_path):
    model = make_model(seed=10, logit_clip=5.0)
    config = RunConfig(model.config, TrainConfig(task="tsp", sizes="5", steps=1))
    save_checkpoint(tmp_path / "m.safetensors", config, 0, model)
    assert load_checkpoint(tmp_path / "m.safetensors").config == config
    loaded = load_model(tmp_path / "m.safetensors", "tsp").model
    assert isinstance(loaded, HeavyPointer)
    batch, _ = tsp_batch()
    want = model(batch.points, batch.lengths, batch.targets)
    torch.testing.assert_close(loaded(batch.points, batch.lengths, batch.targets), want)
    assert set(state_shapes(model.config)) == set(model.state_dict())
    solved = ptrnet.load(tmp_path / "m.safetensors", task="tsp").solve(
        np.random.default_rng(12).random((7, 2))
    )
    assert solved.valid and len(solved.sequence) == 8


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
