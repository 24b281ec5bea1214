"""The searches after decoding that a task offers: its card's ``searches``
(:attr:`ptrnet.tasks.base.Task.searches`). Every front end (``--improve`` and the search flags
of ``predict``, ``eval`` and ``plot``, ``Solver.solve``'s keywords, the page's Search controls)
offers a task what its card declares here and words each refusal from these declarations;
:mod:`ptrnet.searches` checks a request (``SearchPlan``) and runs it (``run_searches``).

Two kinds, run in this order:

* :class:`Rebuild`: the model rebuilds pieces of the decoded answer, each kept where it
  improves the answer (Random Re-Construct, :data:`RANDOM_RECONSTRUCT`); chosen by
  ``--improve NAME`` (``improve="NAME"``) for ``--iterations`` rounds seeded by ``--seed``. Its
  runner needs a model, so it lives in :mod:`ptrnet.searches` (``REBUILDS``), under the name
  declared here.
* :class:`LocalSearch`: moves on the answer until none improves it under the task's lengths, a
  plain function (:attr:`LocalSearch.moves`, typically a solver's); chosen by a flag of its own
  (``--two-opt``, ``two_opt=True``). A task declares it in its own module and every front end
  offers it.

A search never makes an answer worse, and its answers are not the model's output: front ends
drop their log-likelihood.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: A local search: ``(points (n, dim), answer (a sequence), lengths (n, n) float64) ->`` an
#: answer of the same form, never longer under ``lengths``. Raises ValueError for an answer it
#: cannot search (a tour that is not closed over the instance), naming the problem.
Moves = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class AnswerSearch:
    """What every search declares.

    Attributes:
        name: its option: the Python API's keyword and the page's field (``two_opt``), the
            flag with dashes (``--two-opt``); a rebuild's is the value of ``improve``.
        words: how reports and the page name it (``2-opt``).
        verb: what it does to ``answers``, for a refusal: ``shortens`` in ``--two-opt:
            shortens tours, for task tsp, not sort``.
        answers: what it searches, plural (``tours``).
        help: what it does, for ``--help`` (after the tasks that offer it).
    """

    name: str
    words: str
    verb: str
    answers: str
    help: str

    @property
    def flag(self) -> str:
        """The command line's flag: ``--two-opt`` for ``two_opt``."""
        return "--" + self.name.replace("_", "-")


@dataclass(frozen=True)
class Rebuild(AnswerSearch):
    """A search in which the model rebuilds pieces of the answer (module docstring)."""


@dataclass(frozen=True)
class LocalSearch(AnswerSearch):
    """A search by moves, to a local optimum of the task's lengths (module docstring).

    Attributes:
        moves: the search itself (:data:`Moves`).
        includes: the other local searches this one's moves include (Or-opt's: 2-opt's),
            skipped when both are asked for.
    """

    moves: Moves
    includes: tuple[str, ...] = ()


#: Random Re-Construct (Luo et al. 2023, LEHD): a heavy- or light-decoder model rebuilds
#: segments of a random length of a tour, each kept when shorter. Any task whose answers are
#: closed tours decoded by such a model may declare it.
RANDOM_RECONSTRUCT = Rebuild(
    name="rrc",
    words="RRC",
    verb="rebuilds",
    answers="tours",
    help="rrc (Random Re-Construct, LEHD) cuts each tour into segments of a random length, "
    "lets a heavy- or light-decoder model rebuild them and keeps every shorter one",
)
