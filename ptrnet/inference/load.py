"""Load a trained model: :func:`load_model` turns a model name into a :class:`LoadedModel`
(decoded by :mod:`ptrnet.inference.predict`).

A model is named by a run directory (its ``best.safetensors``, else ``last.safetensors``) or a
checkpoint file; no name (``None``) means the task's bundled default model, shipped inside the
package in ``ptrnet/bundled/<task>/``. :func:`resolve_checkpoint` is the single place that turns a
name into a file.

A model directory may route instance sizes to other models (:data:`SIZES_JSON`, read by
:func:`read_size_routes`): the bundled Delaunay folder sends n = 5 to its wider n = 5 model. A
loaded model then carries those models as :attr:`LoadedModel.routes`, and :func:`predict`
decodes each instance with the one that serves its size (:meth:`LoadedModel.for_size`), so
every front end that loads a directory picks by size without knowing it. A route may also set
the local window its sizes decode through when the caller names none (the bundled TSP folder:
n >= 201 through a window of 50, :mod:`ptrnet.decoding.window`), or serve the instances that
state a capacity (``"capacity": true``; the bundled knapsack folder sends a user's capacity to
its capacity-conditioned model, and keeps Bello et al.'s to the model of their protocol).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ptrnet.compute.devices import resolve_device
from ptrnet.decoding.options import check_window
from ptrnet.io.errors import InputError, UsageError
from ptrnet.io.json_file import read_json_file
from ptrnet.io.limits import MAX_MODEL_POINTS
from ptrnet.model import build_model
from ptrnet.quoting import quote
from ptrnet.runs import CHECKPOINT_NAMES
from ptrnet.runs.checkpoint import CheckpointError, load_checkpoint
from ptrnet.tasks import SizeRange, Task, get_point_task

if TYPE_CHECKING:
    from torch import nn

    from ptrnet.runs.config import RunConfig

BUNDLED = "bundled"  # the name of a task's bundled model wherever a model is named
BUNDLED_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bundled")
#: The file in a model directory that routes instance sizes to models in its sub-folders:
#: ``{"models": [{"sizes": "5", "dir": "n5"}, {"sizes": "201-1000", "dir": "big",
#: "window": 50}, ...]}``; sizes no entry lists go to the directory's own model. ``window``
#: (optional) is the local window those sizes decode through unless the caller sets one;
#: ``"capacity": true`` (optional) routes the instances that state a capacity (knapsack),
#: of ``sizes`` (default: every size), and only those.
SIZES_JSON = "sizes.json"


def bundled_model_dir(task: Task | str) -> str:
    """The folder of the bundled default model for ``task`` (it may not exist)."""
    return os.path.join(BUNDLED_DIR, task if isinstance(task, str) else task.name)


@dataclass(frozen=True)
class LoadedModel:
    """A model ready for decoding.

    Attributes:
        model: the network, in eval mode, on the device it was loaded to (the CPU unless
            :func:`load_model` was given another).
        config: the run configuration it was trained with.
        path: the checkpoint file it was read from.
        step: optimiser steps it had been trained for.
        info: the checkpoint's record (e.g. ``info["best"]``: validation metrics).
        routes: the models that serve other instance sizes (:data:`SIZES_JSON`); this one
            serves every size none of them lists.
        window: the local window this model decodes through when the decoding options leave
            ``window`` None: its size route's ``window``, else 0 (off).
    """

    model: nn.Module
    config: RunConfig
    path: str
    step: int
    info: dict[str, Any]
    routes: tuple[SizeRoute, ...] = ()
    window: int = 0

    @property
    def task(self) -> str:
        """Name of the task the model was trained on."""
        return self.config.train.task

    def for_size(self, n: int, capacity: bool = False) -> LoadedModel:
        """The model that decodes an instance of n points (stating a capacity, with
        ``capacity``): the route listing n (and ``capacity``), else this."""
        return next(
            (
                r.model
                for r in self.routes
                if r.sizes.lo <= n <= r.sizes.hi and r.capacity == capacity
            ),
            self,
        )

    def to(self, device: Any) -> LoadedModel:
        """Move this model and every routed one to ``device`` (a torch device); returns self."""
        for loaded in (self, *(route.model for route in self.routes)):
            loaded.model.to(device)
        return self


@dataclass(frozen=True)
class SizeRoute:
    """Instances with n in ``sizes`` (those that state a capacity with ``capacity``, the
    others without) decode with ``model``."""

    sizes: SizeRange
    model: LoadedModel
    capacity: bool = False


def model_directory(path: str | os.PathLike[str] | None, task: Task | str | None) -> str | None:
    """The directory ``path`` names (the bundled folder of ``task`` for None or ``"bundled"``),
    or None when it names a file (or nothing).

    Raises:
        UsageError: no path given and no bundled model for ``task``.
    """
    if path is None or path == BUNDLED:
        bundled = None if task is None else bundled_model_dir(task)
        if bundled is None or not os.path.isdir(bundled):
            raise UsageError("no bundled model for this task: pass --model RUN_DIR_OR_CHECKPOINT")
        return bundled
    return os.fspath(path) if os.path.isdir(path) else None


def resolve_checkpoint(path: str | os.PathLike[str] | None, task: Task | str | None = None) -> str:
    """The checkpoint file that ``path`` (a run directory or a file) names.

    With ``path`` None or ``"bundled"``, the bundled default model of ``task`` (write
    ``./bundled`` for a directory of that name).

    Raises:
        UsageError: no path given and no bundled model for ``task``.
        InputError: the path does not exist, or a directory holds no checkpoint.
    """
    folder = model_directory(path, task)
    if folder is not None:
        for name in CHECKPOINT_NAMES:
            if os.path.isfile(os.path.join(folder, name)):
                return os.path.join(folder, name)
        raise InputError(
            folder,
            None,
            f"no checkpoint in this directory (expected {' or '.join(CHECKPOINT_NAMES)})",
        )
    if not os.path.exists(path):
        raise InputError(path, None, "no such model directory or checkpoint file")
    return os.fspath(path)


def load_model(
    path: str | os.PathLike[str] | None, task: Task | str | None = None, device: str = "cpu"
) -> LoadedModel:
    """Load the model at ``path`` (run directory or checkpoint file) for inference; a directory
    with a :data:`SIZES_JSON` brings the models it routes sizes to (:attr:`LoadedModel.routes`).

    Checkpoints hold CPU tensors whatever device trained them, so any of them loads anywhere.

    Args:
        path: run directory or checkpoint file; None = the bundled default model for ``task``.
        task: if given, the task the model must have been trained on.
        device: where the model decodes: ``cpu`` (default), ``auto``, ``cuda`` or ``cuda:N``
            (:mod:`ptrnet.compute.devices`); decoding follows the model's device.

    Raises:
        UsageError: no path, the model was trained on another task, a task whose inputs are not
            points, or an unknown or absent device.
        InputError: missing path, an unreadable or inconsistent checkpoint, or a
            :data:`SIZES_JSON` that is malformed or routes to a model of another task.
    """

    try:
        target = resolve_device(device)
        task = get_point_task(task, "a Ptr-Net model") if isinstance(task, str) else task
    except ValueError as err:
        raise UsageError(str(err)) from None
    loaded = _load_file(resolve_checkpoint(path, task), target)
    if task is not None:
        check_task(loaded, task)
    folder = model_directory(path, task)
    if folder is None:
        return loaded
    routes = []
    shared: dict[str, LoadedModel] = {}  # sub-folder -> its model, loaded once
    for sizes, sub, window, capacity in read_size_routes(folder):
        route = shared.get(sub) or _load_file(resolve_checkpoint(sub), target)
        shared[sub] = route
        problem = None
        if route.task != loaded.task:
            problem = f"routes n = {sizes} to a {route.task} model ({route.path})"
        elif window and route.config.model.decoder != "heavy":
            problem = f"window {window} for n = {sizes}: {route.path} has no heavy decoder"
        elif capacity and route.config.model.features != "capacity":
            problem = f"routes stated capacities to {route.path}, which reads none"
        if problem:
            raise InputError(os.path.join(folder, SIZES_JSON), None, problem)
        routes.append(SizeRoute(sizes, replace(route, window=window), capacity))
    return replace(loaded, routes=tuple(routes))


def _load_file(file: str, target: Any) -> LoadedModel:
    """The model of checkpoint ``file`` on the torch device ``target``, in eval mode."""

    ckpt = load_checkpoint(file)
    model = build_model(ckpt.config.model)
    try:
        model.load_state_dict(ckpt.model_state)
    except RuntimeError as err:
        first = str(err).strip().splitlines()[0]
        raise CheckpointError(file, f"weights do not fit the configuration: {first}") from None
    model.to(target).eval()
    return LoadedModel(model, ckpt.config, file, ckpt.step, ckpt.info)


def read_size_routes(folder: str) -> list[tuple[SizeRange, str, int, bool]]:
    """The (sizes, sub-folder path, window, capacity) entries of ``folder``'s
    :data:`SIZES_JSON`, none without one.

    Each entry is ``{"sizes": "LO-HI" or "N", "dir": NAME}``, NAME a sub-folder of ``folder``
    holding a checkpoint, with an optional ``"window": K`` (0 or an integer >= 2; 0 when
    absent) and an optional ``"capacity": true`` (the instances that state a capacity;
    ``sizes`` may then be left out: every size); no two entries of the same ``capacity``
    overlap in sizes. Several entries may name the same sub-folder.

    Raises:
        InputError: a path that is not a regular file, unreadable or oversized JSON
            (:mod:`ptrnet.io.json_file`), an entry of the wrong form, a NAME that is not a
            plain sub-folder name, a bad window, or overlapping sizes.
    """
    path = os.path.join(folder, SIZES_JSON)
    if not os.path.lexists(path):
        return []
    try:
        entries = read_json_file(path)["models"]
        routes = [_size_route(folder, entry) for entry in entries]
    except InputError as err:  # not a regular file, too large or deep, not JSON
        raise InputError(path, err.line, f"not a size routing file ({err.problem})") from None
    except (ValueError, KeyError, TypeError) as err:
        raise InputError(path, None, f"not a size routing file ({err})") from None
    ordered = sorted(routes, key=lambda route: (route[3], route[0].lo))
    for (a, *_, first), (b, *_, second) in zip(ordered, ordered[1:], strict=False):
        if first == second and b.lo <= a.hi:
            raise InputError(path, None, f"sizes {a} and {b} overlap")
    return routes


def _size_route(folder: str, entry: dict[str, Any]) -> tuple[SizeRange, str, int, bool]:
    """One entry of a :data:`SIZES_JSON`; raises ValueError, KeyError or TypeError."""

    capacity = entry.get("capacity", False)
    needed = {"dir"} if capacity is True else {"sizes", "dir"}
    if not needed <= set(entry) <= {"sizes", "dir", "window", "capacity"}:
        raise ValueError(
            "an entry needs the keys 'sizes' and 'dir' (only 'dir' if 'capacity' is true) "
            f"and may have 'window' and 'capacity', got {sorted(entry)}"
        )
    if not isinstance(capacity, bool):
        raise ValueError(f"'capacity' must be true or false, got {quote(capacity)}")
    name = entry["dir"]
    if not isinstance(name, str) or name in ("", ".", "..") or os.path.basename(name) != name:
        raise ValueError(f"'dir' must name a sub-folder, got {quote(name)}")
    window = entry.get("window", 0)
    check_window(window)  # a DecodeOptionError is a ValueError
    sizes = SizeRange.parse(entry.get("sizes", f"1-{MAX_MODEL_POINTS}"))
    return sizes, os.path.join(folder, name), window, capacity


def check_task(loaded: LoadedModel, task: Task | str) -> Task:
    """``task`` as a Task; raises UsageError unless the model was trained on it."""
    task = get_point_task(task, "a Ptr-Net model") if isinstance(task, str) else task
    if task.name != loaded.task:
        raise UsageError(
            f"the model at {loaded.path} was trained on {loaded.task}, not {task.name}"
        )
    return task
