"""What the heavy (LEHD) and the light (Kool et al.) decoders share: the same tokens, state and
structural mask, so both decode through every search to valid tours, score a decoded tour alike
on the training path, ignore the input order and padding, learn, and reload from checkpoints.
Each decoder's steps are checked against its own slow reference (``reference_logits`` of
test_heavy_decoder.py and test_light_decoder.py)."""

import numpy as np
import pytest
import torch
from test_heavy_decoder import reference_logits as heavy_reference
from test_light_decoder import reference_logits as light_reference

import ptrnet
from ptrnet.datasets.batching import Batch, collate
from ptrnet.decoding.decode import decode
from ptrnet.decoding.likelihood import masked_sequence_log_likelihood
from ptrnet.decoding.multistart import rotate, rotations
from ptrnet.decoding.options import DecodeOptions
from ptrnet.inference import load_model
from ptrnet.model import ModelConfig, build_model
from ptrnet.model.shapes import state_shapes
from ptrnet.runs.checkpoint import load_checkpoint, save_checkpoint
from ptrnet.runs.config import RunConfig, TrainConfig
from ptrnet.tasks import get_task
from ptrnet.training.baselines import Baseline, PomoBaseline
from ptrnet.training.losses import reinforce_loss, teacher_forced_loss

torch.set_num_threads(1)
KINDS = {
    "heavy": dict(encoder="transformer", encoder_layers=1, decoder="heavy", decoder_layers=2),
    "light": dict(
        encoder="transformer", encoder_layers=1, decoder="light", logit_clip=10.0, init="default"
    ),
}


@pytest.fixture(params=sorted(KINDS))
def kind(request):
    return request.param


def make_model(kind, seed=0, input_dim=2, **kw):
    torch.manual_seed(seed)
    config = ModelConfig(input_dim=input_dim, **{"hidden": 16, "heads": 2, **KINDS[kind], **kw})
    return build_model(config).eval()


REFERENCES = {"heavy": heavy_reference, "light": light_reference}


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
def test_every_decoder_gives_valid_tours_under_the_task_masks(kind, options):
    model, (batch, points) = make_model(kind), tsp_batch()
    result = decode(model, get_task("tsp"), batch, options, generator=torch.Generator())
    assert all(
        get_task("tsp").is_valid(p, s) for p, s in zip(points, result.sequences, strict=True)
    )


def test_without_task_masks_the_model_itself_never_repeats_an_input(kind):
    """The model's own mask: each input at most once, except the first closing a full tour."""
    model, (batch, _) = make_model(kind, seed=2), tsp_batch(sizes=(9, 6))
    options = DecodeOptions(strategy="sample", constraints="none")
    for seed in range(5):
        generator = torch.Generator().manual_seed(seed)
        result = decode(model, get_task("tsp"), batch, options, generator=generator)
        for seq, n in zip(result.sequences, batch.lengths.tolist(), strict=True):
            closed = len(seq) == n + 1 and seq[-1] == seq[0]
            body = seq[:-1] if closed else seq
            assert len(set(body.tolist())) == len(body) <= n


def test_sort_decodes_to_permutations(kind):
    model, rng = make_model(kind, input_dim=1), np.random.default_rng(3)
    points = [rng.random((n, 1)) for n in (6, 3, 8)]
    result = decode(model, get_task("sort"), collate(points), DecodeOptions(strategy="beam"))
    for p, s in zip(points, result.sequences, strict=True):
        assert sorted(s.tolist()) == list(range(len(p)))


@pytest.mark.parametrize("strategy", ["greedy", "beam"])
def test_teacher_forced_likelihood_equals_the_decoded_step_log_probs(kind, strategy):
    """The training path (all steps as queries of one pass) and the decoding path (one step at
    a time through the search loop) score the decoded tours alike."""
    model, (batch, _) = make_model(kind, seed=4), tsp_batch()
    result = decode(model, get_task("tsp"), batch, DecodeOptions(strategy=strategy, beam_width=3))
    with torch.no_grad():
        forced = masked_sequence_log_likelihood(
            model, get_task("tsp"), batch.points, batch.lengths, result.tokens, "task"
        )
    torch.testing.assert_close(forced, result.log_prob, atol=1e-4, rtol=1e-5)


def test_a_step_matches_the_decoders_slow_reference(kind):
    """Every step of two labels, full and padded, against the decoder's own reference written
    out for one instance and one prefix (``reference_logits`` of its test module)."""
    model, (batch, _) = make_model(kind, seed=5, heads=4), tsp_batch(sizes=(6, 4))
    tokens = torch.tensor([[1, 4, 2, 6, 3, 5, 1, 0], [1, 3, 2, 4, 1, 0, -100, -100]])
    with torch.no_grad():
        logits = model(batch.points, batch.lengths, tokens)  # (2, 8, 7)
        for b, n in enumerate(batch.lengths.tolist()):
            for i in range(n + 2):
                prefix = [0] + tokens[b, :i].tolist()
                want = REFERENCES[kind](model, batch.points[b, :n], n, prefix)
                torch.testing.assert_close(logits[b, i, : n + 1], want, atol=1e-5, rtol=1e-5)
                assert torch.isinf(logits[b, i, n + 1 :]).all()  # pads


def test_reordering_the_inputs_permutes_the_logits(kind):
    """No positional encoding: a label scored on reordered inputs gets the same logits, column
    for column, and greedy decoding finds the same tour (the perm keeps city 0 first, which
    the TSP masks start from)."""
    model = make_model(kind, seed=6)
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


def test_reordered_copies_encoded_once_score_as_the_copies_themselves(kind):
    """``order=``: each instance encoded once and its encoding reordered gives the rotated
    copies' own teacher-forced logits (padded rows included), for every start."""
    model, (batch, _) = make_model(kind, seed=4), tsp_batch(sizes=(7, 5, 6))
    order = rotations(batch.lengths, batch.points.shape[1])  # (3 * 7, 7)
    copies = rotate(batch, order)
    step, n = torch.arange(1, 10)[None, :], copies.lengths[:, None]  # (1, 9), (21, 1)
    tokens = torch.where(step <= n, step, (step == n + 1).long())  # 1..n, back to 1, then ends
    with torch.no_grad():
        shared = model(batch.points, batch.lengths, tokens, order=order)
        alone = model(copies.points, copies.lengths, tokens)
    torch.testing.assert_close(shared, alone, atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="need \\(B \\* S, n\\) rows for the 3 instances"):
        model.encode(batch.points, batch.lengths, order=order[:20])


@pytest.mark.parametrize("baseline", [PomoBaseline(), Baseline()], ids=["pomo", "samples"])
def test_reinforce_with_shared_encodings_draws_the_same_samples_loss_and_gradients(kind, baseline):
    """REINFORCE's K rows per instance (POMO's starts, or K samples) encode each instance once:
    the same tours, loss and gradients as encoding every row on its own."""
    model, (batch, _) = make_model(kind, seed=2), tsp_batch(sizes=(8, 6, 8))
    found = []
    for shared in (True, False):
        model.encodes_orders = shared
        model.zero_grad()
        loss, cost = reinforce_loss(
            model, get_task("tsp"), batch, 3, torch.Generator().manual_seed(5), baseline=baseline
        )
        loss.backward()
        found.append((loss, cost, [p.grad for p in model.parameters() if p.grad is not None]))
    del model.encodes_orders  # back to the class's
    (loss, cost, grads), (want_loss, want_cost, want_grads) = found
    assert cost == want_cost and len(grads) == len(want_grads) > 0
    torch.testing.assert_close(loss, want_loss, atol=1e-6, rtol=1e-5)
    for got, want in zip(grads, want_grads, strict=True):
        torch.testing.assert_close(got, want, atol=1e-6, rtol=1e-4)


def test_padding_changes_no_real_rows_logits(kind):
    """An instance padded into a batch with a larger one scores as it does alone."""
    model, (batch, points) = make_model(kind, seed=11), tsp_batch(sizes=(5, 8))
    alone = collate(points[:1], [get_task("tsp").solve(points[0])])
    with torch.no_grad():
        padded = model(batch.points, batch.lengths, batch.targets)[0, : alone.targets.shape[1]]
        single = model(alone.points, alone.lengths, alone.targets)[0]
    torch.testing.assert_close(padded[:, :6], single, atol=1e-5, rtol=1e-5)


def test_it_learns_a_few_fixed_instances(kind):
    task, rng = get_task("tsp"), np.random.default_rng(8)
    points = [rng.random((6, 2)) for _ in range(4)]
    labels = [task.solve(p) for p in points]
    batch = collate(points, labels)
    model = make_model(kind, seed=9, hidden=32, heads=4).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(150):
        optimizer.zero_grad()
        teacher_forced_loss(model, batch).backward()
        optimizer.step()
    decoded = decode(model.eval(), task, batch, DecodeOptions(constraints="none")).sequences
    assert all(np.array_equal(s, label) for s, label in zip(decoded, labels, strict=True))


def test_a_checkpoint_rebuilds_the_same_model(kind, tmp_path):
    model = make_model(kind, seed=10, logit_clip=5.0)
    config = RunConfig(model.config, TrainConfig(task="tsp", sizes="5", steps=1))
    save_checkpoint(tmp_path / "m.safetensors", config, 0, model)
    assert load_checkpoint(tmp_path / "m.safetensors").config == config
    loaded = load_model(tmp_path / "m.safetensors", "tsp").model
    assert isinstance(loaded, type(model))
    batch, _ = tsp_batch()
    want = model(batch.points, batch.lengths, batch.targets)
    torch.testing.assert_close(loaded(batch.points, batch.lengths, batch.targets), want)
    assert set(state_shapes(model.config)) == set(model.state_dict())
    solved = ptrnet.load(tmp_path / "m.safetensors", task="tsp").solve(
        np.random.default_rng(12).random((7, 2))
    )
    assert solved.valid and len(solved.sequence) == 8
