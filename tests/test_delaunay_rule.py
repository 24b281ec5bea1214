"""Delaunay's decoding rule (``task`` mode, what every front end decodes with by default):
three distinct inputs a triangle in any order, no triangle twice, no dead end. Checked against a
plain-Python statement of the rule along random walks, and against scipy's triangulation."""

from itertools import combinations

import numpy as np
import pytest
import torch
from scipy.spatial import Delaunay

from ptrnet.tasks import get_task
from ptrnet.tasks.constraints import DecodeState, replay_masks

torch.set_num_threads(1)
TASK = get_task("delaunay")


def completable(n, triangles, partial):
    """Whether some triangle of three distinct inputs 1..n holding ``partial`` is not given."""
    return any(
        frozenset(c) not in triangles for c in combinations(range(1, n + 1), 3) if partial <= set(c)
    )


def delaunay_rule(n, emitted, done):
    """The tokens allowed after ``emitted`` (1-based inputs, no end), stated plainly."""
    if done or len(emitted) >= TASK.max_steps(n):
        return {0}
    whole = len(emitted) // 3 * 3
    triangles = {frozenset(emitted[i : i + 3]) for i in range(0, whole, 3)}
    tail, inputs = emitted[whole:], range(1, n + 1)
    if not tail:
        opening = {a for a in inputs if completable(n, triangles, {a})}
        return opening | ({0} if emitted else set())
    if len(tail) == 1:
        return {b for b in inputs if b not in tail and completable(n, triangles, {*tail, b})}
    return {c for c in inputs if c not in tail and frozenset({*tail, c}) not in triangles}


def test_the_mask_is_the_plain_rule_along_random_walks_of_mixed_sizes():
    """Walks that rarely end exhaust every triangle of small n, so the no-dead-end rule and the
    budget are reached; rows are reordered at every step as beams are."""
    rng = np.random.default_rng(0)
    for _ in range(12):
        lengths = torch.tensor(rng.integers(3, 7, size=4))
        state = DecodeState.start(TASK, lengths)
        emitted = [[] for _ in lengths]
        for _ in range(TASK.max_steps(int(lengths.max())) + 2):
            mask = state.allowed()
            tokens = []
            for b, n in enumerate(lengths.tolist()):
                rule = delaunay_rule(n, emitted[b], bool(state.done[b]))
                assert rule, "the plain rule never leaves a row stuck"
                assert set(mask[b].nonzero()[:, 0].tolist()) == rule
                weights = np.array([0.02 if t == 0 else 1.0 for t in sorted(rule)])
                tokens.append(int(rng.choice(sorted(rule), p=weights / weights.sum())))
                if tokens[-1] and not state.done[b]:
                    emitted[b].append(tokens[-1])
            order = torch.from_numpy(rng.permutation(len(lengths)))
            state = state.update(torch.tensor(tokens)).index(order)
            emitted = [emitted[i] for i in order.tolist()]
            lengths = lengths[order]
        assert state.done.all()


@pytest.mark.parametrize("n", [4, 5, 10, 30])
def test_scipy_triangulation_in_any_order_passes_and_no_triangle_comes_twice(n):
    """Every triangle of scipy's Delaunay triangulation, in any order and any vertex order, is
    allowed, then the end; each of them again, in another vertex order, is refused at its last
    vertex, and ``is_valid`` agrees."""
    rng = np.random.default_rng(n)
    points = rng.random((n, 2))
    simplices = Delaunay(points).simplices  # (m, 3) 0-based
    triangles = np.array([rng.permutation(t) for t in rng.permutation(simplices)])
    tokens = torch.from_numpy(np.append(triangles.reshape(-1) + 1, 0))[None]  # (1, T)
    masks = replay_masks(TASK, torch.tensor([n]), tokens, "task")[0]  # (T, n+1)
    assert masks.gather(1, tokens.T).all()
    assert TASK.is_valid(points, triangles.reshape(-1))
    state = DecodeState.start(TASK, torch.tensor([n]))
    for token in tokens[0, :-1]:
        state = state.update(token[None])
    for again in triangles:
        again = rng.permutation(again)
        ahead = state.update(torch.tensor([again[0] + 1])).update(torch.tensor([again[1] + 1]))
        assert not ahead.allowed()[0, again[2] + 1]
        assert not TASK.is_valid(points, np.append(triangles.reshape(-1), again))


def test_only_a_rule_that_reads_the_history_keeps_it():
    lengths = torch.tensor([5, 7])
    assert DecodeState.start(TASK, lengths, "task").history.shape == (2, 0)
    assert DecodeState.start(TASK, lengths, "none").history is None  # the paper's: no rule
    assert DecodeState.start(get_task("tsp"), lengths, "task").history is None
