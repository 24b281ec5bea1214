"""Trap: the previous output's index, not its coordinates, as the decoder's input.

The paper feeds the decoder, at step i, the input it pointed at before: P_{C_{i-1}}, that
point's coordinates (Sec. 2). Feeding an embedding of the integer C_{i-1} instead looks the
same to the code, but an index says nothing about *where* the tour stands: city 3 is somewhere
else in every instance. The decoder reads only its inputs (never the encoder states), so its
query for the next city cannot depend on the current city's place. (Sorting hides the trap:
the indices chosen so far say which numbers are left, all a sorter needs.) Two TSP models are
trained here on ``TRAIN_N`` cities, one per decoder input, and their greedy tours (under the
mask: always valid) measured against the optimum on fresh instances.
"""

from __future__ import annotations

import torch
from torch import nn

from ptrnet.lessons.traps.common import Size, evaluate, train_model
from ptrnet.model import ModelConfig, build_model
from ptrnet.model.pointer import Memory, PointerNetwork
from ptrnet.tasks import TASKS

TRAIN_N = 8
POOL = 4096  # training instances, labelled once (exact tours take ~1.5 ms each)
#: The figures that are rates or gaps (``mean_length`` is a length), printed in percent.
RATES = frozenset({"mean_gap"})
SIZES = {"quick": Size(steps=300, batch=64, hidden=64, tests=200),
         "full": Size(steps=1000, batch=64, hidden=64, tests=1000)}  # fmt: skip


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
    """Per decoder input (``coordinates``, ``index``): mean tour length and mean gap to the
    optimum of greedy decoding under the TSP mask on ``TRAIN_N`` cities."""
    tsp = TASKS["tsp"]
    config = ModelConfig(input_dim=2, hidden=size.hidden, init="default")
    models = {
        "coordinates (the paper's)": build_model(config),
        "index embedding": IndexInputs(config, tokens=TRAIN_N + 1),
    }
    figures = {}
    sizes = (TRAIN_N, TRAIN_N)
    for name, model in models.items():
        model = train_model(model, tsp, sizes, size, seed, pool=POOL)
        metrics = evaluate(model, tsp, TRAIN_N, size.tests, seed, constraints="task")
        figures[name] = {key: metrics[key] for key in ("mean_length", "mean_gap")}
    return figures
