"""Precision choice, bf16 training steps, and the fused pointer scores against plain autograd
and against the step-by-step reference network of benchmarks/reference_ptrnet.py."""

import contextlib
import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from ptrnet.compute import precision
from ptrnet.compute.precision import autocast, resolve_precision
from ptrnet.datasets.batching import collate
from ptrnet.model import ModelConfig, build_model
from ptrnet.model import lstm as lstm_module
from ptrnet.model.attention import additive_scores
from ptrnet.model.lstm import run_lstm
from ptrnet.model.ragged import ragged_lstm

torch.set_num_threads(1)

REFERENCE = Path(__file__).parent.parent / "benchmarks" / "reference_ptrnet.py"


def load_reference():
    spec = importlib.util.spec_from_file_location("reference_ptrnet", REFERENCE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ReferencePointerNetwork


def make_batch(sizes=(6, 3, 5, 6), seed=0):
    rng = np.random.default_rng(seed)
    points = [rng.random((n, 2)) for n in sizes]
    return collate(points, [rng.permutation(n) for n in sizes])


def make_model(hidden=32, seed=0):
    torch.manual_seed(seed)
    return build_model(ModelConfig(hidden=hidden, init="default"))


# --- choosing the precision ---


@pytest.mark.parametrize(("flags", "want"), [({"avx512_bf16"}, "bf16"), ({"amx_bf16"}, "bf16")])
def test_auto_picks_bf16_on_cpus_with_native_bf16(monkeypatch, flags, want):
    monkeypatch.setattr(precision, "cpu_flags", lambda: frozenset(flags | {"avx2"}))
    assert resolve_precision("auto", "cpu") == want


def test_auto_picks_fp32_without_native_bf16(monkeypatch):
    monkeypatch.setattr(precision, "cpu_flags", lambda: frozenset({"avx2", "avx512f"}))
    assert resolve_precision("auto", "cpu") == "fp32"
    assert resolve_precision("auto", "meta") == "fp32"  # unknown device kinds: fp32


@pytest.mark.parametrize("flags", [set(), {"avx512_bf16"}])
def test_explicit_precision_overrides_the_hardware(monkeypatch, flags):
    monkeypatch.setattr(precision, "cpu_flags", lambda: frozenset(flags))
    assert resolve_precision("fp32", "cpu") == "fp32"
    assert resolve_precision("bf16", "cpu") == "bf16"


@pytest.mark.parametrize("bad", ["fp16", "BF16", "", None])
def test_unknown_precision_raises(bad):
    with pytest.raises(ValueError, match="precision"):
        resolve_precision(bad)


def test_autocast_context_sets_the_matmul_dtype():
    a = torch.ones(2, 2)
    with autocast("bf16"):
        assert (a @ a).dtype == torch.bfloat16
    with autocast("fp32"):
        assert (a @ a).dtype == torch.float32


# --- the fused pointer scores ---


def plain_scores(enc_proj, dec_proj, v):
    """u_ij = v^T tanh(e_j + d_i), the textbook way: (B, m, d), (B, T, d), (d,) -> (B, T, m)."""
    return torch.tanh(enc_proj[:, None] + dec_proj[:, :, None]) @ v


@pytest.mark.parametrize(("b", "m", "t", "d"), [(3, 5, 4, 8), (1, 1, 1, 1), (2, 7, 1, 16)])
def test_fused_scores_match_plain_autograd(b, m, t, d):
    gen = torch.Generator().manual_seed(0)
    args = [torch.randn(shape, generator=gen) * 2 for shape in ((b, m, d), (b, t, d), (d,))]
    grad = torch.randn(b, t, m, generator=gen)
    fused_in = [x.clone().requires_grad_() for x in args]
    plain_in = [x.double().requires_grad_() for x in args]
    fused, plain = additive_scores(*fused_in), plain_scores(*plain_in)
    fused.backward(grad)
    plain.backward(grad.double())
    assert fused.dtype == torch.float32
    torch.testing.assert_close(fused.double(), plain, atol=1e-5, rtol=1e-5)
    for x, y in zip(fused_in, plain_in, strict=True):
        torch.testing.assert_close(x.grad.double(), y.grad, atol=1e-5, rtol=1e-5)


def test_fused_scores_are_float32_under_autocast_with_bf16_gradients():
    enc = torch.randn(2, 5, 8, dtype=torch.bfloat16, requires_grad=True)
    dec = torch.randn(2, 3, 8, dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(8, requires_grad=True)
    with autocast("bf16"):
        u = additive_scores(enc, dec, v)
        u.sum().backward()  # backward inside autocast must not change the kernels' dtypes
    assert u.dtype == torch.float32 and enc.grad.dtype == torch.bfloat16
    assert v.grad.dtype == torch.float32
    want = plain_scores(enc.detach().float(), dec.detach().float(), v.detach())
    torch.testing.assert_close(u, want, atol=1e-5, rtol=1e-5)


# --- the encoder over rows of different lengths ---


@pytest.mark.parametrize("layers", [1, 2])
def test_ragged_lstm_matches_a_packed_sequence(layers):
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(2, 8, layers, batch_first=True)
    lengths = torch.tensor([3, 7, 1, 7, 5, 3])
    points = torch.randn(6, 9, 2)
    points[torch.arange(9)[None] >= lengths[:, None]] = float("nan")  # pads never enter
    got_out, (got_h, got_c) = ragged_lstm(lstm, points, lengths)
    _backward(got_out, got_h, got_c)
    got = [p.grad.clone() for p in lstm.parameters()]
    lstm.zero_grad()
    packed = pack_padded_sequence(points, lengths, batch_first=True, enforce_sorted=False)
    want_out, (want_h, want_c) = lstm(packed)
    want_out, _ = pad_packed_sequence(want_out, batch_first=True, total_length=9)
    _backward(want_out, want_h, want_c)
    for a, b in ((got_out, want_out), (got_h, want_h), (got_c, want_c)):
        torch.testing.assert_close(a, b, atol=1e-6, rtol=1e-5)
    for a, b in zip(got, [p.grad for p in lstm.parameters()], strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)


def _backward(out, h, c):
    """Backward of a fixed weighted sum of everything the encoder returns."""
    gen = torch.Generator().manual_seed(2)
    sum((t * torch.randn(t.shape, generator=gen)).sum() for t in (out, h, c)).backward()


# --- LSTMs under bf16 autocast on CPUs without a bf16 LSTM kernel ---


def test_run_lstm_is_the_plain_call_outside_autocast():
    torch.manual_seed(0)
    lstm, x = torch.nn.LSTM(2, 8, batch_first=True), torch.randn(3, 4, 2)
    got, (h, c) = run_lstm(lstm, x)
    want, (wh, wc) = lstm(x)
    assert torch.equal(got, want) and torch.equal(h, wh) and torch.equal(c, wc)


def test_run_lstm_falls_back_to_float32_without_a_bf16_kernel(monkeypatch):
    monkeypatch.setattr(lstm_module, "cpu_bf16_lstm_works", lambda: False)
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(2, 8, batch_first=True)
    x, h0 = torch.randn(3, 4, 2), torch.randn(1, 3, 8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        got, (h, c) = run_lstm(lstm, x.bfloat16(), (h0.bfloat16(), h0.bfloat16()))
        after = F.linear(got, torch.eye(8))  # autocast is back on after it
    want, (wh, wc) = lstm(x.bfloat16().float(), (h0.bfloat16().float(),) * 2)
    assert got.dtype == h.dtype == torch.float32 and after.dtype == torch.bfloat16
    assert torch.equal(got, want) and torch.equal(h, wh) and torch.equal(c, wc)


def test_run_lstm_under_bf16_matches_what_the_cpu_supports():
    lstm, x = torch.nn.LSTM(2, 8, batch_first=True), torch.randn(3, 4, 2)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out, _ = run_lstm(lstm, x)
    assert out.dtype == (torch.bfloat16 if lstm_module.cpu_bf16_lstm_works() else torch.float32)


# --- whole model against the step-by-step reference ---


def test_model_matches_step_by_step_reference_forward_and_backward():
    model, batch = make_model(), make_batch()
    ref = load_reference().from_model(model)
    fast = model(batch.points, batch.lengths, batch.targets)
    slow = ref(batch.points, batch.lengths, batch.targets)
    assert torch.equal(torch.isneginf(fast), torch.isneginf(slow))
    torch.testing.assert_close(fast, slow, atol=1e-5, rtol=1e-5)
    real = torch.isfinite(fast)
    weights = torch.randn(fast.shape, generator=torch.Generator().manual_seed(1))
    (fast[real] * weights[real]).sum().backward()
    (slow[real] * weights[real]).sum().backward()
    grads = dict(ref.named_parameters())
    for name, p in model.named_parameters():
        other = name.replace("decoder.", "cell.").removesuffix("_l0") if "decoder" in name else name
        torch.testing.assert_close(p.grad, grads[other].grad, atol=1e-5, rtol=1e-4)


# --- bf16 training ---


def train_steps(precision_name, steps=5):
    model, batch = make_model(seed=1), make_batch()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(steps):
        with autocast(precision_name):
            logits = model(batch.points, batch.lengths, batch.targets)
        loss = F.cross_entropy(logits.flatten(0, 1), batch.targets.flatten(), ignore_index=-100)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, model


def test_bf16_training_steps_are_finite_and_close_to_fp32():
    fp32, _ = train_steps("fp32")
    bf16, model = train_steps("bf16")
    assert all(np.isfinite(bf16)) and bf16[-1] < bf16[0]
    np.testing.assert_allclose(bf16, fp32, rtol=0.03)
    assert all(p.dtype == torch.float32 and torch.isfinite(p).all() for p in model.parameters())


# --- automatic mixed precision on CUDA, chosen without a GPU ---


@pytest.mark.parametrize(
    ("name", "device_type", "bf16_native", "plan"),
    [
        ("auto", "cuda", True, ("bf16", False)),
        ("auto", "cuda", False, ("fp16", True)),  # e.g. a V100 or T4: fp16 with loss scaling
        ("auto", "cpu", True, ("bf16", False)),
        ("auto", "cpu", False, ("fp32", False)),
        ("fp16", "cuda", True, ("fp16", True)),
        ("bf16", "cuda", False, ("bf16", False)),
        ("fp32", "cuda", True, ("fp32", False)),
    ],
)
def test_amp_plan(name, device_type, bf16_native, plan):
    got = precision.amp_plan(name, device_type, bf16_native)
    assert (got.precision, got.grad_scaler) == plan


@pytest.mark.parametrize(
    ("name", "device_type", "bf16_native", "plan"),
    [
        ("auto", "cpu", True, "fp32"),  # CPU attention kernels are slower in bf16
        ("auto", "cpu", False, "fp32"),
        ("auto", "cuda", True, "bf16"),  # GPUs keep bf16 for attention models
        ("auto", "cuda", False, "fp16"),
        ("bf16", "cpu", True, "bf16"),  # an explicit choice is kept
    ],
)
def test_amp_plan_for_a_model_with_attention_layers(name, device_type, bf16_native, plan):
    assert precision.amp_plan(name, device_type, bf16_native, attention=True).precision == plan


def test_has_attention_finds_the_transformer_encoder():
    lstm = build_model(ModelConfig(hidden=16))
    light = build_model(
        ModelConfig(hidden=16, encoder="transformer", heads=2, encoder_layers=1, decoder="light")
    )
    assert not precision.has_attention(lstm)
    assert precision.has_attention(light)
    assert precision.has_attention(torch.nn.Sequential(light))  # as a wrapper holds it


class _Probe(torch.nn.Module):
    """A linear layer that records the dtype of its output, with or without attention."""

    def __init__(self, attention: bool) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)
        self.attn = torch.nn.MultiheadAttention(4, 1) if attention else None
        self.dtypes: list[torch.dtype] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.linear(x)
        self.dtypes.append(y.dtype)
        return y.float().sum()


@pytest.mark.parametrize(("attention", "dtype"), [(False, torch.bfloat16), (True, torch.float32)])
def test_auto_training_step_on_a_bf16_cpu_keeps_attention_models_in_fp32(
    monkeypatch, attention, dtype
):
    from types import SimpleNamespace

    from ptrnet.training.steps import optimizer_step

    monkeypatch.setattr(precision, "native_bf16", lambda device: True)
    model = _Probe(attention)
    cfg = SimpleNamespace(precision="auto", clip_norm=1.0, learning_rate=lambda step: 1e-3)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    optimizer_step(model, optimizer, cfg, 0, lambda: (model(torch.ones(2, 4)), None))
    assert model.dtypes == [dtype]


def test_fp16_off_cuda_and_unknown_precisions_are_refused():
    with pytest.raises(ValueError, match="fp16 needs a CUDA device"):
        precision.amp_plan("fp16", "cpu", True)
    with pytest.raises(ValueError, match="unknown precision"):
        precision.amp_plan("fp8", "cuda", True)


def test_auto_on_a_gpu_without_bf16_resolves_to_fp16(monkeypatch):
    monkeypatch.setattr(precision, "native_bf16", lambda device: False)
    assert resolve_precision("auto", "cuda") == "fp16"
    monkeypatch.setattr(precision, "native_bf16", lambda device: True)
    assert resolve_precision("auto", "cuda:0") == "bf16"


def test_grad_scaler_only_for_fp16(monkeypatch):
    assert precision.grad_scaler("fp32", "cpu") is None
    assert precision.grad_scaler("auto", "cpu") is None
    monkeypatch.setattr(precision, "native_bf16", lambda device: False)
    no_gpu = pytest.warns(UserWarning, match="CUDA is not available")
    with contextlib.nullcontext() if torch.cuda.is_available() else no_gpu:
        scaler = precision.grad_scaler("auto", "cuda")
    assert isinstance(scaler, torch.amp.GradScaler)
