"""A search step whose mask leaves each row one token needs no logits: its log-probability is 0
(:class:`ptrnet.decoding.pointer_decoder.PointerDecoder`, ``FORCED_TAIL`` steps before a row's
limit, TSP's return to the first city and end token). Decodings that take the shortcut wherever
a step is forced, and that never take it, give the same tokens, scores and step distributions
bit for bit, with the model reading the skipped tokens when a later step needs its logits (a
route forced back to its depot, then free again)."""

import numpy as np
import pytest
import torch

from ptrnet.datasets.batching import collate
from ptrnet.decoding import pointer_decoder
from ptrnet.decoding.decode import decode
from ptrnet.decoding.options import DecodeOptions
from ptrnet.model import ModelConfig, build_model
from ptrnet.tasks import SizeRange, get_task

torch.set_num_threads(1)
NET = dict(hidden=16, heads=2, encoder="transformer", encoder_layers=1, init="default")
MODELS = {
    "tsp": dict(input_dim=2, decoder="light", logit_clip=10.0),
    "cvrp": dict(input_dim=4, decoder="route", features="demand", logit_clip=10.0),
}
OPTIONS = [
    DecodeOptions(),
    DecodeOptions(strategy="beam", beam_width=3),
    DecodeOptions(strategy="sample", samples=3),
]


def instances(name):
    task = get_task(name)
    points = task.generate(SizeRange(4, 9), 6, seed=3)
    if name == "cvrp":
        for p in points:
            p[:, 3] = 12  # a small capacity: routes forced back to the depot mid-way
    return task, collate([np.asarray(p, dtype=np.float32) for p in points])


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: o.strategy)
def test_forced_steps_skip_the_model_and_change_nothing(name, options, monkeypatch):
    task, batch = instances(name)
    torch.manual_seed(0)
    net = build_model(ModelConfig(**NET, **MODELS[name])).eval()
    runs, read_late = {}, []
    step = pointer_decoder.PointerDecoder.step

    def watched(self, state):
        logp, after = step(self, state)
        read_late.append(bool(state.unread) and not after.unread)
        return logp, after

    monkeypatch.setattr(pointer_decoder.PointerDecoder, "step", watched)
    for tail in (-(10**6), 10**6):  # never ask whether a step is forced; ask at every step
        monkeypatch.setattr(pointer_decoder, "FORCED_TAIL", tail)
        generator = torch.Generator().manual_seed(5)
        runs[tail] = decode(net, task, batch, options, generator=generator, return_probs=True)
    never, always = runs.values()
    assert torch.equal(never.tokens, always.tokens)
    assert torch.equal(never.log_prob, always.log_prob)
    assert torch.equal(never.probs, always.probs)
    if name == "cvrp" and options.strategy == "greedy":
        assert any(read_late), "a forced depot visit's token read by the model later"
