"""One instance at a time: CPU milliseconds per greedy tour decoded alone (batch of 1, one
thread), for ptrnet models and, with ``--kool``, Kool et al.'s public models in the same
process (their code as published runs under ``torch.no_grad``; ``--kool-inference-mode``
also times them under ``torch.inference_mode``, as ptrnet decodes).

    P=docs/beyond-runs/light-probe
    python benchmarks/bench_lone_decode.py --model light50=$P/pomo50/best.safetensors \\
        --kool /tmp/attention-learn-to-route --kool-inference-mode --n 20 50 100

Uniform instances (seed 0), the same for every model; each round decodes every instance once
with every model in turn; the table gives each model's median over ``--rounds`` rounds after
one warm-up round, and with Kool's under inference mode each ptrnet model's median over theirs.
A latency benchmark: the per-step cost of decoding dominates it, not the arithmetic
(docs/speed.md; ``benchmarks/step_operations.py`` counts a step's tensor operations).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from ptrnet.inference import load_model, predict  # noqa: E402

try:
    from benchmarks.bench_kool import cpu_model, parse_models, ptrnet_options
    from benchmarks.kool_models import kool_tours, load_kool
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    from bench_kool import cpu_model, parse_models, ptrnet_options
    from kool_models import kool_tours, load_kool

KOOL_IM = "kool (inference mode)"  # the row the ratios divide by


def timers(args: argparse.Namespace, n: int) -> dict:
    """{row name: function decoding one instance} for size ``n``."""
    rows = {}
    greedy = ptrnet_options("greedy")
    for name, path in parse_models(args.model).items():
        loaded = load_model(None if path == "bundled" else path, "tsp")
        rows[name] = lambda p, loaded=loaded: predict(loaded, "tsp", [p], greedy)
    if args.kool:
        model = load_kool(args.kool, min((20, 50, 100), key=lambda size: abs(size - n)))
        rows["kool"] = lambda p: kool_tours(model, [p], 0)
        if args.kool_inference_mode:

            def kool_inference_mode(p: np.ndarray) -> list:
                with torch.inference_mode():
                    return kool_tours(model, [p], 0)

            rows[KOOL_IM] = kool_inference_mode
    return rows


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", metavar="[NAME=]MODEL")
    parser.add_argument("--kool", metavar="PATH", help="Kool et al.'s checkout")
    parser.add_argument("--kool-inference-mode", action="store_true")
    parser.add_argument("--n", type=int, nargs="+", default=[20, 50, 100])
    parser.add_argument("--count", type=int, default=6, help="instances per size")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    print(f"# {cpu_model()}, one thread; CPU ms per instance decoded alone (greedy)")
    results = []
    for n in args.n:
        rng = np.random.default_rng(0)
        points = [rng.random((n, 2)) for _ in range(args.count)]
        rows = timers(args, n)
        times: dict[str, list[float]] = {name: [] for name in rows}
        for round_ in range(args.rounds + 1):
            for name, decode in rows.items():
                start = time.process_time()
                for p in points:
                    decode(p)
                if round_:  # round 0 warms up
                    times[name].append(1000 * (time.process_time() - start) / len(points))
        cells = {name: statistics.median(t) for name, t in times.items()}
        results.append(dict(n=n, **cells))
        print(f"n = {n}: " + ", ".join(f"{name} {ms:.2f} ms" for name, ms in cells.items()))
        if KOOL_IM in cells:
            print(f"  / {KOOL_IM}: " + ", ".join(ratios(cells)))
    return results


def ratios(cells: dict[str, float]) -> list[str]:
    """Each ptrnet row's median over Kool's under inference mode, as ``name 0.93``."""
    return [
        f"{name} {ms / cells[KOOL_IM]:.2f}"
        for name, ms in cells.items()
        if not name.startswith("kool")
    ]


if __name__ == "__main__":
    main()
