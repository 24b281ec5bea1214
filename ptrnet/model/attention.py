"""The fused kernel behind :func:`ptrnet.model.pointer.pointer_scores`: the same
u_ij = v^T tanh(W1 e_j + W2 d_i) (Sec. 2.2) as its plain line, computed faster on CPU.

The plain line ``tanh(W1e[:, None] + W2d[:, :, None]) @ v`` builds a (B, T, m, d) tensor: as
many tanh values per batch as the encoder LSTM has multiply-adds at n = 50, and autograd keeps
them for backward. This kernel gives the same values and gradients (to 1e-6 in float64,
tests/test_model_pointer.py) another way (first measured with torch 2.13 on a 2-core AVX-512
CPU, B = 128, d = 256, n = 50, T = 12; docs/speed.md; plain vs fused now: docs/model.md):

* ``tanh(x) = 2 sigmoid(2x) - 1``: ``torch.tanh`` ran 10x slower than ``torch.sigmoid`` on the
  same float32 tensor (2.1 vs 0.21 ms for 1.7M values), so u = 2 sigmoid(2x)^T v - sum(v).
* One decoder step at a time, in one preallocated (B, m, d) slab that stays in cache. A single
  (B, T, m, d) tensor or chunks of several steps were slower (memory-bound), and so was
  ``torch.compile`` of the same expression.
* A custom autograd function that keeps no (B, T, m, d) activation: backward recomputes each
  step's slab (two cheap passes) instead of storing T slabs (80 MB at the sizes above). Forward
  plus backward: 80 ms (autograd through per-step tanh) -> 25 ms on one thread.
* At least float32, also under bf16 autocast: CPUs without native bf16 vector math run bf16
  elementwise ops slower than float32, and the logits are float32 anyway.
"""

from __future__ import annotations

import torch


def score_dtype(*tensors: torch.Tensor) -> torch.dtype:
    """The dtype pointer scores are computed in: float32, or float64 if an input is float64."""
    dtype = torch.float32
    for tensor in tensors:
        dtype = torch.promote_types(dtype, tensor.dtype)
    return dtype


def additive_scores(
    enc_proj: torch.Tensor, dec_proj: torch.Tensor, v: torch.Tensor
) -> torch.Tensor:
    """u_ij = v^T tanh(W1 e_j + W2 d_i): W1 e (B, m, d), W2 d (B, T, d), v (d,) -> u (B, T, m),
    float32 (float64 for float64 inputs; :func:`score_dtype`), autocast off.

    Differentiable in all three arguments (gradients in their own dtypes).
    """
    dtype = score_dtype(enc_proj, dec_proj, v)
    with torch.autocast(enc_proj.device.type, enabled=False):
        scores = _AdditiveScores.apply(enc_proj.to(dtype), dec_proj.to(dtype), v.to(dtype))
    return scores


class _AdditiveScores(torch.autograd.Function):
    """Forward and backward of :func:`additive_scores` on float32 (or float64) inputs, one step
    at a time."""

    @staticmethod
    def forward(ctx, enc_proj: torch.Tensor, dec_proj: torch.Tensor, v: torch.Tensor):
        ctx.save_for_backward(enc_proj, dec_proj, v)
        batch, steps = dec_proj.shape[:2]
        out = enc_proj.new_empty(batch, steps, enc_proj.shape[1])  # (B, T, m)
        slab = torch.empty_like(enc_proj)  # (B, m, d), reused by every step
        for t in range(steps):
            _sigmoid_slab(enc_proj, dec_proj[:, t], slab)
            out[:, t] = slab @ v  # (B, m)
        return out.mul_(2).sub_(v.sum())

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        enc_proj, dec_proj, v = ctx.saved_tensors
        with torch.autocast(grad.device.type, enabled=False):
            return _backward(enc_proj, dec_proj, v, grad.to(enc_proj.dtype).contiguous())


def _sigmoid_slab(enc_proj: torch.Tensor, dec_t: torch.Tensor, slab: torch.Tensor) -> None:
    """slab <- sigmoid(2 (enc_proj + dec_t)): (B, m, d), (B, d) -> (B, m, d), in place."""
    torch.add(dec_t[:, None] * 2, enc_proj, alpha=2, out=slab)
    torch.sigmoid(slab, out=slab)


def _backward(
    enc_proj: torch.Tensor, dec_proj: torch.Tensor, v: torch.Tensor, grad: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Gradients of sum(grad * u) with s = sigmoid(2x), u = 2 s^T v - sum(v), x = e + d_t.

    du/dx = 4 v s (1 - s) and du/dv = 2 s - 1; the factor 4 v is applied once at the end.
    """
    batch, steps, d = dec_proj.shape
    d_enc = torch.zeros_like(enc_proj)  # (B, m, d): sum_t g_t s_t (1 - s_t)
    d_dec = torch.empty_like(dec_proj)  # (B, T, d)
    gs = enc_proj.new_zeros(batch, 1, d)  # (B, 1, d): sum_t g_t^T s_t
    slab, deriv = torch.empty_like(enc_proj), torch.empty_like(enc_proj)
    for t in range(steps):
        _sigmoid_slab(enc_proj, dec_proj[:, t], slab)
        g_t = grad[:, t, None]  # (B, 1, m)
        gs.baddbmm_(g_t, slab)
        torch.addcmul(slab, slab, slab, value=-1, out=deriv)  # s (1 - s)
        d_dec[:, t] = torch.bmm(g_t, deriv)[:, 0]  # (B, d)
        d_enc.addcmul_(deriv, grad[:, t, :, None])
    v4 = 4 * v
    d_v = 2 * gs.sum(dim=(0, 1)) - grad.sum()
    return d_enc.mul_(v4), d_dec.mul_(v4), d_v
