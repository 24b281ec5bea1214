"""Background cpu-scale training, core B: the models below in this order, from /work/runner2.

Each call to ``prepare`` trains, resumes or reuses one model exactly as ``ptrnet reproduce``
does; the tables are written afterwards with ``ptrnet reproduce TABLE [--partial]``.
"""

import time

import torch

from ptrnet.reproduce.plans import get_scale, get_table
from ptrnet.reproduce.run import Reproduction

torch.set_num_threads(1)
ORDER = [
    ("delaunay", "delaunay-ptr-5"),
    ("delaunay", "delaunay-ptr-10"),
    ("table2", "tsp-ptr-5"),
    ("table2", "tsp-ptr-10"),
    ("table2", "tsp-ptr-5-20"),
    ("delaunay", "delaunay-ptr-50"),
    ("table2", "tsp-ptr-50-a1"),
    ("table2", "tsp-ptr-50-a3"),
]
for table, name in ORDER:
    r = Reproduction(
        get_table(table),
        get_scale("cpu"),
        "/work/runs/repro",
        threads=1,
        log=lambda m: print(time.strftime("%H:%M:%S"), m, flush=True),
    )
    r.prepare(r.plan.model(name))
