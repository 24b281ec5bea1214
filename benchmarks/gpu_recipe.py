"""ptrnet's training recipe at GPU scale, then the frontier, in one command for a lent GPU:

    python benchmarks/gpu_recipe.py --out /tmp/gpu --sizes 20 50 [--kool PATH]
    python benchmarks/gpu_recipe.py --toy --out /tmp/gpu-toy     # seconds, on a CPU

Per size n, the model of the training race (benchmarks/race_ptrnet.py: Kool et al.'s size, the
light decoder) trained in three steps, each skipped or resumed where ``--out`` already has it:

1. labels: ``--label-count`` uniform instances with near-exact tours (``ptrnet generate tsp
   --solver local --workers W``, every core of the machine), ``OUT/labels{n}.txt``;
2. supervision on them (``OUT/n{n}/sup``: the race's ``sup`` phase reading the file, eight
   symmetries, ``--sup-steps`` of ``--sup-batch``);
3. POMO from its weights (``OUT/n{n}/pomo``: ``--pomo-steps`` of ``--pomo-batch``).

Both runs use ``--device`` (default ``auto``: the GPU when torch sees one) and ``--precision``
(default ``auto``: bf16 autocast where the device computes bf16 natively, else fp16 autocast
with a gradient scaler on a CUDA GPU, else fp32; ptrnet.compute.precision). Then
benchmarks/bench_frontier.py on the sizes, the POMO model of each size as ``gpuN`` (greedy and
multi-start, each also + Or-opt) beside the reference solvers and, with ``--kool``, Kool et
al.'s rows: ``OUT/frontier/`` (one CPU thread, the machine's CPU).

``--toy``: n = 10, a few instances and steps of batch 8, on the CPU in bf16 autocast (the
mixed-precision path a GPU takes, on the CPU), and a two-instance frontier; what the unit test
runs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def labels(out: Path, size: int, count: int, workers: int | None) -> Path:
    """``OUT/labels{size}.txt``: ``count`` instances with near-exact tours (made once)."""
    path = out / f"labels{size}.txt"
    if not path.exists():
        command = [sys.executable, "-m", "ptrnet", "generate", "tsp", "-n", str(size),
                   "--count", str(count), "--seed", "51", "--stream", "0", "--solver", "local",
                   "-q", "-o", str(path)]  # fmt: skip
        if workers is not None:
            command += ["--workers", str(workers)]
        subprocess.run(command, check=True)
    return path


def phase(args: argparse.Namespace, name: str, size: int, run_dir: Path, **changes) -> Path:
    """Train one phase of the recipe into ``run_dir`` (resumed if it holds a run); its
    ``last.safetensors``."""
    from ptrnet.training.loop import train

    sys.path.insert(0, str(HERE))
    from race_ptrnet import run_config

    steps = args.sup_steps if name == "sup" else args.pomo_steps
    batch = args.sup_batch if name == "sup" else args.pomo_batch
    overrides = dict(steps=steps, batch_size=batch, device=args.device, precision=args.precision,
                     threads=args.threads, workers=args.workers, val_count=args.val_count,
                     val_every=max(1, steps // 10), log_every=max(1, steps // 100),
                     **changes)  # fmt: skip
    init = overrides.pop("init_from", None)
    config = run_config(name, size, args.seed, init, overrides)
    resume = (run_dir / "last.safetensors").exists()
    result = train(config, run_dir, resume=resume, progress=not args.toy)
    print(f"gpu_recipe: n = {size} {name}: step {result.step}, best {result.best.get('value')}")
    return run_dir / "last.safetensors"


def recipe(args: argparse.Namespace, size: int) -> Path:
    """Labels, supervision, POMO at ``size`` cities; the POMO model's checkpoint."""
    out = Path(args.out)
    data = labels(out, size, args.label_count, args.label_workers)
    sup = phase(args, "sup", size, out / f"n{size}" / "sup", data=str(data), labels="file",
                label_solver=None)  # fmt: skip
    return phase(args, "pomo", size, out / f"n{size}" / "pomo", init_from=str(sup))


def frontier(args: argparse.Namespace, models: dict[int, Path]) -> None:
    """benchmarks/bench_frontier.py on the sizes, each POMO model as ``gpuN`` at its size."""
    sys.path.insert(0, str(HERE))
    import bench_frontier

    argv = ["--n", *map(str, args.sizes), "--out", str(Path(args.out) / "frontier")]
    for size, path in models.items():
        argv += ["--ptrnet-model", f"gpu{size}={path}@{size}-{size}"]
    argv += ["--only", "gpu*", *(["kool*"] if args.kool else [])]
    if args.kool:
        argv += ["--kool", args.kool]
    if args.toy:
        argv += ["--count", "2", "--single", "1", "--lkh-runs", "1"]
    bench_frontier.main(argv)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add = parser.add_argument
    add("--out", required=True, metavar="DIR")
    add("--sizes", type=int, nargs="+", default=[20, 50])
    add("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    add("--precision", default="auto", choices=("auto", "fp32", "bf16", "fp16"))
    add("--label-count", type=int, default=200_000, help="labelled instances per size")
    add("--sup-steps", type=int, default=20_000)
    add("--sup-batch", type=int, default=512)
    add("--pomo-steps", type=int, default=20_000)
    add("--pomo-batch", type=int, default=256)
    add("--val-count", type=int, default=1000)
    add("--threads", type=int, help="torch CPU threads (default: ptrnet's plan)")
    add("--workers", type=int, help="data and label processes (default: ptrnet's plan)")
    add("--label-workers", type=int, help="label processes (default: every core)")
    add("--seed", type=int, default=0)
    add("--kool", default=os.environ.get("KOOL_CHECKOUT"), metavar="PATH")
    add("--toy", action="store_true", help="seconds on a CPU: what the unit test runs")
    args = parser.parse_args(argv)
    if args.toy:
        args.sizes, args.device, args.precision, args.label_count = [10], "cpu", "bf16", 16
        args.sup_steps = args.pomo_steps = 3
        args.sup_batch, args.pomo_batch, args.val_count = 8, 4, 4
        args.threads, args.workers, args.label_workers = 1, 0, 1
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    models = {size: recipe(args, size) for size in args.sizes}
    frontier(args, models)


if __name__ == "__main__":
    main()
