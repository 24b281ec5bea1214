"""Multi-view decoding: the rotations keep the labels, and the combined distribution is the
renormalised mean of each rotated copy's own distribution, computed independently here."""

import numpy as np
import pytest
import torch

from ptrnet.cli.main import main
from ptrnet.datasets.batching import collate
from ptrnet.decoding.decode import decode
from ptrnet.decoding.options import DecodeOptionError, DecodeOptions
from ptrnet.decoding.pointer_decoder import masked_log_probs
from ptrnet.decoding.view_scores import mean_view_log_likelihood, mirror_sequence, mirror_tokens
from ptrnet.decoding.views import ViewEnsemble
from ptrnet.model import ModelConfig, build_model
from ptrnet.tasks import POINT_TASKS, get_task
from ptrnet.tasks.sequences import signed_area
from ptrnet.tasks.symmetry import (
    ROTATIONS,
    SQUARE_SYMMETRIES,
    square_symmetry,
    square_symmetry_tensor,
    view_symmetries,
)

torch.set_num_threads(1)

TSP, HULL, DELAUNAY = get_task("tsp"), get_task("convex_hull"), get_task("delaunay")


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


@pytest.mark.parametrize("name", sorted(POINT_TASKS))
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


def test_tasks_whose_labels_rotations_change_refuse_two_or_four_views():
    for name in ("sort", "delaunay"):
        with pytest.raises(ValueError, match="label order depends"):
            DecodeOptions(average_views=2).for_task(get_task(name))
        DecodeOptions(average_views=1).for_task(get_task(name))
    with pytest.raises(ValueError, match="a flip reverses a sorted order"):
        DecodeOptions(search_views=8).for_task(get_task("sort"))
    DecodeOptions(search_views=8).for_task(get_task("delaunay"))
    DecodeOptions(average_views=4).for_task(TSP)
    DecodeOptions(average_views=2).for_task(HULL)


@pytest.mark.parametrize("views", [2, 4])
@pytest.mark.parametrize("task", [TSP, HULL], ids=lambda t: t.name)
def test_each_step_is_the_mean_of_the_views_own_distributions_renormalised(views, task):
    model = make_model()
    batch = collate(instances([6, 4, 7]))
    constraints = "task" if task is TSP else "none"
    result = decode(
        model,
        task,
        batch,
        DecodeOptions("greedy", constraints=constraints, average_views=views),
        return_probs=True,
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
        result = decode(
            model,
            TSP,
            collate(points_list),
            DecodeOptions(strategy, constraints="task", average_views=views),
        )
        return [s.tolist() for s in result.sequences]

    assert run(points, 4) == run(turned, 4)
    assert run(points, 1) != run(turned, 1)


def test_one_view_is_the_model_itself():
    model = make_model(seed=6)
    batch = collate(instances([5, 9, 7], seed=7))
    plain = decode(model, TSP, batch, DecodeOptions("beam", constraints="task"))
    wrapped = decode(ViewEnsemble(model, 1), TSP, batch, DecodeOptions("beam", constraints="task"))
    single = decode(model, TSP, batch, DecodeOptions("beam", constraints="task", average_views=1))
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
    for views in (["--average-views", "4"], ["--search-views", "8", "--average-views", "4"]):
        assert main([*args, "--decode", "beam", *views]) == 0
        assert '"valid_rate": 1.0' in capsys.readouterr().out
    assert main(["eval", "delaunay", str(data), "--average-views", "2"]) == 2
    err = capsys.readouterr().err
    assert "--average-views 2: average_views 2 needs labels that rotations keep" in err
    assert main(["eval", "sort", str(data), "--search-views", "8"]) == 2
    assert "--search-views 8: search_views 8 needs a task whose answers" in capsys.readouterr().err
    assert main(["eval", "tsp", str(data), "--average-views", "3"]) == 2
    assert "--average-views 3: average_views must be 1, 2 or 4, got 3" in capsys.readouterr().err


def test_a_mirrored_sequence_is_the_cycle_read_backwards_from_its_first_index():
    assert mirror_sequence(np.array([0, 3, 1, 2, 0])).tolist() == [0, 2, 1, 3, 0]
    assert mirror_sequence(np.array([4, 1, 2])).tolist() == [4, 2, 1]
    assert mirror_sequence(np.array([], dtype=np.int64)).tolist() == []
    assert mirror_sequence(np.array([3])).tolist() == [3]
    seq = np.array([2, 5, 0, 4, 1, 3, 2])
    assert np.array_equal(mirror_sequence(mirror_sequence(seq)), seq)
    tokens = torch.tensor([[1, 4, 2, 3, 1, 0, 0], [1, 3, 2, 1, 0, 0, 0]])
    assert mirror_tokens(tokens).tolist() == [[1, 3, 2, 4, 1, 0, 0], [1, 2, 3, 1, 0, 0, 0]]


@pytest.mark.parametrize("task", [TSP, HULL], ids=lambda t: t.name)
def test_in_a_mirrored_view_the_label_is_the_mirrored_sequence(task):
    """Oracle: the task's own canonical form of the label in every reflected instance."""
    rng = np.random.default_rng(8)
    for _ in range(30):
        points = task.sample_points(rng, int(rng.integers(4, 12)))
        label = task.solve(points)
        for which in set(range(SQUARE_SYMMETRIES)) - set(ROTATIONS):
            view = square_symmetry(points, which)
            assert np.array_equal(task.solve(view), mirror_sequence(label))


def hand_log_likelihood(model, task, points, seq, constraints):
    """One instance's log-likelihood of a 0-based sequence, step by step through model.step."""
    batch = collate([points])
    memory = model.encode(batch.points, batch.lengths)
    state, dstate = memory.state, task.decode_state(batch.lengths, constraints)
    prev, total = torch.zeros(1, dtype=torch.long), 0.0
    for token in [*(np.asarray(seq) + 1).tolist(), 0]:
        logits, state = model.step(memory, prev, state)
        logp = masked_log_probs(logits, dstate.allowed())
        total += float(logp[0, token])
        prev = torch.tensor([token])
        dstate = dstate.update(prev)
    return total


@pytest.mark.parametrize("task", [TSP, HULL, DELAUNAY], ids=lambda t: t.name)
def test_the_eight_view_score_averages_each_views_likelihood_of_its_own_label(task):
    model = make_model(seed=9)
    rng = np.random.default_rng(10)
    points = [task.sample_points(rng, n) for n in (5, 9, 7)]
    seqs = [task.solve(p) for p in points]
    batch = collate(points, seqs)
    constraints = "task" if task is TSP else "none"
    with torch.no_grad():
        got = mean_view_log_likelihood(
            model, task, batch.points, batch.lengths, batch.targets.clamp(min=0), constraints
        )
        for row, (p, s) in enumerate(zip(points, seqs, strict=True)):
            views = [square_symmetry(p, which) for which in range(SQUARE_SYMMETRIES)]
            expected = np.mean(
                [hand_log_likelihood(model, task, v, task.canonical(v, s), constraints)
                 for v in views]
            )  # fmt: skip
            assert float(got[row]) == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize("averaged", [4, 1])
@pytest.mark.parametrize("strategy", ["greedy", "beam"])
def test_eight_views_make_the_decoder_blind_to_every_symmetry_of_its_input(strategy, averaged):
    """A symmetry permutes the eight views, so the answer is the same tour: the same sequence
    after a rotation, the mirrored sequence after a reflection. Whether each search averages
    four rotations (two searches) or none (eight)."""
    model = make_model(seed=11)
    points = instances([5, 8, 9, 11], seed=12)
    options = DecodeOptions(strategy, constraints="task", search_views=8, average_views=averaged)

    def run(points_list):
        result = decode(model, TSP, collate(points_list), options)
        return [s.tolist() for s in result.sequences]

    base = run(points)
    for which in (ROTATIONS[1], 1, 4):
        moved = run([square_symmetry(p, which) for p in points])
        if which in ROTATIONS:
            assert moved == base
        else:
            assert moved == [mirror_sequence(np.array(s)).tolist() for s in base]


def test_eight_views_return_the_best_candidate_under_the_eight_view_score():
    """The four-view search's own answer is one of the candidates, so the pick scores at least
    as high under the eight-view judge; log_prob is that score."""
    model = make_model(seed=13)
    batch = collate(instances([6, 7, 9], seed=14))
    for strategy in ("greedy", "beam"):
        options = {"constraints": "task", "beam_width": 3}
        eight = DecodeOptions(strategy, search_views=8, average_views=4, **options)
        result = decode(model, TSP, batch, eight)
        four = decode(model, TSP, batch, DecodeOptions(strategy, average_views=4, **options))
        with torch.no_grad():
            judge = [
                mean_view_log_likelihood(model, TSP, batch.points, batch.lengths, r.tokens, "task")
                for r in (result, four)
            ]
        assert torch.allclose(result.log_prob, judge[0], atol=1e-5)
        assert (judge[0] >= judge[1] - 1e-5).all()
    with pytest.raises(ValueError, match="return_probs needs search_views 1"):
        decode(
            model,
            TSP,
            batch,
            DecodeOptions("greedy", constraints="task", search_views=8),
            return_probs=True,
        )
    with pytest.raises(DecodeOptionError, match="search_views must be 1 or 8"):
        DecodeOptions(search_views=3)


@pytest.mark.parametrize("strategy", ["greedy", "beam"])
def test_eight_views_give_delaunay_the_same_triangles_whatever_symmetry_the_input_is_in(
    strategy,
):
    """Delaunay searches every view and re-sorts each answer into each view's label order, so
    the chosen set of triangles cannot depend on the frame; the model alone does depend on it."""
    model = make_model(seed=15)
    points = instances([5, 6, 8, 7], seed=16)

    def triangles(points_list, views):
        result = decode(
            model,
            DELAUNAY,
            collate(points_list),
            DecodeOptions(strategy, search_views=views, constraints="none"),
        )
        return [sorted(map(tuple, np.sort(s.reshape(-1, 3), axis=1).tolist())) if len(s) % 3 == 0
                else s.tolist() for s in result.sequences]  # fmt: skip

    base = triangles(points, 8)
    for which in (ROTATIONS[1], 1, 7):
        assert triangles([square_symmetry(p, which) for p in points], 8) == base
    moved = [triangles([square_symmetry(p, which) for p in points], 1) for which in range(8)]
    assert any(m != moved[0] for m in moved)
