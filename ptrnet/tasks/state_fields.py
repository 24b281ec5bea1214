"""Per-row decoding state a task declares for its own rule (:attr:`Task.state_fields`).

The decoding state (:class:`ptrnet.tasks.constraints.DecodeState`) keeps what every task's rule
reads: the inputs visited, the first and last token, the steps taken, the rows done. A rule
that needs more (the convex hull's second and second-to-last vertex, the room left in a
knapsack, a vehicle's load) declares it as :class:`StateField` s on its task. The decoding
state starts each field, updates it after every token, and gathers its rows when beams are
reordered, without naming it; the task's :meth:`~ptrnet.tasks.base.Task.allowed_next` reads it
as ``state.own[name]``.

Fields are kept in ``task`` mode only (the ``none`` mode never asks the rule), so a task
without fields, or a decoding without the task's rule, pays nothing for them.

This module imports no torch (task modules import it at load time, and ``ptrnet --help`` loads
them); a rule calls the tensors' own methods, or imports torch inside its functions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

    from ptrnet.tasks.constraints import DecodeState


@dataclass(frozen=True)
class StateField:
    """One named value per row that a task's rule keeps from step to step.

    Attributes:
        name: the key under which ``state.own`` holds the value (unique within a task).
        start: ``start(state) -> value``: the value before the first step, from a state that
            has everything but the task's fields (``lengths``, ``points`` and their extra
            columns such as a knapsack's capacity, ``visited``'s shape, the device). A tensor
            with the B rows on dim 0 (any dtype, any further dims).
        update: ``update(value, state, token, moved) -> value``: the value after the rows of
            ``state`` (the state before the step) emit ``token`` (B,) long; ``moved`` (B,)
            bool is True where a row emitted an input (not done before, not ending now).
            Rows where ``moved`` is False should keep their value (a done row's value is never
            read, but it is carried). Runs at every step: each tensor operation counts.
            Return ``value`` itself for a value fixed for the whole decoding.
    """

    name: str
    start: Callable[[DecodeState], torch.Tensor]
    update: Callable[[torch.Tensor, DecodeState, torch.Tensor, torch.Tensor], torch.Tensor]


def fixed(value: torch.Tensor, state: DecodeState, token: torch.Tensor, moved: torch.Tensor):
    """The :attr:`StateField.update` of a value fixed for the whole decoding (an instance's
    own numbers, prepared once): the value itself, at no cost."""
    return value


def no_token(state: DecodeState) -> torch.Tensor:
    """A :attr:`StateField.start`: (B,) long zeros, no token emitted yet."""
    return state.steps.new_zeros(state.steps.shape)


def _previous(value, state: DecodeState, token, moved) -> torch.Tensor:
    return state.last.where(moved, value)  # the last token becomes the one before it


#: (B,) long: the token emitted before ``last`` (0 before two steps); the hull's and
#: Delaunay's rules read it.
PREVIOUS = StateField("previous", no_token, _previous)
