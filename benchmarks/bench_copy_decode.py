"""Wall time of decoding copy-task sentences with the bundled model: greedy and beam (widths 3
and 5), one thread, the best of ``--repeats`` runs per strategy, one JSON line each.

    python benchmarks/bench_copy_decode.py --count 500 --repeats 3

The sentences are generated (seed 2031, stream 11, as tests/copy_search_oracle.py's) and
decoded through :func:`ptrnet.text.decode.decode_sources` in batches of 256.
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from ptrnet.cli.common import positive_int
from ptrnet.decoding.options import DecodeOptions
from ptrnet.tasks.copy import sample_pair
from ptrnet.text.decode import decode_sources
from ptrnet.text.evaluate import load

RUNS = (("greedy", 1), ("beam", 3), ("beam", 5))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=positive_int, default=500, help="sentences")
    parser.add_argument("--repeats", type=positive_int, default=3, help="runs per strategy")
    args = parser.parse_args()
    torch.set_num_threads(1)
    model = load(None)
    sources = [sample_pair(2031, i, 11).source for i in range(args.count)]
    for strategy, width in RUNS:
        times, options = [], DecodeOptions(strategy, beam_width=width)
        for _ in range(args.repeats):
            start = time.perf_counter()
            decode_sources(model.model, model.vocab, sources, options)
            times.append(time.perf_counter() - start)
        row = {"strategy": strategy, "width": width, "sentences": args.count,
               "seconds": round(min(times), 3)}  # fmt: skip
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
