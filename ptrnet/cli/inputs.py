"""Instances for ``solve``, ``predict`` and ``eval``: read in any layout, mapped into the unit
square, checked against the limits, degenerate ones named.

What a user sees on stderr (unless ``--quiet``):

* ``mapped N instances into the unit square ...``: instances with coordinates outside [0, 1]
  are solved or decoded on ``x' = (x - offset) / scale`` (aspect ratio kept,
  :mod:`ptrnet.io.unit_square`); the files written keep the input's coordinates and every
  length or area reported is in the input's units.
* ``warning: FILE:LINE: all points collinear ...``: a planar instance without 2-D extent. Its
  hull and triangulation are undefined (``solve`` refuses it); a model's output is written as
  decoded, and a tour is still a tour.
"""

from __future__ import annotations

import argparse
import sys
from typing import NamedTuple

import numpy as np

from ptrnet.io.errors import InputError
from ptrnet.io.instances import read_instances
from ptrnet.io.unit_square import UnitMap, fit_unit_square
from ptrnet.solvers.geometry import planar_degeneracy
from ptrnet.tasks import Task


class Prepared(NamedTuple):
    """``points`` in the input's units, ``unit`` in [0, 1]^dim, the ``mapping`` (None when
    the instance was inside already), and the ``line`` it came from (or None)."""

    points: np.ndarray
    unit: np.ndarray
    mapping: UnitMap | None
    line: int | None


def prepare(points: np.ndarray, line: int | None) -> Prepared:
    """One instance with its unit-square form."""
    mapping = fit_unit_square(points)
    unit = points if mapping is None else mapping.to_unit(points)
    return Prepared(points, unit, mapping, line)


def read_prepared(
    path: str, task: Task, fmt: str = "auto", max_n: int | None = None
) -> list[Prepared]:
    """The instances of ``path`` (layout ``fmt``), prepared.

    Raises:
        InputError: a malformed file, or an instance over ``max_n`` points (at its line).
    """
    instances = [prepare(inst.points, inst.line) for inst in read_instances(path, task, fmt)]
    check_size(path, instances, max_n, "the model")
    return instances


def check_size(path: str, instances: list[Prepared], max_n: int | None, what: str) -> None:
    """Raise InputError at the first instance over ``max_n`` points."""
    if max_n is None:
        return
    for inst in instances:
        if len(inst.points) > max_n:
            raise InputError(
                path, inst.line, f"{len(inst.points)} points; {what} takes n <= {max_n}"
            )


def report(
    args: argparse.Namespace,
    path: str,
    task: Task,
    instances: list[Prepared],
    degenerate: bool = True,
) -> None:
    """The notes of the module docstring on stderr, unless ``args.quiet`` (the degenerate
    warnings only with ``degenerate``)."""
    if getattr(args, "quiet", False):
        return
    mapped = [inst for inst in instances if inst.mapping is not None]
    if mapped:
        where = f"{path}:{mapped[0].line}" if mapped[0].line else path
        print(
            f"ptrnet: mapped {len(mapped)} instance(s) into the unit square, keeping the aspect "
            f"ratio (first, {where}: {mapped[0].mapping.describe()}); results are in the "
            "input's units",
            file=sys.stderr,
        )
    if task.dim != 2 or not degenerate:
        return
    for inst in instances:
        reason = planar_degeneracy(inst.unit)
        if reason:
            where = f"{path}:{inst.line}" if inst.line else path
            print(
                f"ptrnet: warning: {where}: degenerate instance ({reason}): no hull or "
                "triangulation exists; an output is written as decoded",
                file=sys.stderr,
            )
