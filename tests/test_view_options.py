"""The three view options decode what the one ``views`` option they replace decoded.

Oracle: tests/data/view_decodings.json, the outputs the ``views`` option gave (2/4-view
averaging, eight-view search, multistart on 1, 2, 4, 8 views) at commit 6a1bff6 on a tiny
seeded model, written by tests/data/make_view_decodings.py at that commit. Each case pairs the
old options with the new ones that mean the same decoding. The Delaunay cases decode under the
rule and validity of that commit (:func:`ascending_triangles`, :func:`repeats_valid`), which a
later one replaced (no triangle twice, in any vertex order).
"""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from ptrnet.cli.main import main
from ptrnet.datasets.batching import collate
from ptrnet.decoding.decode import decode
from ptrnet.decoding.options import DecodeOptionError, DecodeOptions
from ptrnet.decoding.view_scores import mean_view_log_likelihood
from ptrnet.model import ModelConfig, build_model
from ptrnet.tasks import get_task
from ptrnet.tasks.base import check_indices
from ptrnet.tasks.delaunay import DelaunayTask, torch_where_position
from ptrnet.tasks.symmetry import (
    MIRROR,
    ROTATIONS,
    SQUARE_SYMMETRIES,
    search_starts,
    square_symmetry,
    view_symmetries,
)

torch.set_num_threads(1)
FIXTURE = json.loads((Path(__file__).parent / "data" / "view_decodings.json").read_text())


@pytest.fixture(scope="module")
def model():
    net = build_model(ModelConfig(**FIXTURE["config"])).eval()
    weights = {k: torch.tensor(v) for k, v in FIXTURE["weights"].items()}
    net.load_state_dict(weights)
    return net


def ascending_triangles(self, state):
    """Delaunay's ``task`` rule when the fixture was recorded: ascending indices within a
    triangle, room left for the larger ones, the end only between triangles (repeats allowed)."""
    cols = torch.arange(state.n + 1)[None]  # (1, n+1)
    real, last, size = state.real_columns(), state.last[:, None], state.lengths[:, None]
    opening = (real & (cols <= size - 2)) | state.end_if(state.steps > 0)
    second = real & (cols > last) & (cols <= size - 1)
    return torch_where_position(state.steps % 3, opening, second, real & (cols > last))


def repeats_valid(self, points, seq):
    """Delaunay's validity when the fixture was recorded: triangles of distinct inputs, a
    triangle given twice allowed (eight-view search re-sorts only valid outputs)."""
    seq = np.asarray(seq)
    if len(seq) == 0 or len(seq) % 3 or not check_indices(seq, len(points)):
        return False
    return bool(np.all(np.diff(np.sort(seq.reshape(-1, 3), axis=1), axis=1) > 0))


@pytest.mark.parametrize(
    "case", FIXTURE["cases"], ids=lambda c: f"{c['task']}-{'-'.join(map(str, c['old'].values()))}"
)
def test_the_new_options_decode_what_the_old_views_option_did(model, case, monkeypatch):
    monkeypatch.setattr(DelaunayTask, "allowed_next", ascending_triangles)
    monkeypatch.setattr(DelaunayTask, "reads_history", False)
    monkeypatch.setattr(DelaunayTask, "is_valid", repeats_valid)
    points = [np.asarray(p) for p in FIXTURE["points"]]
    options = DecodeOptions(**case["new"])
    generator = torch.Generator().manual_seed(0)  # as the fixture sampled
    found = decode(model, get_task(case["task"]), collate(points), options, generator=generator)
    assert [s.tolist() for s in found.sequences] == case["sequences"]
    np.testing.assert_allclose(found.log_prob.numpy(), case["log_prob"], rtol=1e-5, atol=1e-5)


def test_every_old_mode_is_in_the_fixture():
    """2 and 4 averaged views, eight-view search with and without averaging, multistart on
    every view count; each of the old strategies with views."""
    news = [case["new"] for case in FIXTURE["cases"]]
    assert {n.get("average_views", 1) for n in news if "search_views" not in n} >= {2, 4}
    assert {n.get("average_views", 1) for n in news if "search_views" in n} == {1, 4}
    assert {n.get("multistart") for n in news} >= {1, 2, 4, 8}
    assert {n.get("strategy", "greedy") for n in news} == {"greedy", "beam", "sample"}
    assert all(c["old"].get("views", 1) > 1 or "multistart" in c["new"] for c in FIXTURE["cases"])


@pytest.mark.parametrize("averaged", [1, 2, 4])
def test_an_eight_view_search_starts_once_per_set_of_symmetries_its_rotations_join(averaged):
    """Oracle: the images of a point with eight distinct images, composed by hand."""
    probe = np.array([[0.1, 0.3]])
    images = [square_symmetry(probe, w) for w in range(SQUARE_SYMMETRIES)]
    reads = [
        {next(k for k, im in enumerate(images) if np.allclose(im, square_symmetry(images[w], r)))
         for r in view_symmetries(averaged)}
        for w in search_starts(averaged)
    ]  # fmt: skip
    assert set().union(*reads) == set(range(SQUARE_SYMMETRIES))  # every symmetry read
    assert sum(map(len, reads)) == SQUARE_SYMMETRIES  # once
    assert len(search_starts(averaged)) == SQUARE_SYMMETRIES // averaged
    assert search_starts(4) == (0, MIRROR)


@pytest.mark.parametrize(
    "options, option, words",
    [
        ({"average_views": 3}, "average_views", "1, 2 or 4"),
        ({"average_views": 8}, "average_views", "1, 2 or 4"),
        ({"search_views": 4}, "search_views", "1 or 8"),
        ({"multistart": 3}, "multistart", "0, 1, 2, 4 or 8"),
        ({"multistart": 1.0}, "multistart", "0, 1, 2, 4 or 8"),
        ({"average_views": True}, "average_views", "1, 2 or 4"),
        ({"multistart": 1, "strategy": "beam"}, "multistart", "greedy"),
        ({"multistart": 8, "search_views": 8}, "search_views", "multistart 8"),
        ({"strategy": "multistart"}, "strategy", "multistart=1"),
    ],
)
def test_each_view_option_is_refused_once_with_its_name(options, option, words):
    with pytest.raises(DecodeOptionError, match=words) as err:
        DecodeOptions(**options)
    assert err.value.option == option and "\n" not in str(err.value)


def test_multistart_true_is_one_and_the_options_combine():
    assert DecodeOptions(multistart=True) == DecodeOptions(multistart=1)
    both = DecodeOptions(multistart=4, average_views=2)
    assert (both.searches, both.candidates(10)) == (4, 2 * 4 * 10)
    eight = DecodeOptions("beam", beam_width=3, search_views=8, average_views=4)
    assert (eight.searches, eight.candidates(10)) == (2, 3 * 4 * 2)


@pytest.mark.parametrize(
    "task, options, option",
    [
        ("sort", {"average_views": 2}, "average_views"),
        ("sort", {"search_views": 8}, "search_views"),
        ("sort", {"multistart": 8}, "multistart"),
        ("delaunay", {"average_views": 4}, "average_views"),
        ("delaunay", {"multistart": 2}, "multistart"),
        ("delaunay", {"search_views": 8, "average_views": 2}, "average_views"),
    ],
)
def test_a_view_option_the_task_cannot_use_is_refused_by_name(task, options, option):
    with pytest.raises(DecodeOptionError) as err:
        DecodeOptions(**options).for_task(get_task(task))
    assert err.value.option == option and str(err.value).startswith(option)


def test_multistart_on_four_averaged_views_is_blind_to_a_quarter_turn(model):
    """A combination no old option had. The four rotations of a turned instance are the same
    four copies and its starts the same starts, so the chosen tour cannot change; without
    averaging it does."""
    tsp = get_task("tsp")
    points = [np.asarray(p) for p in FIXTURE["points"]]
    turned = [square_symmetry(p, ROTATIONS[1]) for p in points]

    def tours(options, instances):
        found = decode(model, tsp, collate(instances), options)
        assert all(tsp.is_valid(p, s) for p, s in zip(instances, found.sequences, strict=True))
        return [s.tolist() for s in found.sequences]

    averaged = DecodeOptions(multistart=1, average_views=4)
    assert tours(averaged, points) == tours(averaged, turned)
    alone = DecodeOptions(multistart=1)
    assert tours(alone, points) != tours(alone, turned)
    assert tours(DecodeOptions(multistart=2, average_views=2), points)  # runs, valid tours


@pytest.mark.parametrize("averaged", [1, 2])
def test_an_eight_view_search_with_less_averaging_scores_by_all_eight_views(model, averaged):
    """Another new combination: its score is the eight views' mean log-likelihood of the
    tour it returns, computed here by the view judge on its own."""
    tsp = get_task("tsp")
    batch = collate([np.asarray(p) for p in FIXTURE["points"]])
    options = DecodeOptions(search_views=8, average_views=averaged).for_task(tsp)
    found = decode(model, tsp, batch, options)
    with torch.no_grad():
        judged = mean_view_log_likelihood(
            model, tsp, batch.points, batch.lengths, found.tokens, "task"
        )
    torch.testing.assert_close(found.log_prob, judged, atol=1e-5, rtol=0)


@pytest.mark.parametrize(
    "flags, says",
    [
        (["--views", "8"], "--views 8 is --search-views 8 (with --average-views 4 for"),
        (["--views", "2"], "--views 2 or 4 is --average-views 2 or 4"),
        (["--decode", "multistart"], "multistart is a flag of its own: --multistart"),
    ],
)
def test_the_replaced_flags_are_refused_with_their_translation(flags, says, capsys):
    assert main(["eval", "tsp", "data.txt", *flags]) == 2
    assert says in capsys.readouterr().err


def test_the_multistart_flag_alone_is_one_view_and_takes_a_view_count():
    from ptrnet.cli.decode_args import decode_options
    from ptrnet.cli.main import build_parser

    tsp = get_task("tsp")
    for flags, views in ([], 0), (["--multistart"], 1), (["--multistart", "8"], 8):
        args = build_parser().parse_args(["eval", "tsp", "data.txt", *flags])
        assert decode_options(args, tsp).multistart == views
