"""The induction-head lesson: a two-layer attention-only Transformer that learns, from
sequences whose second half repeats the first, to point at the position after the previous
occurrence of its token and copy what is there (docs/induction.md).

Modules: :mod:`~ptrnet.induction.config` (the settings), :mod:`~ptrnet.induction.data` (the
sequences), :mod:`~ptrnet.induction.model` (the network), :mod:`~ptrnet.induction.measure`
(losses, accuracy, stripe scores), :mod:`~ptrnet.induction.train` (the run directory).
This package imports torch; the CLI imports it only inside the commands that use it.
"""
