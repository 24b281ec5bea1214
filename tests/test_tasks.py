"""Contract tests run over every task in the registry, plus per-task target conventions."""

import numpy as np
import pytest
import torch

from ptrnet.datasets.batching import collate
from ptrnet.tasks import POINT_TASKS, SizeRange, from_tokens, get_task, to_tokens
from ptrnet.tasks.constraints import DecodeState
from ptrnet.tasks.sequences import signed_area
from ptrnet.tasks.tsp import canonical_tour

torch.set_num_threads(1)
ALL = sorted(POINT_TASKS)
TSP = get_task("tsp")
# Every task from its smallest n to 12 (TSP to 9, where its exact solver is fast).
SIZES = {name: SizeRange(get_task(name).min_n, 9 if name == "tsp" else 12) for name in ALL}


def dataset(name, count=40, seed=7):
    task = get_task(name)
    points = task.generate(SIZES[name], count, seed)
    return task, points, [task.solve(p) for p in points]


@pytest.mark.parametrize("name", ALL)
def test_same_seed_same_data_and_streams_differ(name):
    task = get_task(name)
    a = task.generate(SIZES[name], 20, seed=3)
    b = task.generate(SIZES[name], 20, seed=3)
    c = task.generate(SIZES[name], 20, seed=3, stream=1)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not any(x.shape == y.shape and np.array_equal(x, y) for x, y in zip(a, c, strict=True))


@pytest.mark.parametrize("name", ALL)
def test_generate_start_offset_matches_full_run(name):
    task = get_task(name)
    full = task.generate(SIZES[name], 10, seed=5)
    tail = task.generate(SIZES[name], 4, seed=5, start=6)
    assert all(np.array_equal(x, y) for x, y in zip(full[6:], tail, strict=True))


@pytest.mark.parametrize(
    "field, value", [("seed", -1), ("seed", True), ("seed", 1.0), ("stream", -2), ("start", -1)]
)
def test_generate_refuses_a_seed_stream_or_start_that_is_not_a_count(field, value):
    """Named in the error (-1 was numpy's "expected non-negative integer"; True passed as 1)."""
    kwargs = {"seed": 0, field: value}
    with pytest.raises(ValueError, match=f"{field} must be an integer >= 0, got {value!r}"):
        get_task("sort").generate(SIZES["sort"], 2, **kwargs)
    assert get_task("sort").generate(SIZES["sort"], 2, seed=np.int64(3), stream=2**70)


@pytest.mark.parametrize("name", ALL)
def test_generated_points_are_in_unit_box_with_sizes_in_range(name):
    """Sizes as the task counts them (:meth:`Task.size_of`); the first two numbers of each
    input (a point's coordinates, an item's weight and value) in [0, 1); further ones (a
    routing customer's demand and capacity) are the task's own."""
    task, points, _ = dataset(name)
    sizes = SIZES[name]
    for x in points:
        assert x.shape[1] == task.dim and sizes.lo <= task.size_of(x) <= sizes.hi
        assert np.all((x[:, :2] >= 0) & (x[:, :2] < 1))


@pytest.mark.parametrize("name", ALL)
def test_reference_targets_are_valid_and_score_perfectly(name):
    task, points, refs = dataset(name)
    assert all(task.is_valid(x, r) for x, r in zip(points, refs, strict=True))
    scores = task.metrics(points, refs, refs)
    assert set(scores) == set(task.metric_keys) | {"count"}
    assert scores["count"] == len(refs)
    perfect = {
        "exact_match": 1,
        "position_accuracy": 1,
        "valid_rate": 1,
        "accuracy": 1,
        "area_coverage": 1,
        "non_simple_rate": 0,
        "fail": False,
        "triangle_coverage": 1,
        "mean_gap": 0,
    }
    for key, value in scores.items():
        if key in perfect:
            assert value == pytest.approx(perfect[key]), key


@pytest.mark.parametrize("name", ALL)
def test_random_walks_under_task_constraints_are_valid(name):
    """Any choice among the allowed tokens yields a structurally valid output."""
    task, points, _ = dataset(name, count=16)
    batch = collate(points)
    gen = torch.Generator().manual_seed(0)
    lengths = batch.lengths
    state, tokens = task.decode_state(lengths, "task", batch.points), []
    for _ in range(task.max_steps(int(lengths.max())) + 1):
        allowed = state.allowed()
        assert allowed.any(dim=1).all()
        pick = torch.multinomial(allowed.float(), 1, generator=gen)[:, 0]
        tokens.append(pick)
        state = state.update(pick)
    assert state.done.all()
    for row, x in enumerate(points):
        seq = from_tokens(torch.stack(tokens, 1)[row].numpy())
        assert task.is_valid(x, seq), (name, seq)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("mode", ["none", "task"])
def test_padding_is_never_allowed_and_targets_pass_the_mask(name, mode):
    task, points, refs = dataset(name, count=16)
    batch = collate(points)
    lengths = batch.lengths
    targets = [torch.tensor(to_tokens(r)) for r in refs]
    state = task.decode_state(lengths, mode, batch.points)
    for t in range(max(len(s) for s in targets)):
        allowed = state.allowed()
        cols = torch.arange(allowed.shape[1])
        assert not (allowed & (cols > lengths[:, None])).any()
        step = torch.tensor([s[t] if t < len(s) else 0 for s in targets])
        assert allowed.gather(1, step[:, None]).all(), "the reference must always be allowed"
        state = state.update(step)
    assert state.done.all()


def test_hull_random_walks_under_task_constraints_are_closed_simple_convex_polygons():
    """Whatever a decoder picks among the allowed tokens, a constrained hull output is a closed,
    simple, counter-clockwise convex polygon (shapely as the oracle), and it never dead-ends
    before closing; instances of 3 to 40 points, duplicates and collinear triples included."""
    from shapely.geometry import Polygon

    task = get_task("convex_hull")
    rng = np.random.default_rng(3)
    points = [rng.random((int(rng.integers(3, 41)), 2)) for _ in range(200)]
    points += [np.round(rng.random((12, 2)) * 4) / 4 for _ in range(50)]  # a grid: ties
    batch = collate(points)
    state = task.decode_state(batch.lengths, "task", batch.points)
    gen, tokens = torch.Generator().manual_seed(1), []
    for _ in range(task.max_steps(int(batch.lengths.max())) + 1):
        pick = torch.multinomial(state.allowed().float(), 1, generator=gen)[:, 0]
        tokens.append(pick)
        state = state.update(pick)
    for row, x in enumerate(points):
        seq = from_tokens(torch.stack(tokens, 1)[row].numpy())
        ring = x[seq[:-1]]
        assert task.is_valid(x, seq), seq
        assert Polygon(ring).is_valid and Polygon(ring).exterior.is_simple, seq
        assert signed_area(x, seq[:-1]) > 0
        turns = [signed_area(x, np.roll(seq[:-1], -i)[:3]) for i in range(len(seq) - 1)]
        assert min(turns) > 0, "every corner turns left: convex"


def test_hull_task_constraints_need_the_points():
    state = get_task("convex_hull").decode_state(torch.tensor([5]), "task")
    with pytest.raises(ValueError, match="reads the points"):
        state.allowed()


def test_finished_rows_only_allow_end_and_masks_are_not_shared():
    task = get_task("sort")
    state = task.decode_state(torch.tensor([2, 3]), "task")
    first = state.allowed()
    saved = first.clone()
    state = (
        state.update(torch.tensor([1, 1])).update(torch.tensor([2, 2])).update(torch.tensor([0, 3]))
    )
    assert torch.equal(first, saved)
    assert state.allowed()[0].tolist() == [True, False, False, False]


def test_unknown_mode_and_task_raise():
    with pytest.raises(ValueError, match="constraint mode"):
        get_task("sort").decode_state(torch.tensor([3]), "strict")
    with pytest.raises(ValueError, match="choose from"):
        get_task("no_such_task")


def test_size_range_parsing():
    assert SizeRange.parse("5-50") == SizeRange(5, 50)
    assert SizeRange.parse("7") == SizeRange(7, 7)
    assert str(SizeRange.parse(" 5 - 20 ")) == "5-20"
    for bad in ["", "5-", "a", "9-3", "0"]:
        with pytest.raises(ValueError):
            SizeRange.parse(bad)
    with pytest.raises(ValueError, match="needs n >= 3"):
        get_task("convex_hull").generate(SizeRange(2, 5), 1, seed=0)


def test_sort_is_stable_on_ties():
    points = np.array([[0.5], [0.1], [0.5], [0.1]])
    assert get_task("sort").solve(points).tolist() == [1, 3, 0, 2]


def test_sort_metrics_accept_tie_swaps_and_count_positions():
    task = get_task("sort")
    x = np.array([[0.5], [0.1], [0.5], [0.9]])
    ref = task.solve(x)
    swapped = np.array([1, 2, 0, 3])
    assert task.metrics([x], [ref], [swapped])["exact_match"] == 1.0
    wrong = np.array([1, 3, 0, 2])
    scores = task.metrics([x], [ref], [wrong])
    assert scores["exact_match"] == 0 and scores["position_accuracy"] == 0.5
    assert task.metrics([x], [ref], [np.array([1, 1, 0, 2])])["valid_rate"] == 0


def test_tsp_label_starts_at_zero_runs_ccw_and_closes():
    task, points, refs = dataset("tsp")
    for x, ref in zip(points, refs, strict=True):
        assert ref[0] == 0 and ref[-1] == 0 and len(ref) == len(x) + 1
        if len(x) > 2:
            assert signed_area(x, ref[:-1]) >= 0


def test_canonical_tour_accepts_any_rotation_and_direction():
    x = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], float)
    for tour in ([2, 3, 0, 1], [1, 0, 3, 2], [3, 2, 1, 0, 3]):
        assert canonical_tour(x, np.array(tour)).tolist() == [0, 1, 2, 3, 0]


def test_tsp_metrics_count_the_return_edge_and_validity():
    task = get_task("tsp")
    x = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], float)
    ref = np.array([0, 1, 2, 3, 0])
    scores = task.metrics(
        [x, x], [ref, ref], [np.array([0, 2, 1, 3, 0]), np.array([0, 1, 1, 3, 0])]
    )
    assert scores["valid_rate"] == 0.5
    assert scores["mean_length"] == pytest.approx(2 + 2 * np.sqrt(2))
    assert scores["mean_gap"] == pytest.approx((2 + 2 * np.sqrt(2)) / 4 - 1)


def test_hull_metrics_fail_flag_and_area_on_simple_only():
    task = get_task("convex_hull")
    x = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.5]], float)
    ref = task.solve(x)
    tri = np.array([0, 1, 2, 0])
    bow = np.array([0, 2, 1, 3, 0])
    scores = task.metrics([x] * 3, [ref] * 3, [ref[::-1], tri, bow])
    assert scores["accuracy"] == pytest.approx(1 / 3)
    assert scores["area_coverage"] == pytest.approx((1 + 0.5) / 2)
    assert scores["non_simple_rate"] == pytest.approx(1 / 3) and scores["fail"] is True


def test_delaunay_metrics_use_sets_and_coverage():
    task = get_task("delaunay")
    x = np.array([[0, 0], [1, 0], [0, 1], [1, 1.1]], float)
    ref = task.solve(x)
    shuffled = ref.reshape(-1, 3)[::-1, ::-1].reshape(-1)
    assert task.metrics([x], [ref], [shuffled])["accuracy"] == 1.0
    half = task.metrics([x], [ref], [ref[:3]])
    assert half["accuracy"] == 0 and half["triangle_coverage"] == 0.5
    assert task.metrics([x], [ref], [np.concatenate([ref, ref[:3]])])["accuracy"] == 0


@pytest.mark.parametrize("name", ALL)
def test_metrics_refuse_an_empty_or_ragged_dataset(name):
    """A mean over no instances was a ZeroDivisionError; a missing prediction was zip's."""
    task, points, refs = dataset(name)
    with pytest.raises(ValueError, match="at least one instance"):
        task.metrics([], [], [])
    with pytest.raises(ValueError, match="one ref and one pred per instance"):
        task.metrics(points, refs, refs[:-1])
    assert task.metrics(points[:1], refs[:1], refs[:1])["count"] == 1


def test_canonical_tour_does_not_depend_on_the_direction_given():
    """On collinear cities the shoelace area is float noise of either sign; the label form must
    still be one per undirected cycle (a reversed tour once kept its own direction)."""
    rng = np.random.default_rng(0)
    for _ in range(1000):
        n = int(rng.integers(3, 9))
        a, b = rng.random(2), rng.random(2)
        points = a + rng.random(n)[:, None] * (b - a)  # on one line, up to rounding
        tour = np.r_[0, rng.permutation(np.arange(1, n))]
        want = canonical_tour(points, tour)
        assert canonical_tour(points, tour[::-1]).tolist() == want.tolist()
        assert canonical_tour(points, np.roll(tour, 3)).tolist() == want.tolist()
        assert TSP.canonical(points, want).tolist() == want.tolist()


def tsp_rule(n: int, emitted: list[int], done: bool) -> set[int]:
    """The TSP tokens allowed after ``emitted`` (plain Python): the first input first, then
    any input not yet emitted, then back to the first, then the end token (0)."""
    if done or len(emitted) > n:
        return {0}
    if not emitted:
        return {1}
    if len(emitted) == n:
        return {emitted[0]}
    return set(range(1, n + 1)) - set(emitted)


def test_tsp_mask_follows_the_plain_rule_along_random_walks_of_mixed_sizes():
    rng = np.random.default_rng(0)
    for _ in range(20):
        lengths = torch.tensor(rng.integers(1, 8, size=5))
        state = DecodeState.start(TSP, lengths)
        emitted = [[] for _ in lengths]
        for _ in range(int(lengths.max()) + 3):
            mask = state.allowed()
            tokens = []
            for b, n in enumerate(lengths.tolist()):
                done = bool(state.done[b])
                assert set(mask[b].nonzero()[:, 0].tolist()) == tsp_rule(n, emitted[b], done)
                tokens.append(int(rng.choice(mask[b].nonzero()[:, 0].numpy())))
                if tokens[-1] and not done:
                    emitted[b].append(tokens[-1])
            state = state.update(torch.tensor(tokens))
            state = state.index(torch.arange(len(lengths)))  # reindexing keeps the columns
