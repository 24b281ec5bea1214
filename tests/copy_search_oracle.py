"""Writes tests/data/copy_search_oracle.json: the bundled copy model's decodes of 40 generated
sentences, greedy and beam (widths 3 and 5), with p_gen learned, 1 (vocabulary only) and 0
(copy only), plus :func:`~ptrnet.text.decode.explain` of three of them.

The fixture was written by the copy decoders that came before the shared search of
:mod:`ptrnet.decoding.search` (their own greedy and beam loops in ``ptrnet/text/decode.py``,
commit 4025ed9); tests/test_copy_search_oracle.py checks that today's decoders give the same
words, ids, p_gen and log-probabilities. Rerun (one thread)::

    PYTHONPATH=. python tests/copy_search_oracle.py

It only calls ``decode_sources`` and ``explain``, which both versions have (``decode_sources``
took its strategy and width as loose arguments then, a
:class:`~ptrnet.decoding.options.DecodeOptions` now).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

from ptrnet.decoding.options import DecodeOptions
from ptrnet.tasks.copy import sample_pair
from ptrnet.text.decode import decode_sources, explain
from ptrnet.text.evaluate import load

FIXTURE = Path(__file__).parent / "data" / "copy_search_oracle.json"
SEED, STREAM, COUNT = 2031, 11, 40
RUNS = [  # (strategy, width, p_gen override)
    (strategy, width, p_gen)
    for p_gen in (None, 1.0, 0.0)
    for strategy, width in (("greedy", 1), ("beam", 3), ("beam", 5))
]
EXPLAINED = (0, 7, 19)  # sentences whose explanation is kept


def sources() -> list[tuple[str, ...]]:
    """The 40 source sentences (seed 2031, stream 11: no training run draws them)."""
    return [sample_pair(SEED, i, STREAM).source for i in range(COUNT)]


def decode_runs(model) -> list[dict]:
    """Every run of :data:`RUNS` on :func:`sources`, batched 16 at a time (so rows are padded)."""
    out = []
    for strategy, width, p_gen in RUNS:
        options = DecodeOptions(strategy, beam_width=width, batch_size=16)
        decoded = decode_sources(model.model, model.vocab, sources(), options, p_gen)
        rows = [
            {"words": list(d.words), "ids": list(d.ids), "p_gen": [round(g, 7) for g in d.p_gen],
             "log_prob": d.log_prob}
            for d in decoded
        ]  # fmt: skip
        out.append({"strategy": strategy, "width": width, "p_gen": p_gen, "outputs": rows})
    return out


def explanations(model) -> list[dict]:
    """:func:`explain` of the :data:`EXPLAINED` sentences, p_gen learned and 1: the output, the
    p_gen used and the probability of each output word under the mixture."""
    out = []
    for index in EXPLAINED:
        for p_gen in (None, 1.0):
            shown = explain(model.model, model.vocab, sources()[index], p_gen)
            chosen = [
                float(shown.mixture[t, shown.vocabulary.index(word)])
                for t, word in enumerate(shown.output)
            ]
            out.append({"index": index, "p_gen_override": p_gen, "output": list(shown.output),
                        "p_gen": [round(g, 7) for g in shown.p_gen.tolist()],
                        "chosen": [round(c, 7) for c in chosen]})  # fmt: skip
    return out


def main() -> int:
    torch.set_num_threads(1)
    model = load(None)
    fixture = {
        "about": "bundled copy model decodes; written by tests/copy_search_oracle.py",
        "seed": SEED, "stream": STREAM, "count": COUNT,
        "runs": decode_runs(model), "explanations": explanations(model),
    }  # fmt: skip
    FIXTURE.parent.mkdir(exist_ok=True)
    FIXTURE.write_text(json.dumps(fixture, separators=(",", ":")) + "\n")
    print(f"wrote {FIXTURE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
