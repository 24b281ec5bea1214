"""How to decode: one frozen, validated :class:`DecodeOptions`, built once by every caller.

The CLI builds it from its flags (``ptrnet eval``, ``ptrnet predict``), the web page from its
request, ``ptrnet reproduce`` from its plan, the training loop from its configuration; it is
passed unchanged down to :func:`ptrnet.decoding.decode` and
:func:`ptrnet.decoding.dataset.decode_all`. Invalid values and combinations are refused here and
nowhere else: those that need no task when the options are built, those that depend on the task
(the view options, the ``shortest`` pick) by :meth:`DecodeOptions.for_task`.

Three options read an instance through the symmetries of the unit square, each on its own and
combinable (:func:`check_views` states which combinations and tasks fit):

* ``average_views`` (1, 2, 4): every search reads that many rotations of the instance and
  averages their step distributions (a product of experts,
  :class:`~ptrnet.decoding.views.ViewEnsemble`);
* ``search_views`` (1, 8): eight-view search, every symmetry of the square searched (rotations
  an ensemble averages share one search) and the outputs ranked by their mean log-likelihood
  over all eight views (:mod:`ptrnet.decoding.view_scores`);
* ``multistart`` (0, 1, 2, 4, 8): greedy runs from every start of the instance (1) or of that
  many symmetric copies of it (POMO's augmentation), each ranked in its own view.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ptrnet.compute.devices import check_device_name
from ptrnet.decoding.checks import (
    DecodeOptionError,
    SearchSizeError,
    at_least_one,
    at_most,
    check_views,
    check_window,
    choice,
)
from ptrnet.decoding.strategies import (
    STRATEGIES,
    StrategyCard,
    strategy_card,
    strategy_names,
    taking,
)
from ptrnet.io.limits import MAX_BEAM_WIDTH, MAX_SAMPLES, MAX_SEARCH_POINTS, MAX_SEED
from ptrnet.quoting import quote
from ptrnet.tasks import POINT_TASKS

if TYPE_CHECKING:
    from ptrnet.tasks.base import Task

__all__ = [
    "CONSTRAINTS", "DEFAULT_BEAM_WIDTH", "DEFAULT_DECODE_BATCH", "PAPER_BEAM_WIDTH", "PICKS",
    "PROTOCOLS", "DecodeOptionError", "DecodeOptions", "SearchSizeError", "check_views",
    "check_window",
]  # fmt: skip

#: The defaults every front end shares (the CLI, the API, the page, the demo, the copy task).
PAPER_BEAM_WIDTH = 5  # the paper's beam search (its Table 1 and 2 decoding)
DEFAULT_BEAM_WIDTH = PAPER_BEAM_WIDTH
DEFAULT_DECODE_BATCH = 256  # instances decoded together

CONSTRAINTS = ("none", "task")
# Which mask decodes when ``constraints`` is not given: ``valid``, the task's rules (every output
# well formed: a closed convex hull, a tour, a permutation), what users get; ``paper``, the
# paper's mask for the task (Sec. 4: hull and Delaunay unconstrained), what ``ptrnet eval``'s
# paper comparison and ``ptrnet reproduce`` decode with.
PROTOCOLS = ("valid", "paper")
# Which of several candidates per instance (beams, samples, starts) is returned: the most likely
# one (the paper's), or the lowest-cost finished one under the task's own objective (TSP: the
# shortest tour), a cheap rerank.
PICKS = ("likely", "shortest")


@dataclass(frozen=True)
class DecodeOptions:
    """Every choice of one decoding run.

    Attributes:
        strategy: a registered strategy (:mod:`ptrnet.decoding.strategies`: ``greedy``,
            ``sample`` (``samples``, ``temperature``, ``seed``), ``beam`` (``beam_width``), ...);
            its card says which of the options below it reads and how many rows it searches.
        beam_width: beams kept per instance (strategies that read it: beam search), 1 to
            :data:`~ptrnet.io.limits.MAX_BEAM_WIDTH`.
        samples: outputs sampled per instance (best-of-k sampling; sampling only), the best
            kept by ``pick``; 1 = one sample; at most :data:`~ptrnet.io.limits.MAX_SAMPLES`.
        protocol: ``valid`` (the default: the task's rules, so every output is well formed)
            or ``paper`` (the paper's mask for the task, ``Task.paper_constraints``); it only
            chooses ``constraints`` when those are None (:data:`PROTOCOLS`).
        constraints: ``none`` (any real input or the end symbol; the paper's hull and Delaunay
            decoding), ``task`` (the task's legal-next rule, e.g. valid tours), or None for the
            mask ``protocol`` names, filled in by :meth:`for_task`. Given, it overrides the
            protocol's mask.
        average_views: 1 (the model alone), or 2 or 4: rotations of each instance read at
            every step, their log-probabilities averaged (tasks with
            ``rotation_invariant_labels``; :class:`ptrnet.decoding.views.ViewEnsemble`).
        search_views: 1, or 8: eight-view search, each instance searched from every symmetry
            of the square (``8 // average_views`` searches, each averaging ``average_views``
            rotations) and the output the eight views find most likely on average kept
            (``square_symmetric`` tasks; :func:`ptrnet.decoding.views.decode_eight_views`).
        multistart: 0 (off), or 1: greedy decoding from every input of the instance, each run
            reading the inputs rotated so that input comes first (TSP: a tour from every
            city), or, where the first input keeps its place (a routing depot,
            ``Task.rotated_starts`` false), forced to choose each other input first, the best
            kept by ``pick`` (:mod:`ptrnet.decoding.multistart`); 2, 4 or 8:
            the same from every start of that many symmetric copies (rotations; 8: every
            symmetry), each run scored in its own view (POMO's augmentation). Needs strategy
            ``greedy``; True is 1.
        pick: with several candidates per instance (beam search, multistart, ``samples`` > 1),
            ``likely`` (the one the model scores highest) or ``shortest`` (the lowest
            ``Task.sequence_cost`` among the finished ones; tasks with ``objective_cost``),
            which puts the task's cost, not the model alone, in the loop.
        window: 0 (off), or k >= 2: a heavy-decoder model decodes each instance of more than
            k inputs through a local window, the k remaining inputs nearest the last chosen
            one, rescaled to the unit square at every step (:mod:`ptrnet.decoding.window`);
            smaller instances are decoded as without it. None (the default): the window of
            the model that serves the instance's size, set by its size route
            (:data:`ptrnet.inference.SIZES_JSON`), else off; :meth:`with_window` resolves it.
        temperature: divides the log-probabilities before sampling, > 0 (1 unless the
            strategy reads it).
        seed: seeds the generator of a strategy that draws (same seed, same samples).
        batch_size: instances per decoding batch, >= 1.
        device: where decoding runs (``cpu``, ``cuda``, ``cuda:N``, ``auto``); None = where the
            model's weights already are.

    Raises:
        DecodeOptionError: on construction, for an unknown name or an out-of-range value, or
            ``pick="shortest"`` with one candidate per instance, ``samples`` > 1 or a
            ``temperature`` other than 1 with a strategy that does not read it, a view option
            out of range or in a combination :func:`check_views` refuses. How many instances
            fit one search is checked once they are known (:meth:`check_search`).
    """

    strategy: str = "greedy"
    beam_width: int = DEFAULT_BEAM_WIDTH
    samples: int = 1
    constraints: str | None = None
    protocol: str = "valid"
    average_views: int = 1
    search_views: int = 1
    multistart: int = 0
    pick: str = "likely"
    window: int | None = None
    temperature: float = 1.0
    seed: int = 0
    batch_size: int = DEFAULT_DECODE_BATCH
    device: str | None = None

    def __post_init__(self) -> None:
        if self.strategy == "multistart":
            raise DecodeOptionError(
                "strategy",
                "multistart is not a strategy but an option of its own: multistart=1 "
                "(--multistart) runs greedy decoding from every start",
            )
        choice("strategy", self.strategy, strategy_names())
        if self.constraints is not None:
            choice("constraints", self.constraints, CONSTRAINTS)
        choice("protocol", self.protocol, PROTOCOLS)
        choice("pick", self.pick, PICKS)
        check_views(self)
        if self.multistart is True:
            object.__setattr__(self, "multistart", 1)
        at_least_one("beam_width", self.beam_width)
        at_least_one("batch_size", self.batch_size)
        at_least_one("samples", self.samples)
        at_most("beam_width", self.beam_width, MAX_BEAM_WIDTH)
        at_most("samples", self.samples, MAX_SAMPLES)
        if self.window is not None:
            check_window(self.window)
        if self.samples > 1:
            self._read_by_strategy("samples", "samples > 1")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise DecodeOptionError("seed", f"seed must be an integer, got {quote(self.seed)}")
        if not 0 <= self.seed <= MAX_SEED:  # torch's generators take 0..2^64 - 1
            raise DecodeOptionError("seed", f"seed must lie in 0..2^64 - 1, got {quote(self.seed)}")
        if not (isinstance(self.temperature, int | float) and self.temperature > 0):
            raise DecodeOptionError(
                "temperature", f"temperature must be > 0, got {quote(self.temperature)}"
            )
        if not self.temperature <= sys.float_info.max:  # inf, NaN, or an int past any float
            raise DecodeOptionError("temperature", "temperature must be finite")
        if self.temperature != 1:
            self._read_by_strategy("temperature", f"temperature {self.temperature:g}")
        if self.pick == "shortest" and not self.several:
            raise DecodeOptionError(
                "pick",
                f"pick 'shortest' needs several candidates to choose from ({several_ways()})",
            )
        if self.device is not None:
            try:
                check_device_name(self.device)
            except ValueError as err:
                raise DecodeOptionError("device", str(err)) from None

    def _read_by_strategy(self, option: str, given: str) -> None:
        """Raise DecodeOptionError when ``option``, set away from its default (``given`` in
        words), is one the strategy does not read: it would be ignored."""
        if option not in self.card.takes:
            needs = " or ".join(card.title for card in taking(option))
            raise DecodeOptionError(option, f"{given} needs {needs}, not {self.strategy} decoding")

    @property
    def card(self) -> StrategyCard:
        """The strategy's card (:mod:`ptrnet.decoding.strategies`)."""
        return strategy_card(self.strategy)

    @property
    def width(self) -> int:
        """Rows searched together per instance and view, as the strategy's card counts them
        (``beam_width`` for beam search, ``samples`` for sampling, else 1; multistart runs
        one search per start)."""
        return self.card.rows(self)

    @property
    def several(self) -> bool:
        """Whether decoding finds several candidates per instance for ``pick`` to choose from:
        the strategy's rows (:meth:`StrategyCard.several`), or multistart's runs."""
        return self.card.several(self) or bool(self.multistart)

    @property
    def searches(self) -> int:
        """Separate searches per instance: one per multistart view, or per start of an
        eight-view search (``8 // average_views``), else 1."""
        if self.search_views > 1:
            return self.search_views // self.average_views
        return max(self.multistart, 1)

    @property
    def view_words(self) -> str:
        """The view options in words, for tables and reports: ``1 view``, ``4 averaged views``,
        ``eight-view search, 4 averaged views``, ``8 multistart views``."""
        words = []
        if self.search_views > 1:
            words.append("eight-view search")
        if self.multistart > 1:
            words.append(f"{self.multistart} multistart views")
        if self.average_views > 1:
            words.append(f"{self.average_views} averaged views")
        return ", ".join(words) or "1 view"

    @property
    def constraint_words(self) -> str:
        """The decoding mask in words, for tables, reports and titles: ``only valid outputs``
        (``task``: the task's rules enforced at every step) or ``unconstrained, an output may
        break the task's rules`` (``none``)."""
        if self.constraints == "none":
            return "unconstrained, an output may break the task's rules"
        return "only valid outputs"

    def candidates(self, n: int) -> int:
        """Decoder rows one instance of ``n`` inputs takes: width x averaged views x searches x
        starts (``n`` with multistart, else 1)."""
        starts = n if self.multistart else 1
        return self.width * self.average_views * self.searches * starts

    def search_points(self, n: int) -> int:
        """Candidate points one instance of ``n`` inputs adds to a search: its candidates,
        each holding the n + 1 positions a pointer chooses from."""
        return self.candidates(n) * (n + 1)

    def check_search(self, n: int) -> None:
        """Raise unless one instance of ``n`` inputs fits a search
        (:data:`~ptrnet.io.limits.MAX_SEARCH_POINTS` candidate points), before anything is
        allocated.

        Raises:
            SearchSizeError: naming the sizes and the option that widens the search.
        """
        points = self.search_points(n)
        if points > MAX_SEARCH_POINTS:
            raise _search_size_error(self, n, points)

    def check_width(self, most: int, who: str, why: str) -> None:
        """Raise unless one instance's rows (:attr:`width`) are at most ``most``, a decoder's
        own bound (the sentence decoders': ``who`` ``takes at most ...``, ``why`` in brackets).

        Raises:
            DecodeOptionError: naming the strategy's width option.
        """
        if self.width > most:
            card = self.card
            raise DecodeOptionError(
                card.width_option or "strategy",
                f"{who} takes at most {most:,} {card.rows_word} ({why})",
            )

    def for_task(self, task: Task) -> DecodeOptions:
        """These options checked against ``task``, with ``constraints`` resolved when None:
        ``task`` under the ``valid`` protocol, ``task.paper_constraints`` under ``paper``.

        Raises:
            DecodeOptionError: a view option the task cannot use (:func:`check_views`), or
                ``pick="shortest"`` on a task without a cost.
        """
        check_views(self, task)
        if self.pick == "shortest" and not task.objective_cost:
            raise _shortest_error(task)
        if self.constraints is not None:  # resolved already (for this task or another)
            return self
        default = task.paper_constraints if self.protocol == "paper" else "task"
        return replace(self, constraints=default)

    def with_window(self, default: int) -> DecodeOptions:
        """These options with ``window`` set: its own value if one was given, else ``default``
        (the serving model's, :attr:`ptrnet.inference.LoadedModel.window`)."""
        return self if self.window is not None else replace(self, window=default)

    def reranker(self, task: Task):
        """The cost that picks among finished beams (``Task.sequence_cost``), or None for
        ``pick="likely"``."""
        return task.sequence_cost if self.pick == "shortest" else None


def several_ways() -> str:
    """The ways to decode several candidates per instance, in words for a refusal: the
    strategies whose rows always are (``beam``), multistart, the width options that make them
    (``samples > 1``)."""
    cards = STRATEGIES.values()
    ways = [card.name for card in cards if card.several_at_any_width]
    ways.append("multistart")
    for option in dict.fromkeys(c.width_option for c in cards if not c.several_at_any_width):
        if option:
            ways.append(f"{option} > 1")
    return ", ".join(ways[:-1]) + f" or {ways[-1]}"


def _shortest_error(task: Task) -> DecodeOptionError:

    costed = " or ".join(name for name, other in POINT_TASKS.items() if other.objective_cost)
    return DecodeOptionError(
        "pick",
        f"pick 'shortest' ranks candidates by a cost, which {task.name} has not (only {costed})",
    )


def _search_size_error(options: DecodeOptions, n: int, points: int) -> SearchSizeError:
    """The one-line refusal of a search of ``points`` candidate points for one instance of n."""
    factors, lower = [], []
    card = options.card
    if card.width_option:
        factors.append(f"{options.width} {card.rows_word}")
        lower.append((card.width_option.replace("_", " "), card.width_option))
    if options.average_views > 1:
        factors.append(f"{options.average_views} averaged views")
        lower.append(("average views", "average_views"))
    if options.multistart > 1:
        factors.append(f"{options.multistart} views")
        lower.append(("multistart views", "multistart"))
    elif options.searches > 1:
        factors.append(f"{options.searches} searches over the eight views")
        lower.append(("search views", "search_views"))
    if options.multistart:
        factors.append(f"{n} starts")
    advice = "lower the " + " or ".join(word for word, _ in lower)
    return SearchSizeError(
        lower[0][1] if lower else "strategy",
        f"one instance of {n} points searched with {' x '.join(factors)} holds {points:,} "
        f"candidate points ({options.candidates(n):,} candidates x {n + 1} positions), over the "
        f"{MAX_SEARCH_POINTS:,} a search may hold in memory; "
        f"{advice if lower else 'decode instances this large with another strategy'}",
    )
