"""Core A after table1: table2's TSP-50 model on A1 labels (the same ``prepare`` as
``ptrnet reproduce table2``), from /work/runner2."""

import time

import torch

from ptrnet.reproduce.plans import get_scale, get_table
from ptrnet.reproduce.run import Reproduction

torch.set_num_threads(1)
r = Reproduction(
    get_table("table2"),
    get_scale("cpu"),
    "/work/runs/repro",
    threads=1,
    log=lambda m: print(time.strftime("%H:%M:%S"), m, flush=True),
)
r.prepare(r.plan.model("tsp-ptr-50-a1"))
