"""A Transformer encoder for the pointer model (Kool et al. 2019's encoder, beyond the paper).

The paper's LSTM reads the inputs in their given order, so the same point set in another order
is another input. A set problem (TSP, convex hull, Delaunay) has no input order: this encoder
embeds each element on its own (a linear map of its coordinates) and mixes them by
self-attention only, with no positional encoding, so permuting the inputs permutes the encoder
states and changes nothing else.

The pointer's LSTM decoder still needs an initial (h, c): h is the mean of the real elements'
states in every decoder layer, c is zero (Kool et al. start their decoder from the same graph
mean). Padding never enters: padded keys are masked out of attention, pad states are zeroed.
"""

from __future__ import annotations

import torch
from torch import nn

from ptrnet.model.config import ModelConfig

State = tuple[torch.Tensor, torch.Tensor]  # LSTM (h, c), each (layers, B, d)


class SetEncoder(nn.Module):
    """Embedding + ``encoder_layers`` pre-norm Transformer layers, no dropout, no positions."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        d = config.hidden
        self.decoder_layers = config.layers
        self.embed = nn.Linear(config.feature_dim, d)
        layer = nn.TransformerEncoderLayer(
            d, config.heads, dim_feedforward=4 * d, dropout=0.0, batch_first=True, norm_first=True
        )
        self.layers = nn.TransformerEncoder(
            layer, config.encoder_layers, norm=nn.LayerNorm(d), enable_nested_tensor=False
        )

    def forward(
        self, points: torch.Tensor, lengths: torch.Tensor, order: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, State]:
        """(B, n, dim), (B,) -> states (B, n, d), zero at pads, and the decoder's initial (h, c).

        ``lengths`` are checked by the caller (1..n). ``order`` (R, n) long, R = B * S: the
        states of S reorderings per instance (row r = b * S + s holds instance b's input
        ``order[r, j]`` at position j, as ``ptrnet.decoding.multistart.rotate`` builds), each
        instance encoded once: without positions the encoder reads a set, so a reordered
        instance's states are its states reordered.
        """
        if order is not None:
            return rows_reordered(self(points, lengths), order)
        n = points.shape[1]
        if bool(lengths.min() == n):  # no pads: no masks (a faster kernel path, fewer operations)
            out = self.layers(self.embed(points))  # (B, n, d)
        else:
            real = torch.arange(n, device=points.device)[None, :] < lengths[:, None]  # (B, n)
            points = points.masked_fill(~real[..., None], 0.0)  # a NaN pad would reach the values
            out = self.layers(self.embed(points), src_key_padding_mask=~real)  # (B, n, d)
            out = out.masked_fill(~real[..., None], 0.0)
        mean = out.sum(dim=1) / lengths[:, None].to(out.dtype)  # (B, d)
        h = mean[None].expand(self.decoder_layers, -1, -1).contiguous()  # (layers, B, d)
        return out, (h, torch.zeros_like(h))


def copy_rows(count: int, order: torch.Tensor) -> torch.Tensor:
    """The instance (of ``count``) each of the R = count * S copies that ``order`` (R, n)
    lists comes from, instance-major: (R,) long. Raises ValueError when R is not a multiple of
    ``count``."""
    if order.dim() != 2 or order.shape[0] % count:
        raise ValueError(
            f"order {tuple(order.shape)}: need (B * S, n) rows for the {count} instances"
        )
    return torch.arange(count, device=order.device).repeat_interleave(order.shape[0] // count)


def reordered_lengths(lengths: torch.Tensor, order: torch.Tensor) -> torch.Tensor:
    """(B,) lengths -> (R,) those of the copies ``order`` (R, n) lists (:func:`copy_rows`)."""
    return lengths[copy_rows(lengths.shape[0], order)]


def rows_reordered(
    encoded: tuple[torch.Tensor, State], order: torch.Tensor
) -> tuple[torch.Tensor, State]:
    """States (B, n, d) and (h, c) (layers, B, d) -> those of the R = B * S reordered copies
    that ``order`` (R, n) lists, instance-major (:meth:`SetEncoder.forward`)."""
    out, (h, c) = encoded
    rows = copy_rows(out.shape[0], order)  # (R,)
    out = out[rows].gather(1, order[..., None].expand(-1, -1, out.shape[2]))  # (R, n, d)
    return out, (h[:, rows], c[:, rows])
