"""Greedy, multi-start and best-of-k decoding of TSP models on labelled test files: mean length,
gap to the file's reference tours, and wall time, one JSON line per row as it finishes.

Multi-start and best-of-k each search once and pick twice from the same candidates (the
model's score, then the tour length), so both picks cost one search.

    python benchmarks/bench_decoders.py --model bundled --model RUN_DIR \\
        --test tsp20.txt:1000:200 --test tsp50.txt:1000:100 --samples 8

``FILE:G:M`` evaluates greedy on the first G instances of FILE and multi-start and best-of-k on
the first M. Runs on one thread.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from ptrnet.cli.common import positive_int
from ptrnet.datasets.batching import collate
from ptrnet.decoding.beam import pick_beams
from ptrnet.decoding.multistart import multistart_rows
from ptrnet.decoding.search import batch_instances, search_batch
from ptrnet.decoding.strategies.greedy import Greedy
from ptrnet.decoding.strategies.sampling import Sampling
from ptrnet.inference import load_model
from ptrnet.io.errors import InputError, UsageError
from ptrnet.io.paper_format import read_examples
from ptrnet.solvers.tsp import tour_length
from ptrnet.tasks import get_task
from ptrnet.tasks.base import from_tokens

TSP = get_task("tsp")


def searched(model, batch, how, samples, generator):
    """(trace, width) of one search: greedy, multistart or ``samples`` samples per instance."""
    if how == "multistart":
        return multistart_rows(model, TSP, batch, "task")
    if how == "sample":
        return search_batch(model, TSP, batch, Sampling(1.0, generator), "task", samples), samples
    return search_batch(model, TSP, batch, Greedy(), "task", 1), 1


def run(model, points, how, samples, batch_rows=256):
    """Tours per pick rule ({"likely": [...], "shortest": [...]}) and the wall time."""
    generator = torch.Generator().manual_seed(0)
    picks = {"likely": [], "shortest": []}
    per_batch = max(1, batch_rows // (len(points[0]) if how == "multistart" else samples))
    tic = time.perf_counter()
    with torch.no_grad():
        for lo in range(0, len(points), per_batch):
            batch = collate(points[lo : lo + per_batch])
            trace, width = searched(model, batch, how, samples, generator)
            for pick, rerank in (("likely", None), ("shortest", TSP.sequence_cost)):
                if how == "greedy" and pick == "shortest":
                    continue
                instances = batch_instances(batch) if rerank else None
                keep = pick_beams(trace.scores, trace.tokens, trace.done, width, instances, rerank)
                picks[pick] += [from_tokens(t) for t in trace.tokens[keep].numpy()]
    return picks, time.perf_counter() - tic


def test_spec(text: str) -> tuple[str, int, int]:
    """``FILE:G:M`` -> (FILE, G, M): G instances decoded greedily, M by the other rules."""
    parts = text.rsplit(":", 2)
    if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts[1:]):
        raise argparse.ArgumentTypeError(f"expected FILE:G:M with counts G, M >= 1, got {text!r}")
    return parts[0], int(parts[1]), int(parts[2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", action="append", required=True)
    parser.add_argument(
        "--test", action="append", required=True, type=test_spec, metavar="FILE:G:M"
    )
    parser.add_argument("--samples", type=positive_int, default=8)
    args = parser.parse_args()
    torch.set_num_threads(1)
    try:
        measure(args)
    except (InputError, UsageError, OSError) as err:
        parser.exit(2, f"bench_decoders: error: {err}\n")


def measure(args: argparse.Namespace) -> None:
    """One JSON line per (test file, model, decoding, pick rule)."""
    for path, greedy_count, many_count in args.test:
        examples = read_examples(path, TSP)
        points, refs = [e.points for e in examples], [e.seq for e in examples]
        for name in args.model:
            model = load_model(None if name == "bundled" else name, TSP).model
            for how, count in (
                ("greedy", greedy_count),
                ("multistart", many_count),
                ("sample", many_count),
            ):
                chosen = slice(0, int(count))
                picks, wall = run(model, points[chosen], how, args.samples)
                for pick, tours in picks.items():
                    if not tours:
                        continue
                    ref = [
                        tour_length(p, r) for p, r in zip(points[chosen], refs[chosen], strict=True)
                    ]
                    got = [tour_length(p, t) for p, t in zip(points[chosen], tours, strict=True)]
                    row = dict(
                        test=path,
                        model=name,
                        decode=how,
                        pick=pick,
                        count=len(got),
                        mean_length=float(np.mean(got)),
                        mean_ref=float(np.mean(ref)),
                        mean_gap=float(np.mean(np.array(got) / ref - 1)),
                        wall_s=wall,
                    )
                    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
