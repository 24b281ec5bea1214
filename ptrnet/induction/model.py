"""A two-layer attention-only Transformer (Elhage et al. 2021): no MLPs, no layer norm.

Token (with a BOS token) and learned positional embeddings are added into a residual stream of
width d; each layer adds the output of its causal multi-head attention to the stream; a linear
unembedding reads the logits of the next token. The attention patterns are returned with the
logits, so that a lesson can look at where each head looks.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ptrnet.induction.config import InductionConfig


class CausalAttention(nn.Module):
    """Multi-head causal self-attention; returns the output and its pattern."""

    def __init__(self, d_model: int, heads: int) -> None:
        super().__init__()
        self.heads, self.d_head = heads, d_model // heads
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.out = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x (B, T, d) -> output (B, T, d) and pattern (B, H, T, T), rows summing to 1 over
        keys 0..query."""
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, self.d_head).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.d_head)  # (B, H, T, T)
        future = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
        pattern = scores.masked_fill(future, float("-inf")).softmax(-1)  # (B, H, T, T)
        mixed = (pattern @ v).transpose(1, 2).reshape(b, t, d)  # (B, T, d)
        return self.out(mixed), pattern


class AttentionOnly(nn.Module):
    """Embeddings, ``config.layers`` attention layers on a residual stream, unembedding."""

    def __init__(self, config: InductionConfig) -> None:
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab + 1, config.d_model)  # + BOS
        self.position = nn.Embedding(config.context, config.d_model)
        self.blocks = nn.ModuleList(
            CausalAttention(config.d_model, config.heads) for _ in range(config.layers)
        )
        self.unembed = nn.Linear(config.d_model, config.vocab, bias=False)
        for weight in (self.embed.weight, self.position.weight):
            nn.init.normal_(weight, std=0.1)

    def forward(self, tokens: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """tokens (B, T <= 2L + 1), BOS first -> logits (B, T, V) and one pattern (B, H, T, T)
        per layer."""
        t = tokens.shape[1]
        x = self.embed(tokens) + self.position.weight[:t]  # (B, T, d)
        patterns = []
        for block in self.blocks:
            out, pattern = block(x)
            x = x + out
            patterns.append(pattern)
        return self.unembed(x), patterns
