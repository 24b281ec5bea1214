"""The pointer u = v^T tanh(W1 e + W2 d): the fused kernel equals the plain equation.

:func:`ptrnet.model.pointer.pointer_scores` has two paths, the plain torch line and the fused
kernel of :mod:`ptrnet.model.attention`. Both run here in float64, on random shapes with padded
rows masked to -inf, through ``log_softmax`` as the loss and decoder use them; forward values and
gradients must agree to 1e-6. The independent oracle for the plain line is a Python loop over
(i, j) of the equation as the paper writes it.
"""

import numpy as np
import pytest
import torch

from ptrnet.datasets.batching import collate
from ptrnet.decoding.decode import decode
from ptrnet.decoding.options import DecodeOptions
from ptrnet.model import ModelConfig, build_model
from ptrnet.model.pointer import column_mask, pointer_scores
from ptrnet.tasks import get_task

torch.set_num_threads(1)

TOL = {"atol": 1e-6, "rtol": 1e-6}


def random_case(seed):
    """Random B, m, T, d; float64 W1 e (B, m, d), W2 d (B, T, d), v (d,), and a (B, m) mask with
    at least one real column per row (position 0, as the end symbol always is)."""
    gen = torch.Generator().manual_seed(seed)
    b, m, t, d = (int(x) for x in torch.randint(1, 9, (4,), generator=gen))
    d *= 4
    args = [torch.randn(s, generator=gen, dtype=torch.float64) for s in ((b, m, d), (b, t, d))]
    args.append(torch.randn(d, generator=gen, dtype=torch.float64) / d**0.5)
    lengths = torch.randint(0, m, (b,), generator=gen)
    return args, column_mask(lengths, m, offset=1), torch.randn(b, t, m, generator=gen)


def masked_log_softmax(args, valid, fused):
    u = pointer_scores(*args, fused=fused)  # (B, T, m)
    return torch.log_softmax(u.masked_fill(~valid[:, None], float("-inf")), dim=-1)


@pytest.mark.parametrize("seed", range(12))
def test_fused_equals_plain_forward_and_gradients_in_float64(seed):
    args, valid, weights = random_case(seed)
    out, grads = {}, {}
    for fused in (True, False):
        inputs = [x.clone().requires_grad_() for x in args]
        logp = masked_log_softmax(inputs, valid, fused)
        real = torch.isfinite(logp)
        (logp[real] * weights.double()[real]).sum().backward()
        out[fused], grads[fused] = logp, [x.grad for x in inputs]
    assert out[True].dtype == out[False].dtype == torch.float64
    assert torch.equal(torch.isneginf(out[True]), ~valid[:, None].expand_as(out[True]))
    assert torch.equal(torch.isneginf(out[True]), torch.isneginf(out[False]))
    real = torch.isfinite(out[True])
    torch.testing.assert_close(out[True][real], out[False][real], **TOL)
    for a, b in zip(grads[True], grads[False], strict=True):
        torch.testing.assert_close(a, b, **TOL)


def test_plain_line_is_the_papers_equation():
    """u^i_j = v^T tanh(W1 e_j + W2 d_i), one (i, j) at a time."""
    (w1e, w2d, v), _, _ = random_case(3)
    u = pointer_scores(w1e, w2d, v, fused=False)
    b, t, m = u.shape
    for k in range(b):
        for i in range(t):
            for j in range(m):
                want = v @ torch.tanh(w1e[k, j] + w2d[k, i])
                torch.testing.assert_close(u[k, i, j], want, atol=1e-12, rtol=1e-12)


def test_plain_path_is_float32_under_bf16_autocast_like_the_fused_one():
    (w1e, w2d, v), _, _ = random_case(5)
    w1e, w2d = w1e.bfloat16().requires_grad_(), w2d.bfloat16()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        plain = pointer_scores(w1e, w2d, v.float(), fused=False)
        fused = pointer_scores(w1e, w2d, v.float(), fused=True)
    plain.sum().backward()
    assert plain.dtype == fused.dtype == torch.float32 and w1e.grad.dtype == torch.bfloat16
    torch.testing.assert_close(plain, fused, atol=1e-5, rtol=1e-5)


# --- whole networks: the same parameters, fused or plain pointer ---

CONFIGS = [
    {},  # the paper's Ptr-Net
    {"layers": 2},
    {"glimpses": 2, "logit_clip": 10.0},
    {"encoder": "transformer", "encoder_layers": 1, "heads": 2, "glimpses": 1},
    {"kind": "attention", "max_n": 7},
]


def batch(seed=0, sizes=(6, 3, 7, 1)):
    rng = np.random.default_rng(seed)
    points = [rng.random((n, 2)) for n in sizes]
    return collate(points, [rng.permutation(n) for n in sizes])


@pytest.mark.parametrize("options", CONFIGS)
def test_network_with_fused_or_plain_pointer_agrees_in_float64(options):
    torch.manual_seed(0)
    model = build_model(ModelConfig(hidden=16, init="default", **options)).double()
    data = batch()
    points, targets = data.points.double(), data.targets
    logits, grads = {}, {}
    for fused in (True, False):
        model.fused = fused
        model.zero_grad()
        out = model(points, data.lengths, targets)
        logp = torch.log_softmax(out, dim=-1)
        picked = logp.gather(2, targets.clamp(min=0)[..., None])[..., 0]
        picked.masked_fill(targets < 0, 0.0).sum().backward()  # the likelihood's gradient
        logits[fused] = out
        grads[fused] = {name: p.grad.clone() for name, p in model.named_parameters()}
    assert logits[True].dtype == torch.float64
    assert torch.equal(torch.isneginf(logits[True]), torch.isneginf(logits[False]))
    real = torch.isfinite(logits[True])
    torch.testing.assert_close(logits[True][real], logits[False][real], **TOL)
    for name, grad in grads[True].items():
        torch.testing.assert_close(grad, grads[False][name], **TOL, msg=name)


def test_greedy_decoding_with_fused_or_plain_pointer_gives_the_same_outputs():
    torch.manual_seed(1)
    model = build_model(ModelConfig(hidden=32, init="default")).eval()
    rng = np.random.default_rng(4)
    data = collate([rng.random((n, 2)) for n in (5, 9, 12, 9)])
    found = {}
    for fused in (True, False):
        model.fused = fused
        found[fused] = decode(model, get_task("tsp"), data, DecodeOptions())
    assert torch.equal(found[True].tokens, found[False].tokens)
    torch.testing.assert_close(found[True].log_prob, found[False].log_prob, atol=1e-5, rtol=0)


def test_fused_is_the_default_and_not_saved():
    model = build_model(ModelConfig(hidden=8))
    assert model.fused is True
    model.fused = False
    assert "fused" not in "".join(model.state_dict())
    assert build_model(ModelConfig(hidden=8)).fused is True  # an attribute of one instance
