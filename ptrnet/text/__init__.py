"""The sentence tasks' machinery: the ``copy`` task's (card and grammar in
:mod:`ptrnet.tasks.copy`: short sentences summarised by copying names and numbers from the
source and generating template words it does not contain; See, Liu & Manning 2017) and the
``span`` task's (extractive QA, the ``span_*`` modules). Both train through one base:
:mod:`~ptrnet.text.sentence_run` (run configuration, trainer in the shared loop),
:mod:`~ptrnet.text.sentence_checkpoint` (the checkpoint file) and
:class:`~ptrnet.text.config.SentenceTrainConfig`; each task plugs in its model, batches, loss,
metrics and checkpoint metadata.

Modules, in import order: :mod:`~ptrnet.text.format` (the one-line text format),
:mod:`~ptrnet.text.vocab` (vocabulary and extended ids), :mod:`~ptrnet.text.metrics` and
:mod:`~ptrnet.text.config` — all free of torch — then, over the model
:mod:`ptrnet.model.pointer_generator`, :mod:`~ptrnet.text.batch` (tensors),
:mod:`~ptrnet.text.decoder` (the model's side of the shared search),
:mod:`~ptrnet.text.decode` (greedy, sampling, beam, explain), :mod:`~ptrnet.text.checkpoint`,
:mod:`~ptrnet.text.evaluate` (load and score) and :mod:`~ptrnet.text.train`. Every function
takes the task from its configuration or arguments, so a new sentence task needs none of them
changed. The commands are the generic ones (``ptrnet generate|train|eval|predict TASK``), which
hand a sentence task to :mod:`ptrnet.cli.sentences`.
"""
