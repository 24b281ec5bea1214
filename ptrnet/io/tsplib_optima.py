"""Which proven optimum a TSPLIB file is measured against: matched by content, not by name.

A name is no proof of content. A file called ``eil51.tsp`` (or with ``NAME : eil51``) holding
other cities has another optimum, and measuring it against TSPLIB's 426 gave gaps such as
-85.21%. So TSPLIB's published optimum of a name (the ``optimal.txt`` shipped in
``ptrnet/data/tsplib``) belongs to the shipped instance of that name and is used only for a file
with the same cities (:func:`same_instance`), wherever the number was read from: the shipped
file, a copy of it beside the input, or ``--optimal``. An optimum a user states for a name
TSPLIB does not ship, or a different number for a TSPLIB name, is the user's claim about the
user's file and is used as given (``ptrnet eval`` still drops one that its own tour undercuts).
A file with no usable optimum gets none: its length is reported, its gap is not, and
:attr:`Optimum.note` says why.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ptrnet.data import TSPLIB_DIR, TSPLIB_OPTIMAL
from ptrnet.io.limits import QUOTE_CHARS
from ptrnet.io.tsplib import TSPLibInstance, read_optimal, read_tsplib
from ptrnet.quoting import quote


@dataclass(frozen=True)
class Optimum:
    """The optimum to measure a file against (None: none known) and, where the stated one is
    not used or none was found, a one-line ``note`` saying why ('' otherwise)."""

    value: int | None
    note: str = ""


def optimum_for(
    path: str | os.PathLike[str],
    instance: TSPLibInstance,
    stated: Mapping[str, int],
    source: str,
) -> Optimum:
    """The optimum of ``instance`` (read from ``path``) given the optima ``stated`` in the
    file ``source`` (see the module docstring for the rules).

    TSPLIB's published optimum is used for a file with the shipped instance's cities even when
    ``stated`` lacks its name or states another number (then with a note).
    """
    where, name = os.fspath(path), instance.name
    published = published_optimum(name)
    shipped = published is not None and same_instance(instance, shipped_instance(name))
    given = stated.get(name)
    if shipped:
        if given is not None and given != published:
            return Optimum(
                published,
                f"{where}: its cities are TSPLIB's {name}, whose proven optimum is {published}; "
                f"the {given} stated in {source} is not used",
            )
        return Optimum(published)
    if given is not None and given == published:
        return Optimum(
            None,
            f"{where}: its cities differ from TSPLIB's {name}; TSPLIB's proven optimum "
            f"({published}) is not used and no gap is computed",
        )
    if given is not None:
        return Optimum(given)
    return Optimum(
        None, f"{where}: no optimum for {quote(name, QUOTE_CHARS)} in {source}; no gap is computed"
    )


@functools.cache
def _published() -> dict[str, int]:
    """TSPLIB's proven optima of the shipped instances, by name."""
    return read_optimal(TSPLIB_OPTIMAL)


def published_optimum(name: str) -> int | None:
    """TSPLIB's proven optimum of the shipped instance ``name``; None for a name not shipped."""
    return _published().get(name)


@functools.cache
def shipped_instance(name: str) -> TSPLibInstance:
    """The shipped instance ``name``; only names :func:`published_optimum` knows are read, so a
    name from a user's file never becomes a path."""
    if published_optimum(name) is None:
        raise KeyError(name)
    return read_tsplib(TSPLIB_DIR / f"{name}.tsp")


def same_instance(a: TSPLibInstance, b: TSPLibInstance) -> bool:
    """Whether ``a`` and ``b`` have the same tour lengths: every field but the name equal, the
    cities compared as a set (numbering them otherwise changes no tour's length). Comparing
    every field keeps a distance rule that a later field holds in the comparison."""
    for field in dataclasses.fields(TSPLibInstance):
        if field.name == "name":
            continue
        x, y = getattr(a, field.name), getattr(b, field.name)
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if not np.array_equal(_rows_sorted(x), _rows_sorted(y)):
                return False
        elif x != y:
            return False
    return True


def _rows_sorted(array: np.ndarray) -> np.ndarray:
    """A 2-D ``array``'s rows in lexicographic order (any other array as it is)."""
    array = np.asarray(array)
    if array.ndim != 2:
        return array
    return array[np.lexsort(array.T[::-1])]
