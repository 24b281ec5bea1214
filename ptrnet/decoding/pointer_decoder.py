"""The pointer models' :class:`~ptrnet.decoding.decoder.Decoder`: a model's logits over the end
symbol and the inputs, masked by the task's rules and normalised over what they allow.

Any object with the models' ``step(memory, previous_token, state) -> (logits, state)`` decodes
here: a Ptr-Net or a baseline (:mod:`ptrnet.model`), several views of one
(:class:`ptrnet.decoding.views.ViewEnsemble`), a heavy decoder through a window
(:class:`ptrnet.decoding.window.LocalWindow`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import torch

from ptrnet.model.pointer import State
from ptrnet.tasks.constraints import DecodeState

#: The steps before the first row's limit where :class:`PointerDecoder` asks whether a step's
#: mask leaves each row one token (TSP's last two: the return to the first city, the end).
FORCED_TAIL = 2


def fit_mask(allowed: torch.Tensor, width: int) -> torch.Tensor:
    """Widen a (..., w) allowed mask to (..., width) with False columns (w <= width).

    The decoding state is as wide as the longest row + 1; the model's output can be wider
    (extra padding columns, or a baseline's fixed vocabulary). Those columns are never allowed.
    """
    extra = width - allowed.shape[-1]
    if extra < 0:
        raise ValueError(f"allowed mask has {allowed.shape[-1]} columns, logits only {width}")
    if extra == 0:  # the usual Ptr-Net case: no copy at every step
        return allowed
    return torch.nn.functional.pad(allowed, (0, extra), value=False)


def masked_log_probs(
    logits: torch.Tensor, allowed: torch.Tensor, minus_inf: torch.Tensor | float = float("-inf")
) -> torch.Tensor:
    """log-softmax over the allowed tokens: (..., V) logits, (..., <=V) bool -> (..., V) float32;
    ``minus_inf`` may be given as a 0-dim float32 tensor on the logits' device, which spares
    the step a tensor operation (wrapping the number).

    Disallowed entries are -inf. A new tensor is built every call; ``allowed`` is never
    modified (masks mutated in place across steps are a known bug of public implementations).
    Every row of a DecodeState mask has an allowed entry, so a row is NaN only when the model's
    logits are not finite numbers where they are allowed (weights that overflow float32):
    :func:`~ptrnet.decoding.search.run_search` refuses such rows
    (:func:`~ptrnet.decoding.search.check_finite`).
    """
    keep = fit_mask(allowed, logits.shape[-1])
    logits = logits if logits.dtype == torch.float32 else logits.float()
    return torch.log_softmax(torch.where(keep, logits, minus_inf), dim=-1)


@dataclass(frozen=True)
class PointerState:
    """Where the decoding of R rows stands.

    Attributes:
        hidden: the model's decoder state (every member has the rows on dim 1).
        previous: (R,) long, the last output (0, the end token, before the first: the model
            reads it as the start symbol).
        rules: the task's :class:`~ptrnet.tasks.constraints.DecodeState` (what may come next).
        steps: outputs given so far.
        ended: (R,) bool, rows that gave the end token before their limit.
        unread: (R,) long tokens, in order, that came before ``previous`` and that the model
            has not read yet (steps whose one allowed token needed no logits,
            :meth:`PointerDecoder.step`); ``hidden`` is the state before them.
    """

    hidden: State
    previous: torch.Tensor
    rules: DecodeState
    steps: int
    ended: torch.Tensor
    unread: tuple[torch.Tensor, ...] = ()


class PointerDecoder:
    """A pointer model's decoding of the rows of ``memory`` under the task rules of ``rules``
    (same rows), both from the model's ``encode`` (done once, by the caller).

    Each row stops after its own limit, ``task.max_steps(n_b) + 1`` outputs: past it the row may
    only repeat the end token, at no cost, and does not count as ended (cut off). So a row's
    output and score never depend on how long its batch mates are (without the task's budget,
    constraints ``none``, a short row beside a long one would otherwise run on). Beams only
    reorder rows of one instance, which share its limit and memory: neither is re-indexed.

    In a search's last :data:`FORCED_TAIL` steps before a row's limit, a step whose mask leaves
    every row one token (TSP: the return to the first city, then the end token) does not call
    the model: that token's log-probability is 0 under any finite logits, as the model's would
    give it, and the model reads the token at the next step that needs its logits, if any.
    """

    def __init__(self, model: Any, memory: Any, rules: DecodeState) -> None:
        self.model, self.memory, self.rules = model, memory, rules
        self.limits = rules.task.max_steps(rules.lengths) + 1  # (R,)
        # Before this step no row is at its limit: the limit checks are skipped (a step's
        # every tensor operation counts when one instance is decoded alone).
        self.first_limit = int(self.limits.min()) if self.limits.numel() else 0
        device = rules.lengths.device
        # Made once, not per step (a Python number in a step's where costs an operation more).
        self.minus_inf = torch.tensor(float("-inf"), dtype=torch.float32, device=device)
        self.zero = torch.tensor(0.0, dtype=torch.float32, device=device)
        self.width: int | None = None  # the model's logits per row, once it has given some

    def start(self) -> PointerState:
        previous = torch.zeros_like(self.rules.lengths)  # token 0 -> start symbol input
        return PointerState(self.memory.state, previous, self.rules, 0, self.rules.done)

    def step(self, state: PointerState) -> tuple[torch.Tensor, PointerState]:
        allowed = state.rules.allowed()  # (R, n+1)
        if state.steps >= self.first_limit:
            allowed = end_only(allowed, self.limits <= state.steps)
        if self.forced(state, allowed):  # log-probability 0 at each row's one token
            logp = torch.where(fit_mask(allowed, self.width), self.zero, self.minus_inf)
            return logp, replace(state, unread=(*state.unread, state.previous))  # (R, V)
        hidden = state.hidden
        for token in state.unread:  # tokens of forced steps, read now: their logits unused
            _, hidden = self.model.step(self.memory, token, hidden)
        logits, hidden = self.model.step(self.memory, state.previous, hidden)  # (R, V)
        self.width = logits.shape[-1]
        moved = PointerState(hidden, state.previous, state.rules, state.steps, state.ended)
        return masked_log_probs(logits, allowed, self.minus_inf), moved  # (R, V)

    def forced(self, state: PointerState, allowed: torch.Tensor) -> bool:
        """Whether ``allowed`` (R, n+1), a step's mask, leaves each row one token and the step
        is among the last :data:`FORCED_TAIL` before the first row's limit (where the question
        is worth its cost), once the model's logits width is known (class docstring)."""
        if self.width is None or state.steps + FORCED_TAIL < self.first_limit:
            return False
        return int(allowed.sum()) == allowed.shape[0]  # every row allows one at least

    def reorder(self, state: PointerState, rows: torch.Tensor) -> PointerState:
        return replace(
            state,
            hidden=tuple(s[:, rows] for s in state.hidden),
            previous=state.previous[rows],
            rules=state.rules.index(rows),
            ended=state.ended[rows],
            unread=tuple(token[rows] for token in state.unread),
        )

    def advance(self, state: PointerState, token: torch.Tensor) -> PointerState:
        rules, steps, unread = state.rules.update(token), state.steps + 1, state.unread
        if state.steps < self.first_limit:  # no row cut off yet: ended rows are done rows
            return PointerState(state.hidden, token, rules, steps, rules.done, unread)
        ends = (token == 0) & ~(self.limits <= state.steps)  # a cut-off row has not ended
        return PointerState(state.hidden, token, rules, steps, state.ended | ends, unread)

    def finished(self, state: PointerState) -> torch.Tensor:
        return state.rules.done


def end_only(allowed: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """(R, n+1) allowed mask with only the end token allowed in ``rows`` (R,) bool."""
    if not bool(rows.any()):
        return allowed
    end = torch.zeros_like(allowed)
    end[:, 0] = True
    return torch.where(rows[:, None], end, allowed)
