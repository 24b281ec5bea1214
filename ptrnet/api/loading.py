"""The Python API's loader (docs/api.md): :func:`load` a trained model by task name, run
directory or checkpoint file: a point task's as a :class:`~ptrnet.api.solver.Solver`, the span
task's as a :class:`~ptrnet.api.span.SpanReader`; and :class:`PointerNetwork`, the Ptr-Net
with :meth:`~PointerNetwork.from_pretrained`.
"""

from __future__ import annotations

import os

from ptrnet.api.solver import Solver
from ptrnet.api.span import SpanReader, is_span_task, load_reader
from ptrnet.compute.devices import resolve_device
from ptrnet.inference import BUNDLED, load_model, model_directory
from ptrnet.io.errors import InputError, UsageError
from ptrnet.io.limits import check_threads
from ptrnet.model.pointer import PointerNetwork as _PointerNetwork
from ptrnet.tasks import POINT_TASKS, TASKS, get_point_task
from ptrnet.training.cpu import decoding_threads, torch_threads

__all__ = ["PointerNetwork", "load"]


def load(
    model: str | os.PathLike[str] = BUNDLED,
    *,
    task: str | None = None,
    device: str = "auto",
    threads: int | None = None,
) -> Solver | SpanReader:
    """A :class:`Solver` for ``model`` (a :class:`SpanReader` for a span model).

    Args:
        model: a task name (``"tsp"``: that task's bundled model; ``"span"``: the bundled span
            pointer), ``"bundled"`` (with ``task``), or a run directory or checkpoint file
            (write ``./tsp`` for a directory named like a task; a span model's with
            ``task="span"``).
        task: the task the model must have been trained on; None = the model's own.
        device: ``auto`` (a CUDA GPU when torch sees one, else the CPU), ``cpu``, ``cuda`` or
            ``cuda:N``; a span model runs on the CPU (``auto`` or ``cpu``).
        threads: the torch threads this load and each call of the solver (or reader) run
            with, an integer from 1 to :data:`~ptrnet.io.limits.MAX_THREADS`; None = the cores
            other processes leave idle at the time of the call, the command line's rule
            (:func:`ptrnet.training.cpu.decoding_threads`). Set for the duration of a call
            only: torch's own count (``torch.set_num_threads``) is back afterwards.

    Raises:
        UsageError: ``bundled`` without a task, or a model trained on another task.
        InputError: a missing or unreadable model.
        ValueError: ``threads`` that is not an integer from 1 to 4,096, an unknown device, a
            CUDA device torch cannot see, or a task whose inputs are not points and which is
            not a span task (the copy task's models load with ``ptrnet.text.evaluate.load``).
    """

    threads = None if threads is None else check_threads(threads)
    name = os.fspath(model)
    if is_span_task(name) or is_span_task(task):
        return _load_span(name, task, device, threads)
    if name in TASKS:  # that task's bundled model (and its size routes)
        name = model_directory(None, get_point_task(name, "ptrnet.load"))
    elif name == BUNDLED:
        if task is None:
            raise UsageError("load('bundled') needs task=, e.g. load('bundled', task='tsp')")
        name = None
    elif not os.path.exists(name) and os.sep not in name:  # a mistyped task name, perhaps
        raise InputError(
            name,
            None,
            f"no such model directory or checkpoint file, nor a task ({', '.join(POINT_TASKS)})",
        )
    where = resolve_device(device)
    with torch_threads(decoding_threads(threads)):  # checking the weights runs torch ops
        loaded = load_model(name, task).to(where)
    return Solver(loaded, threads=threads)


def _load_span(name: str, task: str | None, device: str, threads: int | None) -> SpanReader:
    """:func:`load` of a span task's model: ``name`` the task (its bundled model), ``bundled``
    or a path, with ``task`` the span task it must have been trained on."""
    if task is not None and name in TASKS and name != task:
        raise UsageError(f"the bundled model of {name} was trained on {name}, not {task}")
    with torch_threads(decoding_threads(threads)):
        if task is None or name == task:
            return load_reader(None, name, device, threads)
        return load_reader(None if name == BUNDLED else name, task, device, threads)


class PointerNetwork(_PointerNetwork):
    """The Ptr-Net (:class:`ptrnet.model.pointer.PointerNetwork`) with a loader for trained
    weights; the ``ptrnet.PointerNetwork`` of the top-level package."""

    @classmethod
    def from_pretrained(
        cls, name: str | os.PathLike[str], *, device: str = "cpu"
    ) -> PointerNetwork:
        """The trained network ``name`` names, in eval mode on ``device``: a task name (its
        bundled model, e.g. ``"tsp"``), a run directory or a checkpoint file.

        Raises:
            InputError: a missing or unreadable model.
            ValueError: the checkpoint holds a baseline or a span model, not a Ptr-Net.
        """
        loaded = load(name, device="cpu").loaded
        if not isinstance(loaded.model, _PointerNetwork):
            raise ValueError(f"{name} holds a {type(loaded.model).__name__}, not a Ptr-Net")

        network = cls(loaded.config.model)
        network.load_state_dict(loaded.model.state_dict())
        return network.to(resolve_device(device)).eval()
