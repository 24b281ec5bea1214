"""The interface every ptrnet task shares, and the conventions that hold across tasks.

Conventions, stated once:

* An *instance* is a float64 array ``points`` of shape ``(n, dim)`` (``dim`` = 1 for sort,
  2 for the geometric tasks).
* A *sequence* (a canonical target or a prediction) is a 0-based int64 array of indices into
  ``points``: the paper's output sequence without the end symbol, closing index included where the
  task closes its output (hull, TSP).
* *Model tokens* shift a sequence by one: token 0 is the end symbol ⇐ and token ``j >= 1`` points
  at input ``j - 1``. Tokens therefore equal the paper's 1-based file indices. The conversion lives
  in :func:`to_tokens` and :func:`from_tokens` only.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

if TYPE_CHECKING:
    import torch

    from ptrnet.tasks.constraints import DecodeState

END_TOKEN = 0


@dataclass(frozen=True)
class SizeRange:
    """Inclusive range of instance sizes ``lo..hi``; each instance draws its n uniformly."""

    lo: int
    hi: int

    def __post_init__(self) -> None:
        if self.lo < 1 or self.hi < self.lo:
            raise ValueError(f"invalid size range {self.lo}-{self.hi}: need 1 <= lo <= hi")

    @classmethod
    def parse(cls, text: str | int | SizeRange) -> SizeRange:
        """Parse ``"5"``, ``"5-50"`` (or an int, or a SizeRange) into a SizeRange."""
        if isinstance(text, SizeRange):
            return text
        if isinstance(text, int):
            return cls(text, text)
        match = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", str(text))
        if not match:
            raise ValueError(f"invalid size {text!r}: expected N or LO-HI, e.g. 5-50")
        lo = int(match.group(1))
        return cls(lo, int(match.group(2) or lo))

    def sample(self, rng: np.random.Generator) -> int:
        return int(rng.integers(self.lo, self.hi + 1))

    def __str__(self) -> str:
        return str(self.lo) if self.lo == self.hi else f"{self.lo}-{self.hi}"


def instance_rng(seed: int, index: int, stream: int = 0) -> np.random.Generator:
    """The generator for instance ``index`` of stream ``stream`` under ``seed``.

    Keying each instance separately makes generated data independent of worker count and
    sharding; distinct ``stream`` values (e.g. train vs validation) never share instances.
    """
    return np.random.default_rng([seed, stream, index])


def to_tokens(seq: np.ndarray) -> np.ndarray:
    """0-based sequence -> model tokens with the end symbol appended: ``[i+1 ..., 0]``."""
    return np.append(np.asarray(seq, dtype=np.int64) + 1, END_TOKEN)


def from_tokens(tokens: Sequence[int] | np.ndarray) -> np.ndarray:
    """Model tokens -> 0-based sequence, cut at the first end symbol."""
    tokens = np.asarray(tokens, dtype=np.int64)
    ends = np.flatnonzero(tokens == END_TOKEN)
    if ends.size:
        tokens = tokens[: ends[0]]
    return tokens - 1


class Task(ABC):
    """One problem: generation, reference solution, canonical target, validity, metrics, masks.

    Subclasses are stateless; the registry in :mod:`ptrnet.tasks` holds one instance of each.
    """

    name: ClassVar[str]
    dim: ClassVar[int]
    min_n: ClassVar[int]
    metric_keys: ClassVar[tuple[str, ...]]
    solvers: ClassVar[tuple[str, ...]] = ("default",)
    #: Whether the symmetries of the unit square (axis flips and swaps, all isometries of
    #: [0, 1]^dim) keep an instance's solution: true for the planar geometric tasks; false for
    #: sort, whose ascending order a flip reverses.
    square_symmetric: ClassVar[bool] = False
    #: Whether rotating an instance by a multiple of 90° about the square's centre
    #: (:data:`ptrnet.tasks.symmetry.ROTATIONS`) leaves its label sequence unchanged, index for
    #: index: true where the label form is fixed by indices and orientation (hull and TSP:
    #: counter-clockwise from the lowest index); false for Delaunay, whose triangles are ordered
    #: by their incentres' coordinates, and for sort. Decoding with 2 or 4 views needs it.
    rotation_invariant_labels: ClassVar[bool] = False
    #: Whether the task scores an output by a cost to minimise (:meth:`batch_cost`), which
    #: reinforcement learning can train on without labels: TSP's tour length.
    has_cost: ClassVar[bool] = False

    def sample_points(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Draw one instance of size n: uniform in [0, 1)^dim.  Returns (n, dim) float64."""
        return rng.random((n, self.dim))

    def generate(
        self, sizes: SizeRange, count: int, seed: int, stream: int = 0, start: int = 0
    ) -> list[np.ndarray]:
        """Instances ``start`` .. ``start+count-1`` of ``stream`` under ``seed``."""
        self.check_sizes(sizes)
        out = []
        for i in range(start, start + count):
            rng = instance_rng(seed, i, stream)
            out.append(self.sample_points(rng, sizes.sample(rng)))
        return out

    def check_sizes(self, sizes: SizeRange) -> None:
        if sizes.lo < self.min_n:
            raise ValueError(f"task {self.name} needs n >= {self.min_n}, got {sizes}")

    def check_solver(self, solver: str | None) -> str:
        solver = solver or self.solvers[0]
        if solver not in self.solvers:
            raise ValueError(
                f"unknown solver {solver!r} for task {self.name}; "
                f"choose from {', '.join(self.solvers)}"
            )
        return solver

    @abstractmethod
    def solve(self, points: np.ndarray, solver: str | None = None) -> np.ndarray:
        """The canonical target sequence for ``points`` (0-based, see module docstring)."""

    @abstractmethod
    def canonical(self, points: np.ndarray, seq: np.ndarray) -> np.ndarray:
        """The label form of ``seq``, a correct solution for ``points`` in any equivalent form.

        Folds together what the task's conventions fold (a cycle's start and direction, the
        order of triangles and of their corners, duplicated points, ties), without solving:
        ``canonical(points, s) == solve(points)`` for every correct ``s`` when the instance
        has a single solution. Used to relabel a transformed instance (training augmentation).
        """

    @abstractmethod
    def is_valid(self, points: np.ndarray, seq: np.ndarray) -> bool:
        """Whether ``seq`` is a well-formed output for ``points`` (right indices, structure)."""

    @abstractmethod
    def metrics(
        self, points: Sequence[np.ndarray], refs: Sequence[np.ndarray], preds: Sequence[np.ndarray]
    ) -> dict[str, float]:
        """The paper's metrics over a dataset; keys are ``metric_keys`` plus ``count``."""

    @abstractmethod
    def max_steps(self, n: int) -> int:
        """Upper bound on the output length (without the end symbol) for an instance of size n."""

    @abstractmethod
    def allowed_next(self, state: DecodeState) -> torch.Tensor:
        """The task's legal-next-token mask, (B, n+1) bool, True = allowed, column 0 = end.

        Called by :class:`ptrnet.tasks.constraints.DecodeState` in ``task`` mode; padding and
        finished rows are handled there, not here.
        """

    def batch_cost(
        self, points: torch.Tensor, tokens: torch.Tensor, lengths: torch.Tensor
    ) -> torch.Tensor:
        """(B,) cost of each row's decoded output, lower is better (tasks with ``has_cost``).

        Args:
            points: (B, N, dim) padded instances.
            tokens: (B, T) model tokens of valid outputs (1-based inputs, 0 = end), as a
                ``task``-constrained decoder returns them.
            lengths: (B,) real sizes.
        """
        raise NotImplementedError(f"task {self.name} has no cost to minimise")

    def decode_state(self, lengths: torch.Tensor, mode: str = "task") -> DecodeState:
        """Initial decoding state for a batch with ``lengths`` (B,), ``mode`` 'none' or 'task'."""
        from ptrnet.tasks.constraints import DecodeState

        return DecodeState.start(self, lengths, mode)


def check_indices(seq: np.ndarray, n: int) -> bool:
    """All entries of ``seq`` are integer indices in ``0..n-1``."""
    seq = np.asarray(seq)
    return (
        seq.ndim == 1
        and np.issubdtype(seq.dtype, np.integer)
        and bool(np.all((seq >= 0) & (seq < n)))
    )
