"""Bounds on how wide a decoding search may grow: beam width and samples (checked as options
are built), and the candidate points one search holds (instances x width x views x starts x
(n + 1)), checked once the instances are known and before anything is allocated."""

import numpy as np
import pytest
import torch

import ptrnet
from ptrnet.cli.main import main
from ptrnet.decoding.dataset import decode_all, search_batches
from ptrnet.decoding.options import DecodeOptionError, DecodeOptions, SearchSizeError
from ptrnet.decoding.strategies import taking
from ptrnet.io.errors import UsageError
from ptrnet.io.limits import MAX_BEAM_WIDTH, MAX_SAMPLES, MAX_SEARCH_POINTS
from ptrnet.model import ModelConfig, build_model
from ptrnet.tasks import get_task

torch.set_num_threads(1)
SORT = get_task("sort")


@pytest.fixture(scope="module")
def tsp():
    return ptrnet.load("tsp", device="cpu")


@pytest.mark.parametrize(
    ("flag", "value", "bound"),
    [("--beam-width", "1000000000", MAX_BEAM_WIDTH), ("--samples", "1000000000", MAX_SAMPLES)],
)
@pytest.mark.parametrize("command", ["eval", "predict"])
def test_the_command_line_refuses_a_width_past_the_bound(capsys, command, flag, value, bound):
    status = main([command, "tsp", "missing.txt", "--decode", "beam", flag, value])
    err = capsys.readouterr().err.splitlines()
    assert status == 2
    assert err == [
        f"ptrnet: error: argument {flag}: expected an integer from 1 to {bound:,}, "
        f"got '{value}' (see ptrnet {command} --help)"
    ]


def test_help_states_the_bounds(capsys):
    assert main(["eval", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    beams = " or ".join(card.name for card in taking("beam_width"))
    assert f"beam width, with --decode {beams}: 1 to {MAX_BEAM_WIDTH:,}" in text
    assert f"(--pick); 1 to {MAX_SAMPLES:,}" in text
    assert f"one search holds at most {MAX_SEARCH_POINTS:,} candidate points" in text


def test_the_api_refuses_a_beam_width_past_the_bound_before_decoding(tsp):
    points = np.random.default_rng(0).random((10, 2))
    with pytest.raises(ValueError) as caught:
        tsp.solve(points, decode="beam", beam_width=10**9)
    assert str(caught.value) == (
        "beam_width: beam_width must be at most 1,024 (a wider search does not fit memory), "
        "got 1,000,000,000"
    )


@pytest.mark.parametrize(
    ("options", "option", "most"),
    [
        ({"strategy": "beam", "beam_width": 10**9}, "beam_width", "1,024"),
        ({"samples": 10**9}, "samples", "4,096"),
    ],
)
def test_options_refuse_a_width_past_the_bound(options, option, most):
    with pytest.raises(DecodeOptionError) as caught:
        DecodeOptions(**{"strategy": "sample", **options})
    assert caught.value.option == option
    assert str(caught.value).startswith(f"{option} must be at most {most}")


@pytest.mark.parametrize(
    ("options", "n", "option", "factors"),
    [
        (
            DecodeOptions("beam", beam_width=1024, search_views=8, average_views=4),
            50,
            "beam_width",
            "1024 beams x 4 averaged views x 2 searches over the eight views",
        ),
        (DecodeOptions("sample", samples=1024), 300, "samples", "1024 samples"),
        (DecodeOptions(multistart=8), 200, "multistart", "8 views x 200 starts"),
        (DecodeOptions(multistart=1), 1000, "strategy", "1000 starts"),
        (DecodeOptions(search_views=8), 40_000, "search_views", "8 searches over the eight views"),
    ],
)
def test_one_instance_too_large_to_search_is_one_line(options, n, option, factors):
    points = options.candidates(n) * (n + 1)
    assert points > MAX_SEARCH_POINTS
    with pytest.raises(SearchSizeError) as caught:
        options.check_search(n)
    message = str(caught.value)
    assert caught.value.option == option and isinstance(caught.value, UsageError)
    assert message.startswith(f"one instance of {n} points searched with {factors} holds")
    assert f"{points:,} candidate points" in message and "\n" not in message


def test_views_times_multistart_times_n_is_refused_by_the_api_before_decoding(tsp):
    points = np.random.default_rng(1).random((200, 2))
    with pytest.raises(ValueError, match=r"^one instance of 200 points searched with 8 views"):
        tsp.solve(points, multistart=8)


def test_the_command_line_names_the_search_that_does_not_fit(cli, tmp_path):
    rng = np.random.default_rng(2)
    (tmp_path / "big.txt").write_text(" ".join(f"{v:.4f}" for v in rng.random(400)) + "\n")
    status, out, err = cli("predict", "tsp", "big.txt", "--multistart", "8", "-o", "-")
    assert (status, out) == (2, "")
    assert err.startswith("ptrnet: error: one instance of 200 points searched with 8 views x ")
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    "options",
    [
        DecodeOptions("beam", beam_width=1024),
        DecodeOptions("sample", samples=300, average_views=1),
        DecodeOptions(multistart=1, batch_size=10_000),
        DecodeOptions(),
    ],
)
def test_dataset_batches_hold_at_most_the_bound(options):
    sizes = [5, 50, 50, 120, 7, 200, 200, 200, 33] * 20
    order = np.argsort(sizes, kind="stable")
    batches = search_batches(order, sizes, options)
    assert np.array_equal(np.concatenate(batches), order)  # every instance once, in order
    for rows in batches:
        n = max(sizes[i] for i in rows)
        assert len(rows) == 1 or len(rows) * options.search_points(n) <= MAX_SEARCH_POINTS
        assert len(rows) <= options.batch_size


def test_a_split_batch_decodes_as_one_batch(monkeypatch):
    """Batches cut to fit the bound give the outputs one batch gives."""
    torch.manual_seed(0)
    model = build_model(ModelConfig(input_dim=1, hidden=8)).eval()
    rng = np.random.default_rng(3)
    points = [rng.random((n, 1)) for n in (4, 6, 6, 9, 5, 7)]
    options = DecodeOptions("beam", beam_width=3, constraints="task")
    whole = decode_all(model, SORT, points, options)
    monkeypatch.setattr("ptrnet.decoding.dataset.MAX_SEARCH_POINTS", 3 * 10 * 2)
    assert all(len(b) <= 2 for b in search_batches(np.arange(6), [9] * 6, options))
    split = decode_all(model, SORT, points, options)
    assert all(np.array_equal(a, b) for a, b in zip(whole, split, strict=True))
