"""Writes tests/data/view_decodings.json: the outputs of every view mode of the ``views`` option
as it was at commit 6a1bff6 (before it split into average_views, search_views, multistart), on a
tiny seeded model, so tests/test_view_options.py can check the new options decode the same.

Rerun at that commit (it writes beside itself):
    mkdir /tmp/old && git archive 6a1bff6 | tar -x -C /tmp/old
    cp tests/data/make_view_decodings.py /tmp/old/tests/data/
    cd /tmp/old && PYTHONPATH=$PWD python tests/data/make_view_decodings.py
"""

import json
from pathlib import Path

import numpy as np
import torch

from ptrnet.datasets.batching import collate
from ptrnet.decoding.decode import decode
from ptrnet.decoding.options import DecodeOptions
from ptrnet.model import ModelConfig, build_model
from ptrnet.tasks import get_task

torch.set_num_threads(1)
CONFIG = {"input_dim": 2, "hidden": 16, "init": "default"}
# (task, options both spell alike, the old view options, the same decoding in the new ones)
BEAM3, BEAM2 = {"strategy": "beam", "beam_width": 3}, {"strategy": "beam", "beam_width": 2}
MULTI = {"strategy": "multistart"}
CASES = [
    ("tsp", {}, {"views": 2}, {"average_views": 2}),
    ("tsp", BEAM3, {"views": 4}, {"average_views": 4}),
    ("tsp", {"strategy": "sample", "samples": 3, "seed": 5}, {"views": 4}, {"average_views": 4}),
    ("tsp", {}, {"views": 8}, {"search_views": 8, "average_views": 4}),
    ("tsp", {**BEAM3, "pick": "shortest"}, {"views": 8}, {"search_views": 8, "average_views": 4}),
    ("tsp", {}, MULTI, {"multistart": 1}),
    ("tsp", {}, {**MULTI, "views": 2}, {"multistart": 2}),
    ("tsp", {"pick": "shortest"}, {**MULTI, "views": 4}, {"multistart": 4}),
    ("tsp", {}, {**MULTI, "views": 8}, {"multistart": 8}),
    ("convex_hull", BEAM2, {"views": 4}, {"average_views": 4}),
    ("convex_hull", BEAM2, {"views": 8}, {"search_views": 8, "average_views": 4}),
    ("convex_hull", {}, {**MULTI, "views": 8}, {"multistart": 8}),
    ("delaunay", {}, {"views": 8}, {"search_views": 8}),
    ("delaunay", BEAM2, {"views": 8}, {"search_views": 8}),
    ("delaunay", {}, {**MULTI, "views": 8}, {"multistart": 8}),
]


def main() -> None:
    torch.manual_seed(0)
    model = build_model(ModelConfig(**CONFIG)).eval()
    with torch.no_grad():  # sharper distributions: near-ties unlikely
        for p in model.parameters():
            p.mul_(4.0)
    rng = np.random.default_rng(0)
    points = [rng.random((n, 2)) for n in (5, 7, 6, 8)]
    batch = collate(points)
    cases = []
    for name, common, old_views, new_views in CASES:
        old, new = {**common, **old_views}, {**common, **new_views}
        task = get_task(name)
        generator = torch.Generator().manual_seed(0)  # sampling: the same draws every run
        found = decode(model, task, batch, DecodeOptions(**old), generator=generator)
        cases.append(
            {
                "task": name,
                "old": old,
                "new": new,
                "sequences": [s.tolist() for s in found.sequences],
                "log_prob": found.log_prob.tolist(),
            }
        )
    weights = {k: v.tolist() for k, v in model.state_dict().items()}
    out = {
        "made_by": __doc__.strip(),
        "config": CONFIG,
        "weights": weights,
        "points": [p.tolist() for p in points],
        "cases": cases,
    }
    Path(__file__).with_name("view_decodings.json").write_text(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
