"""The strategy registry (ptrnet/decoding/strategies/): one card per decoding strategy, and a
strategy added through it alone (a card and chooser defined here, and one registration) decodes
from every door: the options, ``ptrnet predict|eval|plot``, the Python API, the page and the
sentence decoders; no front end lists or compares strategies by name."""

from __future__ import annotations

import csv
import inspect
import io
import re
from pathlib import Path

import numpy as np
import pytest
import torch

import ptrnet
from ptrnet.cli.decode_args import DECODE_FLAGS
from ptrnet.cli.sentences import DECODE_OPTIONS
from ptrnet.decoding.options import DecodeOptionError, DecodeOptions
from ptrnet.decoding.strategies import (
    STRATEGIES,
    STRATEGY_OPTIONS,
    StrategyCard,
    chooser,
    register,
    strategy_card,
    taking,
)
from ptrnet.decoding.strategies.sampling import Sampling

torch.set_num_threads(1)
PACKAGE = Path(ptrnet.__file__).parent


def _draws(options, instances, generator):
    return Sampling(options.temperature, generator)


#: Toy strategy: ``beam_width`` independent samples per instance (the option reused by a
#: strategy that is not beam search), seeded, never at any temperature but 1.
TOY = StrategyCard(
    name="toy_draws",
    title="toy draws",
    description="independent draws, as many as the beam width",
    build=_draws,
    words=lambda options: f"{options.beam_width} toy draws (seed {options.seed})",
    width_option="beam_width",
    reads=("seed",),
    rows_word="draws",
)


@pytest.fixture
def toy():
    """Register the toy strategy for one test, then take it out again."""
    yield register(TOY)
    STRATEGIES.pop(TOY.name)


def test_every_card_is_complete_and_its_chooser_builds():
    for name, card in STRATEGIES.items():
        assert card.name == name and card.title and card.description
        assert "\n" not in card.description and set(card.takes) <= set(STRATEGY_OPTIONS)
        options = DecodeOptions(name)
        assert options.width == card.rows(options) >= 1
        assert isinstance(card.words(options), str) and card.words(options)
        choose = chooser(options, 2)
        assert choose.initial_scores(2 * options.width, torch.device("cpu")).shape == (
            2 * options.width,
        )


def test_the_registry_refuses_a_name_taken_an_unknown_name_and_an_unknown_option():
    with pytest.raises(ValueError, match="already registered"):
        register(STRATEGIES["beam"])
    with pytest.raises(ValueError, match="unknown strategy 'bean'; choose from .* did you mean"):
        strategy_card("bean")
    with pytest.raises(ValueError, match="unknown options"):
        StrategyCard("x", "x", "x", _draws, str, width_option="depth")


def test_every_option_a_strategy_reads_has_a_flag_a_keyword_and_a_sentence_option():
    from ptrnet.api.solver import decode_options
    from ptrnet.api.span import SpanReader

    keywords = {"strategy": "decode"}
    for option in ("strategy", *STRATEGY_OPTIONS):
        assert option in DECODE_FLAGS
        assert keywords.get(option, option) in inspect.signature(decode_options).parameters
        assert keywords.get(option, option) in inspect.signature(SpanReader.answer_all).parameters
        assert DECODE_FLAGS[option].removeprefix("--").replace("-", "_") in (
            *DECODE_OPTIONS,
            "decode",
        )


def test_the_options_count_rows_and_refuse_what_the_strategy_does_not_read(toy):
    options = DecodeOptions("toy_draws", beam_width=3, seed=2)
    assert (options.width, options.several, options.card.seeded) == (3, True, True)
    assert DecodeOptions("toy_draws", beam_width=1).several is False
    assert DecodeOptions("toy_draws", pick="shortest", beam_width=2).pick == "shortest"
    with pytest.raises(DecodeOptionError, match="samples > 1 needs sampling, not toy_draws"):
        DecodeOptions("toy_draws", samples=2)
    with pytest.raises(DecodeOptionError, match="temperature 0.5 needs sampling, not toy_draws"):
        DecodeOptions("toy_draws", temperature=0.5)
    assert STRATEGIES["beam"] in taking("beam_width") and taking("beam_width")[-1] is TOY
    big = DecodeOptions("toy_draws", beam_width=1000)
    with pytest.raises(DecodeOptionError, match="searched with 1000 draws holds") as caught:
        big.check_search(999)
    assert caught.value.option == "beam_width"


def test_a_strategy_registered_alone_decodes_from_every_door(toy, cli, models, tmp_path):
    """The command line (its flags, help and eval's report), the API, the page and the trace
    plot take the toy strategy with nothing but its registration."""
    from fastapi.testclient import TestClient

    from ptrnet import inference
    from ptrnet.web.app import create_app

    assert cli("generate", "tsp", "-n", "6", "--count", "4", "--seed", "1", "-o", "d.txt")[0] == 0
    status, out, _ = cli("eval", "tsp", "--help")
    assert status == 0 and "toy_draws" in out and "independent draws" in " ".join(out.split())
    flags = ("--decode", "toy_draws", "--beam-width", "3", "--seed", "5")
    status, out, err = cli("predict", "tsp", "d.txt", *flags, "-o", "-", "--output-format", "csv")
    assert status == 0, err
    status, report, err = cli("eval", "tsp", "d.txt", *flags, "--protocol", "valid")
    assert status == 0, err
    assert "3 toy draws (seed 5), most likely; 1 view; only valid outputs" in report
    status, _, err = cli("eval", "tsp", "d.txt", "--decode", "toy_draws", "--samples", "2")
    assert status == 2 and "--samples 2: samples > 1 needs sampling, not toy_draws" in err
    assert cli("plot", "tsp", "d.txt", *flags, "-o", "p.png")[0] == 0

    points = [np.array(row, dtype=float).reshape(-1, 2) for row in _csv_points(tmp_path)]
    solver = ptrnet.load("tsp", device="cpu", threads=1)
    results = solver.solve(points, decode="toy_draws", beam_width=3, seed=5)
    assert all(result.valid for result in results)
    assert [list(r.sequence) for r in results] == _csv_tours(out)

    client = TestClient(create_app({"tsp": inference.load_model(None, "tsp")}))
    listed = client.get("/api/tasks", headers={"host": "localhost"}).json()["strategies"]
    assert {"name": "toy_draws", "title": "toy draws", "width_option": "beam_width"}.items() <= (
        listed[-1].items()
    )
    body = {"task": "tsp", "points": points[0].tolist()}
    body["decoding"] = {"strategy": "toy_draws", "beam_width": 3, "seed": 5}
    answer = client.post("/api/predict", json=body, headers={"host": "localhost"})
    assert answer.status_code == 200, answer.text
    assert answer.json()["model"]["decoding"] == "3 toy draws (seed 5)"
    alone = solver.solve(points[0], decode="toy_draws", beam_width=3, seed=5)  # one draw order
    assert answer.json()["model"]["sequence"] == list(alone.sequence)


def test_a_strategy_registered_alone_decodes_sentences(toy, cli):
    from ptrnet.text.decode import decode_sources
    from ptrnet.text.evaluate import load

    copy = load(None)
    sources = [("the", "dakar", "council", "voted", "on", "saturday")]
    options = DecodeOptions("toy_draws", beam_width=4, seed=1)
    decoded = decode_sources(copy.model, copy.vocab, sources, options)
    again = decode_sources(copy.model, copy.vocab, sources, options)
    assert [d.ids for d in decoded] == [d.ids for d in again] and decoded[0].words
    status, out, err = cli("predict", "copy", " ".join(sources[0]), "--decode", "toy_draws",
                           "--beam-width", "4", "--seed", "1")  # fmt: skip
    assert status == 0, err
    assert out.split() == list(decoded[0].words)
    answer = ptrnet.load("span").answer(
        "ann founded bo in 1990 .", "who founded bo ?", decode="toy_draws", beam_width=2
    )
    assert answer and set(answer.split()) <= {"ann", "founded", "bo", "in", "1990", "."}


def test_no_front_end_compares_a_strategy_by_name():
    """Strategies are listed and told apart by their cards, never by name: a new one reaches
    every door. Allowed: ``multistart`` (refused as a strategy) and multistart's greedy runs."""
    allowed = {
        ("decoding/options.py", 'self.strategy == "multistart"'),
        ("decoding/checks.py", 'options.strategy != "greedy"'),
    }
    pattern = re.compile(r"""(?:strategy|decode)\s*(?:==|!=)\s*["'][a-z_]+["']""")
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        for match in pattern.finditer(path.read_text(encoding="utf-8")):
            if not any(where == file and text.endswith(match[0]) for file, text in allowed):
                found.append(f"{where}: {match[0]}")
    for path in sorted((PACKAGE / "web" / "static").glob("*")):
        text = path.read_text(encoding="utf-8")
        found += [f"{path.name}: {m[0]}" for m in re.finditer(r'"(?:greedy|sample|beam)"', text)]
    assert found == []


def _csv_points(tmp_path) -> list[list[float]]:
    """The instances of d.txt (paper format: coordinates, then ``output`` and the tour)."""
    rows = (tmp_path / "d.txt").read_text().splitlines()
    return [[float(v) for v in row.split(" output ")[0].split()] for row in rows]


def _csv_tours(text: str) -> list[list[int]]:
    """predict's CSV answers: the ``sequence`` column of each instance, 0-based."""
    return [[int(v) for v in row["sequence"].split()] for row in csv.DictReader(io.StringIO(text))]
