"""What a decoding strategy says about itself: :class:`StrategyCard`, the one object per strategy
that the options, the command line, the API, the page and the sentence decoders read.

A card is data and functions over the options, no torch: the registry
(:mod:`ptrnet.decoding.strategies`) is read by ``ptrnet --help`` and by
:class:`~ptrnet.decoding.options.DecodeOptions` before anything heavy is loaded, so a strategy's
file imports torch inside the chooser it builds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import torch

    from ptrnet.decoding.search import Strategy

#: The options a strategy may read besides its name; every front end offers each of them (the
#: command line's ``--beam-width``, ``--samples``, ``--temperature``, ``--seed``).
STRATEGY_OPTIONS = ("beam_width", "samples", "temperature", "seed")


class StrategyOptions(Protocol):
    """What a card reads of :class:`~ptrnet.decoding.options.DecodeOptions`."""

    strategy: str
    beam_width: int
    samples: int
    temperature: float
    seed: int


#: ``build(options, instances, generator)``: the token chooser for a batch of ``instances``
#: instances, each searched in ``card.rows(options)`` consecutive rows; ``generator`` draws its
#: random numbers (None: torch's global generator; given to seeded strategies only).
Builder = Callable[["StrategyOptions", int, "torch.Generator | None"], "Strategy"]


@dataclass(frozen=True)
class StrategyCard:
    """One decoding strategy: its name, what it reads and how to build its chooser.

    Attributes:
        name: what ``--decode``, ``decode=`` and the page call it.
        title: its name in words (``beam search``), for the page's menu and messages.
        description: one line, for ``--help`` and the page.
        build: its token chooser (:data:`Builder`, a :class:`ptrnet.decoding.search.Strategy`).
        width_option: the option (of :data:`STRATEGY_OPTIONS`) that sets its rows per instance
            (``beam_width``, ``samples``); None: one row.
        reads: the other options of :data:`STRATEGY_OPTIONS` it reads (``temperature``,
            ``seed``).
        rows_word: what its rows are called in a message (``beams``, ``samples``).
        several_at_any_width: its rows are candidates for ``pick`` even at width 1 (beam
            search's one beam); else only with more than one row.
        words: the decoding in words, for reports and titles (``beam search, width 5``).
    """

    name: str
    title: str
    description: str
    build: Builder
    words: Callable[[StrategyOptions], str]
    width_option: str | None = None
    reads: tuple[str, ...] = ()
    rows_word: str = "rows"
    several_at_any_width: bool = False

    def __post_init__(self) -> None:
        unknown = set(self.takes) - set(STRATEGY_OPTIONS)
        if unknown:
            raise ValueError(f"strategy {self.name}: unknown options {sorted(unknown)}")

    @property
    def takes(self) -> tuple[str, ...]:
        """Every option it reads: its width option first, then :attr:`reads`."""
        return (self.width_option, *self.reads) if self.width_option else self.reads

    @property
    def seeded(self) -> bool:
        """Whether it draws random numbers, so decoding gives it a generator seeded by
        ``seed``."""
        return "seed" in self.reads

    def rows(self, options: StrategyOptions) -> int:
        """Rows searched together per instance and view: the width option's value, else 1."""
        return getattr(options, self.width_option) if self.width_option else 1

    def several(self, options: StrategyOptions) -> bool:
        """Whether its rows give ``pick`` several candidates per instance to choose from."""
        return self.several_at_any_width or self.rows(options) > 1
