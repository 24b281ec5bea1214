"""Training the pointer-generator on a sentence task (``copy``): the sentence tasks' base
(:mod:`ptrnet.text.sentence_run`: the shared loop, data by step, validation, resuming) with only
what is the copy task's own plugged in: the vocabulary and the pointer-generator, the batches of
sentences, the loss, the validation metrics and the checkpoint format
(:mod:`ptrnet.text.checkpoint`).

The loss is teacher forcing on the mixture's likelihood: the mean over target words (END
included) of ``-log P(w*)``, where P is the model's mixture over the extended vocabulary (See et
al. 2017, eq. 6) and w* the target's extended id. The seq2seq's targets map out-of-vocabulary
words to ``<unk>``; the models that can point keep them as copies of the source.

The vocabulary is built from the first ``vocab_pairs`` examples of the training stream. The run
directory is a point task's (:mod:`ptrnet.runs`): ``config.json`` (``{"model":
PointerGeneratorConfig, "train": CopyTrainConfig}``), ``log.csv``, ``last.safetensors``
(resumable), ``best.safetensors`` + ``best.json`` (the best greedy validation exact match, ties
to the later step) and ``run.lock`` while it runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from ptrnet.model.pointer_generator import PointerGenerator, PointerGeneratorConfig
from ptrnet.text.batch import Batch, make_batch
from ptrnet.text.checkpoint import CopyModel, load_copy_model, save_copy_model
from ptrnet.text.config import FIXED_P_GEN, CopyTrainConfig
from ptrnet.text.evaluate import evaluate_pairs
from ptrnet.text.format import Pair
from ptrnet.text.sentence_run import SentenceRunConfig, SentenceTrainer
from ptrnet.text.vocab import PAD_ID, Vocabulary


@dataclass(frozen=True)
class CopyRunConfig(SentenceRunConfig):
    """A sentence task's run: the model (its vocabulary size follows from the training
    configuration's data) and the training configuration; ``config.json`` holds
    :meth:`to_dict`."""

    model_class = PointerGeneratorConfig
    train_class = CopyTrainConfig
    what = "a sentence task's run config"

    model: PointerGeneratorConfig
    train: CopyTrainConfig


def loss_of(model: nn.Module, batch: Batch) -> torch.Tensor:
    """Mean negative log-likelihood of the batch's target words under the mixture."""
    step = model(batch.ids, batch.extended, batch.lengths, batch.previous, batch.extra)
    keep = batch.targets != PAD_ID  # (B, T)
    nll = -step.log_probs.gather(2, batch.targets.unsqueeze(-1)).squeeze(-1)  # (B, T)
    return nll[keep].mean()


class CopyTrainer(SentenceTrainer):
    """A sentence task's run in the shared loop."""

    run_config_class = CopyRunConfig
    load_file = staticmethod(load_copy_model)

    def build_run(self) -> tuple[CopyRunConfig, nn.Module]:
        cfg = self.cfg
        self.vocab = Vocabulary.build(self.pairs(cfg.vocab_pairs), cfg.min_count)
        p_gen = FIXED_P_GEN[cfg.arch]
        model = PointerGeneratorConfig(len(self.vocab), p_gen, cfg.embed, cfg.hidden)
        return CopyRunConfig(model, cfg), PointerGenerator(model)

    def make_batch(self, pairs: list[Pair]) -> Batch:
        """Training tensors; only the seq2seq's targets map unknown words to ``<unk>``."""
        sources, targets = [p.source for p in pairs], [p.target for p in pairs]
        return make_batch(self.vocab, sources, targets, copy=self.cfg.arch != "seq2seq")

    def batch_loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        return loss_of(model, batch)

    def validation_metrics(self, model: nn.Module) -> dict[str, Any]:
        return evaluate_pairs(CopyModel(model, self.vocab), self.valid)[0]

    def save_file(
        self, path: str, model: nn.Module, info: dict[str, Any], optimizer: Any | None
    ) -> None:
        save_copy_model(path, model, self.vocab, self.cfg.to_dict(), self.step, info, optimizer)


#: ``train_copy(config, out_dir, log=print, progress=False, *, resume=False, should_stop=None)``:
#: train into ``out_dir`` or resume the run there, as
#: :meth:`~ptrnet.text.sentence_run.SentenceTrainer.train_run` (the line logged:
#: the vocabulary's words and the parameters).
train_copy = CopyTrainer.train_run
