"""Deepen a heavy-decoder checkpoint without changing what it computes.

Writes a checkpoint whose heavy decoder has ``--every`` + 1 times as many attention layers:
after each trained layer come ``--every`` new ones whose two residual branches end in zero
(the attention output projection and the second feed-forward layer, weights and biases), so
each new pre-norm layer maps its input to itself and the deeper model's logits equal the
original's (checked before writing). Their other weights keep PyTorch's initialisation and
start learning once a step has moved the zeroed projections. ``ptrnet train --init-from`` then
continues from it: the network grows, the function does not jump.

    python docs/bundled-runs/tsp/probe-grow/grow.py \\
        ptrnet/bundled/tsp/heavy10-30/best.safetensors grown6.safetensors
"""

import argparse
import copy
import dataclasses

import torch
from torch import nn

from ptrnet.datasets.batching import collate
from ptrnet.inference import load_model
from ptrnet.model import build_model
from ptrnet.runs.checkpoint import load_checkpoint, save_checkpoint


def identity_layer(like: nn.TransformerEncoderLayer) -> nn.TransformerEncoderLayer:
    """A fresh copy of ``like`` whose residual branches output zero (pre-norm: the identity)."""
    layer = copy.deepcopy(like)
    layer.self_attn._reset_parameters()
    layer.linear1.reset_parameters()
    layer.norm1.reset_parameters()
    layer.norm2.reset_parameters()
    for p in (
        layer.self_attn.out_proj.weight,
        layer.self_attn.out_proj.bias,
        layer.linear2.weight,
        layer.linear2.bias,
    ):
        nn.init.zeros_(p)
    return layer


def grow(model: nn.Module, every: int) -> nn.Module:
    """The model with ``every`` identity layers after each heavy-decoder layer."""
    old = list(model.decoder.layers)
    config = dataclasses.replace(model.config, decoder_layers=len(old) * (every + 1))
    deeper = build_model(config)
    layers = []
    for layer in old:
        layers += [layer] + [identity_layer(layer) for _ in range(every)]
    state = {k: v for k, v in model.state_dict().items() if not k.startswith("decoder.layers.")}
    for i, layer in enumerate(layers):
        state.update({f"decoder.layers.{i}.{k}": v for k, v in layer.state_dict().items()})
    deeper.load_state_dict(state)
    return deeper.eval()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", help="a heavy-decoder checkpoint")
    parser.add_argument("out", help="checkpoint to write")
    parser.add_argument("--every", type=int, default=1, help="new layers after each layer")
    args = parser.parse_args()
    torch.manual_seed(0)
    saved = load_checkpoint(args.checkpoint)
    model = load_model(args.checkpoint).model
    deeper = grow(model, args.every)
    points = torch.rand(8, 20, 2, generator=torch.Generator().manual_seed(1))
    batch = collate(list(points.numpy()), [list(range(20)) + [0]] * 8)
    with torch.no_grad():
        before = model(batch.points, batch.lengths, batch.targets)
        after = deeper(batch.points, batch.lengths, batch.targets)
    finite = before.isfinite()
    if not torch.equal(finite, after.isfinite()) or (before - after)[finite].abs().max() > 1e-4:
        raise SystemExit("the grown model computes something else; nothing written")
    config = dataclasses.replace(saved.config, model=deeper.config)
    info = {"grown_from": args.checkpoint, "new_layers_after_each": args.every}
    save_checkpoint(args.out, config, saved.step, deeper, info=info)
    print(f"{args.out}: {deeper.config.decoder_layers} decoder layers, same logits")


if __name__ == "__main__":
    main()
