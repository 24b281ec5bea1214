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

import weakref

import torch
from torch import nn
from torch.nn.modules import module as module_hooks

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
            out = run_layers(self.layers, self.embed(points))  # (B, n, d)
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


def reordered_inputs(values: torch.Tensor, order: torch.Tensor) -> torch.Tensor:
    """Per-input values (B, n, k) -> those of the R = B * S reordered copies that ``order``
    (R, n) lists, instance-major: (R, n, k), row r holding instance r // S's value of input
    ``order[r, j]`` at position j."""
    rows = copy_rows(values.shape[0], order)  # (R,)
    return values[rows].gather(1, order[..., None].expand(-1, -1, values.shape[2]))


def rows_reordered(
    encoded: tuple[torch.Tensor, State], order: torch.Tensor
) -> tuple[torch.Tensor, State]:
    """States (B, n, d) and (h, c) (layers, B, d) -> those of the R = B * S reordered copies
    that ``order`` (R, n) lists, instance-major (:meth:`SetEncoder.forward`)."""
    out, (h, c) = encoded
    rows = copy_rows(out.shape[0], order)  # (R,)
    return reordered_inputs(out, order), (h[:, rows], c[:, rows])


def run_layers(stack: nn.TransformerEncoder, x: torch.Tensor) -> torch.Tensor:
    """``stack(x)`` without a mask, bit for bit. Where every layer would run PyTorch's fused
    inference kernel (its fast path, :func:`fused_inference`), the kernel is called here
    directly on the same arguments, skipping each layer's Python checks before it: about 0.1 ms
    a layer, a twentieth of a lone instance's greedy decoding at n = 20 (docs/speed.md).
    Elsewhere (training, gradients, hooks, ...) the modules run as they are."""
    if not fused_inference(stack, x):
        return stack(x)
    for layer in stack.layers:
        attn = layer.self_attn
        x = torch._transformer_encoder_layer_fwd(  # the call each layer's fast path makes
            x,
            attn.embed_dim,
            attn.num_heads,
            attn.in_proj_weight,
            attn.in_proj_bias,
            attn.out_proj.weight,
            attn.out_proj.bias,
            layer.activation_relu_or_gelu == 2,
            layer.norm_first,
            layer.norm1.eps,
            layer.norm1.weight,
            layer.norm1.bias,
            layer.norm2.weight,
            layer.norm2.bias,
            layer.linear1.weight,
            layer.linear1.bias,
            layer.linear2.weight,
            layer.linear2.bias,
            None,  # no mask: merge_masks(None, None, x) is (None, None)
            None,
        )
    return x if stack.norm is None else stack.norm(x)


def fused_inference(stack: nn.TransformerEncoder, x: torch.Tensor) -> bool:
    """Whether every layer of ``stack`` takes its fast path on ``x`` (B, n, d) without a mask:
    the conditions ``nn.TransformerEncoderLayer.forward`` checks, or stricter ones (falling
    back to the modules is always right): no gradient recorded, the fast path on, no autocast,
    a plain tensor on the CPU or a CUDA device, every module in eval mode and without hooks,
    and layers with the settings the kernel takes (:func:`kernel_takes`)."""
    if (
        torch.is_grad_enabled()
        or not torch.backends.mha.get_fastpath_enabled()
        or torch.is_autocast_enabled()
        or torch.overrides.has_torch_function((x,))
        or x.device.type not in ("cpu", "cuda")
        or x.dim() != 3
        or x.is_nested
        or module_hooks._global_forward_hooks
        or module_hooks._global_forward_pre_hooks
    ):
        return False
    modules = _FUSABLE.get(stack)
    if modules is None:  # the settings, read once: the layers' construction fixes them
        fusable = all(kernel_takes(layer) for layer in stack.layers)
        modules = _FUSABLE[stack] = tuple(stack.modules()) if fusable else ()
    unfit = (m.training or m._forward_hooks or m._forward_pre_hooks for m in modules)
    return bool(modules) and not any(unfit)


def kernel_takes(layer: nn.TransformerEncoderLayer) -> bool:
    """Whether ``layer``'s settings are ones its fused kernel takes: batch first, biases, one
    embedding size, ReLU or GELU, equal norm eps, an even number of heads."""
    attn = layer.self_attn
    return bool(
        attn.batch_first
        and attn.in_proj_bias is not None
        and attn._qkv_same_embed_dim
        and layer.activation_relu_or_gelu
        and layer.norm1.eps == layer.norm2.eps
        and attn.num_heads % 2 == 0
    )


# Each stack's modules (its own first) when its layers' settings suit the kernel, else ().
_FUSABLE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
