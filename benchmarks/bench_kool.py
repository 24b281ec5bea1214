"""ptrnet beside Kool et al.'s public pretrained TSP attention models on the same test sets:
mean tour length, mean gap to the references, wall and CPU time, one JSON line per row.

    python benchmarks/bench_kool.py --kool /tmp/attention-learn-to-route \\
        --test tsp50.txt:1000 --test tsplib \\
        --run kool20:greedy --run kool50:sample1280 --run ptrnet:greedy --run ptrnet:views8

``--test FILE[:COUNT]`` is a labelled file of ``ptrnet generate tsp`` (its first COUNT
instances; the labels are the reference tours), ``tsplib`` the 29 TSPLIB instances shipped in
``ptrnet/data/tsplib`` against their proven optima (EUC_2D lengths, the models see each instance
scaled into the unit square). ``--run SYSTEM:DECODE`` with SYSTEM ``kool20``, ``kool50``,
``kool100`` (their models trained on that many cities; ``--kool`` or ``$KOOL_CHECKOUT`` is the
path of a checkout of github.com/wouterkool/attention-learn-to-route) or a ptrnet model:
``ptrnet`` (``--ptrnet-model MODEL``, default the bundled folder) or any NAME that
``--ptrnet-model NAME=MODEL`` gives (repeatable: several ptrnet models in one process), and
DECODE one of ``greedy``, ``sampleK`` (the shortest of K tours sampled at temperature 1), and
for ptrnet also ``beamK`` (the most likely beam), ``viewsV`` (V = 2, 4: ``--average-views V``;
8: ``--search-views 8 --average-views 4``, the names the saved runs carry) and
``multistart-likely`` / ``multistart-shortest`` (``-viewsV`` appended: ``--multistart V``,
multistart on V symmetric copies, POMO's augmentation), any of them with ``-windowK`` appended
(a heavy-decoder model decodes instances of more than K cities through a local window of K,
``ptrnet eval --window K``; ``-window0``: no window; without it, the model folder's own window
per size, as ``ptrnet eval`` without ``--window``); see ``ptrnet eval``.
``--two-opt`` adds a row per run with every tour 2-opted to a local optimum (its wall time
includes the decoding). Runs on one thread; every row carries the CPU model and the load
average, and its CPU time (``time.process_time``) beside the wall time, which on a shared
machine also counts the time other processes held the core.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch

try:
    from benchmarks.kool_models import KOOL_SIZES, BenchError, kool_tours, load_kool, model_dir
except ModuleNotFoundError:  # run as a script: benchmarks/ itself is on sys.path
    from kool_models import KOOL_SIZES, BenchError, kool_tours, load_kool, model_dir
from ptrnet.decoding.options import DecodeOptionError, DecodeOptions
from ptrnet.io.errors import InputError

PTRNET_DECODES = (
    r"(greedy|sample\d+|beam\d+|views\d|multistart-(likely|shortest)(-views\d)?)(-window\d+)?"
)
KOOL_DECODES = r"greedy|sample\d+"
Decoder = Callable[[Sequence[np.ndarray]], list[np.ndarray]]


@dataclass(frozen=True)
class Run:
    """One system and decoding: ``system`` ``kool`` (with its training ``size``) or ``ptrnet``."""

    system: str
    size: int | None
    decode: str

    @property
    def samples(self) -> int:
        """K of ``sampleK``, else 0."""
        return int(self.decode[6:]) if self.decode.startswith("sample") else 0


def parse_run(spec: str, models: Sequence[str] = ("ptrnet",)) -> Run:
    """``kool20:greedy`` -> Run("kool", 20, "greedy"); ``ptrnet:beam5`` -> Run("ptrnet", ...),
    and so for any name of ``models`` (the ``--ptrnet-model NAME=MODEL`` names).

    Raises:
        BenchError: an unknown system, size or decoding.
    """
    system, _, decode = spec.partition(":")
    kool = re.fullmatch(r"kool(\d+)", system)
    if kool and int(kool.group(1)) not in KOOL_SIZES:
        raise BenchError(f"--run {spec}: Kool's pretrained TSP models are {KOOL_SIZES}")
    if not kool and system not in models:
        names = ", ".join(["kool20", "kool50", "kool100", *models])
        raise BenchError(f"--run {spec}: the system is one of {names}")
    pattern = KOOL_DECODES if kool else PTRNET_DECODES
    if not re.fullmatch(pattern, decode) or decode in ("sample0", "beam0"):
        raise BenchError(f"--run {spec}: decoding {decode!r} is not one of {pattern}")
    return Run("kool", int(kool.group(1)), decode) if kool else Run(system, None, decode)


def parse_models(specs: Sequence[str] | None) -> dict[str, str]:
    """``--ptrnet-model [NAME=]MODEL`` values -> {name: model}; a bare MODEL is ``ptrnet``'s,
    and without any, ``ptrnet`` is the bundled folder.

    Raises:
        BenchError: a name given twice, or one that is not a plain word or is a Kool name.
    """
    models: dict[str, str] = {}
    for spec in specs or ["bundled"]:
        name, _, model = spec.rpartition("=")
        name = name or "ptrnet"
        if not re.fullmatch(r"[A-Za-z_][\w-]*", name) or re.fullmatch(r"kool\d*", name):
            raise BenchError(f"--ptrnet-model {spec}: NAME must be a word, not kool...")
        if name in models:
            raise BenchError(f"--ptrnet-model {spec}: {name} is given twice")
        models[name] = model
    return models


def ptrnet_options(decode: str) -> DecodeOptions:
    """The :class:`DecodeOptions` of a ptrnet decoding name (the same as ``ptrnet eval``'s)."""
    decode, _, window = decode.partition("-window")
    return replace(_options(decode), window=int(window) if window else None)


def _options(decode: str) -> DecodeOptions:
    count = int(re.sub(r"\D", "", decode) or 0)
    if decode.startswith("sample"):  # ~1,000 searched rows per batch
        return DecodeOptions(
            "sample", samples=count, pick="shortest", batch_size=max(1, 1024 // count)
        )
    if decode.startswith("beam"):
        return DecodeOptions("beam", beam_width=count)
    if decode == "views8":  # the saved runs' name: two searches, each averaging 4 rotations
        return DecodeOptions(search_views=8, average_views=4)
    if decode.startswith("views"):  # views2, views4: rotations averaged at every step
        return DecodeOptions(average_views=count)
    if decode.startswith("multistart"):  # multistart-PICK or multistart-PICK-viewsV
        return DecodeOptions(multistart=count or 1, pick=decode.split("-")[1])
    return DecodeOptions()


@dataclass(frozen=True)
class TestSet:
    """Instances as the models see them (``points`` in [0, 1]^2), the ``coords`` tours are
    measured on, and the reference lengths; ``rounded``: TSPLIB's integer EUC_2D lengths."""

    name: str
    points: list[np.ndarray]
    coords: list[np.ndarray]
    refs: np.ndarray
    rounded: bool = False

    def lengths(self, tours: Sequence[np.ndarray]) -> np.ndarray:
        """The length of each instance's tour, as its reference is measured."""
        from ptrnet.io.tsplib import tsplib_length
        from ptrnet.solvers.tsp import tour_length

        measure = tsplib_length if self.rounded else tour_length
        return np.array([measure(c, t) for c, t in zip(self.coords, tours, strict=True)], float)


def load_test(spec: str) -> TestSet:
    """``tsplib`` or ``FILE[:COUNT]`` (see the module docstring)."""
    from ptrnet.data import TSPLIB_DIR, TSPLIB_OPTIMAL
    from ptrnet.io.paper_format import read_examples
    from ptrnet.io.tsplib import read_optimal, read_tsplib
    from ptrnet.solvers.tsp import tour_length
    from ptrnet.tasks import get_task

    if spec == "tsplib":
        optimal = read_optimal(TSPLIB_OPTIMAL)
        instances = [read_tsplib(p) for p in sorted(TSPLIB_DIR.glob("*.tsp"))]
        refs = np.array([optimal[i.name] for i in instances], float)
        return TestSet(
            "tsplib", [i.points for i in instances], [i.coords for i in instances], refs, True
        )
    path, _, count = spec.rpartition(":") if re.search(r":[^:/]*$", spec) else ("", "", spec)
    if not path or Path(spec).exists():  # no COUNT, or a file whose name holds a colon
        path, count = spec, ""
    if count and (not count.isdigit() or int(count) < 1):
        raise BenchError(f"--test {spec}: COUNT must be a positive integer, got {count!r}")
    examples = read_examples(path, get_task("tsp"))[: int(count) if count else None]
    if not examples:
        raise BenchError(f"--test {spec}: no instances")
    points = [e.points for e in examples]
    refs = np.array([tour_length(e.points, e.seq) for e in examples])
    return TestSet(Path(path).name, points, points, refs)


def mean_gap(lengths: np.ndarray, refs: np.ndarray) -> float:
    """Mean over instances of length / reference - 1 (the gap of each instance, then the mean)."""
    lengths, refs = np.asarray(lengths, float), np.asarray(refs, float)
    if lengths.shape != refs.shape or not len(refs) or (refs <= 0).any():
        raise ValueError("mean_gap needs as many positive references as lengths")
    return float(np.mean(lengths / refs - 1.0))


def by_size(decoder: Decoder, points: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``decoder`` applied to the instances of each size together, tours in the input order."""
    tours: list[np.ndarray | None] = [None] * len(points)
    for n in sorted({len(p) for p in points}):
        rows = [i for i, p in enumerate(points) if len(p) == n]
        for i, tour in zip(rows, decoder([points[i] for i in rows]), strict=True):
            tours[i] = tour
    return tours


def make_decoder(run: Run, kool: str | None, ptrnet_model: str) -> Decoder:
    """A function from instances of one size to one open tour each; ``ptrnet_model``: the
    model a ptrnet system reads (a path or ``bundled``)."""
    if run.system == "kool":
        model = load_kool(kool, run.size)
        return lambda pts: kool_tours(model, pts, run.samples)
    from ptrnet.inference import load_model, predict
    from ptrnet.tasks import get_task
    from ptrnet.tasks.sequences import open_cycle

    task, options = get_task("tsp"), ptrnet_options(run.decode)
    loaded = load_model(None if ptrnet_model == "bundled" else ptrnet_model, task)

    def decode(pts: list[np.ndarray]) -> list[np.ndarray]:
        # a size-routed folder: the model (and its window) that serves this n
        return [open_cycle(s) for s in predict(loaded, task, pts, options)]

    return decode


def cpu_model() -> str:
    """The ``model name`` of /proc/cpuinfo (what ``lscpu`` prints), or "unknown"."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def measure(run: Run, label: str, decoder: Decoder, test: TestSet, two_opt: bool) -> list[dict]:
    """The row of ``label``'s run on ``test`` and, with ``two_opt``, of its tours 2-opted."""
    from ptrnet.solvers.tsp import distance_matrix
    from ptrnet.solvers.tsp_heuristics import two_opt as polish

    torch.manual_seed(0)  # Kool's sampling draws from the global generator
    tic, cpu_tic = time.perf_counter(), time.process_time()
    tours = by_size(decoder, test.points)
    stages = [("", tours, time.perf_counter() - tic, time.process_time() - cpu_tic)]
    if two_opt:
        tours = [polish(distance_matrix(c), t) for c, t in zip(test.coords, tours, strict=True)]
        stages.append(("+2opt", tours, time.perf_counter() - tic, time.process_time() - cpu_tic))
    sizes = sorted({len(p) for p in test.points})
    rows = []
    for suffix, tours, wall, cpu in stages:
        lengths = test.lengths(tours)
        rows.append(
            dict(
                test=test.name,
                n=sizes[0] if len(sizes) == 1 else f"{sizes[0]}-{sizes[-1]}",
                count=len(tours),
                model=label,
                decode=run.decode + suffix,
                mean_length=float(lengths.mean()),
                mean_ref=float(test.refs.mean()),
                mean_gap=mean_gap(lengths, test.refs),
                wall_s=round(wall, 3),
                cpu_s=round(cpu, 3),
                cpu_ms_per_instance=round(1000 * cpu / len(tours), 3),
                threads=torch.get_num_threads(),
                cpu=cpu_model(),
                load_avg=round(os.getloadavg()[0], 1),
            )
        )
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--test", action="append", required=True, metavar="FILE[:COUNT]|tsplib")
    parser.add_argument("--run", action="append", required=True, metavar="SYSTEM:DECODE")
    parser.add_argument("--kool", default=os.environ.get("KOOL_CHECKOUT"), metavar="PATH")
    parser.add_argument("--ptrnet-model", action="append", metavar="[NAME=]MODEL")
    parser.add_argument("--two-opt", action="store_true")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    try:
        models = parse_models(args.ptrnet_model)
        runs = [parse_run(spec, list(models)) for spec in args.run]
        for run in runs:
            if run.system == "kool":
                model_dir(args.kool, run.size)  # fail before any decoding
        tests = [load_test(spec) for spec in args.test]
        for run in runs:
            model = models.get(run.system, "")
            decoder = make_decoder(run, args.kool, model)
            label = f"kool-tsp{run.size}" if run.system == "kool" else f"{run.system}:{model}"
            for test in tests:
                for row in measure(run, label, decoder, test, args.two_opt):
                    print(json.dumps(row), flush=True)
    except (BenchError, InputError, DecodeOptionError) as err:
        raise SystemExit(f"bench_kool: error: {err}") from None


if __name__ == "__main__":
    main()
