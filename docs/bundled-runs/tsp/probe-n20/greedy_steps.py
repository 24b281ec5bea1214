"""Where a TSP model's greedy decoding goes wrong, step by step, and whether the start helps.

Three measurements on the first ``--count`` instances of a file of one size with reference
tours (exact at n <= 20):

1. **Teacher-forced accuracy per step**: the reference tour's prefix in, the model's most
   likely next city (under the tour rules) against the reference's, and its mean negative
   log-likelihood, per step.
2. **The first move of the greedy tour**: the reference's next city from city 0 (labels run
   counter-clockwise), the reference's other neighbour of city 0 (the same tour backwards), or
   neither; the count and mean greedy gap of each, and its share of the total gap.
3. **The start city**: a greedy tour from every start (multi-start), and the gap of the one a
   rule picks: city 0 (the default), the leftmost city, the one nearest to / farthest from
   the centroid, the mean over all starts, the shortest (the tour length in the loop), the
   one the model scores highest, and the one whose first k moves the model is surest of
   (the sum of the log-probabilities of its k greedy choices after the start).

    python docs/bundled-runs/tsp/probe-n20/greedy_steps.py val15_20.txt \\
        --model ptrnet/bundled/tsp/heavy10-30/best.safetensors --count 500
"""

import argparse

import numpy as np
import torch

from ptrnet.datasets.batching import IGNORE_INDEX, collate
from ptrnet.decoding.decode import decode
from ptrnet.decoding.multistart import multistart_rows
from ptrnet.decoding.options import DecodeOptions
from ptrnet.inference import load_model
from ptrnet.io.paper_format import read_examples
from ptrnet.solvers.tsp import tour_length
from ptrnet.tasks import get_task
from ptrnet.tasks.constraints import teacher_forcing_mask

LOOKAHEAD = (1, 2, 3, 5)


def per_step(model, task, examples) -> None:
    """Measurement 1: teacher-forced accuracy and NLL of every choice step."""
    batch = collate([e.points for e in examples], [e.seq for e in examples])
    with torch.no_grad():
        logits = model(batch.points, batch.lengths, batch.targets)  # (B, T, n+1)
    allowed = teacher_forcing_mask(task, batch.lengths, batch.targets)
    logits = logits.masked_fill(~allowed, float("-inf"))
    logp = logits.log_softmax(-1)
    print("| step | accuracy | NLL |\n|---:|---:|---:|")
    for t in range(1, int(batch.lengths.max()) - 1):  # step 0 is city 0, the last two forced
        target = batch.targets[:, t]
        real = target != IGNORE_INDEX
        nll = -logp[:, t].gather(1, target.clamp(min=0)[:, None])[:, 0][real]
        right = (logits[:, t].argmax(-1) == target)[real].float()
        print(f"| {t} | {right.mean():.1%} | {nll.mean():.3f} |")


def first_move(model, task, examples) -> None:
    """Measurement 2: the greedy tour's first move against the reference's two neighbours."""
    tours = decode(model, task, collate([e.points for e in examples]), DecodeOptions()).sequences
    kinds: dict[str, list[float]] = {
        "reference's next": [],
        "reference backwards": [],
        "neither": [],
    }
    for e, tour in zip(examples, tours, strict=True):
        ref, n = list(e.seq), len(e.points)
        gap = tour_length(e.points, tour) / tour_length(e.points, ref) - 1
        kind = "reference's next" if tour[1] == ref[1] else None
        kind = kind or ("reference backwards" if tour[1] == ref[n - 1] else "neither")
        kinds[kind].append(gap)
    total = sum(sum(gaps) for gaps in kinds.values())
    print("| first move | instances | mean gap | share of the gap |\n|---|---:|---:|---:|")
    for kind, gaps in kinds.items():
        mean = np.mean(gaps) if gaps else float("nan")
        print(f"| {kind} | {len(gaps)} | {mean:.2%} | {sum(gaps) / total:.0%} |")


def start_rules(model, task, examples, chunk: int = 50) -> None:
    """Measurement 3: the gap of the greedy tour from the start each rule picks."""
    rules: dict[str, list[float]] = {}
    for i in range(0, len(examples), chunk):
        part = examples[i : i + chunk]
        with torch.no_grad():
            trace, width = multistart_rows(
                model, task, collate([e.points for e in part]), "task", keep_probs=True
            )
        tokens = trace.tokens.view(len(part), width, -1)
        scores = trace.scores.view(len(part), width)
        sure = trace.probs.view(len(part), width, trace.probs.shape[1], -1).amax(-1).log()
        for b, e in enumerate(part):
            x, n = e.points, len(e.points)
            lengths = [
                tour_length(x, [int(t) - 1 for t in tokens[b, s] if t > 0][:n]) for s in range(n)
            ]
            gap = np.array(lengths) / tour_length(x, e.seq) - 1  # (n,): one per start
            spread = ((x - x.mean(0)) ** 2).sum(1)
            picks = {
                "city 0 (default)": 0,
                "leftmost city": int(x[:, 0].argmin()),
                "nearest the centroid": int(spread.argmin()),
                "farthest from the centroid": int(spread.argmax()),
                "shortest (tour length)": int(gap.argmin()),
                "most likely (model score)": int(scores[b, :n].argmax()),
            }
            for k in LOOKAHEAD:
                picks[f"surest first {k} moves"] = int(sure[b, :n, 1 : 1 + k].sum(1).argmax())
            for rule, start in picks.items():
                rules.setdefault(rule, []).append(gap[start])
            rules.setdefault("mean over all starts", []).append(gap.mean())
    print("| start | greedy gap |\n|---|---:|")
    for rule, gaps in rules.items():
        print(f"| {rule} | {np.mean(gaps):.2%} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("test", help="a TSP file of one size with reference tours")
    parser.add_argument("--model", required=True, help="a checkpoint")
    parser.add_argument("--count", type=int, default=500, help="first instances (default 500)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    task = get_task("tsp")
    examples = read_examples(args.test, task)[: args.count]
    model = load_model(args.model, "tsp").model.eval()
    print(f"{args.test}, first {len(examples)} instances, model {args.model}\n")
    per_step(model, task, examples)
    print()
    first_move(model, task, examples)
    print()
    start_rules(model, task, examples)


if __name__ == "__main__":
    main()
