"""Where along its tour a TSP model's greedy decoding loses length.

For each instance of a test file: the model's greedy tour, then for each cut k the shortest
tour that starts with the greedy tour's first k cities (``Task.complete`` by the given solver).
The gap of that best completion above the file's reference is what the first k moves have
already lost; at k = n it is the greedy gap itself. Prints one row per cut.

    python docs/bundled-runs/tsp/probe-dagger/where_greedy_loses.py tsp100.txt --count 100 \
        --model ptrnet/bundled/tsp/heavy20-100/best.safetensors --cuts 2,5,10,20,40,60,80,100
"""

import argparse

import numpy as np
import torch

from ptrnet.datasets.batching import collate
from ptrnet.decoding.decode import decode
from ptrnet.decoding.options import DecodeOptions
from ptrnet.inference import load_model
from ptrnet.io.paper_format import read_examples
from ptrnet.solvers.tsp import tour_length
from ptrnet.tasks import get_task


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("test", help="a TSP file of one size with reference tours")
    parser.add_argument("--model", required=True, help="a checkpoint")
    parser.add_argument("--count", type=int, default=100, help="first instances (default 100)")
    parser.add_argument("--cuts", default="2,5,10,20", help="comma-separated k")
    parser.add_argument("--solver", default="near_exact", help="completion solver")
    args = parser.parse_args()
    torch.set_num_threads(1)
    task = get_task("tsp")
    examples = read_examples(args.test, task)[: args.count]
    points, refs = [e.points for e in examples], [e.seq for e in examples]
    model = load_model(args.model, "tsp").model
    greedy = decode(model, task, collate(points), DecodeOptions()).sequences
    reference = np.array([tour_length(x, r) for x, r in zip(points, refs, strict=True)])
    n = len(points[0])
    print(f"{args.test}, first {len(points)} instances, n = {n}, model {args.model}")
    print("| cut k (moves made) | best completion's gap |")
    print("|---:|---:|")
    for k in [int(c) for c in args.cuts.split(",")]:
        lengths = [
            tour_length(x, task.complete(x, tour[: min(k, n)], args.solver))
            for x, tour in zip(points, greedy, strict=True)
        ]
        print(f"| {k} | {np.mean(np.array(lengths) / reference - 1):.2%} |")


if __name__ == "__main__":
    main()
