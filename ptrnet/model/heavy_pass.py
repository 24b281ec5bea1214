"""The heavy decoder's attention stack written out op by op, for decoding without gradients.

:class:`ptrnet.model.heavy.HeavyPointer` keeps its decoder as an ``nn.TransformerEncoder`` of
pre-norm ``nn.TransformerEncoderLayer`` s (ReLU, no dropout, a final LayerNorm), so checkpoints
and training are unchanged. At inference PyTorch runs that stack through its fused encoder-layer
kernel, whose attention multiplies heads of width 16 one small matrix at a time; most of a
greedy decoding's time went there. :func:`decoder_pass` computes the same function from the
same weights with ``F.scaled_dot_product_attention`` (one fused kernel per layer) and plain
matrix products, and can take the first layer's query/key/value projections of the inputs from
a cache: a layer-1 input is an input's own vector, which never changes while decoding, so its
``LayerNorm`` + in-projection is computed once per instance (:func:`first_layer_qkv`) instead of
once per step. Deeper layers read vectors that depend on what remains and are recomputed.

The results equal the fused kernel's up to float rounding (tests/test_heavy_pass.py).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


def can_run(decoder: nn.TransformerEncoder) -> bool:
    """Whether :func:`decoder_pass` computes ``decoder``'s function: pre-norm layers with ReLU,
    in eval mode or without dropout, and no gradient being recorded. (Which of the two is
    faster for rows of T vectors: :data:`FAST_FROM`.)"""
    if torch.is_grad_enabled():
        return False
    for layer in decoder.layers:
        if not layer.norm_first or layer.activation_relu_or_gelu != 1:
            return False
        if layer.training and (layer.dropout.p > 0 or layer.self_attn.dropout > 0):
            return False
    return True


def first_layer_qkv(decoder: nn.TransformerEncoder, nodes: torch.Tensor) -> torch.Tensor:
    """(..., d) input vectors -> (..., 3d): the first layer's queries, keys and values of them
    (its LayerNorm, then its in-projection), what :func:`decoder_pass` reads as ``qkv``."""
    layer = decoder.layers[0]
    attn = layer.self_attn
    return F.linear(_norm(layer.norm1, nodes), attn.in_proj_weight, attn.in_proj_bias)


# Rows of fewer vectors run PyTorch's fused layers: on them the fused kernel was as fast or faster
# (one thread, AMD EPYC: 64 rows of 16 and 32 vectors), the op-by-op pass faster from 52 up.
FAST_FROM = 40

# Vectors per chunk of rows: a chunk's widest intermediate (its feed-forward's 4d-wide hidden
# layer, 4 MiB at d = 128) then stays in a core's share of the cache; 256 rows of 102 did not.
CHUNK_VECTORS = 2048


def decoder_pass(
    decoder: nn.TransformerEncoder, x: torch.Tensor, qkv: torch.Tensor | None = None
) -> torch.Tensor:
    """``decoder(x)`` for x (r, T, d), computed op by op (module docstring), in chunks of rows
    of about :data:`CHUNK_VECTORS` vectors (rows are independent, so chunking changes nothing).

    Args:
        qkv: optional (r, T - s, 3d), the first layer's :func:`first_layer_qkv` of the last
            T - s vectors of x (taken from a cache); the first s are projected here.
    """
    rows, steps, _ = x.shape
    size = max(1, CHUNK_VECTORS // steps)
    if rows <= size:
        return _stack(decoder, x, qkv)
    parts = [
        _stack(decoder, x[lo : lo + size], None if qkv is None else qkv[lo : lo + size])
        for lo in range(0, rows, size)
    ]
    return torch.cat(parts)  # (r, T, d)


def _stack(
    decoder: nn.TransformerEncoder, x: torch.Tensor, qkv: torch.Tensor | None
) -> torch.Tensor:
    """Every layer and the final norm on one chunk x (r, T, d) -> (r, T, d)."""
    for i, layer in enumerate(decoder.layers):
        x = _layer(layer, x, qkv if i == 0 else None)
    return _norm(decoder.norm, x) if decoder.norm is not None else x


def _layer(
    layer: nn.TransformerEncoderLayer, x: torch.Tensor, cached: torch.Tensor | None
) -> torch.Tensor:
    """One pre-norm encoder layer on x (r, T, d) -> (r, T, d)."""
    attn = layer.self_attn
    rows, steps, d = x.shape
    heads = attn.num_heads
    fresh = steps - (0 if cached is None else cached.shape[1])  # vectors to project here
    qkv = F.linear(_norm(layer.norm1, x[:, :fresh]), attn.in_proj_weight, attn.in_proj_bias)
    if cached is not None:
        qkv = torch.cat([qkv, cached], dim=1)  # (r, T, 3d)
    q, k, v = qkv.view(rows, steps, 3, heads, d // heads).permute(2, 0, 3, 1, 4)  # (r, H, T, dh)
    mixed = F.scaled_dot_product_attention(q, k, v)  # (r, H, T, dh)
    mixed = mixed.transpose(1, 2).reshape(rows, steps, d)  # (r, T, d)
    x = x + F.linear(mixed, attn.out_proj.weight, attn.out_proj.bias)
    hidden = F.relu(F.linear(_norm(layer.norm2, x), layer.linear1.weight, layer.linear1.bias))
    return x + F.linear(hidden, layer.linear2.weight, layer.linear2.bias)  # (r, T, d)


def _norm(norm: nn.LayerNorm, x: torch.Tensor) -> torch.Tensor:
    return F.layer_norm(x, norm.normalized_shape, norm.weight, norm.bias, norm.eps)
