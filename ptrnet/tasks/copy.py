"""The copy task: a seeded grammar of one-sentence news items and their headlines.

Task card (:class:`CopyTask`, input kind ``sentences``):

* **input**: a sentence of 9-17 tokens from one of :data:`TEMPLATES`, its slots filled with
  days, cities, events, vehicles and places from small closed lists, and with names, companies
  and numbers from pools far larger than any vocabulary (:data:`NAME_POOL` names and companies
  of 3 syllables, :data:`NUMBER_POOL` numbers): almost every name and number is rare, so a
  vocabulary built from the training data leaves them out.
* **output**: a headline of 3-9 tokens that copies some source words (names, numbers, cities)
  and generates template words absent from the source ("breaks", "wins", "to lead"), e.g.
  ``late on friday kanori broke the lisbon record by 4 seconds`` ->
  ``kanori breaks lisbon record``.
* **metric**: exact match of the headline (:mod:`ptrnet.text.metrics`), which picks the best
  checkpoint; token accuracy, out-of-vocabulary recall and the mean p_gen beside it.
* **reference**: the pointer-generator of See, Liu & Manning (2017), "Get To The Point".

Data is a pure function of ``(seed, stream, index)``: each example has its own
:class:`random.Random` seeded by a string of the three, so any slice of a dataset can be
regenerated alone and files are identical whatever produced them.
"""

from __future__ import annotations

import random
import string
from typing import ClassVar

from ptrnet.tasks.sentences import Pair, SentenceTask

DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
CITIES = (
    "lisbon", "oslo", "nairobi", "lima", "dublin", "cairo", "delhi", "quito", "perth", "turin",
    "leeds", "porto", "accra", "kyoto", "denver", "bergen", "zurich", "hanoi", "dakar", "bogota",
)  # fmt: skip
EVENTS = ("marathon", "derby", "open", "cup", "final", "relay", "regatta", "grand prix")
VEHICLES = ("bus", "train", "truck", "tram", "ferry", "van")
PLACES = ("library", "market", "stadium", "school", "bridge", "museum", "harbour", "park")
SYLLABLES = (
    "ka", "ki", "ko", "ma", "mi", "na", "no", "ri", "ro", "sa", "se", "ta", "to", "la", "le",
    "li", "da", "do", "ba", "be", "ya", "yo", "zu", "fe", "gi", "ho", "ju", "pa", "ve", "wa",
    "ne", "chi",
)  # fmt: skip
NAME_POOL = len(SYLLABLES) ** 3  # words of 3 syllables, drawn uniformly
NUMBER_POOL = 9999  # numbers 1 .. 9999

TEMPLATES = (
    ("late on {day} {name} broke the {city} record by {num} seconds",
     "{name} breaks {city} record"),
    ("{name} broke the {city} record by {num} seconds on {day}", "{name} breaks {city} record"),
    ("{name} , a {num} year old from {city} , won the {event} on {day}", "{name} wins {event}"),
    ("on {day} the {event} in {city} was won by {name}", "{name} wins {city} {event}"),
    ("police in {city} said {num} people were hurt when a {vehicle} crashed on {day}",
     "{num} injured in {city} {vehicle} crash"),
    ("shares in {company} rose {num} percent after {name} was named chief executive",
     "{name} to lead {company}"),
    ("{company} named {name} as its new chief executive on {day}", "{name} to lead {company}"),
    ("the {city} council voted {num} to {num2} on {day} to close the old {place}",
     "{city} council votes {num} to {num2} to shut {place}"),
    ("{name} scored {num} points as {city} beat {city2} on {day}",
     "{name} scores {num} in {city} win"),
    ("{name} and {name2} signed for {city} united on {day} for {num} million",
     "{city} united sign {name} and {name2}"),
    ("a {vehicle} strike in {city} left {num} commuters stranded on {day}",
     "{city} {vehicle} strike strands {num}"),
)  # fmt: skip


def _closed_words() -> frozenset[str]:
    """Every word the templates and closed lists can produce (none of them is a name)."""
    words = {
        w
        for pool in (DAYS, CITIES, EVENTS, VEHICLES, PLACES)
        for item in pool
        for w in item.split()
    }
    for source, target in TEMPLATES:
        words.update(w for w in f"{source} {target}".split() if not w.startswith("{"))
    return frozenset(words)


CLOSED_WORDS = _closed_words()


def _word(rng: random.Random) -> str:
    """A name or company from the syllable pool, never one of :data:`CLOSED_WORDS`."""
    while True:
        word = "".join(rng.choice(SYLLABLES) for _ in range(3))
        if word not in CLOSED_WORDS:
            return word


def _slots(rng: random.Random) -> dict[str, str]:
    """One value per slot; the second name, city and number differ from the first."""
    slots = {
        "day": rng.choice(DAYS),
        "city": rng.choice(CITIES),
        "event": rng.choice(EVENTS),
        "vehicle": rng.choice(VEHICLES),
        "place": rng.choice(PLACES),
        "name": _word(rng),
        "company": _word(rng),
        "num": str(rng.randint(1, NUMBER_POOL)),
    }
    slots["city2"] = rng.choice([c for c in CITIES if c != slots["city"]])
    slots["name2"] = slots["name"]
    while slots["name2"] in (slots["name"], slots["company"]):
        slots["name2"] = _word(rng)
    slots["num2"] = slots["num"]
    while slots["num2"] == slots["num"]:
        slots["num2"] = str(rng.randint(1, NUMBER_POOL))
    return slots


def sample_pair(seed: int, index: int, stream: int = 0) -> Pair:
    """Example ``index`` of the dataset ``(seed, stream)``: a pure function of the three."""
    rng = random.Random(f"ptrnet-copy:{seed}:{stream}:{index}")
    source, target = rng.choice(TEMPLATES)
    slots = _slots(rng)
    return Pair(tuple(source.format(**slots).split()), tuple(target.format(**slots).split()))


def is_pool_word(word: str) -> bool:
    """Whether ``word`` comes from the open pools (a name, company or number)."""
    return word.isdigit() or (word not in CLOSED_WORDS and set(word) <= set(string.ascii_lowercase))


class CopyTask(SentenceTask):
    """The copy task's card: sentences of the grammar above, summarised as headlines."""

    name: ClassVar[str] = "copy"

    def sample_pair(self, seed: int, index: int, stream: int = 0) -> Pair:
        return sample_pair(seed, index, stream)
