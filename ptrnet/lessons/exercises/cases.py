"""The random cases of each exercise and the one-line diagnosis of a wrong answer.

Each ``check_*`` takes the student's function (wrapped by
:func:`ptrnet.lessons.exercises.check.guarded`), compares it with ptrnet's own implementation
on seeded random cases and raises :class:`Wrong` with one line on the first disagreement.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from ptrnet.datasets.batching import collate
from ptrnet.decoding.decode import decode
from ptrnet.decoding.options import DecodeOptions
from ptrnet.decoding.pointer_decoder import masked_log_probs
from ptrnet.model import ModelConfig, build_model
from ptrnet.model.attention import additive_scores
from ptrnet.solvers.tsp import tour_length
from ptrnet.tasks import TASKS
from ptrnet.tasks.sequences import same_cycle, signed_area

CASES = 12  # random cases per exercise
ATOL = 1e-4


class Wrong(Exception):
    """What is wrong with a student's answer, in one line."""


def expect_tensor(out: object, shape: tuple[int, ...], dtype: torch.dtype, what: str) -> None:
    """Raise :class:`Wrong` unless ``out`` is a tensor of ``shape`` and ``dtype``."""
    if not isinstance(out, torch.Tensor):
        raise Wrong(f"returned {type(out).__name__}, expected a torch.Tensor {what}")
    if tuple(out.shape) != shape:
        raise Wrong(f"wrong shape: expected {what} = {shape}, got {tuple(out.shape)}")
    if out.dtype != dtype:
        raise Wrong(f"wrong dtype: expected {dtype}, got {out.dtype}")


def expect_value_error(call: Callable, *args: object, what: str) -> None:
    try:
        call(*args, expect_value_error=True)
    except ValueError:
        return
    raise Wrong(f"no ValueError for {what}")


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return bool(torch.allclose(a, b, atol=ATOL, rtol=1e-4))


def check_attention(student: Callable) -> None:
    """Exercise 1: log softmax_j(v^T tanh(W1 e_j + W2 d)) against ptrnet's additive_scores."""
    gen = torch.Generator().manual_seed(1)
    for case in range(CASES):
        batch, n, d = (int(x) for x in torch.randint(1, 8, (3,), generator=gen))
        n += 1
        enc, dec = torch.randn(batch, n, d, generator=gen), torch.randn(batch, d, generator=gen)
        w1, w2 = torch.randn(d, d, generator=gen), torch.randn(d, d, generator=gen)
        v = torch.randn(d, generator=gen)
        out = student(enc, dec, w1, w2, v)
        expect_tensor(out, (batch, n), torch.float32, "(B, n)")
        total = out.exp().sum(-1)  # (B,)
        if out.min() >= 0 and _close(out.sum(-1), torch.ones(batch)):
            raise Wrong("returned probabilities, not log-probabilities (use log_softmax)")
        if not _close(total, torch.ones(batch)):
            raise Wrong(
                f"log-probs not normalised: a row's probabilities sum to {total.max():.4g}, "
                "not 1 (log_softmax over the n positions)"
            )
        want = torch.log_softmax(additive_scores(enc @ w1.T, (dec @ w2.T)[:, None], v)[:, 0], -1)
        if not _close(out, want):
            raise Wrong(_attention_mistake(out, enc, dec, w1, w2, v, case))
    enc, dec = torch.randn(2, 3, 4), torch.randn(2, 5)
    expect_value_error(student, enc, dec, *torch.randn(2, 4, 4), torch.randn(4), what="dec (B, 5) "
                       "with enc (B, n, 4)")  # fmt: skip


def _attention_mistake(out, enc, dec, w1, w2, v, case: int) -> str:
    """Name the usual slip behind a wrong attention output, else the size of the error."""

    def pointer(e_proj: torch.Tensor, d_proj: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(torch.tanh(e_proj + d_proj[:, None]) @ v, dim=-1)

    if _close(out, pointer(enc @ w2.T, dec @ w1.T)):
        return "W1 and W2 swapped: W1 multiplies the encoder states e_j, W2 the decoder state d"
    if _close(out, pointer(enc @ w1, dec @ w2)):
        return "W1 e computed as e @ W1: with e as a row, W1 e is e @ W1.T"
    want = pointer(enc @ w1.T, dec @ w2.T)
    error = (out - want).abs().max().item()
    return f"wrong values (case {case}): off by up to {error:.3g} from log softmax(u)"


def check_masking(student: Callable) -> None:
    """Exercise 2: log-softmax over the positions not chosen, against ptrnet's masked_log_probs."""
    gen = torch.Generator().manual_seed(2)
    for _ in range(CASES):
        batch, n = (
            int(torch.randint(1, 6, (1,), generator=gen)),
            int(torch.randint(2, 9, (1,), generator=gen)),
        )
        scores = torch.randn(batch, n, generator=gen) * 3
        chosen = torch.rand(batch, n, generator=gen) < 0.5
        chosen[torch.arange(batch), torch.randint(0, n, (batch,), generator=gen)] = False
        given = chosen.clone()
        out = student(scores.clone(), given)
        if not torch.equal(given, chosen):
            raise Wrong("modified the chosen mask in place: build a new tensor instead")
        expect_tensor(out, (batch, n), torch.float32, "(B, n)")
        leak = chosen & (out > float("-inf"))
        if bool(leak.any()):
            row, col = (int(i) for i in leak.nonzero()[0])
            raise Wrong(
                f"unmasked position: row {row} position {col} was chosen but has log-prob "
                f"{out[row, col]:.3g}, not -inf"
            )
        total = out.exp().sum(-1)
        if not _close(total, torch.ones(batch)):
            raise Wrong(
                f"log-probs not normalised over the allowed positions: they sum to "
                f"{total.min():.4g} (mask before the softmax, not after)"
            )
        want = masked_log_probs(scores, ~chosen)
        if not _close(out.masked_fill(chosen, 0), want.masked_fill(chosen, 0)):
            raise Wrong("wrong values: the allowed positions' log-probs differ from ptrnet's")
    expect_value_error(student, torch.zeros(2, 3), torch.zeros(2, 4, dtype=torch.bool),
                       what="scores (2, 3) with chosen (2, 4)")  # fmt: skip


def check_hull(student: Callable) -> None:
    """Exercise 3: the canonical hull label, against ptrnet's convex-hull task's solver."""
    hull = TASKS["convex_hull"]
    rng = np.random.default_rng(3)
    for _ in range(CASES):
        points = rng.random((int(rng.integers(3, 13)), 2))
        want = hull.solve(points)
        out = student(points.copy())
        shown = f"for {len(points)} points: expected {want.tolist()}, got {_listed(out)}"
        if not isinstance(out, np.ndarray) or out.ndim != 1 or out.dtype.kind not in "iu":
            raise Wrong(f"expected a 1-D integer numpy array, got {_described(out)}")
        if len(out) < 2 or out[0] != out[-1]:
            raise Wrong(f"hull not closed: end by repeating the first index ({shown})")
        if out.min() < 0 or out.max() >= len(points) or not same_cycle(out, want):
            raise Wrong(f"wrong hull vertices {shown}")
        if signed_area(points, out[:-1]) < 0:
            raise Wrong(f"hull not canonical: clockwise, labels run counter-clockwise ({shown})")
        if not np.array_equal(out, want):
            raise Wrong(f"hull not canonical: start at the lowest index ({shown})")
    expect_value_error(student, np.zeros((4, 3)), what="points of shape (4, 3)")


def _listed(out: object) -> str:
    return str(out.tolist()) if isinstance(out, np.ndarray) else repr(out)


def _described(out: object) -> str:
    if isinstance(out, np.ndarray):
        return f"a {out.ndim}-D {out.dtype} array"
    return type(out).__name__


def check_tour(student: Callable) -> None:
    """Exercise 4: the closed tour length, against ptrnet's tour_length."""
    rng = np.random.default_rng(4)
    for case in range(CASES):
        n = int(rng.integers(3, 11))
        points, tour = rng.random((n, 2)), rng.permutation(n)
        closed = case % 2 == 1  # every other case passes the tour with its closing index
        given = np.append(tour, tour[0]) if closed else tour
        out = student(points.copy(), given.copy())
        if not isinstance(out, (float, int, np.floating, np.integer)):
            raise Wrong(f"returned {type(out).__name__}, expected a float")
        want = tour_length(points, tour)
        if abs(float(out) - want) > 1e-9 * max(1.0, want):
            path = float(np.linalg.norm(np.diff(points[tour], axis=0), axis=1).sum())
            if abs(float(out) - path) < 1e-9 * max(1.0, want):
                raise Wrong("tour not closed: the length leaves out the way back to the start")
            form = "with its closing index" if closed else "without a closing index"
            raise Wrong(f"wrong length for a tour of {n} {form}: expected {want:.6f}, got {out}")
    expect_value_error(student, np.zeros((3, 2)), np.array([0, 0, 1]), what="the tour [0, 0, 1]")


def check_greedy(student: Callable) -> None:
    """Exercise 5: the greedy loop, against ptrnet's greedy decoding of a random Ptr-Net under
    the sort task's mask (each input once)."""
    torch.manual_seed(5)
    net = build_model(ModelConfig(input_dim=1, hidden=16, init="default")).eval()
    rng = np.random.default_rng(5)
    sort = TASKS["sort"]
    for _ in range(CASES // 2):
        batch, n = int(rng.integers(1, 6)), int(rng.integers(2, 9))
        inputs = collate(list(rng.random((batch, n, 1))))
        options = DecodeOptions(strategy="greedy", constraints="task")
        want = decode(net, sort, inputs, options).tokens[:, :n] - 1  # (B, n) 0-based
        fed = Feed(net, inputs)
        with torch.no_grad():
            out = student(fed.step, fed.start(), batch, n)
        expect_tensor(out, (batch, n), torch.long, "(B, n)")
        _check_feeding(out, fed)
        for row in range(batch):
            seen = out[row].tolist()
            if sorted(seen) != list(range(n)):
                twice = next((j for j in seen if seen.count(j) > 1), seen[0])
                raise Wrong(f"unmasked position chosen: row {row} chose {twice} twice ({seen})")
        for row, step in (out != want).nonzero().tolist()[:1]:
            raise Wrong(
                f"not greedy: row {row} step {step} chose {int(out[row, step])}, but the "
                f"highest-scoring position not chosen yet was {int(want[row, step])}"
            )


def _check_feeding(out: torch.Tensor, fed: Feed) -> None:
    """The student's loop fed ``step`` the state it returned, -1 first, then each choice."""
    if fed.problem:
        raise Wrong(fed.problem)
    if len(fed.prevs) != out.shape[1]:
        raise Wrong(f"called step {len(fed.prevs)} times for {out.shape[1]} inputs")
    for t, prev in enumerate(fed.prevs):
        expected = torch.full_like(out[:, 0], -1) if t == 0 else out[:, t - 1]
        if not torch.equal(torch.as_tensor(prev), expected):
            raise Wrong(
                f"step {t} was fed prev = {torch.as_tensor(prev).tolist()}, expected "
                f"{expected.tolist()} (-1 first, then the positions just chosen)"
            )


class Feed:
    """The ``step`` function handed to the student: ptrnet's Ptr-Net, its scores without the end
    column; it records every ``prev`` it is fed and the first stale state."""

    def __init__(self, net, inputs) -> None:
        self.net, self.memory = net, net.encode(inputs.points, inputs.lengths)
        self.prevs: list[torch.Tensor] = []
        self.problem: str | None = None

    def start(self) -> tuple:
        return (*self.memory.state, 0)  # the LSTM's (h, c) and a count of the steps taken

    def step(self, prev: torch.Tensor, state: tuple) -> tuple[torch.Tensor, tuple]:
        *rnn, count = state
        if self.problem is None and count != len(self.prevs):
            self.problem = f"step {len(self.prevs)} got an old state: pass back what step returns"
        self.prevs.append(prev.clone())
        logits, rnn = self.net.step(self.memory, prev + 1, tuple(rnn))  # token j+1 = input j
        return logits[:, 1:], (*rnn, count + 1)  # (B, n): the end symbol's column dropped
