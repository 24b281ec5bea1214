"""Immutable decoding state shared by every decoder: what has been chosen, and what may come next.

Token convention (see :mod:`ptrnet.tasks.base`): column 0 is the end symbol, column ``j >= 1``
is input ``j - 1``. Masks have one polarity everywhere: ``True`` = allowed.

Two constraint modes:

* ``none`` -- the paper's decoding for hull and Delaunay: any real input or the end symbol.
* ``task`` -- the task's legal-next-token rule (:meth:`Task.allowed_next`) on top of that.

In both modes padding columns are never allowed and a finished row (one that emitted the end
symbol) may only emit the end symbol again, so no row is ever fully masked and a softmax over the
allowed entries never produces NaN.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Protocol

import torch

from ptrnet.quoting import quote

MODES = ("none", "task")
#: The task's own state of a decoding that keeps none (a task without fields, ``none`` mode).
NO_FIELDS: Mapping[str, torch.Tensor] = MappingProxyType({})


class Field(Protocol):
    """What a decoding state needs of a task's own field: every
    :class:`ptrnet.tasks.state_fields.StateField` has it (stated here, as :class:`Rules` is,
    so that this module imports nothing of the task modules' side)."""

    name: str

    def start(self, state: DecodeState) -> torch.Tensor:
        """(B, ...) the value before the first step."""
        ...

    def update(
        self, value: torch.Tensor, state: DecodeState, token: torch.Tensor, moved: torch.Tensor
    ) -> torch.Tensor:
        """(B, ...) the value after ``token`` (B,); ``moved`` (B,): rows that emitted an input."""
        ...


class Rules(Protocol):
    """What a decoding state needs of its task: every :class:`ptrnet.tasks.base.Task` has it.

    Stated here, beside :class:`DecodeState` that its ``allowed_next`` takes, so that this module
    imports nothing of :mod:`ptrnet.tasks.base` and base imports this one without a cycle.
    """

    name: str
    #: Whether :meth:`allowed_next` reads :attr:`DecodeState.history` (Delaunay's: no triangle
    #: twice), which the state then keeps in ``task`` mode.
    reads_history: bool

    def max_steps(self, n: int) -> int:
        """Upper bound on the output length (without the end symbol) for ``n`` inputs (also
        elementwise on a (B,) tensor of sizes)."""
        ...

    def allowed_next(self, state: DecodeState) -> torch.Tensor:
        """The task's legal-next-token mask, (B, n+1) bool, True = allowed."""
        ...


@dataclass(frozen=True)
class DecodeState:
    """State after ``steps`` decoding steps for a batch of B rows over inputs padded to n.

    Attributes:
        task: the task whose rules apply in ``task`` mode.
        mode: ``none`` or ``task``.
        lengths: (B,) real input count per row.
        visited: (B, n+1) bool, tokens emitted so far (column 0 = end emitted).
        first: (B,) token emitted at step 0 (0 before any step).
        last: (B,) token emitted at the previous step (0 before any step).
        steps: (B,) number of tokens emitted before the end symbol.
        done: (B,) whether the end symbol has been emitted.
        points: (B, n, dim) float64 instances, zero-padded, for a task whose rule depends on
            where the inputs lie (the convex hull's left turns) or on an instance's extra
            columns (a knapsack's capacity); None where none was given.
        history: (B, t) long, the token each row emitted at each of the t updates so far (0 for
            the end and after it), for a task whose rule reads it (``Rules.reads_history``,
            ``task`` mode only); None otherwise, so no other decoding pays for it. A row not
            done has emitted no end, so its ``steps`` equals t.
        real: (B, n+1) bool, the real input columns; end: (B, n+1) bool, the end column alone;
            real_or_end: (B, n+1) bool, either; budget: (B,) the task's output budget
            (``max_steps``). Fixed for a decoding: built from ``lengths`` and ``task`` when not
            given, then carried along.
        own: the task's own state, ``{field name: (B, ...) value}`` for each of its
            :attr:`Rules.state_fields` in ``task`` mode (read-only; empty otherwise): started,
            updated and reordered here without being named (:mod:`ptrnet.tasks.state_fields`).
        moves: every row's ``steps``, known here without reading a tensor, while every update
            so far moved every row (emitted an input: no row done, a row's first token set
            from the first update on); None once one did not, or for a state not begun by
            :meth:`start`. With ``size``, the rows' common length (None where they differ),
            :meth:`allowed` and a task's rule (TSP's) may know the step's kind here and spare
            their per-row comparisons: a lone instance's decoding pays each tensor operation's
            fixed cost at every step (docs/speed.md).
    """

    task: Rules
    mode: str
    lengths: torch.Tensor
    visited: torch.Tensor
    first: torch.Tensor
    last: torch.Tensor
    steps: torch.Tensor
    done: torch.Tensor
    points: torch.Tensor | None = None
    history: torch.Tensor | None = None
    real: torch.Tensor | None = None
    end: torch.Tensor | None = None
    real_or_end: torch.Tensor | None = None
    budget: torch.Tensor | None = None
    own: Mapping[str, torch.Tensor] | None = None
    moves: int | None = None
    size: int | None = None

    def __post_init__(self) -> None:
        # Fixed for the whole decoding, so built once rather than at every step (where each
        # tensor operation's fixed cost counts): (B, n+1) bool real input columns, the end
        # column alone, either, and (B,) the task's output budget.
        if self.real is None:
            cols = torch.arange(self.visited.shape[1], device=self.lengths.device)
            object.__setattr__(self, "real", (cols >= 1) & (cols <= self.lengths[:, None]))
        if self.end is None:
            end = torch.zeros_like(self.visited)
            end[:, 0] = True
            object.__setattr__(self, "end", end)
        if self.real_or_end is None:
            object.__setattr__(self, "real_or_end", self.real | self.end)
        if self.budget is None:
            object.__setattr__(self, "budget", self.task.max_steps(self.lengths))
        if self.own is None:
            object.__setattr__(self, "own", NO_FIELDS)

    @classmethod
    def start(
        cls,
        task: Rules,
        lengths: torch.Tensor,
        mode: str = "task",
        points: torch.Tensor | None = None,
    ) -> DecodeState:
        """The state before the first step of rows of ``lengths`` (B,); ``points`` (B, n, dim)
        the instances (any float dtype, kept as float64), which a task whose rule reads them
        (the convex hull's) needs in ``task`` mode. In ``task`` mode the task's own fields are
        started from the state without them.

        Raises:
            ValueError: an unknown mode; a task field whose start is not (B, ...).
        """
        if mode not in MODES:
            raise ValueError(
                f"unknown constraint mode {quote(mode)}; choose from {', '.join(MODES)}"
            )
        lengths = lengths.long()
        batch, n = lengths.shape[0], int(lengths.max()) if lengths.numel() else 0
        zeros = torch.zeros(batch, dtype=torch.long, device=lengths.device)
        keeps = mode == "task" and task.reads_history
        same = batch > 0 and bool((lengths == n).all())
        state = cls(
            task,
            mode,
            lengths,
            torch.zeros(batch, n + 1, dtype=torch.bool, device=lengths.device),
            zeros,
            zeros,
            zeros,
            torch.zeros(batch, dtype=torch.bool, device=lengths.device),
            None if points is None else points.detach().to(torch.float64),
            zeros[:, None][:, :0] if keeps else None,  # (B, 0): nothing emitted yet
            moves=0,
            size=n if same else None,
        )
        fields = task.state_fields if mode == "task" else ()
        return replace(state, own=start_fields(state, fields)) if fields else state

    @property
    def n(self) -> int:
        """Padded input count (columns of the mask minus the end column)."""
        return self.visited.shape[1] - 1

    def real_columns(self) -> torch.Tensor:
        """(B, n+1) bool: columns that are real inputs (end column and padding excluded)."""
        return self.real

    def unvisited(self) -> torch.Tensor:
        """(B, n+1) bool: real input columns not emitted yet."""
        return self.real_columns() & ~self.visited

    def end_if(self, ready: torch.Tensor) -> torch.Tensor:
        """(B, n+1) bool: only the end column, in the rows where ``ready`` (B,) holds."""
        return self.end & ready[:, None]

    def located(self) -> torch.Tensor:
        """(B, n+1, dim) float64: where each token's input lies (column 0, the end, at 0).

        Raises:
            ValueError: a state started without ``points``.
        """
        if self.points is None:
            raise ValueError(
                f"the {self.task.name} task's rule reads the points: start the decoding state "
                "with them"
            )
        return torch.nn.functional.pad(self.points, (0, 0, 1, 0))

    def one_hot(self, token: torch.Tensor, where: torch.Tensor) -> torch.Tensor:
        """(B, n+1) bool: column ``token`` (B,) in the rows where ``where`` (B,) holds."""
        hit = torch.zeros_like(self.visited).scatter(1, token[:, None], True)
        return hit & where[:, None]

    def allowed(self) -> torch.Tensor:
        """(B, n+1) bool mask of tokens allowed at the next step; never all False in a row."""
        end, stop = self.end, self.done  # (B, n+1), (B,): a finished row may only end
        if self.mode == "none":
            mask = self.real_or_end
        elif self.moves is not None and self.size is not None:  # no row done; steps known
            if self.moves >= self.task.max_steps(self.size):  # every row used its budget
                return end.clone()
            mask = self.task.allowed_next(self) & self.real_or_end
            return torch.where(mask.any(dim=1, keepdim=True), mask, end)
        else:
            mask = self.task.allowed_next(self) & self.real_or_end
            stop = stop | (self.steps >= self.budget)  # so may a row that used its budget
        mask = torch.where(stop.unsqueeze(1), end, mask)
        return torch.where(mask.any(dim=1, keepdim=True), mask, end)  # an empty row: the end

    def update(self, token: torch.Tensor) -> DecodeState:
        """The state after emitting ``token`` (B,) long; rows already done stay unchanged."""
        token = token if token.dtype == torch.long else token.long()
        # Tensor methods rather than comparisons with Python numbers or indexing with None:
        # the same values at less fixed cost (this runs at every step).
        done = self.done | token.logical_not()  # done, or emitted the end token (0) now
        moved = ~done  # live and emitted an input
        column = token.unsqueeze(1)  # (B, 1)
        if self.moves is not None and bool(moved.all()):  # every row moved, as every time before
            visited = self.visited.scatter(1, column, True)
            first = token if self.moves == 0 else self.first  # (a first token from move 1 on)
            last, moves = token, self.moves + 1
        else:  # a row's first token is 0 until its first move, which is then its last
            live = ~self.done
            visited = torch.where(
                live.unsqueeze(1), self.visited.scatter(1, column, True), self.visited
            )
            last = torch.where(moved, token, self.last)
            first, moves = torch.where(self.first.logical_not(), last, self.first), None
        history, own = self.history, self.own
        if history is not None:
            history = torch.cat([history, torch.where(moved, token, 0)[:, None]], dim=1)
        if own:  # the task's fields, in task mode: read from the state before the step
            own = MappingProxyType(
                {f.name: f.update(own[f.name], self, token, moved) for f in self.task.state_fields}
            )
        return DecodeState(  # not dataclasses.replace: this runs at every step
            task=self.task,
            mode=self.mode,
            lengths=self.lengths,
            visited=visited,
            first=first,
            last=last,
            steps=self.steps + moved,
            done=done,
            points=self.points,
            history=history,
            real=self.real,
            end=self.end,
            real_or_end=self.real_or_end,
            budget=self.budget,
            own=own,
            moves=moves,
            size=self.size,
        )

    def index(self, rows: torch.Tensor) -> DecodeState:
        """Re-select rows (e.g. beam parents): every per-row tensor is gathered by ``rows``, the
        task's own fields too."""
        own = self.own
        if own:
            own = MappingProxyType({name: value[rows] for name, value in own.items()})
        return replace(
            self,
            lengths=self.lengths[rows],
            visited=self.visited[rows],
            first=self.first[rows],
            last=self.last[rows],
            steps=self.steps[rows],
            done=self.done[rows],
            points=None if self.points is None else self.points[rows],
            history=None if self.history is None else self.history[rows],
            real=self.real[rows],
            end=self.end[rows],
            real_or_end=self.real_or_end[rows],
            budget=self.budget[rows],
            own=own,
        )


def start_fields(state: DecodeState, fields: tuple[Field, ...]) -> Mapping[str, torch.Tensor]:
    """``{name: start value}`` of a task's ``fields`` on ``state`` (B rows), read-only.

    Raises:
        ValueError: two fields of one name, or a start value that is not a tensor of B rows.
    """
    own, rows = {}, state.lengths.shape[0]
    for field in fields:
        value = field.start(state)
        if field.name in own:
            raise ValueError(f"the {state.task.name} task declares field {quote(field.name)} twice")
        if not isinstance(value, torch.Tensor) or value.dim() == 0 or value.shape[0] != rows:
            shape = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
            raise ValueError(
                f"the {state.task.name} task's field {quote(field.name)} starts as {shape}, "
                f"not a tensor of {rows} rows"
            )
        own[field.name] = value
    return MappingProxyType(own)


def replay_masks(
    task: Rules,
    lengths: torch.Tensor,
    tokens: torch.Tensor,
    mode: str,
    points: torch.Tensor | None = None,
) -> torch.Tensor:
    """The allowed mask before each token of given rows, replayed from the start: the one replay
    of a decoding state over a known sequence (training masks, view scores, heatmaps).

    Args:
        lengths: (B,) real sizes.
        tokens: (B, T) model tokens >= 0 (end-padded after a row's end token).
        mode: ``none`` or ``task`` (:meth:`DecodeState.start`).
        points: (B, n, dim) the instances, for a task whose rule reads them.

    Returns:
        (B, T, n+1) bool: step i's mask is :meth:`DecodeState.allowed` after tokens ``< i``.
    """
    state = DecodeState.start(task, lengths, mode, points)
    masks = []
    for i in range(tokens.shape[1]):
        masks.append(state.allowed())  # (B, n+1)
        state = state.update(tokens[:, i])
    if not masks:
        return torch.zeros(tokens.shape[0], 0, state.visited.shape[1], dtype=torch.bool)
    return torch.stack(masks, dim=1)


def teacher_forcing_mask(
    task: Rules, lengths: torch.Tensor, targets: torch.Tensor, points: torch.Tensor | None = None
) -> torch.Tensor:
    """The ``task``-mode allowed mask at every teacher-forced step: (B,), (B, T) -> (B, T, n+1);
    ``points`` (B, n, dim) for a task whose rule reads them.

    Step i's mask is :meth:`DecodeState.allowed` after the targets before it
    (:func:`replay_masks`), i.e. what a constrained decoder that had emitted the label prefix
    could emit next. Negative targets (ignored pads) come after a row's end token, where the
    state only allows the end symbol. Raises ValueError if a label token is not allowed at its
    step (a label that breaks the task's own rules would get an infinite loss).
    """
    tokens = targets.clamp(min=0)
    mask = replay_masks(task, lengths, tokens, "task", points)  # (B, T, n+1)
    scored = targets >= 0
    hit = mask.gather(2, tokens[..., None])[..., 0]  # (B, T)
    bad = scored & ~hit
    if bool(bad.any()):
        row, step = (int(i) for i in bad.nonzero()[0])
        raise ValueError(
            f"label token {int(targets[row, step])} at step {step} of row {row} breaks the "
            f"{task.name} task's constraints; train with constraints 'none' for such labels"
        )
    return mask
