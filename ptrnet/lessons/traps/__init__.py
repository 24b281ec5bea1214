"""The classic traps of pointer networks, each shown by one short seeded experiment
(``ptrnet lesson TRAP``; docs/traps.md has the measured figures):

* ``mixing`` (:mod:`~ptrnet.lessons.traps.mixing`): attention that mixes, then a fixed-size
  classifier, cannot name a position beyond its training sizes; a pointer can.
* ``mask`` (:mod:`~ptrnet.lessons.traps.mask`): decoding without the mask repeats inputs.
* ``label-order`` (:mod:`~ptrnet.lessons.traps.label_order`): hull labels from a random start
  and direction teach worse than the canonical ones.
* ``decoder-inputs`` (:mod:`~ptrnet.lessons.traps.decoder_inputs`): feeding the decoder the
  previous output's index instead of its coordinates.

:mod:`~ptrnet.lessons.traps.common` holds the small training loop and the evaluation they share.
"""

TRAP_NAMES = ("mixing", "mask", "label-order", "decoder-inputs")  # ``ptrnet lesson TRAP``
DEFAULT_SEED = 0
