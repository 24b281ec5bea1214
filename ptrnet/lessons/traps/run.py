"""Run one trap's experiment and report its figures with the conditions they were measured in."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from typing import Any

import torch

from ptrnet.evaluation.score import percent
from ptrnet.io.atomic import atomic_write
from ptrnet.lessons.traps import DEFAULT_SEED, TRAP_NAMES, decoder_inputs, label_order, mask, mixing
from ptrnet.reproduce.compute import processor

TRAPS = dict(zip(TRAP_NAMES, (mixing, mask, label_order, decoder_inputs), strict=True))


def run_trap(
    name: str, quick: bool = False, seed: int = DEFAULT_SEED, steps: int | None = None
) -> dict[str, Any]:
    """Run trap ``name`` (a key of :data:`TRAPS`) at its ``quick`` or ``full`` size, with
    ``steps`` training steps per model instead of the size's own where given.

    Returns the record: trap, size (its steps, batch, hidden units, test instances), seed,
    figures (per model or setting, its measured numbers), CPU, threads, wall seconds and the
    process's CPU seconds (the wall time on an idle core, where other work shares the CPU).
    Raises KeyError for an unknown trap.
    """
    module = TRAPS[name]
    size_name = "quick" if quick else "full"
    size = module.SIZES[size_name]
    if steps is not None:
        size = replace(size, steps=steps)
    began, cpu_began = time.perf_counter(), time.process_time()
    figures = module.run(size, seed)
    return {
        "trap": name,
        "size": size_name,
        "steps": size.steps,
        "batch": size.batch,
        "hidden": size.hidden,
        "tests": size.tests,
        "seed": seed,
        "figures": figures,
        "cpu": processor(),
        "threads": torch.get_num_threads(),
        "wall_s": round(time.perf_counter() - began, 1),
        "cpu_s": round(time.process_time() - cpu_began, 1),
    }


def report(record: dict[str, Any]) -> str:
    """The record as text: a heading line, then one line per model or setting, its figures
    that are rates (the trap module's ``RATES``) in percent (``invalid 20.00%``); the record
    itself (:func:`save`) keeps the fractions."""
    head = (
        f"{record['trap']} ({record['size']}: {record['steps']} steps of {record['batch']}, "
        f"hidden {record['hidden']}, {record['tests']} test instances, seed {record['seed']}; "
        f"{record['wall_s']} s ({record['cpu_s']} s of CPU) on {record['threads']} thread(s) "
        f"of {record['cpu']})"
    )
    rates = TRAPS[record["trap"]].RATES
    lines = [head]
    for setting, numbers in record["figures"].items():
        shown = ", ".join(f"{key} {figure_text(key, v, rates)}" for key, v in numbers.items())
        lines.append(f"  {setting}: {shown}")
    return "\n".join(lines)


def figure_text(key: str, value: float | None, rates: frozenset[str]) -> str:
    """One figure for a person to read: a rate (``key`` in ``rates``) in percent to 2 decimals
    (the record's fractions have 4), another number as ``%g``; ``—`` when undefined."""
    if key in rates:
        return percent(value, 2)
    return "—" if value is None else f"{value:g}"


def save(record: dict[str, Any], path: str) -> None:
    """Write ``record`` as JSON to ``path`` (atomically)."""
    with atomic_write(path) as stream:
        json.dump(record, stream, indent=2)
        stream.write("\n")
