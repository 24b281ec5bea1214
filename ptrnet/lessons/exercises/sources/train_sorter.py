"""Train a small pointer network to sort, built from your exercises 1, 2 and 5.

Run it from this folder once ``ptrnet exercises check .`` passes:

    python train_sorter.py            # 1000 steps: about a minute on one CPU core
    python train_sorter.py 200        # fewer steps, for a quick look

It learns to sort lists of N numbers in [0, 1) by teacher forcing (the loss of each correct
next position, under your mask), then sorts fresh lists with your greedy decoder and prints the
share sorted exactly. Every line of the model is here; nothing comes from ptrnet.
"""

import math
import sys
import time

import torch
from ex1_pointer_attention import pointer_log_probs
from ex2_masking import masked_log_probs
from ex5_greedy_decoding import greedy_decode
from torch import nn

N, HIDDEN, BATCH, LR, SEED = 6, 64, 128, 3e-3, 0


class TinyPointer(nn.Module):
    """LSTM encoder, LSTM-cell decoder fed the previous choice's value, pointer head."""

    def __init__(self, d: int) -> None:
        super().__init__()
        self.encoder = nn.LSTM(1, d, batch_first=True)
        self.decoder = nn.LSTMCell(1, d)
        self.start = nn.Parameter(torch.zeros(1))  # the decoder's input at the first step
        scale = 1 / math.sqrt(d)
        self.w1 = nn.Parameter(torch.empty(d, d).uniform_(-scale, scale))
        self.w2 = nn.Parameter(torch.empty(d, d).uniform_(-scale, scale))
        self.v = nn.Parameter(torch.empty(d).uniform_(-scale, scale))

    def encode(self, x: torch.Tensor):
        """(B, n, 1) -> encoder states (B, n, d) and the decoder's first state."""
        enc, (h, c) = self.encoder(x)
        return enc, (h[0], c[0])

    def step(self, x, enc, prev, state):
        """One decoder step: the previous choice (B,) (-1 = none yet) -> (B, n) log-probs."""
        rows = torch.arange(len(x))
        value = x[rows, prev.clamp(min=0)]  # (B, 1): the chosen number is the next input
        value = torch.where((prev < 0)[:, None], self.start.expand_as(value), value)
        h, c = self.decoder(value, state)
        return pointer_log_probs(enc, h, self.w1, self.w2, self.v), (h, c)


def loss_of(model: TinyPointer, x: torch.Tensor) -> torch.Tensor:
    """Teacher forcing: mean -log p(correct next position | correct prefix), masked."""
    target = x[..., 0].argsort(dim=1)  # (B, n): the sorted order
    enc, state = model.encode(x)
    rows = torch.arange(len(x))
    chosen = torch.zeros(x.shape[:2], dtype=torch.bool)
    prev, total = torch.full((len(x),), -1), 0.0
    for t in range(x.shape[1]):
        logp, state = model.step(x, enc, prev, state)
        logp = masked_log_probs(logp, chosen)
        total = total - logp[rows, target[:, t]].mean()
        prev = target[:, t]
        chosen = chosen.clone()
        chosen[rows, prev] = True
    return total / x.shape[1]


@torch.no_grad()
def exact_match(model: TinyPointer, x: torch.Tensor) -> float:
    """Share of lists your greedy decoder sorts exactly."""
    enc, state = model.encode(x)
    order = greedy_decode(lambda prev, s: model.step(x, enc, prev, s), state, len(x), N)
    return (order == x[..., 0].argsort(dim=1)).all(dim=1).float().mean().item()


def main(steps: int) -> float:
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    model = TinyPointer(HIDDEN)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    test = torch.rand(1000, N, 1)
    began = time.perf_counter()
    for i in range(1, steps + 1):
        loss = loss_of(model, torch.rand(BATCH, N, 1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if i % max(steps // 5, 1) == 0 or i == steps:
            print(f"step {i}: loss {loss.item():.3f}, {time.perf_counter() - began:.0f} s")
    score = exact_match(model, test)
    print(f"sorted exactly: {100 * score:.1f}% of 1000 fresh lists of {N} numbers")
    return score


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
