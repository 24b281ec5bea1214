"""What encoding each instance once saves when a set-encoder model reads many copies of it:
a POMO REINFORCE step (a sampled tour from every start, then the teacher-forced re-scoring
and its backward pass) and multi-start greedy decoding, timed with the shared encoding
(``encodes_orders``, the default) and with every copy encoded on its own, alternately in one
process (docs/speed.md).

    python benchmarks/bench_shared_encoding.py --n 50 100 --batch 8 4 --repeats 2
    python benchmarks/bench_shared_encoding.py --n 20 --batch 4 --repeats 1 --decoders heavy

``--decoders``: light (Kool et al.'s decoder, d = 128, 3 encoder layers; the default) and/or
heavy (LEHD's, d = 128, 1 encoder and 6 decoder layers: its decoder re-reads the inputs at
every step, so the encoder is a small share and its rows are slow). Models are freshly
initialised: the times depend on the shapes, not the weights. CPU seconds
(``time.process_time``) of one torch thread; the median of ``--repeats`` after one warm-up
round. Each row also checks that both ways give the same value (loss, or summed scores).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.bench_kool import cpu_model  # noqa: E402
from ptrnet.datasets.batching import Batch  # noqa: E402
from ptrnet.decoding.decode import decode  # noqa: E402
from ptrnet.decoding.options import DecodeOptions  # noqa: E402
from ptrnet.model import ModelConfig, build_model  # noqa: E402
from ptrnet.tasks import get_task  # noqa: E402
from ptrnet.training.baselines import PomoBaseline  # noqa: E402
from ptrnet.training.losses import reinforce_loss  # noqa: E402

MODELS = {
    "light": dict(decoder="light", encoder_layers=3, logit_clip=10.0),
    "heavy": dict(decoder="heavy", encoder_layers=1, decoder_layers=6),
}


def pomo_step(model: torch.nn.Module, batch: Batch) -> float:
    """One REINFORCE step's loss, backward included."""
    model.zero_grad()
    loss, _ = reinforce_loss(
        model, get_task("tsp"), batch, 1, torch.Generator().manual_seed(0), baseline=PomoBaseline()
    )
    loss.backward()
    return float(loss.detach())


def multistart(model: torch.nn.Module, batch: Batch) -> float:
    with torch.inference_mode():
        found = decode(model, get_task("tsp"), batch, DecodeOptions(multistart=1))
    return float(found.log_prob.sum())


def timed(job, model: torch.nn.Module, batch: Batch, shared: bool) -> tuple[float, float]:
    """(CPU seconds, the job's value) with the shared encoding on or off."""
    model.encodes_orders = shared
    start = time.process_time()
    value = job(model, batch)
    return time.process_time() - start, value


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[50, 100])
    parser.add_argument("--batch", type=int, nargs="+", default=[16, 8], help="one per --n")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--decoders", nargs="+", choices=sorted(MODELS), default=["light"])
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    print(f"CPU: {cpu_model()}; {args.threads} torch thread(s); load {os.getloadavg()[0]:.1f}")
    print("| decoder | n | instances | job | shared (s) | each copy (s) | speed-up |")
    print("|---|---|---|---|---|---|---|")
    for n, size in zip(args.n, args.batch, strict=True):
        batch = Batch(
            torch.rand(size, n, 2, generator=torch.Generator().manual_seed(n)),
            torch.full((size,), n),
        )
        for name in args.decoders:
            torch.manual_seed(0)
            model = build_model(
                ModelConfig(input_dim=2, hidden=128, heads=8, encoder="transformer", **MODELS[name])
            )
            for label, job in (("POMO step", pomo_step), ("multistart", multistart)):
                model.train(job is pomo_step)
                times = {True: [], False: []}
                values = {}
                for i in range(args.repeats + 1):
                    for shared in (True, False):
                        seconds, values[shared] = timed(job, model, batch, shared)
                        if i:  # the first round warms up
                            times[shared].append(seconds)
                if abs(values[True] - values[False]) > 1e-3 * max(1.0, abs(values[False])):
                    raise SystemExit(f"{name} {label} n={n}: {values} differ")
                a, b = statistics.median(times[True]), statistics.median(times[False])
                print(f"| {name} | {n} | {size} | {label} | {a:.2f} | {b:.2f} | {b / a:.1f}x |")
            del model.encodes_orders


if __name__ == "__main__":
    main()
