"""Time to quality on one CPU thread: ptrnet's training recipes against the peers' own
training code (Kool et al.'s ``run.py``; rl4co's attention model), TSP, the same model size, the
same CPU budget, every method's weights scored greedily at fixed CPU minutes on the same
held-out instances against near-exact references.

    L="--out /tmp/race --logs docs/beyond-runs/training-race"
    python benchmarks/bench_training_race.py $L --method kool --size 20 --minutes 180 \\
        --kool /tmp/attention-learn-to-route
    python benchmarks/bench_training_race.py $L --method ptrnet --size 20 --minutes 180
    /tmp/rl4co-venv/bin/python benchmarks/bench_training_race.py $L --method rl4co --size 20 ...
    python benchmarks/bench_training_race.py --report --logs docs/beyond-runs/training-race \\
        --plot docs/images/training_race.png       # the table, the verdicts and the plot

One method and size per invocation (two run side by side on two cores), each on one torch
thread. Its clock is the CPU time of its process (``time.process_time``) from just before its
training starts: data, labels, baselines and the peers' own validations count; scoring the
marks does not. Marks: ``--marks`` (CPU minutes, default race_log.DEFAULT_MARKS) below
``--minutes``, and ``--minutes`` itself. A run is resumable: invoked again with a larger
``--minutes`` it continues from its last mark (race_log: ``state.json``, ``marks.jsonl``).
Methods: ``kool`` (benchmarks/race_kool.py), ``rl4co`` (benchmarks/race_rl4co.py; needs its own
environment, see there), and ptrnet's recipes ``ptrnet``, ``ptrnet-sup``, ``ptrnet-pomo``
(benchmarks/race_ptrnet.py).

Held-out sets: the first ``--count`` (200) instances of docs/results.md's test files (``ptrnet
generate tsp -n N --seed 22 --stream N``: exact references at n = 20, fast-tsp's near_exact
at 50), made once under ``OUT/heldout/``. Each scored mark appends ``minute, cpu_s, steps, gap,
count, cpu`` to ``LOGS/METHOD-nSIZE.csv`` (gap: the mean per-instance gap, percent; ``--logs``,
default ``--out``: the small files to keep, apart from the run directories' weights).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

try:
    from benchmarks import race_log
    from benchmarks.bench_kool import cpu_model, load_test
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    import race_log
    from bench_kool import cpu_model, load_test

METHODS = ("kool", "rl4co", "ptrnet", "ptrnet-sup", "ptrnet-pomo")
SIZES = (20, 50)


def heldout(out: Path, size: int, count: int) -> Path:
    """The held-out file of ``size`` cities (made by ``ptrnet generate`` the first time)."""
    path = out / "heldout" / f"tsp{size}_first{count}.txt"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "ptrnet", "generate", "tsp", "-n", str(size),
                   "--count", str(count), "--seed", "22", "--stream", str(size),
                   "--workers", "1", "-q", "-o", str(path)]  # fmt: skip
        subprocess.run(command, check=True)
    return path


def train(args: argparse.Namespace, run_dir: Path, keeper: race_log.MarkKeeper) -> None:
    """Train ``args.method`` at ``args.size`` until ``keeper``'s budget."""
    if args.method == "kool":
        from race_kool import train_kool

        train_kool(args.kool, args.size, run_dir, keeper, args.batch or 512, args.epoch_size)
    elif args.method == "rl4co":
        from race_rl4co import train_rl4co

        train_rl4co(args.size, run_dir, keeper, args.batch or 512, args.epoch_size or 100_000,
                    args.val_size)  # fmt: skip
    else:
        from race_ptrnet import train_ptrnet

        train_ptrnet(args.method, args.size, run_dir, keeper, args.switch, args.seed)


def decoder(args: argparse.Namespace, weights: Path) -> Callable[[list], list]:
    """``points -> open tours`` (greedy) of ``args.method``'s weights at one mark."""
    if args.method == "kool":
        from race_kool import kool_decoder

        return kool_decoder(args.kool, weights)
    if args.method == "rl4co":
        from race_rl4co import rl4co_decoder

        return rl4co_decoder(args.size, weights)
    from race_ptrnet import ptrnet_decoder

    return ptrnet_decoder(weights)


def score(args: argparse.Namespace, run_dir: Path, test_file: Path) -> list[dict]:
    """Score every mark of ``run_dir`` not yet in the method's CSV log; the rows added."""
    log = Path(args.logs) / f"{run_dir.name}.csv"
    scored = {r["minute"] for r in race_log.read_log(log)}
    test, added = load_test(str(test_file)), []
    cpu = race_log.read_state(run_dir).get("cpu", "")
    for mark in race_log.read_marks(run_dir):
        if mark["minute"] in scored:
            continue
        tours = decoder(args, run_dir / "marks" / mark["weights"])(list(test.points))
        for tour, points in zip(tours, test.points, strict=True):
            if sorted(int(i) for i in tour) != list(range(len(points))):
                raise SystemExit(f"bench_training_race: {mark['weights']}: not a tour: {tour}")
        gaps = 100 * (test.lengths(tours) / test.refs - 1)
        row = dict(mark, gap=round(float(np.mean(gaps)), 4), count=len(tours), cpu=cpu)
        race_log.append_log(log, row)
        scored.add(mark["minute"])
        added.append(row)
        print(f"{run_dir.name}: {row['minute']:g} min, {row['steps']:,} steps, "
              f"gap {row['gap']:.2f}%", flush=True)  # fmt: skip
    return added


def check_same_run(run_dir: Path, args: argparse.Namespace) -> dict:
    """The run's recorded settings, written on its first invocation; a later invocation with
    other settings is refused (its marks would not continue the same curve)."""
    keys = ("method", "size", "batch", "epoch_size", "val_size", "switch", "seed")
    mine = {k: getattr(args, k) for k in keys}
    state = race_log.read_state(run_dir)
    if state.get("settings", mine) != mine:
        raise SystemExit(
            f"bench_training_race: {run_dir} was started with {state['settings']}, not {mine}"
        )
    if not state:
        run_dir.mkdir(parents=True, exist_ok=True)
        cpu = cpu_model()
        race_log.write_state(run_dir, {"settings": mine, "cpu": cpu, "cpu_s": 0, "steps": 0})
    return race_log.read_state(run_dir)


def run(args: argparse.Namespace) -> None:
    """Train ``args.method`` to ``--minutes`` (or as far as it already is), then score."""
    out = Path(args.out)
    Path(args.logs).mkdir(parents=True, exist_ok=True)
    run_dir = out / race_log.log_name(args.method, args.size)
    test_file = heldout(out, args.size, args.count)
    state = check_same_run(run_dir, args)
    pending = race_log.due_marks(args.marks, args.minutes, state.get("done", []))
    suffix = ".safetensors" if args.method.startswith("ptrnet") else ".pt"
    keeper = race_log.MarkKeeper(run_dir, pending, state["cpu_s"], state["steps"], suffix)
    if pending:
        train(args, run_dir, keeper)
    score(args, run_dir, test_file)


def report(args: argparse.Namespace) -> None:
    """Print the Markdown table and the verdicts of every log in ``--logs``; draw the plot."""
    logs = {}
    for path in sorted(Path(args.logs).glob("*.csv")):
        logs[race_log.parse_log_name(path.stem)] = race_log.read_log(path)
    if not logs:
        raise SystemExit(f"bench_training_race: no METHOD-nSIZE.csv logs in {args.logs}")
    print(race_log.table(logs, args.table_marks))
    print("\n" + "\n".join(f"- {line}" for line in race_log.verdicts(logs)))
    plot = Path(args.plot or Path(args.logs) / "training_race.png")
    race_log.plot(logs, plot)
    print(f"\nplot: {plot}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add = parser.add_argument
    add("--method", choices=METHODS)
    add("--size", type=int, choices=SIZES)
    add("--minutes", type=float, help="the CPU budget of the run, in all (resumes past marks)")
    add("--out", metavar="DIR", help="run directories (weights at each mark), held-out sets")
    add("--logs", metavar="DIR", help="the CSV logs (default: --out)")
    add("--marks", type=float, nargs="+", default=list(race_log.DEFAULT_MARKS))
    add("--kool", default=os.environ.get("KOOL_CHECKOUT"), metavar="PATH")
    add("--batch", type=int, help="peers' batch size (default theirs: 512)")
    add("--epoch-size", type=int, help="peers' epoch (default: kool 128,000, rl4co 100,000)")
    add("--val-size", type=int, default=10_000, help="rl4co's validation instances")
    add("--switch", type=float, default=20.0, help="ptrnet: CPU minute from supervision to POMO")
    add("--seed", type=int, default=0, help="ptrnet's seed (the peers keep their own)")
    add("--count", type=int, default=200, help="held-out instances")
    add("--report", action="store_true", help="only the table, verdicts and plot of --out")
    add("--plot", metavar="PNG", help="the plot's path (default LOGS/training_race.png)")
    add("--table-marks", type=float, nargs="+", default=list(race_log.TABLE_MARKS))
    args = parser.parse_args(argv)
    if not args.report and None in (args.method, args.size, args.minutes, args.out):
        parser.error("a run needs --method, --size, --minutes and --out (or --report)")
    args.logs = args.logs or args.out
    if args.logs is None:
        parser.error("--report needs --logs (or --out)")
    if args.method == "kool":
        args.epoch_size = args.epoch_size or 128_000
        if not args.kool:
            parser.error("--method kool needs --kool PATH or $KOOL_CHECKOUT")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # the race_* modules
    if args.report:
        report(args)
    else:
        run(args)


if __name__ == "__main__":
    main()
