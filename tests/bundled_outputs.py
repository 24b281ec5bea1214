"""What the bundled Ptr-Nets output on fixed instances, and the fixture that records it.

``python tests/bundled_outputs.py`` rewrites ``tests/bundled_outputs.json`` from the code as it
is; it was recorded before the model was rewritten to read as the paper (docs/model.md), and
tests/test_model_bundled.py checks that the models still give the same outputs. Each entry: the
greedy output of every instance (the default decoding every front end uses), its
log-likelihood, and the teacher-forced logits of the first instance's output.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import torch

FIXTURE = Path(__file__).with_suffix(".json")
#: bundled model folder -> (task, input dim, instance sizes). The TSP sizes stay below the
#: folder's heavy-decoder routes (n >= 11), so its LSTM Ptr-Net decodes them. The hull folder
#: sends n = 8 to ``tf5-12/``, n = 30 to ``tf20-50/`` and n = 120 to the LSTM Ptr-Net (one
#: instance size per route; re-recorded when the routes came, 2026-12-05).
MODELS = {
    "sort": ("sort", 1, (5, 10, 20)),
    "convex_hull": ("convex_hull", 2, (8, 30, 120)),
    "tsp": ("tsp", 2, (6, 10)),
    "delaunay": ("delaunay", 2, (7,)),
    "convex_hull_seq2seq": ("convex_hull", 2, (5,)),
}


def instances(dim: int, sizes: tuple[int, ...], seed: int = 7) -> list[np.ndarray]:
    """Two uniform instances of each size, in the unit square (so decoding leaves them as is)."""
    rng = np.random.default_rng(seed)
    return [rng.random((n, dim)) for n in sizes for _ in range(2)]


def model_outputs(model_dir: str, fused: bool = True) -> dict:
    """The greedy outputs, their log-likelihoods and the first instance's teacher-forced logits
    of the bundled model in ``ptrnet/bundled/<model_dir>``, with the fused or plain pointer."""
    from ptrnet.datasets.batching import collate
    from ptrnet.inference.load import bundled_model_dir, load_model
    from ptrnet.inference.predict import predict_outputs

    task, dim, sizes = MODELS[model_dir]
    loaded = load_model(bundled_model_dir(model_dir), task)
    for route in (loaded, *(r.model for r in loaded.routes)):
        if hasattr(route.model, "fused"):
            route.model.fused = fused
    points = instances(dim, sizes)
    found = predict_outputs(loaded, task, points)
    first = found[0].sequence
    batch = collate([points[0]], [first])
    with torch.no_grad():
        logits = loaded.model(batch.points, batch.lengths, batch.targets)[0]  # (T, V)
    return {
        "sequences": [item.sequence.tolist() for item in found],
        "log_probs": [item.log_prob for item in found],
        "logits": [[None if math.isinf(x) else x for x in row] for row in logits.tolist()],
    }


def record() -> None:
    torch.set_num_threads(1)
    outputs = {name: model_outputs(name) for name in MODELS}
    FIXTURE.write_text(json.dumps(outputs, indent=None) + "\n")
    print(f"wrote {FIXTURE}")


if __name__ == "__main__":
    record()
