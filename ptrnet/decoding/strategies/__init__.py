"""The strategy registry: one :class:`~ptrnet.decoding.strategies.card.StrategyCard` per decoding
strategy, looked up by name.

Everything that lists or branches on strategies reads it: the options' checks and widths
(:class:`~ptrnet.decoding.options.DecodeOptions`), the chooser a search runs (:func:`chooser`),
``--decode`` and its help, ``ptrnet eval``'s report, the API's ``decode=``, the page's menu,
the sentence decoders. A strategy is its own module here (its card and its chooser) plus one
:func:`register` line below. No torch at import (the chooser modules import it where they run).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ptrnet.decoding.strategies.beam import BEAM
from ptrnet.decoding.strategies.card import STRATEGY_OPTIONS, StrategyCard, StrategyOptions
from ptrnet.decoding.strategies.greedy import GREEDY
from ptrnet.decoding.strategies.sampling import SAMPLING
from ptrnet.decoding.strategies.stochastic_beam import STOCHASTIC_BEAM
from ptrnet.quoting import did_you_mean, quote

if TYPE_CHECKING:
    import torch

    from ptrnet.decoding.search import Strategy

__all__ = [
    "STRATEGIES", "STRATEGY_OPTIONS", "StrategyCard", "StrategyOptions", "chooser", "register",
    "strategy_card", "strategy_names", "taking",
]  # fmt: skip

STRATEGIES: dict[str, StrategyCard] = {}


def register(card: StrategyCard) -> StrategyCard:
    """Add ``card`` to the registry. Raises ValueError for a name already registered."""
    if card.name in STRATEGIES:
        raise ValueError(f"strategy {card.name!r} is already registered")
    STRATEGIES[card.name] = card
    return card


register(GREEDY)
register(SAMPLING)
register(BEAM)
register(STOCHASTIC_BEAM)


def strategy_names() -> tuple[str, ...]:
    """The registered strategies' names, in the order registered."""
    return tuple(STRATEGIES)


def strategy_card(name: str) -> StrategyCard:
    """The card of strategy ``name``.

    Raises:
        ValueError: an unknown name, with the registered names (and the closest one).
    """
    try:
        return STRATEGIES[name]
    except KeyError:
        hint = did_you_mean(name, STRATEGIES) if isinstance(name, str) else ""
        raise ValueError(
            f"unknown strategy {quote(name)}; choose from {', '.join(STRATEGIES)}{hint}"
        ) from None


def taking(option: str) -> tuple[StrategyCard, ...]:
    """The strategies that read ``option`` (one of :data:`STRATEGY_OPTIONS`)."""
    return tuple(card for card in STRATEGIES.values() if option in card.takes)


def chooser(
    options: StrategyOptions, instances: int, generator: torch.Generator | None = None
) -> Strategy:
    """The token chooser of ``options.strategy`` for a batch of ``instances`` instances, each
    searched in ``strategy_card(options.strategy).rows(options)`` rows; ``generator`` reaches
    seeded strategies only."""
    card = strategy_card(options.strategy)
    return card.build(options, instances, generator if card.seeded else None)
