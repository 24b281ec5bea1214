"""The lesson panel "seq2seq cannot say 6": a fixed-vocabulary baseline beside the Ptr-Net.

A Table 1 baseline (:class:`ptrnet.model.baselines.Seq2Seq`, or the same with input attention,
:class:`~ptrnet.model.baselines.AttentionSeq2Seq`) trained on convex hulls of ``max_n`` points
predicts over ``max_n + 1`` classes (end, inputs 1..max_n). Its encoder, an LSTM,
reads any number of points, but its output layer has no class for input ``max_n + 1`` or later:
whatever it has read, it cannot name those points. :func:`fixed_vocabulary_greedy` runs it on a
longer instance anyway (the library's ``encode`` refuses, rightly, for every other use) and
returns each step's distribution over the classes it has; the Ptr-Net's attention spans the
inputs it is given, so it can answer.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ptrnet.decoding.options import DecodeOptions
from ptrnet.inference import LoadedModel
from ptrnet.model.baselines import AttentionSeq2Seq, Seq2Seq
from ptrnet.model.pointer import Memory
from ptrnet.tasks import SizeRange, Task, from_tokens
from ptrnet.viz.trace import decode_trace
from ptrnet.web.answers import metrics_for, model_info, trace_json

LESSON_STREAM = 7  # instances of this panel: a stream no training run draws from
SEED_SEARCH = 200  # seeds tried for an instance whose hull uses a point past the vocabulary


def check_baseline(loaded: LoadedModel, task: Task) -> None:
    """Raises ValueError unless ``loaded`` is a fixed-vocabulary baseline of ``task``."""
    if not isinstance(loaded.model, Seq2Seq | AttentionSeq2Seq) or loaded.task != task.name:
        raise ValueError(
            f"model {loaded.path} is a {loaded.config.model.kind} model of {loaded.task}, "
            f"not a fixed-vocabulary baseline of {task.name}"
        )


@torch.no_grad()
def fixed_vocabulary_greedy(
    model: Seq2Seq | AttentionSeq2Seq, points: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Greedy, unmasked decoding of one instance of any size n by a fixed-vocabulary baseline.

    The memory is the one the baseline's ``encode`` builds, with every class that names an
    input valid.

    Args:
        model: a baseline with vocabulary ``V = max_n + 1`` (class 0 = end, j = input j).
        points: (n, dim) coordinates; n may exceed ``max_n``, and below it the classes past n,
            which name no input, are masked (probability 0).

    Returns:
        tokens (T,) chosen classes, the last the end class unless n + 1 steps ran out, and
        probs (T, V), each step's softmax over the classes. No class names an input past max_n.
    """
    x = torch.as_tensor(points, dtype=torch.float32)[None]  # (1, n, dim)
    lengths = torch.tensor([len(points)])
    enc, state = model.run_encoder(x, lengths)  # (1, n, d)
    if isinstance(model, AttentionSeq2Seq):
        state = (*state, torch.zeros_like(state[0][-1:]))  # initial context d'_0 = 0, (1, 1, d)
    vocab = model.vocab
    memory = Memory(
        enc=enc,
        enc_proj=model.project(enc),
        att_valid=torch.ones(1, len(points), dtype=torch.bool),
        out_valid=(torch.arange(vocab) <= len(points))[None],  # (1, V): classes naming inputs
        inputs=model.input_table(x),  # (1, n+1, dim): the decoder input of each previous token
        state=state,
    )
    prev, tokens, probs = torch.zeros(1, dtype=torch.long), [], []
    for _ in range(len(points) + 1):
        logits, state = model.step(memory, prev, state)  # (1, V)
        step = torch.softmax(logits, dim=-1)[0]
        prev = step.argmax()[None]
        tokens.append(int(prev))
        probs.append(step.numpy())
        if tokens[-1] == 0:
            break
    return np.array(tokens, dtype=np.int64), np.stack(probs)


def lesson_instance(task: Task, n: int, seed: int, vocab_inputs: int) -> tuple[np.ndarray, int]:
    """An instance of ``n`` points from the lesson stream: the first seed from ``seed`` on whose
    exact answer uses an input past ``vocab_inputs`` (when n > vocab_inputs and one is found
    within :data:`SEED_SEARCH` seeds), else ``seed``'s. Returns the points and the seed used."""
    sizes = SizeRange(n, n)
    if n > vocab_inputs:
        for tried in range(seed, seed + SEED_SEARCH):
            points = task.generate(sizes, 1, tried, LESSON_STREAM)[0]
            if int(task.solve(points).max()) >= vocab_inputs:
                return points, tried
    return task.generate(sizes, 1, seed, LESSON_STREAM)[0], seed


def described(loaded: LoadedModel) -> dict[str, Any]:
    """:func:`model_info` plus ``validation``: the checkpoint's best decoded validation value of
    its selection metric (hull accuracy), None when the checkpoint has no record."""
    best = loaded.info.get("best") or {}
    return {**model_info(loaded), "validation": best.get("value"), "metric": best.get("metric")}


def vocabulary_answer(
    task: Task, points: np.ndarray, baseline: LoadedModel, pointer: LoadedModel | None
) -> dict[str, Any]:
    """Both models' greedy answers for ``points`` (unconstrained, as the paper decodes hulls).

    ``seq2seq.probs`` has one column per class of the baseline (0 = end, j = input j);
    ``missing`` lists the 0-based inputs it has no class for. ``pointer`` is the Ptr-Net's answer
    with its step trace (columns 0 = end, j = input j), or None when no Ptr-Net is loaded.
    """
    ref = task.solve(points)
    max_n = baseline.config.model.max_n
    tokens, probs = fixed_vocabulary_greedy(baseline.model, points)
    seq = from_tokens(tokens)
    out: dict[str, Any] = {
        "task": task.name,
        "n": len(points),
        "points": np.round(points, 4).tolist(),
        "reference": ref.tolist(),
        "vocabulary": max_n,
        "missing": list(range(max_n, len(points))),
        "seq2seq": {
            "sequence": seq.tolist(),
            "tokens": tokens.tolist(),
            "probs": np.round(probs.astype(np.float64), 4).tolist(),
            "metrics": metrics_for(task, points, ref, seq),
            "info": described(baseline),
        },
        "pointer": None,
    }
    if pointer is not None:
        trace = decode_trace(pointer, task, points, DecodeOptions(constraints="none"))
        out["pointer"] = {
            "sequence": trace.sequence.tolist(),
            "trace": trace_json(trace),
            "metrics": metrics_for(task, points, ref, trace.sequence),
            "info": described(pointer),
        }
    return out
