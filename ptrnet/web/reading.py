"""Points pasted or dropped on the page (``POST /api/read``), read by the command line's reader.

The page never parses a file: it sends the text, the file's name (none for a paste) and the
options ``ptrnet predict`` takes (``--format``, ``--columns``), and :func:`read_answer` runs
:func:`ptrnet.io.instances.read_instances` on it, held in memory under the user's name
(:class:`ptrnet.io.text.HeldInput`): no file is written, and none is opened whatever the name
says (``/etc/passwd`` is only a name). Every layout, limit and message is the command line's;
an error is the reader's one line, ``NAME:LINE: problem``, answered 422.

A paste has no file name to tell its layout. With ``format="auto"`` a paste whose first
non-blank line holds a comma, semicolon or tab (and is no TSPLIB keyword line) is read as CSV,
what a spreadsheet copies; any other paste as ``auto`` reads a file without an extension
(TSPLIB, one point per line, the paper's format). A dropped file reads as the command line reads
the same file.

The answer is the first instance (a paper-format file may hold many; ``instances`` says how
many), in the input's units (``points``: what the page sends back to ``POST /api/predict``) and
in the unit square the model decodes (``unit``, what the page draws, with the map between
them), its point names (a CSV name column), control characters escaped by the reader, and what
the reader says about it: ``note`` (how it was read, when not plainly: latitude and longitude
columns, decimal commas) and ``distances`` (the name of the file's own length rule,
``great_circle`` for latitude and longitude, None for the task's Euclidean one), which
``POST /api/predict`` measures by. Under a rule that projects (cities on the sphere,
``projected``), ``unit`` is the image of the cities' azimuthal equidistant projection, as
``ptrnet predict`` decodes them, and ``mapping`` maps that plane (km), not the degrees;
``projection`` (:func:`projection`) gives the page what it needs to invert it, so that a city
moved or added on the board gets the latitude and longitude of where it was put. The page takes
at most
:data:`~ptrnet.web.schemas.MAX_POINTS` points; the request body is bounded by the Guard
(256 KB), and the route is heavy (it runs in one of the Guard's slots).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from fastapi import FastAPI, HTTPException
from pydantic import Field, field_validator

from ptrnet.io.errors import InputError, UsageError
from ptrnet.io.instances import EXTENSIONS, FORMATS, TSPLIB_START, Instance, read_instances
from ptrnet.io.limits import MAX_MODEL_POINTS
from ptrnet.io.text import HeldInput
from ptrnet.io.unit_square import UnitMap, model_image
from ptrnet.solvers.distances import Distances
from ptrnet.solvers.geodesy import EARTH_RADIUS_KM, centre
from ptrnet.tasks import POINT_TASKS, Task, get_point_task
from ptrnet.web.schemas import MAX_POINTS, Strict

PASTED = "pasted text"  #: the name of a paste in messages
PAGE_FORMATS = tuple(fmt for fmt in FORMATS if fmt != "npy")  # the page sends text, not bytes
NAME_LIMIT = 255  #: characters of a file name
CSV_DELIMITERS = (",", ";", "\t")


class ReadRequest(Strict):
    """A pasted or dropped file for ``task``: ``text`` (its whole content), ``name`` (the
    file's name, None for a paste), ``format`` and ``columns`` as ``ptrnet predict``'s
    ``--format`` and ``--columns`` (``"lon,lat"``: header names or 0-based indices)."""

    task: str
    text: str = Field(min_length=1)  # bounded by the Guard's body limit
    name: str | None = Field(None, min_length=1, max_length=NAME_LIMIT)
    format: str = "auto"
    columns: str | None = Field(None, min_length=1, max_length=NAME_LIMIT)

    @field_validator("task")
    @classmethod
    def _known_task(cls, name: str) -> str:
        get_point_task(name, "the page")  # raises ValueError naming the point tasks
        return name

    @field_validator("name")
    @classmethod
    def _one_line(cls, name: str | None) -> str | None:
        if name is not None and any(ord(c) < 32 or ord(c) == 127 for c in name):
            raise ValueError("a file name without control characters")
        return name

    @field_validator("format")
    @classmethod
    def _text_format(cls, fmt: str) -> str:
        if fmt not in PAGE_FORMATS:
            raise ValueError(
                f"one of {', '.join(PAGE_FORMATS)} (the page reads text; give a .npy file to "
                "ptrnet predict)"
            )
        return fmt


def column_list(columns: str | None) -> tuple[str, ...] | None:
    """``--columns``'s value as the reader takes it: comma-separated names or indices.

    Raises:
        UsageError: an empty name (``"x,"``).
    """
    if columns is None:
        return None
    names = tuple(part.strip() for part in columns.split(","))
    if not all(names):
        raise UsageError("columns: expected names or indices such as x,y")
    return names


def layout(request: ReadRequest) -> str:
    """The layout to read ``request`` in: its ``format``, except that a paste in ``auto``
    whose first non-blank line holds a comma, semicolon or tab (no TSPLIB line) is CSV.

    Raises:
        InputError: a ``.npy`` file in ``auto`` (binary; the page sends text).
    """
    if request.format != "auto":
        return request.format
    if request.name is not None:
        if EXTENSIONS.get(os.path.splitext(request.name)[1].lower()) == "npy":
            raise InputError(
                request.name,
                None,
                "a .npy file is binary and the page reads text; give it to ptrnet predict, "
                "or save the points as CSV",
            )
        return "auto"
    first = next((line.strip() for line in request.text.splitlines() if line.strip()), "")
    tabular = any(mark in first for mark in CSV_DELIMITERS)
    return "csv" if tabular and not TSPLIB_START.match(first) else "auto"


def read_answer(request: ReadRequest) -> dict[str, Any]:
    """The first instance of the request's text, as the module docstring says.

    Raises:
        InputError: what the reader finds wrong, an instance over the page's
            :data:`~ptrnet.web.schemas.MAX_POINTS` points, or one the task refuses
            (:meth:`Task.check_points`), located at the instance's line; a ``.npy`` file.
        UsageError: options the reader refuses (columns for another layout, a TSPLIB file for
            a task other than tsp).
    """
    task = POINT_TASKS[request.task]
    name = request.name or PASTED
    held = HeldInput(name, request.text.encode("utf-8"))
    fmt = layout(request)
    instances = read_instances(held, task, fmt, columns=column_list(request.columns))
    first = instances[0]
    rule = first.distances
    measured = task if rule is None else task.with_distances(rule)  # as ptrnet predict's
    check_instance(name, measured, first)
    unit, mapping = model_image(measured, first.points)
    return {
        "name": name,
        "format": fmt,
        "points": first.points.tolist(),
        "unit": unit.tolist(),
        "mapping": None if mapping is None else unit_map(mapping),
        "names": None if first.names is None else list(first.names),
        "note": first.note,  # how the file was read, when not plainly (the reader's words)
        "distances": None if rule is None else rule.name,
        "units": None if rule is None else rule.unit,  # of its lengths; None: the file's own
        "projected": rule is not None and rule.projected,  # unit: the cities' projection
        "projection": projection(rule, measured.coordinates(first.points)),
        "line": first.line,
        "instances": len(instances),
        "labelled": first.labelled,
    }


def projection(rule: Distances | None, points: np.ndarray) -> dict[str, Any] | None:
    """How the board's plane was made from ``points`` (n, 2), the file's coordinates (a
    customer's without its demand), under a projecting ``rule`` (None for
    any other): the azimuthal equidistant projection about ``centre`` (``[lon, lat]`` degrees,
    :func:`ptrnet.solvers.geodesy.centre` of the cities) on a sphere of ``radius_km``, and the
    ``form`` the file writes a place in (:attr:`Distances.form`). ``ptrnet/web/static/geo.js``
    inverts it: unit square -> ``mapping`` -> km -> degrees -> the file's coordinates."""
    if rule is None or not rule.projected:
        return None
    return {
        "centre": list(centre(rule.lon_lat(points))),
        "radius_km": EARTH_RADIUS_KM,
        "form": rule.form,
    }


def check_instance(name: str, task: Task, instance: Instance) -> None:
    """Raise InputError, at the instance's line, unless the page can take it."""
    n = len(instance.points)
    if n > MAX_POINTS:
        raise InputError(
            name,
            instance.line,
            f"{n} points; the page takes at most {MAX_POINTS} "
            f"(ptrnet predict decodes up to {MAX_MODEL_POINTS})",
        )
    try:
        task.check_points(instance.points)
    except ValueError as err:
        raise InputError(name, instance.line, str(err)) from None


def unit_map(mapping: UnitMap) -> dict[str, Any]:
    """The map into the unit square as the page shows it: ``unit = (x - offset) / scale``."""
    return {
        "offset": np.asarray(mapping.offset, dtype=np.float64).tolist(),
        "scale": float(mapping.scale),
        "text": mapping.describe(),
    }


def add_read_route(app: FastAPI) -> None:
    """``POST /api/read``: :func:`read_answer`, a reader's error as 422 with its one line."""

    @app.post("/api/read")
    def read(request: ReadRequest) -> dict[str, Any]:
        try:
            return read_answer(request)
        except (InputError, UsageError) as err:
            raise HTTPException(422, str(err)) from None
