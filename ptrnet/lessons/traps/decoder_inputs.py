"""Trap: the previous output's index, not its coordinates, as the decoder's input.

The paper feeds the decoder, at step i, the input it pointed at before: P_{C_{i-1}}, that
point's coordinates (Sec. 2). Feeding an embedding of the integer C_{i-1} instead looks the
same to the code, but an index says nothing about *what* was chosen: position 3 holds a
different number in every list. The decoder (which never reads the encoder states, only its
inputs and the pointer's query) then cannot tell where in the sorted order it stands. Two
sorters are trained here on lists of ``TRAIN_SIZES`` numbers, one per decoder input, and tested
on lists of ``TEST_N``.
"""

from __future__ import annotations

import torch
from torch import nn

from ptrnet.lessons.traps.common import Size, evaluate, train_model
from ptrnet.model import ModelConfig, build_model
from ptrnet.model.pointer import Memory, PointerNetwork
from ptrnet.tasks import TASKS

TRAIN_SIZES, TEST_N = (10, 15), 15
SIZES = {"quick": Size(steps=600, batch=64, hidden=64, tests=200),
         "full": Size(steps=1500, batch=64, hidden=64, tests=1000)}  # fmt: skip


class IndexInputs(PointerNetwork):
    """A Ptr-Net whose decoder reads a learned embedding of the previous token (0 = start,
    j = input j) in place of input j's coordinates: the trap."""

    def __init__(self, config: ModelConfig, tokens: int) -> None:
        super().__init__(config)
        self.index_embedding = nn.Embedding(tokens, config.input_dim)

    def decoder_inputs(self, memory: Memory, prev: torch.Tensor) -> torch.Tensor:
        """(B, T) previous tokens -> (B, T, input_dim) embeddings of the integers."""
        return self.index_embedding(prev)


def run(size: Size, seed: int) -> dict[str, dict[str, float]]:
    """Per decoder input (``coordinates``, ``index``): exact matches and positions right of
    greedy decoding under the sort mask on ``TEST_N`` numbers."""
    sort = TASKS["sort"]
    config = ModelConfig(input_dim=1, hidden=size.hidden, init="default")
    models = {
        "coordinates (the paper's)": build_model(config),
        "index embedding": IndexInputs(config, tokens=TRAIN_SIZES[1] + 1),
    }
    figures = {}
    for name, model in models.items():
        model = train_model(model, sort, TRAIN_SIZES, size, seed)
        metrics = evaluate(model, sort, TEST_N, size.tests, seed, constraints="task")
        figures[name] = {key: metrics[key] for key in ("exact_match", "position_accuracy")}
    return figures
