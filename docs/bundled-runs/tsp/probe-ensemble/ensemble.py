"""Greedy tours of an ensemble of heavy-decoder TSP models, in pairs against each member.

At every step the ensemble's score of a token is the mean of its members' log-probabilities
(a product of experts); the greedy tour follows it. Members must be heavy-decoder models
(``--decoder heavy``), whose decoder state is a function of the tokens chosen so far, so all
members share one state. For each file of instances with reference tours: the ensemble's mean
greedy gap and, per member, the paired difference ensemble - member (per instance, with its
standard error; ``benchmarks/paired_gap.py``'s measure).

    python docs/bundled-runs/tsp/probe-ensemble/ensemble.py \\
        ptrnet/bundled/tsp/heavy40-52/best.safetensors \\
        ptrnet/bundled/tsp/heavy20-100/best.safetensors --test val42_50.txt
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "benchmarks"))
from paired_gap import greedy_gaps, paired  # noqa: E402

from ptrnet.inference import load_model  # noqa: E402
from ptrnet.io.paper_format import read_examples  # noqa: E402
from ptrnet.model.heavy import HeavyPointer  # noqa: E402
from ptrnet.tasks import get_task  # noqa: E402


@dataclass(frozen=True)
class EnsembleMemory:
    """Each member's memory; the state is the first member's (all members' are equal)."""

    parts: tuple
    state: tuple

    def index(self, rows: torch.Tensor) -> EnsembleMemory:
        parts = tuple(part.index(rows) for part in self.parts)
        return EnsembleMemory(parts, parts[0].state)


class Ensemble(nn.Module):
    """Heavy-decoder models decoded as one: step scores = mean of the members' log-softmax."""

    def __init__(self, models: list[HeavyPointer]) -> None:
        super().__init__()
        if not all(isinstance(m, HeavyPointer) for m in models):
            raise SystemExit("ensemble.py: every member must be a heavy-decoder model")
        self.members = nn.ModuleList(models)

    def encode(self, points: torch.Tensor, lengths: torch.Tensor) -> EnsembleMemory:
        parts = tuple(m.encode(points, lengths) for m in self.members)
        return EnsembleMemory(parts, parts[0].state)

    def step(self, memory: EnsembleMemory, prev: torch.Tensor, state: tuple):
        """(B,) previous tokens -> (B, n+1) mean log-probabilities, the next state."""
        scores, new_state = [], state
        for member, part in zip(self.members, memory.parts, strict=True):
            logits, new_state = member.step(part, prev, state)
            scores.append(torch.log_softmax(logits.float(), dim=-1))
        return torch.stack(scores).mean(0), new_state


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("members", nargs="+", help="heavy-decoder TSP checkpoints")
    parser.add_argument("--test", action="append", required=True, help="file with references")
    args = parser.parse_args()
    torch.set_num_threads(1)
    task = get_task("tsp")
    models = [load_model(path, "tsp").model.eval() for path in args.members]
    ensemble = Ensemble(models)
    for path in args.test:
        examples = read_examples(path, task)
        together = greedy_gaps(ensemble, examples)
        for name, model in zip(args.members, models, strict=True):
            print(paired(together, greedy_gaps(model, examples)).line(f"{path} - {name}"))


if __name__ == "__main__":
    main()
