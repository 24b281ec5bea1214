"""The vocabulary and the extended vocabulary of one sentence (See et al. 2017, section 2.2).

Ids ``0 .. V-1`` are the fixed vocabulary: the four :data:`SPECIALS` then the words of the
training data seen at least ``min_count`` times. A source sentence's words outside it get
temporary ids ``V, V+1, ...`` in order of first appearance (its *extended* vocabulary), so the
pointer can output them; the same word twice in a sentence gets the same id. Every source ends
with :data:`END`, which lets the pure pointer stop by pointing at it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ptrnet.text.format import Pair

PAD, UNK, START, END = "<pad>", "<unk>", "<s>", "</s>"
SPECIALS = (PAD, UNK, START, END)
PAD_ID, UNK_ID, START_ID, END_ID = range(4)


@dataclass(frozen=True)
class Encoded:
    """One source sentence encoded for the model.

    Attributes:
        words: the source tokens followed by :data:`END` (n of them).
        ids: (n,) fixed-vocabulary ids, out-of-vocabulary words as ``UNK_ID`` (the embedding's
            input).
        extended: (n,) extended ids, out-of-vocabulary words as ``V + k`` (where copies go).
        oovs: the sentence's out-of-vocabulary words; ``oovs[k]`` has extended id ``V + k``.
    """

    words: tuple[str, ...]
    ids: tuple[int, ...]
    extended: tuple[int, ...]
    oovs: tuple[str, ...]


class Vocabulary:
    """Words <-> ids, with :data:`SPECIALS` first.

    Raises:
        ValueError: a duplicate word, or the specials missing from the front.
    """

    def __init__(self, words: Sequence[str]) -> None:
        if tuple(words[: len(SPECIALS)]) != SPECIALS:
            raise ValueError(f"a vocabulary starts with {SPECIALS}")
        if len(set(words)) != len(words):
            raise ValueError("a vocabulary lists each word once")
        self.words = tuple(words)
        self._ids = {word: i for i, word in enumerate(self.words)}

    @classmethod
    def build(cls, pairs: Iterable[Pair], min_count: int) -> Vocabulary:
        """The words of ``pairs`` (sources and targets) seen at least ``min_count`` times,
        most frequent first (ties in alphabetical order)."""
        counts = Counter(w for pair in pairs for w in (*pair.source, *pair.target))
        kept = sorted(
            (w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w)
        )
        return cls([*SPECIALS, *(w for w in kept if w not in SPECIALS)])

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: object) -> bool:
        return word in self._ids

    def id(self, word: str) -> int:
        """The fixed id of ``word``, ``UNK_ID`` outside the vocabulary."""
        return self._ids.get(word, UNK_ID)

    def encode_source(self, source: Sequence[str]) -> Encoded:
        """``source`` + END with fixed and extended ids (see :class:`Encoded`)."""
        words = (*source, END)
        oovs: list[str] = []
        extended = []
        for word in words:
            if word in self._ids:
                extended.append(self._ids[word])
            else:
                if word not in oovs:
                    oovs.append(word)
                extended.append(len(self) + oovs.index(word))
        ids = tuple(self.id(w) for w in words)
        return Encoded(words, ids, tuple(extended), tuple(oovs))

    def encode_target(self, target: Sequence[str], oovs: Sequence[str], copy: bool) -> list[int]:
        """``target`` + END as ids: fixed ids in the vocabulary; outside it the extended id of a
        source word when ``copy`` (models that can point), else ``UNK_ID``."""
        ids = []
        for word in (*target, END):
            if word in self._ids:
                ids.append(self._ids[word])
            elif copy and word in oovs:
                ids.append(len(self) + list(oovs).index(word))
            else:
                ids.append(UNK_ID)
        return ids

    def decode(self, ids: Iterable[int], oovs: Sequence[str]) -> tuple[str, ...]:
        """Words of extended ``ids`` up to (without) the first END or PAD.

        Raises:
            ValueError: an id beyond the sentence's extended vocabulary.
        """
        words = []
        for i in ids:
            if i in (END_ID, PAD_ID):
                break
            if not 0 <= i < len(self) + len(oovs):
                raise ValueError(
                    f"id {i} outside the extended vocabulary of {len(self) + len(oovs)}"
                )
            words.append(self.words[i] if i < len(self) else oovs[i - len(self)])
        return tuple(words)
