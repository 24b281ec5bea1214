"""Training the induction lesson's model, and its run directory.

A run directory holds ``config.json`` (:class:`~ptrnet.induction.config.InductionConfig`),
``log.csv`` (step, loss, first_half_loss, repeat_loss, repeat_accuracy, elapsed_s: means over
each logging interval of the training batches), ``weights.safetensors`` and, at the end,
``measurements.json`` (:func:`ptrnet.induction.measure.measure` on fresh sequences, with the
wall time and thread count). The run is seeded: the same config on the same thread count
gives the same weights.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from ptrnet.evaluation.score import percent
from ptrnet.induction.config import InductionConfig
from ptrnet.induction.data import repeated_batch
from ptrnet.induction.measure import measure, part_losses
from ptrnet.induction.model import AttentionOnly
from ptrnet.inference.load import BUNDLED_DIR
from ptrnet.io.atomic import atomic_write
from ptrnet.io.errors import InputError
from ptrnet.io.progress import Progress
from ptrnet.runs import CONFIG_JSON, LOG_CSV, RunDirError
from ptrnet.runs.csvlog import CsvLog

WEIGHTS = "weights.safetensors"
BUNDLED_INDUCTION = os.path.join(BUNDLED_DIR, "induction")  # the page's model
MEASUREMENTS = "measurements.json"
LOG_COLUMNS = ["step", "loss", "first_half_loss", "repeat_loss", "repeat_accuracy", "elapsed_s"]


def train_induction(
    config: InductionConfig,
    out: str,
    progress: bool = True,
    note: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Train ``config`` into the run directory ``out`` and return its measurements.

    Sets torch's thread count to ``config.threads`` (the run is deterministic for a given
    count). Progress lines go to stderr (:class:`~ptrnet.io.progress.Progress`); ``note``
    gets the final summary lines.

    Raises:
        RunDirError: ``out`` already holds an induction run.
    """
    if os.path.lexists(os.path.join(out, WEIGHTS)) or os.path.lexists(os.path.join(out, LOG_CSV)):
        raise RunDirError(f"{out} already holds a run; pass another --out")
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    model = AttentionOnly(config)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    generator = torch.Generator().manual_seed(config.seed)
    with atomic_write(os.path.join(out, CONFIG_JSON)) as stream:
        json.dump(config.to_dict(), stream, indent=2)
    log = CsvLog(os.path.join(out, LOG_CSV), LOG_COLUMNS)
    start = time.monotonic()
    sums: dict[str, float] = {}
    with Progress(f"train induction (V {config.vocab}, L {config.length})", config.steps,
                  enabled=progress) as bar:  # fmt: skip
        for step in range(1, config.steps + 1):
            model.train()
            tokens, parts = repeated_batch(
                generator, config.batch_size, config.vocab, config.length, config.shortest
            )
            logits, _ = model(tokens)
            losses = part_losses(logits, tokens, parts)
            optimizer.zero_grad(set_to_none=True)
            losses["loss"].backward()
            optimizer.step()
            for key, value in losses.items():
                sums[key] = sums.get(key, 0.0) + value.item()
            bar.update(1, config.batch_size, losses["loss"].item())
            if step % config.log_every == 0 or step == config.steps:
                count = step % config.log_every or config.log_every
                row = {key: value / count for key, value in sums.items()}
                log.write({"step": step, **row, "elapsed_s": time.monotonic() - start})
                bar.note("repeat_accuracy", percent(row["repeat_accuracy"], 2))
                sums = {}
    log.close()
    save_file(model.state_dict(), os.path.join(out, WEIGHTS))
    wall = time.monotonic() - start
    result = {**measure(model, config.eval_count, config.seed), "steps": config.steps}
    result.update(wall_s=round(wall, 1), threads=torch.get_num_threads())
    with atomic_write(os.path.join(out, MEASUREMENTS)) as stream:
        json.dump(result, stream, indent=2)
    for line in summary(result):
        note(line)
    return result


def summary(result: dict[str, Any]) -> list[str]:
    """The measurements in words, one line each."""
    return [
        f"repeated half: accuracy {percent(result['repeat_accuracy'], 2)}, "
        f"loss {result['repeat_loss']:.4f} (on {result['count']} fresh sequences)",
        f"first half: loss {result['first_half_loss']:.4f} (chance, log V: "
        f"{result['chance_loss']:.4f})",
        f"layer 2 induction score {result['induction_score']:.4f}, layer 1 previous-token "
        f"score {result['previous_token_score']:.4f}",
    ]


def load_run(run_dir: str) -> AttentionOnly:
    """The trained model of an induction run directory (or bundled folder), on the CPU.

    Raises:
        InputError: no such run, or a config or weights that do not load.
    """
    path = os.path.join(run_dir, CONFIG_JSON)
    if not os.path.isfile(os.path.join(run_dir, WEIGHTS)):
        raise InputError(run_dir, None, f"no induction run here (expected {WEIGHTS})")
    try:
        with open(path, encoding="utf-8") as stream:
            config = InductionConfig.from_dict(json.load(stream))
    except (OSError, ValueError) as err:
        raise InputError(path, None, str(err)) from None
    model = AttentionOnly(config)
    try:
        model.load_state_dict(load_file(os.path.join(run_dir, WEIGHTS)))
    except (OSError, RuntimeError, ValueError, SafetensorError) as err:
        raise InputError(
            os.path.join(run_dir, WEIGHTS), None, f"not this model's weights: {err}"
        ) from None
    return model.eval()
