"""How long the web page's live training takes to learn: time to a stated decoded accuracy.

Usage: ``python benchmarks/bench_live_train.py [--task convex_hull|sort] [--hidden H]
[--steps S] [--batch-size B] [--min-len A] [--max-len Z] [--lr X] [--no-mask] [--seed S]
[--targets 0.3,0.5] [--label TEXT]``

Runs the page's own code path: a :class:`ptrnet.web.live_train.TrainJob` built from a
:class:`ptrnet.web.lesson.LessonTrainRequest` (the body of ``POST /api/lesson/train``), in its
background thread with one torch thread, and reads the events the page would receive. Defaults
are the settings the page proposes for the task (``LIVE_DEFAULTS`` in
``ptrnet/web/live_train.py``); every flag overrides one field.

Reported per validation (every ``EVAL_EVERY`` steps, 200 fixed validation instances of the
training lengths, greedy, with the mask when trained with it), from the job's ``eval`` events:
the step, wall seconds since the first step and the training thread's CPU seconds (which a busy
machine does not stretch the way it stretches wall time: on an idle core the two agree), the
decoded accuracy and the valid-output rate; then, for each target accuracy, the first
validation that reached it. The machine's CPU model and the load average before and after are
printed beside the figures.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Sequence

from ptrnet.web.lesson import LessonTrainRequest
from ptrnet.web.live_train import LIVE_DEFAULTS, TrainJob

PAGE_FIELDS = ("hidden", "steps", "batch_size", "min_len", "max_len", "lr")


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (``platform.processor()`` elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run(request: LessonTrainRequest) -> list[dict]:
    """Train as the page does; return the ``eval`` events (with ``elapsed_s`` and ``cpu_s``)."""
    job = TrainJob(request)
    job.start()
    rows: list[dict] = []
    seen = 0  # events read so far
    while not job.ended():
        time.sleep(0.05)
        events = job.events_from(seen)
        seen += len(events)
        for event in (e for e in events if e["type"] == "eval"):
            rows.append(event)
            print(
                f"step {event['step']:5d}  wall {event['elapsed_s']:7.1f} s"
                f"  cpu {event['cpu_s']:7.1f} s  accuracy {event['accuracy']:6.1%}"
                f"  valid {event['valid_rate']:6.1%}",
                flush=True,
            )
    job.join()
    end = job.events[-1]
    if end["status"] != "done":
        raise SystemExit(f"bench_live_train: the run ended {end['status']}: {end.get('message')}")
    return rows


def first_reaching(rows: list[dict], goal: float) -> dict | None:
    return next((r for r in rows if r["accuracy"] >= goal), None)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--task", choices=("convex_hull", "sort"), default="convex_hull")
    for field in PAGE_FIELDS:
        kind = float if field == "lr" else int
        p.add_argument("--" + field.replace("_", "-"), type=kind, default=None)
    p.add_argument("--no-mask", action="store_true", help="train without the mask in the loss")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--targets", default="0.3,0.5", help="accuracies to time, comma-separated")
    p.add_argument("--label", default="", help="a name printed with the summary")
    return p.parse_args(argv)


def page_defaults(task: str) -> dict[str, float]:
    """The settings the page proposes for ``task`` (the request's fields of LIVE_DEFAULTS)."""
    return {f: LIVE_DEFAULTS[task][f] for f in PAGE_FIELDS}


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    fields = page_defaults(args.task)
    fields.update({f: getattr(args, f) for f in PAGE_FIELDS if getattr(args, f) is not None})
    request = LessonTrainRequest(task=args.task, masked=not args.no_mask, seed=args.seed, **fields)
    print(f"CPU: {cpu_model()}; load average before: {load_average()}")
    print(f"request: {request.model_dump()}", flush=True)
    rows = run(request)
    print(f"load average after: {load_average()}")
    for goal in (float(g) for g in args.targets.split(",")):
        hit = first_reaching(rows, goal)
        when = (
            f"step {hit['step']}, {hit['elapsed_s']:.0f} s wall, {hit['cpu_s']:.0f} s CPU"
            if hit
            else "not reached"
        )
        print(f"{args.label} accuracy >= {goal:.0%}: {when}")
    last = rows[-1]
    print(
        f"{args.label} final: step {last['step']}, accuracy {last['accuracy']:.1%}, "
        f"{last['elapsed_s']:.0f} s wall, {last['cpu_s']:.0f} s CPU"
    )


if __name__ == "__main__":
    main()
