"""Multi-view decoding: the rotations keep the labels, and the combined distribution is the
renormalised mean of each rotated copy's own distribution, computed independently here."""

import numpy as np
import pytest
import torch

from ptrnet.batching import collate
from ptrnet.cli.main import main
from ptrnet.decoding import decode
from ptrnet.decoding.views import ViewEnsemble, check_views
from ptrnet.model import ModelConfig, build_model
from ptrnet.tasks import TASKS, get_task
from ptrnet.tasks.convex_hull import signed_area
from ptrnet.tasks.symmetry import (
    ROTATIONS,
    SQUARE_SYMMETRIES,
    square_symmetry,
    square_symmetry_tensor,
    view_symmetries,
)

torch.set_num_threads(1)

TSP, HULL = get_task("tsp"), get_task("convex_hull")


def make_model(seed=0, hidden=16, scale=2.0):
    torch.manual_seed(seed)
    model = build_model(ModelConfig(input_dim=2, hidden=hidden, init="default")).eval()
    with torch.no_grad():  # sharper distributions make near-ties unlikely
        for p in model.parameters():
            p.mul_(scale)
    return model


def instances(sizes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.random((n, 2)) for n in sizes]


def test_the_tensor_symmetry_is_the_array_symmetry_on_every_row_of_a_batch():
    points = np.random.default_rng(1).random((3, 7, 2))
    for which in range(SQUARE_SYMMETRIES):
        moved = square_symmetry_tensor(torch.from_numpy(points), which).numpy()
        for row in range(3):
            assert np.array_equal(moved[row], square_symmetry(points[row], which))
    with pytest.raises(ValueError, match="0..7"):
        square_symmetry_tensor(torch.zeros(2, 2), 8)


def test_the_rotations_are_the_quarter_turns_about_the_centre():
    points = np.random.default_rng(2).random((9, 2))
    centred = points - 0.5
    for turns, which in enumerate(ROTATIONS):
        angle = turns * np.pi / 2
        rot = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
        assert np.allclose(square_symmetry(points, which), centred @ rot.T + 0.5)
    others = set(range(SQUARE_SYMMETRIES)) - set(ROTATIONS)
    area = signed_area(points, np.arange(9))
    for which in others:  # the rest are reflections: orientation flips
        assert signed_area(square_symmetry(points, which), np.arange(9)) == pytest.approx(-area)
    assert view_symmetries(1) == (0,) and view_symmetries(2) == (0, 3)
    assert view_symmetries(4) == ROTATIONS
    with pytest.raises(ValueError, match="1, 2, 4"):
        view_symmetries(3)


@pytest.mark.parametrize("name", sorted(TASKS))
def test_the_flag_says_whether_the_solvers_label_survives_every_rotation(name):
    """Oracle: the task's own solver on the rotated instance. Where the flag is false, some
    instance must show a changed label, or the flag would be needlessly strict."""
    task = get_task(name)
    rng = np.random.default_rng(3)
    changed = False
    for _ in range(40):
        points = task.sample_points(rng, int(rng.integers(5, 12)))
        label = task.solve(points)
        for which in ROTATIONS if task.dim == 2 else ():
            same = np.array_equal(task.solve(square_symmetry(points, which)), label)
            if task.rotation_invariant_labels:
                assert same, (name, which)
            changed |= not same
    assert task.rotation_invariant_labels or changed or task.dim != 2


def test_tasks_whose_labels_rotations_change_refuse_several_views():
    for name in ("sort", "delaunay"):
        with pytest.raises(ValueError, match="label order depends"):
            check_views(get_task(name), 2)
        check_views(get_task(name), 1)
    check_views(TSP, 4)
    check_views(HULL, 2)


@pytest.mark.parametrize("views", [2, 4])
@pytest.mark.parametrize("task", [TSP, HULL], ids=lambda t: t.name)
def test_each_step_is_the_mean_of_the_views_own_distributions_renormalised(views, task):
    model = make_model()
    batch = collate(instances([6, 4, 7]))
    constraints = "task" if task is TSP else "none"
    result = decode(
        model, task, batch, "greedy", constraints=constraints, views=views, return_probs=True
    )
    probs = result.probs  # (B, T, n+1)
    targets = result.tokens  # (B, T), the end token repeated after a row finished
    with torch.no_grad():
        per_view = [
            torch.log_softmax(
                model(square_symmetry_tensor(batch.points, which), batch.lengths, targets), -1
            )
            for which in view_symmetries(views)
        ]  # each (B, T, n+1)
    mean = torch.stack(per_view).mean(0).masked_fill(probs == 0, float("-inf"))
    expected = torch.softmax(mean, dim=-1)
    steps = (result.tokens != 0).sum(1) + 1  # real steps per row, end token included
    for row, count in enumerate(steps.tolist()):
        assert torch.allclose(probs[row, :count], expected[row, :count], atol=1e-5)


@pytest.mark.parametrize("strategy", ["greedy", "beam"])
def test_four_views_make_the_decoder_blind_to_a_quarter_turn_of_its_input(strategy):
    """The four rotations of a rotated instance are the same four copies, so the combined
    distribution, and the decoded sequence, cannot change; the model alone does change."""
    model = make_model(seed=4)
    points = instances([5, 8, 9, 12, 6], seed=5)
    turned = [square_symmetry(p, ROTATIONS[1]) for p in points]

    def run(points_list, views):
        result = decode(model, TSP, collate(points_list), strategy, constraints="task", views=views)
        return [s.tolist() for s in result.sequences]

    assert run(points, 4) == run(turned, 4)
    assert run(points, 1) != run(turned, 1)


def test_one_view_is_the_model_itself():
    model = make_model(seed=6)
    batch = collate(instances([5, 9, 7], seed=7))
    plain = decode(model, TSP, batch, "beam", constraints="task")
    wrapped = decode(ViewEnsemble(model, 1), TSP, batch, "beam", constraints="task")
    single = decode(model, TSP, batch, "beam", constraints="task", views=1)
    for other in (wrapped, single):
        assert torch.equal(plain.tokens, other.tokens)
        assert torch.allclose(plain.log_prob, other.log_prob, atol=1e-6)


def test_the_cli_takes_views_for_tsp_and_refuses_them_for_delaunay(tmp_path, capsys):
    data = tmp_path / "tsp.txt"
    assert main(["generate", "tsp", "-n", "6", "--count", "8", "--seed", "1", "-q",
                 "--workers", "1", "-o", str(data)]) == 0  # fmt: skip
    model_dir = tmp_path / "run"
    assert main(["train", "tsp", "--dry-run", "--out", str(model_dir)]) == 0
    capsys.readouterr()
    args = ["eval", "tsp", str(data), "--model", str(model_dir), "--json", "--threads", "1"]
    assert main([*args, "--decode", "beam", "--views", "4"]) == 0
    assert '"valid_rate": 1.0' in capsys.readouterr().out
    assert main(["eval", "delaunay", str(data), "--views", "2"]) == 2
    assert "--views 2: multi-view decoding needs labels that rotations keep" in (
        capsys.readouterr().err
    )
