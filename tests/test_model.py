"""Model contracts: config validation, raw logits, teacher forcing, padding, bf16, baselines."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from tiny_models import TRANSFORMER

from ptrnet.datasets.batching import IGNORE_INDEX, collate
from ptrnet.decoding.decode import decode
from ptrnet.decoding.options import DecodeOptions
from ptrnet.model import ModelConfig, build_model
from ptrnet.model.baselines import AttentionSeq2Seq, Seq2Seq
from ptrnet.model.pointer import PointerNetwork, previous_tokens
from ptrnet.tasks import get_task

torch.set_num_threads(1)

KINDS = ("pointer", "seq2seq", "attention")
ARCHS = (*KINDS, "transformer")


def make_model(kind="pointer", hidden=16, input_dim=2, max_n=8, seed=0, **kw):
    """A tiny model; ``kind`` ``transformer`` is the pointer model with :data:`TRANSFORMER`."""
    torch.manual_seed(seed)
    if kind == "transformer":
        kind, kw = "pointer", {**TRANSFORMER, **kw}
    cfg = ModelConfig(
        kind=kind,
        input_dim=input_dim,
        hidden=hidden,
        max_n=None if kind == "pointer" else max_n,
        **kw,
    )
    return build_model(cfg).eval()


def make_batch(sizes=(5, 3, 4), dim=2, seed=0):
    rng = np.random.default_rng(seed)
    points = [rng.random((n, dim)) for n in sizes]
    return collate(points, [rng.permutation(n) for n in sizes])


def step_logits(model, batch):
    """Logits (B, T, V) from step() fed the targets one at a time."""
    memory = model.encode(batch.points, batch.lengths)
    prev, state, out = torch.zeros_like(batch.lengths), memory.state, []
    for t in range(batch.targets.shape[1]):
        logits, state = model.step(memory, prev, state)
        out.append(logits)
        prev = batch.targets[:, t].clamp(min=0)
    return torch.stack(out, dim=1)


# --- configuration (trap 9: unknown keys are errors) ---


def test_config_roundtrip_and_unknown_keys():
    cfg = ModelConfig(kind="attention", hidden=32, max_n=10)
    assert ModelConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match="hiden"):
        ModelConfig.from_dict({"hiden": 32})


@pytest.mark.parametrize(
    "kw",
    [
        {"kind": "transformer"},
        {"init": "xavier"},
        {"hidden": 0},
        {"layers": 1.5},
        {"input_dim": True},
        {"max_n": 5},  # pointer has no fixed vocabulary
        {"kind": "seq2seq"},  # baseline without max_n
        {"kind": "attention", "max_n": 0},
    ],
)
def test_config_rejects_bad_values(kw):
    with pytest.raises(ValueError):
        ModelConfig(**kw)


def test_build_model_kinds_and_paper_init():
    classes = {"pointer": PointerNetwork, "seq2seq": Seq2Seq, "attention": AttentionSeq2Seq}
    for kind, cls in classes.items():
        model = make_model(kind, hidden=32)
        assert type(model) is cls and model.config.kind == kind
        assert all(p.abs().max() <= 0.08 for p in model.parameters())
    default = make_model(hidden=16, init="default")
    assert max(p.abs().max() for p in default.parameters()) > 0.08  # LSTM bound is 1/sqrt(16)


# --- raw logits (trap 1) ---


def test_pointer_returns_raw_masked_logits():
    model, batch = make_model(), make_batch()
    logits = model(batch.points, batch.lengths, batch.targets)
    assert logits.shape == (3, 6, 6) and logits.dtype == torch.float32
    cols = torch.arange(6)
    pad = cols[None, None, :] > batch.lengths[:, None, None]
    assert torch.isneginf(logits[pad.expand_as(logits)]).all()
    assert torch.isfinite(logits[~pad.expand_as(logits)]).all()
    # Not normalised: a double softmax would make these log-sum-exps 0.
    assert (torch.logsumexp(logits, dim=-1).abs() > 0.5).all()
    flat, tgt = logits.flatten(0, 1), batch.targets.flatten()
    ce = F.cross_entropy(flat, tgt, ignore_index=IGNORE_INDEX)
    keep = tgt != IGNORE_INDEX
    manual = -torch.log_softmax(flat[keep], -1).gather(1, tgt[keep, None]).mean()
    torch.testing.assert_close(ce, manual)


# --- teacher forcing (trap 2) ---


def test_decoder_input_is_previous_target_coordinates():
    model, batch = make_model(), make_batch()
    memory = model.encode(batch.points, batch.lengths)
    x = model.decoder_inputs(memory, previous_tokens(batch.targets))  # (B, T, 2)
    for b in range(batch.size):
        torch.testing.assert_close(x[b, 0], model.start.detach())
        for t in range(1, batch.targets.shape[1]):
            prev = int(batch.targets[b, t - 1])
            want = model.start.detach() if prev <= 0 else batch.points[b, prev - 1]
            torch.testing.assert_close(x[b, t], want)


@pytest.mark.parametrize("kind", KINDS)
def test_teacher_forcing_uses_coordinates_not_indices(kind):
    """Two inputs with equal coordinates are interchangeable as previous targets, and only
    the steps after a changed previous target change (causality)."""
    model = make_model(kind)
    points = np.random.default_rng(1).random((5, 2))
    points[4] = points[1]  # inputs 1 and 4 (tokens 2 and 5) share coordinates
    base = collate([points], [np.array([0, 1, 2, 3, 4])])
    swap = collate([points], [np.array([0, 4, 2, 3, 1])])
    other = collate([points], [np.array([0, 3, 2, 1, 4])])
    run = lambda b: model(b.points, b.lengths, b.targets)  # noqa: E731
    torch.testing.assert_close(run(base), run(swap))  # same coordinates -> same logits
    diff = (run(base) - run(other)).nan_to_num().abs().amax(dim=-1)[0]  # (T,)
    assert torch.all(diff[:2] == 0) and torch.all(diff[2:] > 1e-6)


@pytest.mark.parametrize("kind", ARCHS)
def test_step_matches_teacher_forced_forward(kind):
    model, batch = make_model(kind), make_batch()
    forward = model(batch.points, batch.lengths, batch.targets)
    torch.testing.assert_close(step_logits(model, batch), forward, atol=1e-5, rtol=1e-5)


def test_memory_index_selects_rows():
    model, batch = make_model(), make_batch()
    memory = model.encode(batch.points, batch.lengths)
    picked = memory.index(torch.tensor([2, 0, 0]))
    got, _ = model.step(picked, torch.tensor([1, 2, 3]), picked.state)
    first, _ = model.step(memory, torch.tensor([2, 1, 1]), memory.state)
    second, _ = model.step(memory, torch.tensor([3, 1, 1]), memory.state)
    torch.testing.assert_close(got, torch.stack([first[2], first[0], second[0]]))


# --- padding (trap 4) ---


@pytest.mark.parametrize("kind", ARCHS)
@pytest.mark.parametrize("pad_value", [0.0, 1e6, float("nan")])
def test_padding_does_not_change_a_row(kind, pad_value):
    """A row padded among longer rows (and with extra pad columns of any value) gives the same
    logits over its real columns as the row alone, and -inf on its pad columns."""
    model = make_model(kind)
    rng = np.random.default_rng(2)
    short, long = rng.random((3, 2)), rng.random((5, 2))
    seq = np.array([2, 0, 1])
    alone = collate([short], [seq])
    mixed = collate([long, short], [rng.permutation(5), seq])
    points = torch.cat([mixed.points, torch.full((2, 2, 2), pad_value)], dim=1)  # n = 7
    points[1, 3:] = pad_value
    want = model(alone.points, alone.lengths, alone.targets)[0]  # (4, V)
    got = model(points, mixed.lengths, mixed.targets)[1, :4]
    real = 4 if model.config.kind == "pointer" else model.config.max_n + 1
    torch.testing.assert_close(got[:, :4], want[:, :4], atol=1e-6, rtol=1e-5)
    assert torch.isneginf(got[:, 4:real]).all()


@pytest.mark.parametrize("kind", ["seq2seq", "attention"])
def test_baseline_vocabulary_and_size_limit(kind):
    model, batch = make_model(kind, max_n=6), make_batch()
    logits = model(batch.points, batch.lengths, batch.targets)
    assert logits.shape == (3, 6, 7)
    cols = torch.arange(7)
    beyond = (cols[None, :] > batch.lengths[:, None])[:, None, :].expand_as(logits)
    assert torch.isneginf(logits[beyond]).all() and torch.isfinite(logits[~beyond]).all()
    with pytest.raises(ValueError, match="n <= 6"):
        model.encode(torch.zeros(1, 7, 2), torch.tensor([7]))


def test_attention_baseline_feeds_its_context_to_the_next_step():
    """Sec. 2.2: [d_i; d'_i] goes to the next step. The state carries d'_i, which is the
    attention-weighted sum of the encoder states, and step i+1 depends on it."""
    model, batch = make_model("attention"), make_batch()
    memory = model.encode(batch.points, batch.lengths)
    assert model.decoder.input_size == 2 + 16
    assert len(memory.state) == 3 and not memory.state[2].any()  # d'_0 = 0
    start = torch.zeros_like(batch.lengths)
    _, state = model.step(memory, start, memory.state)
    h = state[0][-1]  # (B, d): d_1
    u = model.v @ torch.tanh(memory.enc_proj + model.w2(h)[:, None]).transpose(1, 2)  # (B, n)
    u = u.masked_fill(~memory.att_valid, float("-inf"))
    want = (torch.softmax(u, -1)[:, :, None] * memory.enc).sum(1)  # (B, d)
    torch.testing.assert_close(state[2][0], want, atol=1e-5, rtol=1e-5)
    nxt = torch.tensor([1, 1, 1])
    fed, _ = model.step(memory, nxt, state)
    unfed, _ = model.step(memory, nxt, (state[0], state[1], torch.zeros_like(state[2])))
    assert (fed - unfed).nan_to_num().abs().amax() > 1e-4


def test_bad_lengths_raise():
    model = make_model()
    with pytest.raises(ValueError):
        model.encode(torch.zeros(2, 3, 2), torch.tensor([0, 3]))
    with pytest.raises(ValueError):
        model.encode(torch.zeros(2, 3, 2), torch.tensor([4, 3]))
    with pytest.raises(ValueError):
        model.encode(torch.zeros(2, 3, 1), torch.tensor([3, 3]))


# --- mixed precision ---


@pytest.mark.parametrize("kind", ARCHS)
def test_bf16_autocast_is_finite_and_close(kind):
    model, batch = make_model(kind, hidden=32), make_batch()
    fp32 = model(batch.points, batch.lengths, batch.targets)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        bf16 = model(batch.points, batch.lengths, batch.targets)
        loss = F.cross_entropy(bf16.flatten(0, 1), batch.targets.flatten())
    loss.backward()
    assert bf16.dtype == torch.float32
    assert torch.equal(torch.isneginf(bf16), torch.isneginf(fp32))
    real = torch.isfinite(fp32)
    assert torch.isfinite(bf16[real]).all() and torch.isfinite(loss)
    torch.testing.assert_close(bf16[real], fp32[real], atol=0.03, rtol=0.05)
    assert all(torch.isfinite(p.grad).all() for p in model.parameters())


# --- learning smoke test ---


def test_pointer_learns_to_sort():
    """Adam on sort n=5 cuts the teacher-forced loss far below chance (log 6 = 1.79 per step)
    and greedy decoding then sorts most fresh instances."""
    rng = np.random.default_rng(0)
    model = make_model(hidden=64, input_dim=1).train()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(500):
        points = [rng.random((5, 1)) for _ in range(64)]
        batch = collate(points, [np.argsort(p[:, 0], kind="stable") for p in points])
        logits = model(batch.points, batch.lengths, batch.targets)
        loss = F.cross_entropy(logits.flatten(0, 1), batch.targets.flatten())
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0)
        opt.step()
        losses.append(loss.item())
    assert np.mean(losses[:10]) > 1.5 and np.mean(losses[-20:]) < 0.35, losses[::50]
    task, points = get_task("sort"), [rng.random((5, 1)) for _ in range(200)]
    result = decode(
        model.eval(), task, collate(points), DecodeOptions("greedy", constraints="task")
    )
    ok = [np.array_equal(s, task.solve(p)) for p, s in zip(points, result.sequences, strict=True)]
    assert np.mean(ok) > 0.5
