"""The ``copy`` task: short news sentences summarised by copying names and numbers from the
source and generating template words it does not contain (See, Liu & Manning 2017).

Modules, in import order: :mod:`~ptrnet.text.format` (the one-line text format, tokens),
:mod:`~ptrnet.text.grammar` (the seeded generator), :mod:`~ptrnet.text.vocab` (vocabulary and
extended ids), :mod:`~ptrnet.text.metrics` and :mod:`~ptrnet.text.config` — all free of torch —
then, over the model :mod:`ptrnet.model.pointer_generator`, :mod:`~ptrnet.text.batch`
(tensors), :mod:`~ptrnet.text.decode` (greedy, beam, explain), :mod:`~ptrnet.text.checkpoint`,
:mod:`~ptrnet.text.evaluate` (load and score) and :mod:`~ptrnet.text.train`. The commands are
in :mod:`ptrnet.cli.copy`.
"""
