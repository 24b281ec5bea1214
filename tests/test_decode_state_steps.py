"""The decoding state's step (``DecodeState.update``, ``allowed``, TSP's rule), written in few
tensor operations because a lone instance's decoding pays each one's fixed cost at every step
(docs/speed.md), against their straightforward statement (the formulas they replaced): the same
masks and fields, bit for bit, along walks that take allowed tokens and, now and then, any
token at all (a disallowed one, a finished row's, a padding column), in both modes."""

import numpy as np
import pytest
import torch

from ptrnet.datasets.batching import collate
from ptrnet.tasks import get_task

torch.set_num_threads(1)


def plain_update(state, token):
    """The fields after ``token`` (B,), one tensor per idea: a one-hot of the token kept for
    live rows, the first token set at a row's first move, the last at every move."""
    live = ~state.done
    hit = torch.zeros_like(state.visited).scatter(1, token[:, None], True)
    ended = live & (token == 0)
    moved = live & ~ended
    return {
        "visited": state.visited | (hit & live[:, None]),
        "first": torch.where(moved & (state.steps == 0), token, state.first),
        "last": torch.where(moved, token, state.last),
        "steps": state.steps + moved,
        "done": state.done | ended,
    }


def plain_tsp_rule(state):
    """TSP: token 1 at step 0, the inputs not visited until step n_b, the first input at step
    n_b, the end token after it."""
    steps, lengths = state.steps, state.lengths
    opening = steps == 0
    middle = (steps > 0) & (steps < lengths)
    single = opening | (steps == lengths)
    column = torch.where(opening, 1, state.first)[:, None]
    mask = ((state.real & ~state.visited) & middle[:, None]).scatter(1, column, single[:, None])
    return mask | (state.end & (steps > lengths)[:, None])


def plain_allowed(state):
    """The task's rule (TSP's from :func:`plain_tsp_rule`) within the real inputs and the end;
    only the end for a finished row or one at its budget; the end where nothing else is."""
    end, stop = state.end, state.done
    if state.mode == "none":
        mask = state.real | end
    else:
        rule = plain_tsp_rule if state.task.name == "tsp" else state.task.allowed_next
        mask = rule(state) & (state.real | end)
        stop = stop | (state.steps >= state.budget)
    mask = torch.where(stop[:, None], end, mask)
    return mask | (end & ~mask.any(dim=1, keepdim=True))


@pytest.mark.parametrize("name", ["tsp", "sort", "convex_hull", "knapsack", "cvrp"])
@pytest.mark.parametrize("mode", ["none", "task"])
@pytest.mark.parametrize("rows", ["mixed sizes", "one size", "alone"])
def test_the_step_equals_its_plain_statement_along_free_walks(name, mode, rows):
    """Rows of one size (alone too) take the state's known-step path (``moves``, ``size``)
    until a row does not move; rows of mixed sizes the per-row one."""
    task, rng = get_task(name), np.random.default_rng(7)
    gen = torch.Generator().manual_seed(7)
    count, wildness = (1, 0.05) if rows == "alone" else (5, 0.15)
    for walk in range(8):
        sizes = rng.integers(3, 9, size=count) if rows == "mixed sizes" else [6] * count
        batch = collate([task.sample_points(rng, int(n)) for n in sizes])
        state = task.decode_state(batch.lengths, mode, batch.points)
        assert (state.size is not None) == (rows != "mixed sizes")
        width, tame = state.visited.shape[1], walk % 2 == 0  # tame walks take allowed tokens
        for _ in range(width + 3):
            allowed = state.allowed()
            assert torch.equal(allowed, plain_allowed(state))
            token = torch.multinomial(allowed.float(), 1, generator=gen)[:, 0]
            wild = torch.rand(count, generator=gen) < (0 if tame else wildness)
            token = torch.where(wild, torch.randint(0, width, (count,), generator=gen), token)
            want, state = plain_update(state, token), state.update(token)
            for field, value in want.items():
                assert torch.equal(getattr(state, field), value), field
            if bool(rng.random() < 0.3):  # beams re-select rows
                state = state.index(torch.from_numpy(rng.permutation(count)))
