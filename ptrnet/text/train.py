"""Training the pointer-generator on a sentence task (``copy``) by teacher forcing on the mixture's
likelihood: the loss is the mean over target words (END included) of ``-log P(w*)``, where P is
the model's mixture over the extended vocabulary (See et al. 2017, eq. 6) and w* the target's
extended id. The seq2seq's targets map out-of-vocabulary words to ``<unk>``; the models that can
point keep them as copies of the source.

Data is drawn on the fly from the task (:meth:`ptrnet.tasks.sentences.SentenceTask.generate_pairs`,
the copy task's grammar): batch ``s`` (1-based) holds the examples
``(s-1)*B .. s*B-1`` of stream :data:`TRAIN_STREAM` under the seed; the vocabulary is built from
the first ``vocab_pairs`` of that stream, the validation set is stream :data:`VALID_STREAM`.
The run directory receives ``best.safetensors`` (best decoded validation exact match, greedy),
``best.json`` and ``log.csv``; it must not already hold a run, of this task or any other
(:func:`check_new_run_dir`): a copy run cannot be resumed, so a second one goes elsewhere.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable
from typing import Any

import torch

from ptrnet.io.atomic import atomic_write
from ptrnet.io.progress import Progress
from ptrnet.model.pointer_generator import PointerGenerator, PointerGeneratorConfig
from ptrnet.runs import BEST, BEST_JSON, CONFIG_JSON, LAST, LOG_CSV, holds_run
from ptrnet.runs.csvlog import CsvLog
from ptrnet.runs.lock import claim_run_dir
from ptrnet.tasks import get_task
from ptrnet.text.batch import Batch, make_batch
from ptrnet.text.checkpoint import CopyModel, save_copy_model
from ptrnet.text.config import FIXED_P_GEN, CopyTrainConfig
from ptrnet.text.evaluate import evaluate_pairs
from ptrnet.text.format import Pair
from ptrnet.text.metrics import KEYS
from ptrnet.text.vocab import PAD_ID, Vocabulary
from ptrnet.training.loop import RunDirError

TRAIN_STREAM, VALID_STREAM = 1, 2
#: The files whose presence means a directory holds a run: a point task's (``last.safetensors``,
#: ``config.json`` ...) or a copy run's (``best.safetensors``, ``best.json``, ``log.csv``).
RUN_FILES = (LAST, CONFIG_JSON, BEST, BEST_JSON, LOG_CSV)


def check_new_run_dir(out_dir: str | os.PathLike[str]) -> None:
    """Refuse ``out_dir`` if it holds a run (any of :data:`RUN_FILES`), of any task.

    Raises:
        RunDirError: ``RUN already holds a run; pass another --out`` (nothing is written).
    """
    if holds_run(out_dir, RUN_FILES):
        raise RunDirError(f"{os.fspath(out_dir)} already holds a run; pass another --out")


def loss_of(model: PointerGenerator, batch: Batch) -> torch.Tensor:
    """Mean negative log-likelihood of the batch's target words under the mixture."""
    step = model(batch.ids, batch.extended, batch.lengths, batch.previous, batch.extra)
    keep = batch.targets != PAD_ID  # (B, T)
    nll = -step.log_probs.gather(2, batch.targets.unsqueeze(-1)).squeeze(-1)  # (B, T)
    return nll[keep].mean()


def train_copy(
    config: CopyTrainConfig,
    out_dir: str,
    log: Callable[[str], None] = print,
    progress: bool = False,
) -> dict[str, Any]:
    """Train a model as ``config`` says, writing into ``out_dir`` (created if missing); returns
    the best validation record (also ``best.json``): the best greedy value of the task's
    ``validation_metric`` (copy: exact match), ties going to the lower teacher-forced validation
    loss ``val_tf_loss``. ``log`` receives the one line on the vocabulary; ``progress`` shows
    the run's progress on stderr as a point task's does (:class:`ptrnet.io.progress.Progress`).
    The run claims ``out_dir`` for its life (:mod:`ptrnet.runs.lock`).

    Raises:
        RunDirError: ``out_dir`` already holds a run, or another training holds it (checked
            before anything is written).
    """
    with claim_run_dir(out_dir):
        return _train_claimed(config, out_dir, log, progress)


def _train_claimed(
    config: CopyTrainConfig, out_dir: str, log: Callable[[str], None], progress: bool
) -> dict[str, Any]:
    """:func:`train_copy` in ``out_dir``, which this process has claimed."""
    check_new_run_dir(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(config.seed)
    task = get_task(config.task)  # a SentenceTask: the config checks
    generate_pairs, sign = task.generate_pairs, -1 if task.lower_is_better else 1
    vocab_pairs = generate_pairs(config.vocab_pairs, config.seed, TRAIN_STREAM)
    vocab = Vocabulary.build(vocab_pairs, config.min_count)
    model_config = PointerGeneratorConfig(
        len(vocab), FIXED_P_GEN[config.arch], config.embed, config.hidden
    )
    model = PointerGenerator(model_config)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    valid = list(generate_pairs(config.val_count, config.seed, VALID_STREAM))
    columns = ["step", "loss", "elapsed_s", "val_tf_loss", *(f"val_{k}" for k in KEYS)]
    csv = CsvLog(os.path.join(out_dir, "log.csv"), columns)
    log(f"vocabulary {len(vocab)} words; {sum(p.numel() for p in model.parameters())} parameters")
    best: dict[str, Any] = {}
    best_rank = (-math.inf, -math.inf)
    start, losses = time.monotonic(), []
    report = Progress(f"train {task.name}", config.steps, "step", enabled=progress)
    for step in range(1, config.steps + 1):
        start_index = (step - 1) * config.batch_size
        pairs = list(generate_pairs(config.batch_size, config.seed, TRAIN_STREAM, start_index))
        model.train()
        loss = loss_of(model, _batch(vocab, pairs, config.arch))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.clip)
        optimizer.step()
        losses.append(loss.item())
        report.update(1, config.batch_size, losses[-1])
        if step % config.val_every and step != config.steps:
            continue
        row = {"step": step, "loss": sum(losses) / len(losses), "elapsed_s": 0.0}
        row.update(_validate(model, vocab, valid, config.arch))
        row["elapsed_s"], losses = time.monotonic() - start, []
        csv.write(row)
        report.note(f"val {task.validation_metric}", row[f"val_{task.validation_metric}"])
        report.show()
        rank = (sign * row[f"val_{task.validation_metric}"], -row["val_tf_loss"])
        if rank > best_rank:
            metrics = {k[4:]: v for k, v in row.items() if k.startswith("val_")}
            best = {"step": step, "metrics": metrics, "config": config.to_dict()}
            best_rank = rank
            _save_best(out_dir, model, vocab, config, best)
    csv.close()
    report.close()
    return best


def _batch(vocab: Vocabulary, pairs: list[Pair], arch: str) -> Batch:
    """Training tensors; only the seq2seq's targets map unknown words to ``<unk>``."""
    sources, targets = [p.source for p in pairs], [p.target for p in pairs]
    return make_batch(vocab, sources, targets, copy=arch != "seq2seq")


@torch.no_grad()
def _validate(
    model: PointerGenerator, vocab: Vocabulary, valid: list[Pair], arch: str
) -> dict[str, Any]:
    """``val_tf_loss`` (teacher-forced) and the greedy decode's metrics as ``val_<key>``."""
    model.eval()
    tf_loss = loss_of(model, _batch(vocab, valid, arch)).item()
    metrics, _ = evaluate_pairs(CopyModel(model, vocab), valid)
    return {"val_tf_loss": tf_loss, **{f"val_{k}": v for k, v in metrics.items()}}


def _save_best(
    out_dir: str,
    model: PointerGenerator,
    vocab: Vocabulary,
    config: CopyTrainConfig,
    best: dict[str, Any],
) -> None:
    """``best.safetensors`` and ``best.json`` for the record ``best``."""
    path = os.path.join(out_dir, "best.safetensors")
    save_copy_model(path, model, vocab, config.to_dict(), best["step"], best)
    with atomic_write(os.path.join(out_dir, "best.json")) as stream:
        json.dump(best, stream, indent=2)
