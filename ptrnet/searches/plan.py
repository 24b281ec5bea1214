"""What to search after decoding, checked in one place: :class:`SearchPlan`, the value every
front end builds (``ptrnet predict|eval|plot``'s ``--improve``, ``--iterations``, ``--seed`` and
search flags, ``Solver.solve``'s keywords, the page's ``decoding`` fields) and hands to
:func:`ptrnet.searches.run_searches`. What a task offers is its card's ``searches``
(:mod:`ptrnet.tasks.searches`); every refusal is worded here from those declarations, in the
caller's spelling (:meth:`SearchOptionError.spelled`).

Imports no torch: the command line builds its flags from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from ptrnet.io.limits import MAX_ITERATIONS
from ptrnet.tasks import POINT_TASKS, Task
from ptrnet.tasks.searches import AnswerSearch, LocalSearch, Rebuild

DEFAULT_ROUNDS = 100  # rounds of a rebuild search (``--iterations``) when none are given
NONE = "none"  # ``improve`` without a rebuild search
ROUNDS = f"an integer from 1 to {MAX_ITERATIONS:,}"  # what iterations must be


def declared(kind: type[AnswerSearch]) -> dict[str, AnswerSearch]:
    """Every search of ``kind`` (:class:`Rebuild` or :class:`LocalSearch`) a registered point
    task declares, by name, in registry order (the first declaration of a name speaks for it)."""
    found: dict[str, AnswerSearch] = {}
    for task in POINT_TASKS.values():
        for search in task.searches:
            if isinstance(search, kind):
                found.setdefault(search.name, search)
    return found


def offering(name: str) -> list[str]:
    """The registered point tasks that offer the search ``name``."""
    return [t.name for t in POINT_TASKS.values() if any(s.name == name for s in t.searches)]


def spell(option: str, value: object, flags: bool) -> str:
    """An option as its caller writes it: with ``flags`` as the command line does
    (``--improve rrc``, ``--iterations 5``, ``--two-opt`` for a search's ``True``), else as a
    keyword of the Python API and the page (``improve='rrc'``, ``two_opt=True``)."""
    if not flags:
        return f"{option}={value!r}"
    if value is True:
        return "--" + option.replace("_", "-")
    return f"--{option} {value}"


class SearchOptionError(ValueError):
    """A search option refused, in one line naming it (:func:`spell`); ``option`` is
    ``"improve"``, ``"iterations"`` or a local search's name."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(message)
        self.option = option


@dataclass(frozen=True)
class SearchPlan:
    """The searches after decoding, in the order they run: ``improve`` (a :class:`Rebuild`'s
    name, or ``"none"``) for ``iterations`` rounds (None: :data:`DEFAULT_ROUNDS`) seeded by
    ``seed``, then the local searches named in ``local`` (one whose moves another one asked
    for includes is skipped). Built from a caller's options, then checked by :meth:`for_task`.
    """

    improve: str = NONE
    iterations: int | None = None
    local: tuple[str, ...] = ()
    seed: int = 0

    @classmethod
    def from_keywords(
        cls,
        improve: str | None = None,
        iterations: int | None = None,
        local: Mapping[str, object] | None = None,
        seed: int = 0,
    ) -> SearchPlan:
        """The plan the Python API's keywords describe: ``improve`` (None: ``"none"``),
        ``iterations``, ``local`` a local search's name -> True or False.

        Raises:
            SearchOptionError: a local search's value that is not a bool.
        """
        for name, value in (local or {}).items():
            if not isinstance(value, bool | np.bool_):
                raise SearchOptionError(name, f"{spell(name, value, False)}: True or False")
        chosen = tuple(name for name, value in (local or {}).items() if value)
        return cls(NONE if improve is None else improve, iterations, chosen, seed)

    def __bool__(self) -> bool:
        return self.improve != NONE or bool(self.local)

    @property
    def rounds(self) -> int:
        """The rounds of the rebuild search (0: none)."""
        if self.improve == NONE:
            return 0
        return DEFAULT_ROUNDS if self.iterations is None else int(self.iterations)

    def for_task(
        self, task: Task, constraints: str | None = None, flags: bool = False
    ) -> SearchPlan:
        """This plan, checked against what ``task`` offers, ``iterations`` resolved. A search
        needs answers to start from, which ``constraints="none"`` may not decode. Refusals
        name the option as the caller writes it (``flags``: the command line's, :func:`spell`).

        Raises:
            SearchOptionError: an ``improve`` no task offers, a search ``task`` does not
                offer, ``iterations`` without ``improve`` or not :data:`ROUNDS`, or any search
                with ``constraints="none"``.
        """
        asked = self._asked(flags)
        for option, value, search in asked:
            if search not in task.searches:
                tasks = " or ".join(offering(search.name))
                reason = f"{search.verb} {search.answers}, for task {tasks}, not {task.name}"
                raise SearchOptionError(option, f"{spell(option, value, flags)}: {reason}")
        self._check_iterations(flags)
        if asked and constraints == "none":
            option, value, search = asked[0]
            none, task_rules = (
                spell("constraints", "none", flags),
                spell("constraints", "task", flags),
            )
            raise SearchOptionError(
                option,
                f"{spell(option, value, flags)}: searches {search.answers}, and {none} may decode "
                f"outputs that are not {search.answers}; use {task_rules}",
            )
        return replace(self, iterations=self.rounds or None)

    def _asked(self, flags: bool) -> list[tuple[str, object, AnswerSearch]]:
        """(option, value, declaration) of each search asked for, in order.

        Raises:
            SearchOptionError: a search that no registered task offers.
        """
        rebuilds, locals_ = declared(Rebuild), declared(LocalSearch)
        asked: list[tuple[str, object, AnswerSearch]] = []
        if self.improve != NONE:
            if self.improve not in rebuilds:
                choices = " or ".join(repr(name) for name in (*rebuilds, NONE))
                raise SearchOptionError(
                    "improve", f"{spell('improve', self.improve, flags)}: {choices}"
                )
            asked.append(("improve", self.improve, rebuilds[self.improve]))
        for name in self.local:
            if name not in locals_:
                raise SearchOptionError(name, f"{spell(name, True, flags)}: no task offers it")
            asked.append((name, True, locals_[name]))
        return asked

    def _check_iterations(self, flags: bool) -> None:
        """Raise SearchOptionError for ``iterations`` without a rebuild or not :data:`ROUNDS`."""
        value = self.iterations
        if value is None:
            return
        given = spell("iterations", value, flags)
        if self.improve == NONE:
            need = " or ".join(spell("improve", name, flags) for name in declared(Rebuild))
            raise SearchOptionError("iterations", f"{given}: iterations need {need}")
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise SearchOptionError("iterations", f"{given}: {ROUNDS}")
        if not 1 <= value <= MAX_ITERATIONS:
            raise SearchOptionError("iterations", f"{given}: {ROUNDS}")

    def stages(self, task: Task) -> list[AnswerSearch]:
        """The searches this checked plan runs on ``task``'s answers, in order: the rebuild,
        then each local search asked for that no other one asked for includes."""
        own = {search.name: search for search in task.searches}
        rebuild = [own[self.improve]] if self.improve != NONE else []
        local = [own[name] for name in self.local]
        included = {name for search in local for name in search.includes}
        return rebuild + [search for search in local if search.name not in included]

    def words(self, task: Task, measured: str | None = None) -> list[str]:
        """The searches in words, one phrase per stage in the order they run (empty without
        a search); ``measured`` says what a local search measured in place of ``(a search on
        tour lengths)`` (``on TSPLIB lengths``)."""
        phrases = []
        for search in self.stages(task):
            lengths = f"a search on {search.answers.removesuffix('s')} lengths"
            if isinstance(search, Rebuild):
                phrases.append(
                    f"{search.words}, {self.rounds} rounds (seed {self.seed}; {lengths})"
                )
            else:
                phrases.append(f"{search.words} {measured or f'({lengths})'}")
        return phrases

    def describe(self, task: Task) -> dict[str, object]:
        """The plan as the page's answer states it: ``improve``, ``iterations`` (the rounds
        run), each local search ``task`` offers -> whether it ran, ``seed``."""
        local = {s.name: s.name in self.local for s in task.searches if isinstance(s, LocalSearch)}
        return {"improve": self.improve, "iterations": self.rounds, **local, "seed": self.seed}
