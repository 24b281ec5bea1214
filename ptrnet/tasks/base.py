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

import math
import re
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, ClassVar, NamedTuple

import numpy as np

from ptrnet.quoting import quote
from ptrnet.tasks.card import TaskCard

if TYPE_CHECKING:
    import torch

    from ptrnet.solvers.distances import Distances
    from ptrnet.tasks.constraints import DecodeState
    from ptrnet.tasks.searches import AnswerSearch
    from ptrnet.tasks.state_fields import StateField

END_TOKEN = 0
#: The drawing kinds (``Task.drawing``) that :mod:`ptrnet.viz.draw` and the web page both draw.
DRAWINGS = ("hull", "tour", "triangles", "bars", "subset", "routes")


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
            raise ValueError(f"invalid size {quote(text)}: expected N or LO-HI, e.g. 5-50")
        lo = int(match.group(1))
        return cls(lo, int(match.group(2) or lo))

    def sample(self, rng: np.random.Generator) -> int:
        return int(rng.integers(self.lo, self.hi + 1))

    def __str__(self) -> str:
        return str(self.lo) if self.lo == self.hi else f"{self.lo}-{self.hi}"


DEMO_SEED = 2026  #: ``ptrnet demo``'s default seed (its fresh instances: stream DEMO)


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


def trim_steps(tokens: Sequence[int] | np.ndarray) -> int:
    """Number of decoding steps up to and including the first end symbol (all if none)."""
    ends = np.flatnonzero(np.asarray(tokens) == END_TOKEN)
    return int(ends[0]) + 1 if ends.size else len(tokens)


class Reference(NamedTuple):
    """A reference sequence and, where its solver could not prove it optimal though the task's
    default solver would, a note saying how far from the optimum it may be (None: nothing to
    add to what the solver's name says)."""

    sequence: np.ndarray
    note: str | None = None


class Task(TaskCard, ABC):
    """One point problem and everything the rest of ptrnet needs to know about it (its task card).

    Subclasses are stateless; the registry in :mod:`ptrnet.tasks` holds one instance of each.
    Adding a task means one module with a subclass, plus its line in the registry; no other
    module keys anything by task name. A new task must provide:

    * class attributes ``name``, ``dim`` (numbers per input element: an instance is an (n, dim)
      float array, coordinates for the geometric tasks, values or symbol codes otherwise),
      ``min_n``, ``metric_keys`` (keys of :meth:`metrics`), ``validation_metric`` (the decoded
      metric that picks the best checkpoint) and ``summary_metrics`` (the two a summary table
      shows), ``demo_sizes`` (the n of ``ptrnet demo``'s table) and ``drawing`` (how
      :mod:`ptrnet.viz.draw` and the web page plot an answer);
    * methods :meth:`solve`, :meth:`canonical`, :meth:`is_valid`, :meth:`dataset_metrics`,
      :meth:`max_steps` and :meth:`allowed_next`.

    It may override: ``rate_metrics``, ``paper_results`` and ``paper_model`` (the paper's
    numbers, for ``ptrnet demo`` and ``ptrnet reproduce``), :meth:`answer_cost` (the ``cost``
    of an API result), ``archs`` (default: the Ptr-Net and the two Table 1 baselines),
    ``solvers``, ``lower_is_better`` and ``validity_metric`` (checkpoint
    selection), ``paper_constraints`` (the paper's decoding mask for it), ``reads_history``
    (a rule that reads the tokens emitted so far), ``state_fields`` (per-row state of its
    own that its rule reads, such as the room left in a knapsack), the symmetry flags
    (multi-view decoding, augmentation; both false suit a non-geometric task),
    ``permutation_output`` (the heavy decoder), ``shape_invariant`` and ``unit_columns``
    (the unit-square map),
    ``has_cost`` with :meth:`sequence_cost` and optionally a batched :meth:`batch_cost`
    (REINFORCE) and ``objective_cost`` (the ``shortest`` pick),
    :meth:`sample_points` (default: uniform in [0, 1)^dim), :meth:`label_shape_problem`
    (the length checks a reference label must pass before :meth:`is_valid`),
    :meth:`check_points` (instances it cannot take at all), ``answer_solver`` with
    :meth:`reference` (a reference with bounded work on every instance, and its note),
    ``searches`` (the searches after decoding it offers, :mod:`ptrnet.tasks.searches`) and
    ``reads_tsplib`` (TSPLIB ``.tsp`` files as input).
    """

    input_kind: ClassVar[str] = "points"
    archs: ClassVar[tuple[str, ...]] = ("pointer", "seq2seq", "attention")
    dim: ClassVar[int]
    min_n: ClassVar[int]
    metric_keys: ClassVar[tuple[str, ...]]
    solvers: ClassVar[tuple[str, ...]] = ("default",)
    #: The decoded validation metric that picks the best checkpoint (never the teacher-forced
    #: loss), and whether lower values are better.
    validation_metric: ClassVar[str]
    lower_is_better: ClassVar[bool] = False
    #: A rate ranked before ``validation_metric`` when selecting checkpoints (higher is
    #: better), for a metric that averages over valid outputs only: TSP's ``valid_rate``.
    validity_metric: ClassVar[str | None] = None
    #: The decoded metric that breaks ties on ``validation_metric`` (higher is better): a
    #: short run whose validations all score hull accuracy 0 still improves in area coverage.
    tiebreak_metric: ClassVar[str | None] = None
    #: The two metrics a summary table (``ptrnet demo``) shows for the task.
    summary_metrics: ClassVar[tuple[str, str]]
    #: The instance sizes of ``ptrnet demo``'s table.
    demo_sizes: ClassVar[tuple[int, ...]]
    #: How an answer is drawn: ``hull`` (closed polygon of chosen points), ``tour`` (closed
    #: path through all points), ``triangles``, ``bars`` (values in output order),
    #: ``subset`` (the chosen inputs marked, their order not drawn: a set answer) or ``routes``
    #: (the first input a depot, the answer's routes separated by visits to it, each drawn from
    #: the depot and back in a colour of its own).
    drawing: ClassVar[str]
    #: Whether an answer is a closed cycle that is the same from any start and either way
    #: round (hull, TSP), so that :meth:`steps_as_reference` judges steps by its edges.
    cycle_answer: ClassVar[bool] = False
    #: How the pointer heatmap names a step that agrees with the reference and one that does
    #: not (:meth:`steps_as_reference`).
    step_agreement: ClassVar[tuple[str, str]] = ("as reference", "differs from reference")
    #: The paper's reported numbers for the task, ``(model, n) -> {metric: value}`` (rates as
    #: fractions), ``model`` naming what the paper trained: ``"ptr 5-50"`` one Ptr-Net trained
    #: on n = 5..50, ``"ptr n"`` a Ptr-Net trained at the tested n. Empty: none reported.
    paper_results: ClassVar[Mapping[tuple[str, int], Mapping[str, float]]] = MappingProxyType({})
    #: The paper's model (a ``model`` of ``paper_results``) that the bundled model compares
    #: with in ``ptrnet demo``; None: no comparison.
    paper_model: ClassVar[str | None] = None
    #: Who reported ``paper_results`` (named under the demo's paper table).
    paper_source: ClassVar[str] = "Vinyals et al. 2015"
    #: The decoding mask of the paper's protocol for the task (Sec. 4, Inference; decoding
    #: option ``protocol="paper"``): ``none`` (any real input or the end symbol) or ``task``
    #: (:meth:`allowed_next`). Users get ``task`` by default, whatever this says.
    paper_constraints: ClassVar[str] = "none"
    #: Whether :meth:`allowed_next` reads the tokens emitted so far
    #: (:attr:`ptrnet.tasks.constraints.DecodeState.history`), which the decoding state then
    #: keeps in ``task`` mode: Delaunay's, which refuses a triangle given before.
    reads_history: ClassVar[bool] = False
    #: The per-row state :meth:`allowed_next` keeps beyond the shared one (visited, first,
    #: last, steps, done): :class:`ptrnet.tasks.state_fields.StateField` s, each with a start
    #: value and an update rule, read as ``state.own[name]``; the decoding state carries and
    #: reorders them in ``task`` mode. None by default (no cost).
    state_fields: ClassVar[tuple[StateField, ...]] = ()
    #: Whether an instance's answer depends only on its shape, so that translating it and
    #: scaling it uniformly keeps the answer: true for the geometric tasks and sort, whose
    #: instances in other units are decoded on their image in the unit square
    #: (:mod:`ptrnet.io.unit_square`) and get the planar degeneracy notes; false for a task
    #: whose numbers mean themselves (knapsack's weights against a fixed capacity), decoded as
    #: given.
    shape_invariant: ClassVar[bool] = True
    #: The leading columns of a row that are its coordinates, the ones the unit-square map
    #: moves (None: every column): a routing row's x and y (2), its demand and capacity kept,
    #: so that customers given in kilometres are routed on their image in the unit square.
    unit_columns: ClassVar[int | None] = None
    #: Whether an instance may state a capacity as one more column, the same on every row:
    #: (n, dim + 1) (knapsack's own capacity; files write it as ``capacity C``).
    capacity_column: ClassVar[bool] = False
    #: What a network reads of the task's rows unless told otherwise (``ptrnet train
    #: --features``, :mod:`ptrnet.model.features`): ``raw`` (the rows as given), or a feature
    #: set the rows were laid out for (a routing instance's ``demand``).
    features: ClassVar[str] = "raw"
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
    #: Whether reflecting an instance in the square's axes and diagonals leaves its label
    #: unchanged index for index too (a label written by indices alone, a routing task's
    #: routes): an output's image in a reflected view is then the output itself, not the same
    #: cycle read backwards (:func:`ptrnet.decoding.view_scores.image_tokens`). False for hull
    #: and TSP, whose counter-clockwise label a reflection turns clockwise.
    reflection_invariant_labels: ClassVar[bool] = False
    #: Whether multi-start decoding (:mod:`ptrnet.decoding.multistart`) may read an instance in
    #: rotated order, every input first in turn, under the task's rules unchanged: false where
    #: the first input has a role of its own (a routing instance's depot), whose runs read the
    #: instance as given, each forced to choose another input first (instances of >= 2 inputs).
    rotated_starts: ClassVar[bool] = True
    #: Whether the task scores an output by a cost to minimise (:meth:`sequence_cost`,
    #: :meth:`batch_cost`), which reinforcement learning trains on: TSP's tour length; sort's
    #: and convex hull's distances from the exact answer (0 exactly at the label).
    has_cost: ClassVar[bool] = False
    #: Whether that cost is the problem's own objective, measured without the exact answer
    #: (TSP's tour length): only such a cost may pick among decoded candidates
    #: (``pick="shortest"``) or be reported for the reference (an optimal length). A distance
    #: from the answer (sort, hull) would put the solver in the loop.
    objective_cost: ClassVar[bool] = False
    #: What the ``shortest`` pick keeps, in the task's words (the lowest-cost candidate).
    best_pick: ClassVar[str] = "lowest cost"
    #: Whether an output is a permutation of the inputs, each once (a TSP tour may close on its
    #: first input): what the heavy decoder (:mod:`ptrnet.model.heavy`) can produce.
    permutation_output: ClassVar[bool] = False
    #: Whether :meth:`complete` finishes any partial output the best way (TSP: the shortest
    #: path back to the start through the cities left), which DAgger training needs.
    completable: ClassVar[bool] = False
    #: The solver of the reference a front end must always answer with (the web page): its
    #: work bounded on every instance, exact wherever the default solver is, a
    #: :meth:`reference` note otherwise. None: the default solver, bounded already.
    answer_solver: ClassVar[str | None] = None
    #: The searches after decoding the task offers (:mod:`ptrnet.tasks.searches`: TSP's
    #: Random Re-Construct, 2-opt and Or-opt), which every front end offers it and no other.
    searches: ClassVar[tuple[AnswerSearch, ...]] = ()
    #: Whether a TSPLIB ``.tsp`` file is one of its instances (TSP): ``predict``, ``eval`` and
    #: ``solve`` then read it, and ``eval`` measures gaps to TSPLIB's optima.
    reads_tsplib: ClassVar[bool] = False

    #: How many leading columns of a row are its coordinates, on which lengths are measured
    #: (a local search's, :meth:`coordinates`): None, all of them (TSP's two); 2 for a routing
    #: task's (x, y) ahead of its demand and capacity.
    coordinate_columns: ClassVar[int | None] = None

    #: The names of a row's numbers after its :attr:`coordinate_columns` (a routing row's
    #: ``demand`` and ``capacity``): a CSV header naming them (in any case) beside latitude and
    #: longitude columns places them, whatever the columns' order. None: no such numbers.
    row_fields: ClassVar[tuple[str, ...] | None] = None

    #: For a task whose rows carry numbers past x and y (``dim`` > 2): those numbers of a row
    #: added to an empty board, then of one added after it alone (the page's clicks); a column
    #: the two give the same value is one every row shares (a capacity), copied from the first
    #: row. A row added after two or more copies the last one's. None: rows of x and y only.
    added_rows: ClassVar[tuple[tuple[float, ...], tuple[float, ...]] | None] = None

    #: How the task measures an instance's lengths (:mod:`ptrnet.solvers.distances`), for a
    #: task whose objective is a length (TSP: Euclidean, or the rule :meth:`with_distances`
    #: gave); None for the others.
    distances: Distances | None = None

    def with_distances(self, distances: Distances) -> Task:
        """This task measuring instances by ``distances`` (great-circle kilometres for cities
        given by latitude and longitude, TSPLIB's GEO and ATT rules): its references, costs
        and metrics then use them, and a model reads :meth:`plane`.

        Raises:
            ValueError: a task that measures no lengths (default).
        """
        raise ValueError(f"task {self.name} takes no distance rule ({distances.name})")

    @property
    def length_unit(self) -> str | None:
        """The unit of the task's lengths and costs where it is not the input's own: its
        distance rule's (``"km"`` on the sphere), else None (the ``units`` of ``ptrnet
        predict``'s output and of the page's answer, the unit in ``eval``'s table)."""
        return None if self.distances is None else self.distances.unit

    def plane(self, points: np.ndarray) -> np.ndarray:
        """``points`` as planar coordinates, what a model reads before the unit-square map
        (:func:`ptrnet.io.unit_square.model_image`): the points themselves, or, under a
        distance rule that is not planar, its projection (:meth:`Distances.plane`) of the
        :meth:`coordinates`, the row's other columns kept (a customer's demand)."""
        if self.distances is None:
            return np.asarray(points)
        if self.coordinate_columns is None:
            return self.distances.plane(points)
        points = np.asarray(points, dtype=np.float64)
        places = self.distances.plane(self.coordinates(points))  # (n, 2)
        return np.concatenate([places, points[:, self.coordinate_columns :]], axis=1)

    def coordinates(self, points: np.ndarray) -> np.ndarray:
        """The columns of ``points`` that place them (:attr:`coordinate_columns`): ``points``
        itself where every column does."""
        if self.coordinate_columns is None:
            return points
        return np.asarray(points)[:, : self.coordinate_columns]

    def sample_points(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Draw one instance of size n: uniform in [0, 1)^dim.  Returns (n, dim) float64."""
        return rng.random((n, self.dim))

    def generate(
        self, sizes: SizeRange, count: int, seed: int, stream: int = 0, start: int = 0
    ) -> list[np.ndarray]:
        """Instances ``start`` .. ``start+count-1`` of ``stream`` under ``seed``.

        Raises:
            ValueError: sizes below the task's minimum, or a ``seed``, ``stream``, ``start`` or
                ``count`` that is not an integer >= 0 (a bool included).
        """
        self.check_sizes(sizes)
        for name, value in (("seed", seed), ("stream", stream), ("start", start), ("count", count)):
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {quote(value)}")
        out = []
        for i in range(start, start + count):
            rng = instance_rng(seed, i, stream)
            out.append(self.sample_points(rng, sizes.sample(rng)))
        return out

    def size_of(self, points: np.ndarray) -> int:
        """An instance's size as :meth:`generate`'s sizes count it: its number of inputs (a
        routing task's customers, its depot not counted)."""
        return len(points)

    def check_sizes(self, sizes: SizeRange) -> None:
        if sizes.lo < self.min_n:
            raise ValueError(f"task {self.name} needs n >= {self.min_n}, got {sizes}")

    def check_solver(self, solver: str | None) -> str:
        return self.choice("solver", solver, self.solvers)

    @abstractmethod
    def solve(self, points: np.ndarray, solver: str | None = None) -> np.ndarray:
        """The canonical target sequence for ``points`` (0-based, see module docstring)."""

    def reference(self, points: np.ndarray, solver: str | None = None) -> Reference:
        """:meth:`solve`'s answer with its :class:`Reference` note (default: none)."""
        return Reference(self.solve(points, solver))

    def check_points(self, points: np.ndarray) -> None:
        """Raise ValueError for an instance no solver or model of the task can take (finite
        numbers within the readers' limits are checked before); default: every one is taken."""

    def with_capacity(self, points: np.ndarray, capacity: object) -> np.ndarray:
        """``points`` stating ``capacity`` (tasks with ``capacity_column``): (n, dim + 1).

        Raises:
            ValueError: a task without a capacity, or a capacity it refuses.
        """
        raise ValueError(f"task {self.name} has no capacity")

    def stated_capacity(self, points: np.ndarray) -> float | None:
        """The capacity ``points`` state (tasks with ``capacity_column``), else None."""
        return None

    def instance_capacity(self, points: np.ndarray) -> float | None:
        """The capacity ``points`` are solved under, in their own units (tasks with
        ``capacity_column``: the one they state, else the task's default), else None."""
        return None

    def model_rows(self, points: np.ndarray, input_dim: int) -> np.ndarray:
        """``points`` as rows of ``input_dim`` numbers, what a model of that width reads.

        Raises:
            ValueError: rows of another width, which this task cannot give it.
        """
        points = np.asarray(points)
        if points.ndim != 2 or points.shape[1] != input_dim:
            raise ValueError(
                f"the model reads {input_dim} number(s) per input; a {self.name} instance of "
                f"shape {points.shape} has {points.shape[-1]}"
            )
        return points

    def complete(
        self, points: np.ndarray, prefix: np.ndarray, solver: str | None = None
    ) -> np.ndarray:
        """The best label that starts with ``prefix`` (0-based, a prefix of some valid output,
        as a decoder under the task's rules makes), by ``solver``: the expert's answer from a
        state the model reached itself (``objective="dagger"``). Tasks with ``completable``.

        Raises:
            NotImplementedError: for a task without ``completable``.
            ValueError: a prefix no valid output starts with.
        """
        raise NotImplementedError(f"task {self.name} cannot complete a partial output")

    @abstractmethod
    def canonical(self, points: np.ndarray, seq: np.ndarray) -> np.ndarray:
        """The label form of ``seq``, a correct solution for ``points`` in any equivalent form.

        Folds together what the task's conventions fold (a cycle's start and direction, the
        order of triangles and of their corners, duplicated points, ties), without solving:
        ``canonical(points, s) == solve(points)`` for every correct ``s`` when the instance
        has a single solution. Used to relabel a transformed instance (training augmentation).
        """

    def at_label_start(self, seq: np.ndarray) -> np.ndarray:
        """``seq`` written from the start the labels use, nothing else changed (a cycle's
        direction kept): a closed hull or tour begun elsewhere (multi-start decoding) rotated
        to begin at its lowest index. Other tasks' outputs, and outputs that are not closed
        cycles, come back unchanged."""
        return np.asarray(seq, dtype=np.int64)

    @abstractmethod
    def is_valid(self, points: np.ndarray, seq: np.ndarray) -> bool:
        """Whether ``seq`` is a well-formed output for ``points`` (right indices, structure)."""

    def metrics(
        self, points: Sequence[np.ndarray], refs: Sequence[np.ndarray], preds: Sequence[np.ndarray]
    ) -> dict[str, float]:
        """The paper's metrics over a dataset; keys are ``metric_keys`` plus ``count``.

        Raises:
            ValueError: no instances, or not one reference and one prediction per instance.
        """
        check_dataset(points, refs, preds)
        return self.dataset_metrics(points, refs, preds)

    @abstractmethod
    def dataset_metrics(
        self, points: Sequence[np.ndarray], refs: Sequence[np.ndarray], preds: Sequence[np.ndarray]
    ) -> dict[str, float]:
        """:meth:`metrics` of a dataset it has checked: at least one instance, each with one
        reference and one prediction."""

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

        By default :meth:`sequence_cost` row by row on the CPU; a task overrides it with a
        batched computation where the per-row loop would slow training (TSP, sort).

        Args:
            points: (B, N, dim) padded instances.
            tokens: (B, T) model tokens of valid outputs (1-based inputs, 0 = end), as a
                ``task``-constrained decoder returns them.
            lengths: (B,) real sizes.
        """
        import torch

        instances = points.detach().double().cpu().numpy()  # (B, N, dim)
        rows = zip(instances, tokens.cpu().numpy(), lengths.tolist(), strict=True)
        costs = [self.sequence_cost(x[:n], from_tokens(t)) for x, t, n in rows]
        return torch.tensor(costs, dtype=points.dtype, device=points.device)

    def sequence_cost(self, points: np.ndarray, seq: np.ndarray) -> float:
        """The cost of one output (tasks with ``has_cost``; lower is better), inf for an output
        that is not valid, so a beam pick never prefers it (``pick="shortest"``)."""
        raise NotImplementedError(f"task {self.name} has no cost to minimise")

    def answer_cost(self, points: np.ndarray, seq: np.ndarray) -> float:
        """The measure of a valid output a user reads first (:attr:`ptrnet.api.results.Result.cost`,
        in the input's units): by default the task's objective (:meth:`sequence_cost`, for
        tasks with ``objective_cost``: TSP's tour length), else NaN. Tasks whose cost is a
        training signal report another measure (the hull's area)."""
        return self.sequence_cost(points, seq) if self.objective_cost else math.nan

    def steps_as_reference(self, tokens: np.ndarray, ref_tokens: np.ndarray) -> np.ndarray:
        """(T,) bool: whether each of the emitted model ``tokens`` (T,) agrees with the
        reference ``ref_tokens`` (:func:`to_tokens` of a label, the end symbol included), as
        the pointer heatmap marks steps; :attr:`step_agreement` names the two marks.

        By default a step agrees when it emits the reference's token at the same step, so
        steps past the reference's end disagree. For a ``cycle_answer`` task the comparison is
        free of start and direction, as its metrics are (a tour and its reverse are the same
        tour): a step from one input to another agrees when it travels an edge of the
        reference cycle either way round, the first step when it chooses an input on the
        cycle, and the end symbol where the reference ends too."""
        tokens = np.asarray(tokens, dtype=np.int64)
        ref = np.asarray(ref_tokens, dtype=np.int64)
        same = np.full(len(tokens), -1, dtype=np.int64)
        k = min(len(tokens), len(ref))
        same[:k] = ref[:k]
        agrees = tokens == same
        if not self.cycle_answer:
            return agrees
        cycle = ref[ref != END_TOKEN]
        edges = {frozenset(e) for e in zip(cycle[:-1].tolist(), cycle[1:].tolist(), strict=True)}
        for t, token in enumerate(tokens.tolist()):
            if token == END_TOKEN:
                continue
            before = int(tokens[t - 1]) if t else END_TOKEN
            if before == END_TOKEN:
                agrees[t] = token in cycle
            else:
                agrees[t] = frozenset((before, token)) in edges
        return agrees

    def reference_is_exact(self, n: int) -> bool:
        """Whether :meth:`solve`'s default solver is exact for instances of ``n`` inputs, so
        that its answer's cost may be called optimal; False where a heuristic answers (TSP
        beyond 20 cities: near-exact, and a model's tour may be shorter)."""
        return True

    def label_shape_problem(self, n: int, seq: np.ndarray) -> str | None:
        """Why a reference label of length ``len(seq)`` cannot be one for n inputs, or None.

        Checked before :meth:`is_valid` so a malformed file gets the specific reason.
        """
        return None

    def label_problem(self, points: np.ndarray, seq: np.ndarray) -> str | None:
        """Why ``seq`` is not a structurally valid reference label for ``points``, or None.

        Structure only (:meth:`label_shape_problem`, then :meth:`is_valid`); whether the label
        is *the* canonical or optimal one is not checked.
        """
        problem = self.label_shape_problem(len(points), np.asarray(seq))
        if problem is None and not self.is_valid(points, seq):
            problem = f"output is not a valid {self.name} label"
        return problem

    def degenerate_warning(self, points: np.ndarray) -> str | None:
        """The warning ``ptrnet predict`` prints, after ``FILE:LINE:``, for an instance (its
        (n, dim) unit-square image) on which the task's answer does not exist, in the task's
        words, or None. Default None: an answer exists on any instance (a tour of cities on a
        line or on one spot is still a tour)."""
        return None

    def decode_state(
        self, lengths: torch.Tensor, mode: str = "task", points: torch.Tensor | None = None
    ) -> DecodeState:
        """Initial decoding state for a batch with ``lengths`` (B,), ``mode`` 'none' or 'task',
        and the instances ``points`` (B, n, dim), which a rule that reads them needs (the
        convex hull's)."""
        from ptrnet.tasks.constraints import DecodeState

        return DecodeState.start(self, lengths, mode, points)


def check_indices(seq: np.ndarray, n: int) -> bool:
    """All entries of ``seq`` are integer indices in ``0..n-1``."""
    seq = np.asarray(seq)
    return (
        seq.ndim == 1
        and np.issubdtype(seq.dtype, np.integer)
        and bool(np.all((seq >= 0) & (seq < n)))
    )


def check_dataset(points: Sequence, refs: Sequence, preds: Sequence) -> None:
    """The contract of :meth:`Task.metrics`' arguments: one reference and one prediction per
    instance, at least one instance (a mean over none is no score).

    Raises:
        ValueError: no instances, or sequences of different lengths.
    """
    counts = (len(points), len(refs), len(preds))
    if len(set(counts)) != 1:
        raise ValueError(f"metrics need one ref and one pred per instance, got {counts}")
    if counts[0] == 0:
        raise ValueError("metrics need at least one instance, got none")
