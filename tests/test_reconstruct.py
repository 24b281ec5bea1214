"""Random Re-Construct (ptrnet.searches.reconstruct): the rebuilt path is the model's own (heavy
or light decoder) greedy continuation of a tour that starts at the segment's far end and then
visits its near end; tours stay permutations, never grow, and depend only on the generator."""

import itertools
from pathlib import Path

import pytest
import torch

from ptrnet.model import ModelConfig, build_model
from ptrnet.searches.reconstruct import (
    fill_unit_square,
    improve_tours,
    rebuild_paths,
    tour_lengths,
)

torch.set_num_threads(1)
HEAVY = dict(encoder="transformer", encoder_layers=1, decoder="heavy", decoder_layers=2, heads=2)
LIGHT = dict(encoder="transformer", encoder_layers=1, decoder="light", heads=2, logit_clip=10.0)


@pytest.fixture(scope="module", params=[HEAVY, LIGHT], ids=["heavy", "light"])
def model(request):
    torch.manual_seed(0)
    return build_model(ModelConfig(input_dim=2, hidden=16, **request.param)).eval()


def forced_then_greedy(model, coords):
    """Tokens decoded by the model's step interface after forcing the last city, then the
    first: the reference the segment rebuild must reproduce. coords (L, 2) -> cities."""
    length = coords.shape[0]
    memory = model.encode(coords[None], torch.tensor([length]))
    state, prev, cities = memory.state, torch.tensor([0]), []
    for forced in (length, 1, *[None] * (length - 2)):
        logits, state = model.step(memory, prev, state)
        logits[:, 0] = float("-inf")
        prev = torch.tensor([forced]) if forced else logits.argmax(dim=1)
        cities.append(int(prev) - 1)
    return cities[1:] + cities[:1]  # a, ..., b


def test_a_rebuilt_path_is_the_models_greedy_tour_from_the_far_end_through_the_near_end(model):
    torch.manual_seed(1)
    coords = torch.rand(6, 9, 2)
    paths = rebuild_paths(model, coords)
    for row in range(6):
        assert paths[row].tolist() == forced_then_greedy(model, coords[row])


def test_a_rebuilt_path_starts_at_the_first_city_ends_at_the_last_and_visits_each_once(model):
    paths = rebuild_paths(model, torch.rand(5, 7, 2))
    for path in paths.tolist():
        assert path[0] == 0 and path[-1] == 6 and sorted(path) == list(range(7))


def test_improved_tours_are_permutations_never_longer_and_fixed_by_the_generator(model):
    torch.manual_seed(2)
    points, n = torch.rand(4, 23, 2), 23
    tours = torch.stack([torch.randperm(n) for _ in range(4)])
    runs = [
        improve_tours(lambda _: model, points, tours, 6, torch.Generator().manual_seed(5))
        for _ in range(2)
    ]
    assert torch.equal(runs[0], runs[1])
    assert all(sorted(t) == list(range(n)) for t in runs[0].tolist())
    assert (tour_lengths(points, runs[0]) <= tour_lengths(points, tours) + 1e-6).all()


def test_a_model_that_finds_the_best_path_makes_rrc_reach_the_optimum_of_a_small_tour():
    """An oracle 'model' whose rebuilds are the shortest paths (brute force): with segments as
    long as the tour, one round of RRC from any start gives the optimal tour."""
    torch.manual_seed(3)
    n = 7
    points = torch.rand(1, n, 2)
    best = min(
        tour_lengths(points, torch.tensor([[0, *p]])).item()
        for p in itertools.permutations(range(1, n))
    )

    class ShortestPath:
        def __call__(self, length):
            return self

    import ptrnet.searches.reconstruct as rrc

    def shortest(model, coords):
        out = []
        for row in coords:
            inner = min(
                itertools.permutations(range(1, len(row) - 1)),
                key=lambda p: rrc.path_lengths(row[[0, *p, len(row) - 1]][None]).item(),
            )
            out.append([0, *inner, len(row) - 1])
        return torch.tensor(out)

    original = rrc.rebuild_paths
    rrc.rebuild_paths = shortest
    try:
        tours = torch.randperm(n)[None]
        found = improve_tours(ShortestPath(), points, tours, 40, torch.Generator().manual_seed(0))
    finally:
        rrc.rebuild_paths = original
    assert tour_lengths(points, found).item() == pytest.approx(best, rel=1e-6)


def test_segments_are_scaled_to_fill_the_unit_square_keeping_their_shape():
    coords = torch.tensor([[[10.0, 20.0], [14.0, 20.0], [12.0, 22.0]]])
    scaled = fill_unit_square(coords)
    assert torch.allclose(scaled, torch.tensor([[[0.0, 0.0], [1.0, 0.0], [0.5, 0.5]]]))


def test_tours_that_are_not_permutations_are_refused(model):
    with pytest.raises(ValueError, match="permutation"):
        improve_tours(
            lambda _: model,
            torch.rand(1, 5, 2),
            torch.tensor([[0, 1, 1, 2, 3]]),
            1,
            torch.Generator(),
        )


def tour_cost(path):
    """Mean closed-tour length of a paper-format predictions file."""
    import numpy as np

    from ptrnet.io.paper_format import iter_examples
    from ptrnet.solvers.tsp import tour_length
    from ptrnet.tasks import get_task

    costs = [
        tour_length(ex.points, ex.seq[:-1])
        for ex in iter_examples(path, get_task("tsp"), "prediction")
    ]
    return float(np.mean(costs))


def test_predict_improve_rrc_shortens_the_bundled_models_tours_and_repeats_with_its_seed(cli):
    assert cli("generate", "tsp", "-n", "40", "--count", "3", "--seed", "9", "-o", "i.txt")[0] == 0
    base = ["predict", "tsp", "i.txt", "--threads", "1", "-q"]
    assert cli(*base, "-o", "greedy.txt")[0] == 0
    rrc = [*base, "--improve", "rrc", "--iterations", "4", "--seed", "1"]
    assert cli(*rrc, "-o", "a.txt")[0] == 0
    assert cli(*rrc, "-o", "b.txt")[0] == 0
    assert Path("a.txt").read_text() == Path("b.txt").read_text()
    assert tour_cost("a.txt") < tour_cost("greedy.txt")


@pytest.mark.parametrize("decoder", ["heavy", "light"])
def test_improve_rrc_runs_through_a_lone_run_directory_not_only_a_folder(cli, tmp_path, decoder):
    """A run of ``ptrnet train --decoder heavy|light`` (one model, no sizes.json) rebuilds its
    own segments at every length."""
    run = str(tmp_path / decoder)
    train = ["train", "tsp", "--dry-run", "--decoder", decoder, "--heads", "2", "-q"]
    assert cli(*train, "--threads", "1", "--out", run)[0] == 0
    assert cli("generate", "tsp", "-n", "15", "--count", "2", "--seed", "3", "-o", "t.txt")[0] == 0
    base = ["predict", "tsp", "t.txt", "--model", run, "--threads", "1", "-q"]
    assert cli(*base, "-o", "greedy.txt")[0] == 0
    status, _, err = cli(*base, "--improve", "rrc", "--iterations", "3", "-o", "rrc.txt")
    assert status == 0, err
    assert tour_cost("rrc.txt") <= tour_cost("greedy.txt") + 1e-9


def test_improve_rrc_refuses_other_tasks_models_without_a_heavy_decoder_and_lone_iterations(
    cli, tmp_path
):
    assert cli("generate", "sort", "-n", "5", "--count", "2", "-o", "s.txt", "-q")[0] == 0
    status, _, err = cli("predict", "sort", "s.txt", "-o", "-", "--improve", "rrc")
    assert status == 2 and "--improve rrc: rebuilds tours, for task tsp, not sort" in err
    assert cli("generate", "tsp", "-n", "12", "--count", "2", "-o", "t.txt", "-q")[0] == 0
    status, _, err = cli("predict", "tsp", "t.txt", "-o", "-", "--iterations", "3")
    assert status == 2 and "--iterations 3: iterations need --improve rrc" in err
    lstm = str(tmp_path / "lstm")
    assert cli("train", "tsp", "--dry-run", "--out", lstm, "-q")[0] == 0
    status, _, err = cli("eval", "tsp", "t.txt", "--model", lstm, "--improve", "rrc")
    assert status == 2 and "routes no size to one" in err and err.count("\n") == 1
