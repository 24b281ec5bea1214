"""The registry holds every task, whatever its inputs; a task added through it alone (a module
with its card, defined here, and one registration) works end to end through the generic
``ptrnet generate|train|eval|predict`` commands: one toy task of each input kind."""

import json
import re
from collections.abc import Sequence

import numpy as np
import pytest
import torch

from ptrnet.tasks import (
    INPUT_KINDS,
    POINT_TASKS,
    TASKS,
    Pair,
    SentenceTask,
    Task,
    get_point_task,
    get_task,
    register,
)
from ptrnet.tasks.searches import LocalSearch
from ptrnet.tasks.sequences import is_permutation
from ptrnet.text.config import FIXED_P_GEN
from ptrnet.text.format import read_pairs

torch.set_num_threads(1)
WORDS = ("ant", "bee", "cat", "dog", "eel", "fox")


def reversed_order(points: np.ndarray, answer: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """A toy local search: any answer becomes the inputs in reverse index order."""
    return np.arange(len(points))[::-1].copy()


class ReverseTask(Task):
    """Toy point task: output the inputs in reverse index order; it offers a search after
    decoding of its own, declared here alone (``--toy-flip``, ``toy_flip=True``)."""

    name = "toy_reverse"
    dim = 1
    min_n = 1
    metric_keys = ("exact_match",)
    validation_metric = "exact_match"
    summary_metrics = ("exact_match", "exact_match")
    demo_sizes = (5,)
    drawing = "bars"
    searches = (
        LocalSearch(
            name="toy_flip",
            words="a flip",
            verb="flips",
            answers="orders",
            help="then reverse each order",
            moves=reversed_order,
        ),
    )

    def solve(self, points: np.ndarray, solver: str | None = None) -> np.ndarray:
        self.check_solver(solver)
        return np.arange(len(points))[::-1].copy()

    def canonical(self, points: np.ndarray, seq: np.ndarray) -> np.ndarray:
        return np.asarray(seq, dtype=np.int64)

    def is_valid(self, points: np.ndarray, seq: np.ndarray) -> bool:
        return is_permutation(np.asarray(seq), len(points))

    def max_steps(self, n: int) -> int:
        return n

    def allowed_next(self, state):
        return state.unvisited() | state.end_if(state.steps >= state.lengths)

    def dataset_metrics(
        self, points: Sequence[np.ndarray], refs: Sequence[np.ndarray], preds: Sequence[np.ndarray]
    ) -> dict[str, float]:
        hits = sum(np.array_equal(r, p) for r, p in zip(refs, preds, strict=True))
        return {"exact_match": hits / len(refs), "count": len(refs)}


class PickTask(ReverseTask):
    """Toy point task with a set answer: the points right of x = 1/2, in index order."""

    name = "toy_pick"
    dim = 2
    drawing = "subset"
    shape_invariant = False  # x > 1/2 is no property of the shape

    def solve(self, points: np.ndarray, solver: str | None = None) -> np.ndarray:
        self.check_solver(solver)
        return np.flatnonzero(np.asarray(points)[:, 0] > 0.5)

    def is_valid(self, points: np.ndarray, seq: np.ndarray) -> bool:
        seq = np.asarray(seq)
        return len(np.unique(seq)) == len(seq) and bool(np.all((seq >= 0) & (seq < len(points))))

    def allowed_next(self, state):
        return state.unvisited() | state.end_if(torch.ones_like(state.done))


class MostTask(PickTask):
    """Toy task whose objective is a total to maximise: its cost (REINFORCE's, the ``shortest``
    pick's) is the negated total, its answer cost the total itself."""

    name = "toy_most"
    has_cost = True
    objective_cost = True

    def sequence_cost(self, points: np.ndarray, seq: np.ndarray) -> float:
        return -float(np.asarray(points)[np.asarray(seq, dtype=np.int64), 0].sum())

    def answer_cost(self, points: np.ndarray, seq: np.ndarray) -> float:
        return -self.sequence_cost(points, seq)


class EchoTask(SentenceTask):
    """Toy sentence task: the target is the source's first and last word."""

    name = "toy_echo"

    def sample_pair(self, seed: int, index: int, stream: int = 0) -> Pair:
        rng = np.random.default_rng([seed, stream, index])
        source = tuple(rng.choice(WORDS, size=int(rng.integers(3, 7))))
        return Pair(source, (source[0], source[-1]))


@pytest.fixture
def registered():
    """Register the two toy tasks for one test, then take them out again."""
    tasks = [register(ReverseTask()), register(EchoTask())]
    yield tasks
    for task in tasks:
        TASKS.pop(task.name)
        POINT_TASKS.pop(task.name, None)


@pytest.mark.parametrize("name", sorted(TASKS))
def test_every_card_is_complete(name):
    task = get_task(name)
    assert task.name == name and task.input_kind in INPUT_KINDS
    assert task.archs and len(set(task.archs)) == len(task.archs)
    assert task.validation_metric in task.metric_keys
    assert (name in POINT_TASKS) == task.takes_points == isinstance(task, Task)
    assert task.check_arch(None) == task.archs[0]
    with pytest.raises(ValueError, match=f"unknown arch 'no_such_arch' for task {name}; choose"):
        task.check_arch("no_such_arch")


def test_copy_is_a_registered_sentence_task():
    copy = get_task("copy")
    assert isinstance(copy, SentenceTask) and copy.input_kind == "sentences"
    assert set(copy.archs) == set(FIXED_P_GEN)  # each arch is a switch of the one network
    pairs = list(copy.generate_pairs(5, seed=2, stream=3))
    assert pairs == [copy.sample_pair(2, i, 3) for i in range(5)]
    assert list(copy.generate_pairs(2, 2, 3, start=3)) == pairs[3:]
    with pytest.raises(ValueError, match="points .* task copy takes sentences"):
        get_point_task("copy", "ptrnet solve")


def test_registering_refuses_a_name_taken_and_an_unknown_kind():
    with pytest.raises(ValueError, match="already registered"):
        register(get_task("sort"))

    class Graphs(EchoTask):
        name = "toy_graphs"
        input_kind = "graphs"

    with pytest.raises(ValueError, match="unknown input kind 'graphs'"):
        register(Graphs())
    assert "toy_graphs" not in TASKS

    class Spiral(ReverseTask):
        name = "toy_spiral"
        drawing = "spiral"

    with pytest.raises(ValueError, match="unknown drawing 'spiral'; choose from hull, tour"):
        register(Spiral())
    assert "toy_spiral" not in TASKS


def test_a_set_answer_registered_alone_is_drawn_and_served_as_a_subset(cli, tmp_path):
    """A task with ``drawing = "subset"`` gets its picture from ``ptrnet plot`` and its kind
    on the page's task list, with nothing but its card and its registration."""
    from fastapi.testclient import TestClient

    from ptrnet.web.app import create_app

    task = register(PickTask())
    try:
        (tmp_path / "d.txt").write_text("0.3 0.1 0.9 0.5 0.7 0.2 0.2 0.8\n")
        assert cli("plot", task.name, "d.txt", "--model", "none", "-o", "plot.png")[0] == 0
        assert (tmp_path / "plot.png").read_bytes()[:4] == b"\x89PNG"
        client = TestClient(create_app({}), base_url="http://localhost")
        entries = {t["name"]: t for t in client.get("/api/tasks").json()["tasks"]}
        assert entries[task.name]["drawing"] == "subset"
        answer = client.post(
            "/api/predict", json={"task": task.name, "points": [[0.9, 0.2], [0.1, 0.3]]}
        )
        assert answer.status_code == 200 and answer.json()["reference"] == [0]
    finally:
        TASKS.pop(task.name)
        POINT_TASKS.pop(task.name)


def test_a_point_task_registered_alone_runs_end_to_end(registered, cli, tmp_path):
    name = "toy_reverse"
    assert (
        cli("generate", name, "-n", "5-6", "--count", "12", "--workers", "1", "-o", "d.txt")[0] == 0
    )
    status, out, _ = cli(
        "train", name, "--dry-run", "--workers", "0", "--threads", "1", "--out", "run"
    )
    assert status == 0 and f"ptrnet: {name}: 4 steps" in out
    status, out, _ = cli("eval", name, "d.txt", "--model", "run", "--json", "--threads", "1")
    assert status == 0 and set(json.loads(out)) == {"exact_match", "count"}
    status, _, _ = cli("predict", name, "d.txt", "--model", "run", "-o", "p.txt", "-q")
    assert status == 0 and len((tmp_path / "p.txt").read_text().splitlines()) == 12
    status, _, err = cli("eval", name, "d.txt", "--model", "run", "--p-gen", "0.5")
    assert status == 2 and err == (
        f"ptrnet: error: --p-gen: task {name} takes points, and --p-gen applies to tasks that "
        "take sentences\n"
    )


def test_a_sentence_task_registered_alone_runs_end_to_end(registered, cli, tmp_path):
    name = "toy_echo"
    assert cli("generate", name, "--count", "10", "--seed", "4", "-o", "d.txt")[0] == 0
    pairs = read_pairs(tmp_path / "d.txt")
    assert pairs == list(get_task(name).generate_pairs(10, 4))
    status, _, err = cli("train", name, "--dry-run", "--arch", "pointer", "--out", "run")
    assert status == 0 and re.search(r"best validation exact_match \d+\.\d\d% at step", err)
    status, out, _ = cli("eval", name, "d.txt", "--model", "run", "--json")
    metrics = json.loads(out)
    assert status == 0 and metrics["count"] == 10 and metrics["p_gen_generated"] is None
    status, out, _ = cli("predict", name, "ant bee cat", "--model", "run", "--decode", "beam")
    assert status == 0 and len(out.splitlines()) == 1
    status, _, err = cli("eval", name, "d.txt", "--model", "bundled")
    assert (
        status == 2
        and err
        == "ptrnet: error: no bundled model for this task: pass --model RUN_DIR_OR_CHECKPOINT\n"
    )
    status, _, err = cli("eval", "copy", "d.txt", "--model", "run")
    assert status == 2 and err.endswith(f"was trained on {name}, not copy\n")
    status, _, err = cli("eval", name, "d.txt", "--model", "run", "--search-views", "8")
    assert status == 2 and err == (
        f"ptrnet: error: --search-views: task {name} takes sentences, and --search-views "
        "applies to tasks that take points\n"
    )


def test_a_point_task_registered_alone_serves_every_command_api_and_endpoint(
    registered, cli, tmp_path, monkeypatch
):
    """The toy task's module and its one registration are all that ``generate``, ``solve``,
    ``train``, ``predict``, ``eval``, ``score``, ``plot``, ``demo``, the Python API and the
    page's task endpoints need."""
    from fastapi.testclient import TestClient

    import ptrnet
    from ptrnet import inference
    from ptrnet.web.app import create_app

    name = "toy_reverse"
    assert cli("generate", name, "-n", "5", "--count", "6", "-o", "d.txt", "-q")[0] == 0
    (tmp_path / "points.txt").write_text("0.3\n0.1\n0.7\n0.2\n")
    assert cli("solve", name, "points.txt", "-o", "s.txt", "-q")[0] == 0
    assert (tmp_path / "s.txt").read_text().split("output")[1].split() == ["4", "3", "2", "1"]
    steps = ("--dry-run", "--workers", "0", "--threads", "1", "--out", "run")
    assert cli("train", name, *steps)[0] == 0
    assert cli("predict", name, "d.txt", "--model", "run", "-o", "p.txt", "-q")[0] == 0
    status, out, _ = cli("eval", name, "d.txt", "--model", "run", "--json", "--threads", "1")
    assert status == 0 and set(json.loads(out)) == {"exact_match", "count"}
    status, out, _ = cli("score", name, "d.txt", "p.txt", "--json")
    assert status == 0 and set(json.loads(out)) == {"exact_match", "count"}
    assert cli("plot", name, "d.txt", "--model", "run", "-o", "plot.png")[0] == 0
    assert (tmp_path / "plot.png").read_bytes()[:4] == b"\x89PNG"

    bundled = tmp_path / "bundled" / name
    bundled.mkdir(parents=True)
    (bundled / "best.safetensors").write_bytes((tmp_path / "run" / "last.safetensors").read_bytes())
    monkeypatch.setattr("ptrnet.inference.load.BUNDLED_DIR", str(tmp_path / "bundled"))
    status, out, _ = cli("demo", "--tasks", name, "--dry-run", "--out", "demo")
    assert status == 0 and f"| {name} | 5 | greedy | exact_match" in out

    result = ptrnet.load(name).solve(np.array([0.3, 0.1, 0.7]))
    assert result.valid and sorted(result.sequence) == [0, 1, 2]

    loaded = inference.load_model(None, name)
    client = TestClient(create_app({name: loaded}), base_url="http://localhost")
    tasks = client.get("/api/tasks").json()
    assert name in [entry["name"] for entry in tasks["tasks"]]
    answer = client.post("/api/predict", json={"task": name, "points": [[0.3], [0.1], [0.7]]})
    assert answer.status_code == 200, answer.text
    assert answer.json()["reference"] == [2, 1, 0] and answer.json()["metrics"]["valid"]


def test_a_search_a_task_declares_alone_reaches_every_front_end(registered, cli, tmp_path):
    """The toy task's own module declares its search (``searches``); the command line's flag,
    the Python API's keyword and the page's field and task entry follow, each refusal (another
    task, a task without it) worded from the declaration."""
    from fastapi.testclient import TestClient

    import ptrnet
    from ptrnet import inference
    from ptrnet.web.app import create_app

    name = "toy_reverse"
    assert cli("generate", name, "-n", "5", "--count", "3", "-o", "d.txt", "-q")[0] == 0
    steps = ("--dry-run", "--workers", "0", "--threads", "1", "--out", "run")
    assert cli("train", name, *steps)[0] == 0
    base = ("d.txt", "--model", "run", "-o", "-", "--output-format", "json", "-q")
    status, out, _ = cli("predict", name, *base, "--toy-flip")
    rows = [json.loads(line) for line in out.splitlines()]
    assert status == 0 and [row["sequence"] for row in rows] == [[4, 3, 2, 1, 0]] * 3
    assert all("log_prob" not in row for row in rows)  # a searched answer is not the model's
    status, out, _ = cli("eval", name, "d.txt", "--model", "run", "--toy-flip", "--threads", "1")
    assert status == 0 and "then a flip (a search on order lengths)" in out
    assert cli("plot", name, "d.txt", "--model", "run", "--toy-flip", "-o", "p.png")[0] == 0
    status, _, err = cli("predict", "sort", "d.txt", "-o", "-", "--toy-flip")
    assert status == 2 and "--toy-flip: flips orders, for task toy_reverse, not sort" in err

    solver = ptrnet.load(str(tmp_path / "run"))
    assert solver.solve(np.array([0.3, 0.1, 0.7]), toy_flip=True).sequence.tolist() == [2, 1, 0]
    with pytest.raises(ValueError, match="two_opt=True: shortens tours, for task tsp, not toy"):
        solver.solve(np.array([0.3, 0.1, 0.7]), two_opt=True)

    loaded = inference.load_model(str(tmp_path / "run"), name)
    client = TestClient(create_app({name: loaded}), base_url="http://localhost")
    (entry,) = [e for e in client.get("/api/tasks").json()["tasks"] if e["name"] == name]
    assert entry["searches"] == [{"name": "toy_flip", "words": "a flip", "kind": "local"}]
    body = {"task": name, "points": [[0.3], [0.1], [0.7]], "decoding": {"toy_flip": True}}
    model = client.post("/api/predict", json=body).json()["model"]
    assert model["sequence"] == [2, 1, 0] and model["search"]["words"] == "a flip"
    body["task"] = "sort"
    refused = client.post("/api/predict", json=body)
    assert refused.status_code == 422
    assert "toy_flip=True: flips orders, for task toy_reverse, not sort" in refused.text


def test_the_reference_is_reported_by_its_answer_cost_not_its_training_cost():
    """The page's ``optimal_cost`` and the demo's exact column give what a user reads
    (:meth:`Task.answer_cost`: a total to maximise stays positive), not the negated cost that
    REINFORCE minimises."""
    from ptrnet.reproduce.demo import exact_summary, label
    from ptrnet.web.answers import metrics_for

    task = register(MostTask())
    try:
        points = np.array([[0.9, 0.2], [0.1, 0.3], [0.7, 0.5]])
        ref = task.solve(points)
        assert metrics_for(task, points, ref, ref)["optimal_cost"] == pytest.approx(1.6)
        data = label(task.name, 5, 4, seed=1)
        mean = np.mean([p[p[:, 0] > 0.5, 0].sum() for p in data.points])
        assert exact_summary(task.name, data).startswith(f"optimal {mean:.3f} (")
    finally:
        TASKS.pop(task.name)
        POINT_TASKS.pop(task.name)


def test_a_task_that_is_not_shape_invariant_is_solved_and_decoded_as_given(cli, tmp_path):
    """Points outside the unit square are not mapped into it for such a task: the map would
    change its answer (here: which points lie right of x = 1/2)."""
    from ptrnet.io.unit_square import to_unit_square

    task = register(PickTask())
    try:
        points = np.array([[2.0, 0.0], [0.3, 0.0], [0.7, 1.5]])
        assert to_unit_square(points, task.shape_invariant) is points
        assert to_unit_square(points).max() == 1.0  # a shape-invariant task's image
        (tmp_path / "d.txt").write_text("2 0 0.3 0 0.7 1.5\n")
        status, _, err = cli("solve", task.name, "d.txt", "-o", "s.txt")
        assert status == 0 and "unit square" not in err
        assert (tmp_path / "s.txt").read_text().split("output")[1].split() == ["1", "3"]
        steps = ("--dry-run", "--workers", "0", "--threads", "1", "--out", "run")
        assert cli("train", task.name, *steps)[0] == 0
        status, _, err = cli("predict", task.name, "d.txt", "--model", "run", "-o", "p.txt")
        assert status == 0 and "unit square" not in err
    finally:
        TASKS.pop(task.name)
        POINT_TASKS.pop(task.name)


def test_a_heuristic_reference_is_not_called_optimal_in_the_demo(monkeypatch):
    """The demo's exact column names the references' mean optimal only where the task's solver
    is exact at that size (:meth:`Task.reference_is_exact`)."""
    from ptrnet.reproduce.demo import exact_summary, label

    task = register(MostTask())
    try:
        data = label(task.name, 5, 3, seed=1)
        assert exact_summary(task.name, data).startswith("optimal ")
        monkeypatch.setattr(MostTask, "reference_is_exact", lambda self, n: n < 5)
        assert exact_summary(task.name, data).startswith("reference ")
    finally:
        TASKS.pop(task.name)
        POINT_TASKS.pop(task.name)
