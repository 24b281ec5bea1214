"""The Python API's solver: :meth:`Solver.solve` instances with a model that
:func:`ptrnet.api.loading.load` loaded (docs/api.md).

A thin layer over :mod:`ptrnet.inference`: the same models (:func:`ptrnet.inference.load_model`)
and the same decoding (:func:`ptrnet.inference.predict_outputs`, one pass per instance), with
the option names of ``ptrnet eval`` (``decode``, ``beam_width``, ``average_views``,
``search_views``, ``multistart``, ``pick``, ``protocol``, ``constraints``), the searches after
decoding a task offers as ``ptrnet predict|eval`` runs them (``improve``, ``iterations``, and
each local search by name, TSP's ``two_opt`` and ``or_opt``: one
:class:`~ptrnet.searches.plan.SearchPlan`, run by :func:`ptrnet.searches.run.run_searches`),
inputs in any obvious form and one
:class:`ptrnet.api.results.Result` per instance. Training from Python is
:func:`ptrnet.api.training.train` (``ptrnet.train``).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ptrnet.api.results import Result, output_cost
from ptrnet.decoding.options import (
    DEFAULT_BEAM_WIDTH,
    DEFAULT_DECODE_BATCH,
    DecodeOptionError,
    DecodeOptions,
)
from ptrnet.inference import LoadedModel, predict_outputs
from ptrnet.io.errors import UsageError
from ptrnet.io.limits import MAX_COORDINATE, check_seed, check_threads
from ptrnet.searches.plan import SearchPlan, declared
from ptrnet.searches.run import run_searches
from ptrnet.solvers.distances import GREAT_CIRCLE
from ptrnet.tasks import Task, get_task
from ptrnet.tasks.searches import LocalSearch
from ptrnet.training.cpu import decoding_threads, torch_threads

# The answer to the option the three view options replaced.
VIEWS_SPLIT = (
    "views= is split into options that say what they do: views=2 or 4 is average_views=2 or 4; "
    "views=8 is search_views=8 (with average_views=4 for convex_hull and tsp, as views=8 "
    "searched); decode='multistart' with views=V is multistart=V"
)

if TYPE_CHECKING:
    import torch
    from torch import nn

    from ptrnet.decoding.options import DecodeOptions

__all__ = ["Solver", "as_instances", "decode_options", "stating_capacity"]


class Solver:
    """A loaded model and its task; :meth:`solve` decodes instances.

    Attributes:
        loaded: the model with its configuration and checkpoint record
            (:class:`ptrnet.inference.LoadedModel`).
        task: the task the model was trained on.
        threads: the torch threads :meth:`solve` decodes with when its call names none; None =
            the idle cores at the time of the call (:func:`ptrnet.api.loading.load`).
    """

    def __init__(self, loaded: LoadedModel, threads: int | None = None) -> None:
        self.loaded = loaded
        self.task: Task = get_task(loaded.task)
        self.threads = None if threads is None else check_threads(threads)

    @property
    def model(self) -> nn.Module:
        """The network (an ``nn.Module`` in eval mode); with size routes (the bundled Delaunay
        models), the one that serves the sizes no route lists."""
        return self.loaded.model

    @property
    def device(self) -> torch.device:
        """The device the model's weights are on."""
        return next(self.model.parameters()).device

    def __repr__(self) -> str:
        return f"Solver(task={self.task.name!r}, path={self.loaded.path!r}, device={self.device})"

    def solve(
        self,
        points: Any,
        *,
        capacity: Any = None,
        return_probs: bool = False,
        improve: str | None = None,
        iterations: int | None = None,
        threads: int | None = None,
        geo: bool = False,
        **options: Any,
    ):
        """Decode ``points`` with the model.

        Args:
            points: one instance, an (n, dim) array (sort also takes an (n,) array), or several:
                a list of instances (sizes may differ) or a (B, n, dim) array or tensor.
            capacity: knapsack: the capacity, as ``--capacity`` takes it: a number > 0 or a
                share of each instance's total weight (``"30%"``), for every instance, or a
                sequence of them, one per instance (None: Bello et al.'s ``min(n / 4, 25)``).
                A number counts rounded down to float32 (:mod:`ptrnet.tasks.knapsack`).
            return_probs: fill each result's ``probs`` (the pointer distributions).
            improve: a rebuild search the task offers (``Task.searches``), as ``--improve``
                runs it: tsp: ``"rrc"`` searches for shorter tours after decoding (Random
                Re-Construct with the model's heavy or light decoders, seeded by ``seed``);
                None or ``"none"``: no search.
            iterations: with ``improve``: rounds per answer (an integer >= 1; default 100, as
                ``--iterations``).
            geo: tsp and cvrp: the points are cities as ``(longitude, latitude)`` in degrees
                (x east, y north; a cvrp row's demand and capacity after them): the model
                reads their azimuthal equidistant projection about the instance's centre, and
                each ``cost``, the searches and their lengths are great-circle kilometres
                (:mod:`ptrnet.solvers.geodesy`), as the command line reads a CSV with ``lat``
                and ``lon`` columns.
            threads: torch threads for this call, an integer from 1 to 4,096 (None: the
                solver's ``threads``, else the cores other processes leave idle now, as
                ``ptrnet predict`` chooses them: :func:`ptrnet.training.cpu.decoding_threads`).
                Set while the call runs, then torch's count before it is set back.
            **options: each local search the task offers, by name, True to run it after
                decoding as its flag does: tsp: ``two_opt=True`` (2-opt each tour to a local
                optimum on the instance's own distances, ``--two-opt``), ``or_opt=True``
                (2-opt and Or-opt moves, a run of 1-3 cities moved elsewhere, in turn until
                neither shortens the tour, ``--or-opt``; includes ``two_opt``); and the
                decoding, named as the options of ``ptrnet eval``: ``decode``
                (a registered strategy: ``greedy``, ``sample``, ``beam``, ...),
                ``beam_width``, ``samples``, ``temperature``, ``average_views``,
                ``search_views``, ``multistart``, ``pick``, ``window``, ``protocol``,
                ``constraints``, ``seed``, ``batch_size`` (:func:`decode_options`). By
                default every output obeys the task's rules (a closed convex hull, a tour, a
                permutation); ``protocol="paper"`` decodes as the paper does (hull and
                Delaunay unconstrained, so an output may be open or cross itself).

        The instances are decoded once: each result's ``log_prob`` and ``probs`` come from the
        decoding pass that chose its ``sequence``. A searched tour (``improve``, ``two_opt``,
        ``or_opt``) is not the model's output: its ``log_prob`` is None, as the command line's
        JSON drops it, and its ``sequence`` is the command line's for the same points, options
        and seed.

        An instance with a coordinate outside [0, 1] is decoded on its image in the unit square
        the models were trained on (aspect ratio kept, :mod:`ptrnet.io.unit_square`), as the
        command line and the web page decode it; its result's ``cost`` is in the input's units.

        Returns:
            One :class:`Result` for one instance, else a list in the input's order.

        Raises:
            ValueError: a bad search option (``improve`` or a local search the task does not
                offer, any search with ``constraints="none"``, ``iterations`` without
                ``improve`` or outside 1..1,000,
                ``return_probs`` with a search, RRC with a model without a heavy or light decoder),
                a bad decoding option (a window the model cannot use included, a
                seed outside 0..2^64 - 1), input that is not instances of the task, a
                coordinate beyond +-1e100, an instance over the 1,000 points a model
                decodes, a tensor whose values cannot be read here (meta, or a device this
                torch cannot copy from), a search too large for memory (beam width x views
                x searches x starts x points, docs/reliability.md), or an instance the model
                has no valid output for (its scores overflow float32): each one line, naming
                the instance.
            ValueError: also ``threads`` that is not an integer from 1 to 4,096, ``geo`` that
                is not a bool or is True for a task other than tsp and cvrp, or with ``geo`` a
                latitude outside [-90, 90] or longitude outside [-180, 180].
            TypeError: an option that is not one of the above (``views``: naming the options
                that replaced it), or complex points.
        """

        if "views" in options:
            raise TypeError(VIEWS_SPLIT)

        task = self._measuring(geo)
        local = {name: options.pop(name) for name in declared(LocalSearch) if name in options}
        search = SearchPlan.from_keywords(improve, iterations, local)
        search = search.for_task(task, options.get("constraints"))
        if search and return_probs:
            raise ValueError(
                "return_probs: the distributions are the decoded tour's, not the searched one's"
            )
        count = self.threads if threads is None else check_threads(threads)
        instances, single = as_instances(task, points)
        instances = stating_capacity(task, instances, capacity)
        try:
            decoding = decode_options(task, **options)
            with torch_threads(decoding_threads(count)):
                results = self._results(task, instances, decoding, return_probs, search)
        except UsageError as err:  # the command line's name for a refused option or size
            raise ValueError(str(err)) from None
        return results[0] if single else results

    def _measuring(self, geo: bool) -> Task:
        """The model's task, measuring great-circle kilometres with ``geo``.

        Raises:
            ValueError: ``geo`` that is not a bool, or ``geo=True`` for a task without
                lengths.
        """
        if not isinstance(geo, bool | np.bool_):
            raise ValueError(f"geo={geo!r}: True or False")
        if not geo:
            return self.task
        if self.task.distances is None:
            name = self.task.name
            raise ValueError(f"geo=True: task {name} measures no distances (tsp and cvrp do)")
        return self.task.with_distances(GREAT_CIRCLE)

    def _results(
        self,
        task: Task,
        instances: list[np.ndarray],
        options: DecodeOptions,
        return_probs: bool,
        search: SearchPlan,
    ) -> list[Result]:
        """Decode ``instances`` once (on their unit-square images), run ``search`` on the
        answers (seeded by ``options.seed``; no log-likelihood after it) and score each output
        in the input's units."""

        found = predict_outputs(self.loaded, task, instances, options, return_probs=return_probs)
        sequences = [item.sequence for item in found]
        scores = [item.log_prob for item in found]
        if search:  # a searched answer is not the model's output: no log-likelihood
            search = replace(search, seed=options.seed)
            sequences = run_searches(self.loaded, task, instances, sequences, search)
            scores = [None] * len(sequences)
        return [
            Result(
                sequence=seq,
                cost=output_cost(task, points, seq),
                log_prob=score,
                valid=bool(task.is_valid(points, seq)),
                probs=item.probs,
            )
            for points, item, seq, score in zip(instances, found, sequences, scores, strict=True)
        ]


def stating_capacity(task: Task, instances: list[np.ndarray], capacity: Any) -> list[np.ndarray]:
    """``instances`` under ``capacity`` (:meth:`Solver.solve`'s keyword: one for all, or one
    per instance); unchanged for None.

    Raises:
        ValueError: a task without a capacity, a capacity it refuses, or a sequence of
            capacities of another length than ``instances``, naming the instance.
    """
    if capacity is None:
        return instances
    if not task.capacity_column:
        raise ValueError(f"capacity: task {task.name} has no capacity (knapsack has)")
    if np.ndim(capacity) == 0:
        each = [capacity] * len(instances)
    else:
        each = list(capacity)
        if len(each) != len(instances):
            raise ValueError(
                f"capacity: {len(each)} capacities for {len(instances)} instance(s); give one "
                "for all or one per instance"
            )
    out = []
    for k, (points, value) in enumerate(zip(instances, each, strict=True)):
        try:
            out.append(
                task.with_capacity(points, value.item() if hasattr(value, "item") else value)
            )
        except ValueError as err:
            where = f" of instance {k + 1}" if len(instances) > 1 else ""
            raise ValueError(f"capacity{where}: {err}") from None
    return out


def decode_options(
    task: Task,
    *,
    decode: str = "greedy",
    beam_width: int = DEFAULT_BEAM_WIDTH,
    samples: int = 1,
    temperature: float = 1.0,
    average_views: int = 1,
    search_views: int = 1,
    multistart: int | bool = 0,
    pick: str = "likely",
    window: int | None = None,
    protocol: str = "valid",
    constraints: str | None = None,
    seed: int = 0,
    batch_size: int = DEFAULT_DECODE_BATCH,
) -> DecodeOptions:
    """The :class:`ptrnet.decoding.options.DecodeOptions` these keywords (the names of the
    ``ptrnet eval`` options: ``decode`` a registered strategy, :mod:`ptrnet.decoding.strategies`;
    ``beam_width``, ``samples``, ``temperature`` and ``seed`` the options strategies read)
    describe, checked against ``task`` and with ``constraints`` resolved when None: the task's
    rules under ``protocol="valid"`` (the default: every output well formed), the paper's mask
    for the task under ``protocol="paper"`` (hull and Delaunay unconstrained, as ``ptrnet eval``
    compares with the paper). ``constraints`` (``"none"`` or ``"task"``), when given, overrides
    the protocol's mask.

    Raises:
        ValueError: an option the decoder refuses (an unknown strategy, pick, protocol or
            constraint mode, a beam width, number of samples or batch size below 1, samples or
            a temperature for a strategy that reads none, ``pick="shortest"`` outside
            TSP beam search, a view count the task cannot use, a seed that is not an integer
            from 0 to 2^64 - 1 as ``--seed`` takes), named in the message.
    """

    seed = check_seed(seed)  # whatever the strategy, as the command line checks --seed
    try:
        options = DecodeOptions(
            strategy=decode,
            beam_width=beam_width,
            samples=samples,
            temperature=temperature,
            average_views=average_views,
            search_views=search_views,
            multistart=multistart,
            pick=pick,
            window=window,
            protocol=protocol,
            constraints=constraints,
            seed=seed,
            batch_size=batch_size,
        )
        return options.for_task(task)
    except DecodeOptionError as err:  # named by this function's keyword, ``decode=``
        keyword = "decode" if err.option == "strategy" else err.option
        raise ValueError(f"{keyword}: {err}") from None


def as_instances(task: Task, points: Any) -> tuple[list[np.ndarray], bool]:
    """``points`` as a list of (n, dim) float64 arrays, and whether it was one instance.

    One instance: an (n, dim) array-like (or (n,) for a 1-D task such as sort). Several: a
    (B, n, dim) array-like or tensor, or a list of instances of any sizes.

    An empty list or (0,) array is no instance at all: an empty list comes back.

    Raises:
        ValueError: an empty instance ((0, dim)), values that are not finite numbers or beyond
            +-1e100, the wrong shape, or a tensor whose values cannot be read here (a meta
            tensor, a device this torch cannot copy from).
        TypeError: complex values (never cut to their real part).
    """
    if hasattr(points, "detach"):  # a torch tensor, on any device
        points = _tensor_values(task, points)
    elif isinstance(points, list | tuple):  # instances, tensors among them
        points = [_tensor_values(task, p) if hasattr(p, "detach") else p for p in points]
    try:
        array = _real_array(task, points)
    except IntegerTooLarge:
        raise
    except ValueError:  # ragged: a list of instances of different sizes
        if isinstance(points, (str, bytes)) or not isinstance(points, Sequence):
            raise ValueError(
                f"expected {task.name} instances, got {type(points).__name__}"
            ) from None
        return [_instance(task, p) for p in points], False
    if array.size == 0 and array.ndim == 1:
        return [], False
    one = array.ndim == 1 or (array.ndim == 2 and (task.dim > 1 or array.shape[1] == 1))
    if one:
        return [_instance(task, array)], True
    if array.ndim in (2, 3) and len(array) > 0:
        return [_instance(task, p) for p in array], False
    raise ValueError(f"{task.name} instances are (n, {task.dim}) arrays; got shape {array.shape}")


def _tensor_values(task: Task, tensor: Any) -> np.ndarray:
    """A tensor's values as a numpy array, on the CPU.

    Raises:
        ValueError: a meta tensor (no values), or one on a device whose values cannot be read
            here (a CUDA tensor on a CPU-only build, an unknown device), naming the device.
        TypeError: complex values.
    """
    device = tensor.device
    if device.type == "meta":
        raise ValueError(f"{task.name} points are a meta tensor, which holds no values")
    if tensor.is_complex():
        raise _complex_error(task)
    try:
        return tensor.detach().cpu().numpy()
    except (AssertionError, RuntimeError, NotImplementedError, TypeError) as err:
        reason = str(err).splitlines()[0][:80] if str(err) else type(err).__name__
        raise ValueError(
            f"{task.name} points are a tensor on device {str(device)[:40]!r}, whose values "
            f"cannot be read here ({reason})"
        ) from None


def _real_array(task: Task, points: Any) -> np.ndarray:
    """``points`` as a float64 array; numpy's ValueError for ragged input.

    Raises:
        TypeError: complex values (numpy would keep the real part and only warn), or values
            that are not numbers.
        IntegerTooLarge: an integer float64 cannot hold (``10**400``), not an OverflowError.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        try:
            return np.asarray(points, dtype=np.float64)
        except np.exceptions.ComplexWarning:
            raise _complex_error(task) from None
        except OverflowError:  # a Python int past float64's range, such as 10**400
            raise IntegerTooLarge(
                f"a {task.name} instance has an integer too large for a float64 (coordinates "
                f"must be finite and within +-{MAX_COORDINATE:g})"
            ) from None
        except TypeError as err:  # Python complex numbers, or objects float() refuses
            if "complex" in str(err):
                raise _complex_error(task) from None
            raise TypeError(f"{task.name} points must be real numbers ({err})") from None


class IntegerTooLarge(ValueError):
    """A coordinate that is a Python integer past float64's range: a ValueError like any
    value out of range, never taken for ragged input."""


def _complex_error(task: Task) -> TypeError:
    return TypeError(f"{task.name} points must be real numbers, got complex values")


def _instance(task: Task, points: Any) -> np.ndarray:
    """One instance as an (n, dim) float64 array; raises ValueError on anything else (TypeError
    for complex values)."""
    array = _real_array(task, points)
    if task.dim == 1 and array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2 or array.shape[1] != task.dim or len(array) < task.min_n:
        raise ValueError(
            f"a {task.name} instance is an (n, {task.dim}) array with n >= {task.min_n}"
            f"{' (or an (n,) array)' if task.dim == 1 else ''}; got shape {array.shape}"
        )
    if not np.isfinite(array).all():
        raise ValueError(f"a {task.name} instance has a value that is not a finite number")
    if np.abs(array).max() > MAX_COORDINATE:
        raise ValueError(
            f"a {task.name} instance has a value beyond +-{MAX_COORDINATE:g} (lengths and areas "
            "in its units would not stay finite)"
        )
    task.check_points(array)  # e.g. a negative knapsack weight
    return array
