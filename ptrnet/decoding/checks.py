"""The one-line refusals of bad decoding options, each raised in one place.

:class:`ptrnet.decoding.options.DecodeOptions` calls these when it is built and again, with the
task, in :meth:`~ptrnet.decoding.options.DecodeOptions.for_task`; front ends catch
:class:`DecodeOptionError` and name their own flag for ``option``. No torch here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ptrnet.io.errors import UsageError
from ptrnet.quoting import quote
from ptrnet.tasks.symmetry import ROTATION_VIEWS, SQUARE_SYMMETRIES

if TYPE_CHECKING:
    from ptrnet.tasks.base import Task

# The choices of the three view options (:mod:`ptrnet.decoding.options` says what they do).
AVERAGE_VIEWS = ROTATION_VIEWS
SEARCH_VIEWS = (1, SQUARE_SYMMETRIES)
MULTISTART_VIEWS = (0, *ROTATION_VIEWS, SQUARE_SYMMETRIES)


class DecodeOptionError(ValueError):
    """An invalid decoding option; ``option`` names the field, so a front end can name its flag
    (``--average-views 3: ...``) and ``str`` is the one-line reason."""

    def __init__(self, option: str, problem: str) -> None:
        super().__init__(problem)
        self.option = option


class SearchSizeError(DecodeOptionError, UsageError):
    """A search too large for memory (:data:`~ptrnet.io.limits.MAX_SEARCH_POINTS`), found once
    the instances are known: a :class:`DecodeOptionError` naming the option that widens the
    search, and a :class:`~ptrnet.io.errors.UsageError`, so the command line prints its one
    line."""


class ViewChoices(Protocol):
    """The options :func:`check_views` reads (a :class:`~ptrnet.decoding.options.DecodeOptions`)."""

    strategy: str
    average_views: int
    search_views: int
    multistart: int


def check_window(window: object) -> None:
    """Raises DecodeOptionError unless ``window`` is 0 (off) or an integer >= 2."""
    if isinstance(window, bool) or not isinstance(window, int) or window < 0 or window == 1:
        raise DecodeOptionError(
            "window", f"window must be 0 (off) or an integer >= 2, got {quote(window)}"
        )


def check_views(options: ViewChoices, task: Task | None = None) -> None:
    """The one check of the three view options: each in range, combined sensibly and, given
    ``task``, usable on it. Rotations (``average_views`` > 1, ``multistart`` 2 or 4) need
    labels that rotations keep (``rotation_invariant_labels``: hull, TSP, routes); every symmetry
    (``search_views`` or ``multistart`` 8) needs answers they all keep (``square_symmetric``).

    Raises:
        DecodeOptionError: naming the option, with the one-line reason.
    """
    counted("average_views", options.average_views, AVERAGE_VIEWS)
    counted("search_views", options.search_views, SEARCH_VIEWS)
    counted("multistart", options.multistart, MULTISTART_VIEWS)
    if options.multistart and options.strategy != "greedy":
        raise DecodeOptionError(
            "multistart",
            f"multistart runs greedy decoding from every start; it takes no {options.strategy} "
            "decoding",
        )
    if options.multistart and options.search_views > 1:
        raise DecodeOptionError(
            "search_views",
            "search_views 8 ranks outputs by all eight views, multistart each run in its own: "
            "for multistart on every symmetry use multistart 8",
        )
    if task is None:
        return
    for option in ("average_views", "search_views", "multistart"):
        count = getattr(options, option)
        if count == SQUARE_SYMMETRIES and not task.square_symmetric:
            raise DecodeOptionError(
                option,
                f"{option} 8 needs a task whose answers the square's symmetries keep; "
                f"{task.name}'s do not (a flip reverses a sorted order)",
            )
        if 1 < count < SQUARE_SYMMETRIES and not task.rotation_invariant_labels:
            other = f" ({option} 8 works)" if task.square_symmetric else ""
            raise DecodeOptionError(
                option,
                f"{option} {count} needs labels that rotations keep "
                f"({tasks_with('rotation_invariant_labels')}); "
                f"{task.name}'s label order depends on the coordinates{other}",
            )


def tasks_with(flag: str) -> str:
    """The registered point tasks whose card sets ``flag``, comma-separated (for a message)."""
    from ptrnet.tasks import POINT_TASKS  # here: the registry loads every task's module

    return ", ".join(name for name, task in POINT_TASKS.items() if getattr(task, flag))


def counted(option: str, value: object, choices: tuple[int, ...]) -> None:
    """Raises DecodeOptionError unless ``value`` is one of the counts ``choices`` (an integer;
    True and False count as 1 and 0 only for multistart)."""
    number = isinstance(value, int) and (option == "multistart" or not isinstance(value, bool))
    if not number or value not in choices:
        words = ", ".join(map(str, choices[:-1])) + f" or {choices[-1]}"
        raise DecodeOptionError(option, f"{option} must be {words}, got {quote(value)}")


def choice(option: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise DecodeOptionError(
            option, f"unknown {option} {quote(value)}; choose from {', '.join(choices)}"
        )


def at_most(option: str, value: int, most: int) -> None:
    if value > most:
        raise DecodeOptionError(
            option,
            f"{option} must be at most {most:,} (a wider search does not fit memory), "
            f"got {value:,}",
        )


def at_least_one(option: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise DecodeOptionError(option, f"{option} must be an integer >= 1, got {quote(value)}")
