"""Instances for every command that takes them (``solve``, ``predict``, ``eval``, ``score``,
``plot``): read in any layout through
:func:`ptrnet.io.instances.read_instances`, mapped into the unit square, checked against the
limits, degenerate ones named, references from the file or the task's solver.

What a user sees on stderr (unless ``--quiet``):

* ``mapped N instances into the unit square ...`` (the commands that decode with a model):
  instances with coordinates outside [0, 1] are decoded on ``x' = (x - offset) / scale``
  (aspect ratio kept, :mod:`ptrnet.io.unit_square`); the files written keep the input's
  coordinates and every length or area reported is in the input's units. ``solve`` solves on
  the same image and says nothing of it: a solver's answer does not depend on the map.
* ``warning: FILE:LINE: degenerate instance ...`` (``predict``): an instance on which the
  task's answer does not exist, in the task's words (:meth:`ptrnet.tasks.Task.degenerate_warning`:
  a hull or triangulation of points without 2-D extent; ``solve`` refuses it); a model's output
  is written as decoded. A tour exists on any cities: TSP warns of none.
* ``FILE: ignored the labels ...``: a command that needs no references was given a labelled
  file; it reads the points and leaves the ``output`` parts unread.
* ``FILE: no labels ...``: a command that compares with references was given instances
  without them; the task's solver labels them (:func:`references`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import NamedTuple

import numpy as np

from ptrnet.io.errors import InputError, UsageError
from ptrnet.io.instances import Instance, read_instances
from ptrnet.io.unit_square import UnitMap, model_image
from ptrnet.quoting import quote
from ptrnet.solvers.distances import Distances
from ptrnet.solvers.geometry import planar_degeneracy
from ptrnet.tasks import DegenerateInstanceError, Task
from ptrnet.tasks.base import Reference
from ptrnet.tasks.knapsack import CapacitySpec


def add_input_arguments(parser: argparse.ArgumentParser) -> None:
    """``--format`` (the layout) and ``--columns`` (CSV coordinate columns) of a command that
    reads instances (:func:`read_prepared`)."""
    from ptrnet.cli.common import add_format_argument

    add_format_argument(parser)
    parser.add_argument(
        "--columns",
        type=column_names,
        metavar="X,Y",
        help="CSV input: the coordinate columns, by header name or 0-based index, in the "
        "order x,y (e.g. --columns lon,lat; default: the columns holding numbers; a text "
        "column is kept as the points' names)",
    )


def column_names(text: str) -> tuple[str, ...]:
    """argparse type of ``--columns``: comma-separated names or indices, none empty."""
    names = tuple(part.strip() for part in text.split(","))
    if not all(names):
        raise argparse.ArgumentTypeError(f"{quote(text)}: expected names or indices such as x,y")
    return names


def add_capacity_argument(parser: argparse.ArgumentParser, ranges: bool = False) -> None:
    """``--capacity`` (knapsack; ``generate``, ``solve``, ``predict``, ``eval``, ``score``,
    ``plot``): a number or a share of each instance's total weight, with ``ranges`` also a
    range of shares drawn per instance (``generate``)."""
    drawn = ", or a range drawn per instance (10%%-50%%)" if ranges else ""
    parser.add_argument(
        "--capacity",
        type=capacity_spec,
        metavar="C|P%" + ("|P%-Q%" if ranges else ""),
        help="knapsack: the capacity, a number (12.5) or a share of each instance's total "
        f"weight (30%%){drawn}; it replaces any a file states (default: the file's, else "
        "Bello et al.'s min(n/4, 25))",
    )


def capacity_spec(text: str) -> CapacitySpec:
    """argparse type of ``--capacity`` (:meth:`CapacitySpec.parse`)."""
    try:
        return CapacitySpec.parse(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def capacity_text(text: str) -> str:
    """argparse type of ``train --capacity``: ``text`` as given, once :func:`capacity_spec`
    takes it (the run's configuration keeps the text, ``TrainConfig.capacity``)."""
    capacity_spec(text)
    return text


def stating(task: Task, points: np.ndarray, capacity: CapacitySpec | None) -> np.ndarray:
    """``points`` under ``--capacity`` (unchanged without one).

    Raises:
        ValueError: a task without a capacity, or a capacity refused for these items, in one
            line naming ``--capacity``.
    """
    if capacity is None:
        return points
    try:
        return task.with_capacity(points, capacity)
    except ValueError as err:
        raise ValueError(f"--capacity {capacity}: {err}") from None


class Prepared(NamedTuple):
    """One instance read for a command.

    Attributes:
        points: (n, dim) in the input's units.
        unit: its image in [0, 1]^dim, what a model or solver works on.
        mapping: the map between the two (None when the instance was inside already).
        line: where it came from (or None).
        seq: the file's reference label (commands that read labels), else None.
        names: the points' names (a CSV name column), else None.
        labelled: whether the file gave a label, read or skipped.
        distances: the file's distance rule (:attr:`ptrnet.io.instances.Instance.distances`;
            None: the task's own), which :func:`measured_task` gives the task.
        note: how the file was read, when that is not the plain reading.
    """

    points: np.ndarray
    unit: np.ndarray
    mapping: UnitMap | None
    line: int | None
    seq: np.ndarray | None = None
    names: tuple[str, ...] | None = None
    labelled: bool = False
    distances: Distances | None = None
    note: str | None = None


def prepare(
    instance: Instance, task: Task, path: str, capacity: CapacitySpec | None = None
) -> Prepared:
    """One instance of ``path`` under ``capacity`` (:func:`stating`; a file's label, made
    under the file's capacity, is then dropped) with its unit-square form (itself for a task
    that is not ``shape_invariant``).

    Raises:
        InputError: an instance the task cannot take (:meth:`Task.check_points`) or a
            capacity refused for it, at its line.
    """
    task = task if instance.distances is None else task.with_distances(instance.distances)
    try:
        points = stating(task, instance.points, capacity)
        task.check_points(points)
    except ValueError as err:
        raise InputError(path, instance.line, str(err)) from None
    unit, mapping = model_image(task, points)  # of the points, or of the cities' projection
    return Prepared(
        points,
        unit,
        mapping,
        instance.line,
        instance.seq if capacity is None else None,  # a label under the file's capacity
        instance.names,
        instance.labelled,
        instance.distances,
        instance.note,
    )


def measured_task(task: Task, instances: Sequence[Prepared]) -> Task:
    """``task`` measuring lengths by the instances' distance rule (one file has one), or
    ``task`` itself when they name none: the task whose references, costs and metrics a
    command reports (great-circle km for latitude/longitude columns)."""
    rules = {inst.distances for inst in instances}
    rule = rules.pop() if len(rules) == 1 else None
    return task if rule is None else task.with_distances(rule)


def read_args(
    args, path: str, task: Task, max_n: int | None = None, *, labels: bool = False
) -> list[Prepared]:
    """:func:`read_prepared` with the reading options every command shares taken from its
    parsed ``args``: ``--format``, ``--columns`` and knapsack's ``--capacity``."""
    return read_prepared(
        path, task, args.format, max_n, columns=args.columns, labels=labels, capacity=args.capacity
    )


def read_prepared(
    path: str,
    task: Task,
    fmt: str = "auto",
    max_n: int | None = None,
    *,
    columns: tuple[str, ...] | None = None,
    labels: bool = False,
    capacity: CapacitySpec | None = None,
) -> list[Prepared]:
    """The instances of ``path`` (layout ``fmt``, CSV ``columns``), prepared under
    ``capacity`` (``--capacity``: replacing any the file states); paper-format labels read as
    references with ``labels`` (:func:`ptrnet.io.instances.read_instances`).

    Raises:
        UsageError: an unknown ``fmt``, ``columns`` that do not fit the task or layout, or a
            ``capacity`` for a task without one.
        InputError: a malformed file, an instance over ``max_n`` points or one the capacity
            does not suit (at its line).
    """
    if capacity is not None and not task.capacity_column:
        raise UsageError(f"--capacity: task {task.name} has no capacity (knapsack has)")
    read = read_instances(path, task, fmt, columns=columns, labels=labels)
    instances = [prepare(instance, task, path, capacity) for instance in read]
    check_size(path, instances, max_n, "the model")
    return instances


def references(
    args: argparse.Namespace, path: str, task: Task, instances: list[Prepared]
) -> list[np.ndarray]:
    """Each instance's reference: the file's label, else ``task.solve`` on its unit image
    (what ``ptrnet solve`` writes with the default solver), said on stderr unless
    ``args.quiet``.

    Raises:
        InputError: an unlabelled instance without a solution (collinear points for a hull),
            at its line.
    """
    unlabelled = sum(inst.seq is None for inst in instances)
    if unlabelled and not getattr(args, "quiet", False):
        print(
            f"ptrnet: {path}: no labels on {unlabelled} instance(s); their references are the "
            f"{task.name} solver's (as ptrnet solve writes them)",
            file=sys.stderr,
        )
    return [
        inst.seq if inst.seq is not None else solved(task, path, inst).sequence
        for inst in instances
    ]


def solved(task: Task, path: str, inst: Prepared, solver: str | None = None) -> Reference:
    """``task.reference`` of the instance's unit image with ``solver`` (None: the task's
    default); a solver's refusal (past its bound on work included) becomes an error at the
    instance's line."""
    try:  # a distance rule measures the file's own coordinates (degrees, TSPLIB's)
        return task.reference(inst.unit if inst.distances is None else inst.points, solver)
    except (DegenerateInstanceError, ValueError) as err:
        raise InputError(path, inst.line, f"cannot solve: {err}") from None


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
    unit_square: bool = True,
) -> None:
    """The notes of the module docstring on stderr, unless ``args.quiet``: the degenerate
    warnings only with ``degenerate``, the map into the unit square only with ``unit_square``
    (a model's decoding; a solver's answer does not depend on it)."""
    if getattr(args, "quiet", False):
        return
    ignored = sum(inst.labelled and inst.seq is None for inst in instances)
    if ignored:
        print(
            f"ptrnet: {path}: ignored the labels ('output' parts) of {ignored} instance(s); "
            f"{args.command} reads only the points",
            file=sys.stderr,
        )
    if instances and instances[0].note:
        print(f"ptrnet: {path}: {instances[0].note}", file=sys.stderr)
    mapped = [inst for inst in instances if inst.mapping is not None and inst.distances is None]
    if mapped and unit_square:
        where = f"{path}:{mapped[0].line}" if mapped[0].line else path
        print(
            f"ptrnet: mapped {len(mapped)} instance(s) into the unit square, keeping the aspect "
            f"ratio (first, {where}: {mapped[0].mapping.describe()}); results are in the "
            "input's units",
            file=sys.stderr,
        )
    if not degenerate:
        return
    for inst in instances:
        warning = task.degenerate_warning(inst.unit)
        if warning:
            where = f"{path}:{inst.line}" if inst.line else path
            print(f"ptrnet: warning: {where}: {warning}", file=sys.stderr)


@contextmanager
def located(path: str, task: Task, instances: Sequence[Prepared]) -> Iterator[None]:
    """Decoding inside: a :class:`~ptrnet.decoding.search.DecodingError` (an instance with no
    trustworthy output) becomes an InputError at the instance's ``FILE:LINE``; for a planar
    instance without 2-D extent, the message says why no output can obey the task's rules and
    that ``--protocol paper`` writes the model's output as decoded."""
    from ptrnet.decoding.search import DecodingError  # torch: only once decoding starts

    try:
        yield
    except DecodingError as err:
        instance = instances[err.instance]
        planar = task.dim == 2 and task.shape_invariant
        reason = planar_degeneracy(instance.unit) if planar else None
        problem = err.problem
        if reason:
            problem = (
                f"degenerate instance ({reason}): no {task.name} output obeys the task's rules; "
                "--protocol paper writes the model's output as decoded"
            )
        raise InputError(path, instance.line, problem) from None
