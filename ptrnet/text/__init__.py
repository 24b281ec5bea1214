"""The ``copy`` task: short news sentences summarised by copying names and numbers from the
source and generating template words it does not contain (See, Liu & Manning 2017).

Modules, in import order: :mod:`~ptrnet.text.format` (the one-line text format, tokens),
:mod:`~ptrnet.text.grammar` (the seeded generator), :mod:`~ptrnet.text.vocab` (vocabulary and
extended ids), :mod:`~ptrnet.text.metrics` — all free of torch — then
:mod:`~ptrnet.text.batch`, :mod:`~ptrnet.text.decode`, :mod:`~ptrnet.text.checkpoint`,
:mod:`~ptrnet.text.train` and :mod:`~ptrnet.text.run` over the model
:mod:`ptrnet.model.pointer_generator`.
"""
