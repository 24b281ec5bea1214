"""The registry of random streams (:class:`Stream`) and the values a sentence task's training run
gives its roles (:data:`SENTENCE_STREAMS`)."""

from __future__ import annotations

from enum import IntEnum, unique


@unique
class Stream(IntEnum):
    """The registry of random streams: every use of randomness keyed by ``(seed, stream, ...)``
    has its own stream here, so no two uses ever share draws.

    The values are part of the data format: changing one changes every file and run that uses
    it.
    """

    TRAIN = 0  #: training instances (``ptrnet generate``'s default)
    VALIDATION = 1  #: the validation set of a training run
    ORDER = 2  #: the shuffled order of an epoch
    BUCKET = 3  #: the grouping of training instances by size
    AUGMENTATION = 4  #: the symmetry applied to each augmented training instance
    TEST = 5  #: test sets (``ptrnet reproduce``, the live page's length test)
    DEMO = 7  #: ``ptrnet demo``'s fresh instances
    SAMPLING = 8  #: REINFORCE's sampled outputs (one generator per step)
    ROLLOUT = 9  #: the held-out instances of REINFORCE's greedy-rollout baseline
    LABEL_STEPS = 10  #: the label steps a sub-sampled teacher-forcing step trains on
    DAGGER = 11  #: the steps of the model's own outputs a DAgger step labels


#: A sentence task's training run draws its training examples (and vocabulary) and its
#: validation examples from these streams, by role: 1 and 2, the values of the first copy runs,
#: so the bundled copy model's documented command still draws the same sentences. A sentence
#: task keys each example by its own generator (:meth:`ptrnet.tasks.sentences.SentenceTask.
#: sample_pair`), so these share no draws with the point tasks' streams of equal value.
SENTENCE_STREAMS = {Stream.TRAIN: 1, Stream.VALIDATION: 2}
