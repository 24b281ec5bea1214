"""The page's scripts know no task by name: they branch on what GET /api/tasks says about a task
(its ``drawing`` kind, its ``dim``, its ``searches``), so a new task needs no JavaScript
(docs/architecture.md). The tour search's controls ask for what ``POST /api/predict`` accepts and
are wired to it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from ptrnet.tasks import DRAWINGS, TASKS
from ptrnet.web.schemas import MAX_RRC_ITERATIONS, DecodingRequest

STATIC = Path(__file__).parents[1] / "ptrnet" / "web" / "static"
NAMES = "|".join(sorted(map(re.escape, TASKS)))
# A task's name as a whole string literal ("tsp", 'sort', `delaunay`) or as an object key
# (`convex_hull: ...`, a table keyed by task): what a branch or a per-task table needs.
# An HTML tag's name (``createElement("span")``) is not a task's, though a task has that name.
BY_NAME = re.compile(
    rf"""(?<!createElement\()(["'`])({NAMES})\1|(?:^|[{{,])\s*({NAMES})\s*:""", re.MULTILINE
)


def task_names_in(source: str) -> list[str]:
    """``line: name`` for every place ``source`` names a task as a literal or a key."""
    return [
        f"{source.count(chr(10), 0, m.end()) + 1}: {m.group(2) or m.group(3)}"
        for m in BY_NAME.finditer(source)
    ]


@pytest.mark.parametrize("script", sorted(STATIC.glob("*.js")), ids=lambda p: p.name)
def test_page_scripts_name_no_task(script: Path) -> None:
    found = task_names_in(script.read_text(encoding="utf-8"))
    assert not found, f"{script.name} branches on task names: {found}"


def test_the_check_finds_task_names_in_conditions_and_tables() -> None:
    source = 'if (task === "sort") x();\nconst ROWS = {\n  convex_hull: (m) => [],\n};\n'
    assert task_names_in(source) == ["1: sort", "3: convex_hull"]
    assert task_names_in('values.sort((a, b) => a - b); const d = { drawing: "bars" };') == []
    assert task_names_in('document.createElement("span"); if (t === "span") x();') == ["1: span"]


@pytest.mark.parametrize("kind", DRAWINGS)
def test_the_board_draws_every_drawing_kind(kind: str) -> None:
    """Each kind a task may declare (``Task.drawing``) has its branch in the board's code."""
    assert f'drawing === "{kind}"' in (STATIC / "board.js").read_text(encoding="utf-8")


class Controls(HTMLParser):
    """The page's form controls: id -> attributes, and each select's option values."""

    def __init__(self) -> None:
        super().__init__()
        self.attrs: dict[str, dict[str, str | None]] = {}
        self.options: dict[str, list[str]] = {}
        self._select: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if named.get("id"):
            self.attrs[named["id"]] = named
        if tag == "select":
            self._select = named.get("id")
            self.options[self._select] = []
        elif tag == "option" and self._select:
            self.options[self._select].append(named.get("value") or "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._select = None


def page_controls() -> Controls:
    controls = Controls()
    controls.feed((STATIC / "index.html").read_text(encoding="utf-8"))
    return controls


def test_the_search_controls_ask_for_what_the_server_accepts() -> None:
    """The Search select holds "none" alone until a task's entry fills in its local searches
    (their names, which ``POST /api/predict`` takes as fields); the RRC rounds box spans 0 (off)
    to the server's most rounds."""
    controls = page_controls()
    assert controls.options["search"] == [""]
    request = DecodingRequest.model_validate({"two_opt": True, "or_opt": False})
    assert request.local == {"two_opt": True, "or_opt": False}
    rounds = controls.attrs["rrc-rounds"]
    assert (rounds["type"], rounds["min"], rounds["max"]) == ("number", "0", "100")
    assert int(rounds["max"]) == MAX_RRC_ITERATIONS


def test_the_search_controls_are_wired() -> None:
    """Changing them predicts again; they are shown, and sent, only for a task whose entry lists
    ``searches``, the Search list made of its local ones; rounds go as ``improve`` (the task's
    rebuild search) and ``iterations``; the decoded tour is drawn."""
    app = (STATIC / "app.js").read_text(encoding="utf-8")
    listened = re.search(
        r'for \(const id of \[([^\]]*)\]\) \{\s*\$\(id\)\.addEventListener\("change", '
        r"schedulePredict\)",
        app,
    )
    assert listened and {'"search"', '"rrc-rounds"'} <= {s.strip() for s in listened[1].split(",")}
    assert '$("search-controls").classList.toggle("hidden", !entry().searches.length)' in app
    assert "entry().searches.length ? { ...options, ...searchOptions() } : options" in app
    assert "{ improve: rebuild.name, iterations: rounds }" in app
    assert "local.map((s) => new Option(s.words, s.name))" in app
    assert "search-controls" in page_controls().attrs
    assert "model.decoded_sequence" in (STATIC / "board.js").read_text(encoding="utf-8")


class Loads(HTMLParser):
    """What the page loads or runs: every ``src``/``href``, inline code (a script's or style's
    text, ``style=`` and ``on...=`` attributes)."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.inline: list[str] = []
        self._tag: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._tag = tag
        for name, value in attrs:
            if name in ("src", "href"):
                self.urls.append(value or "")
            elif name == "style" or name.startswith("on"):
                self.inline.append(f"<{tag} {name}=...>")
        if tag == "style":
            self.inline.append("<style>")

    def handle_data(self, data: str) -> None:
        if self._tag == "script" and data.strip():
            self.inline.append(f"<script>{data.strip()[:40]}")


def test_the_page_needs_nothing_its_content_security_policy_forbids() -> None:
    """The policy (ptrnet/web/guard.py) allows the page's own scripts, styles and API and a
    ``data:`` image (the empty icon), with no ``'unsafe-inline'``: so the page has no inline
    script or style, and its scripts neither write HTML nor style attributes nor run strings
    (CSSOM assignments such as ``el.style.background = ...`` are allowed)."""
    loads = Loads()
    loads.feed((STATIC / "index.html").read_text(encoding="utf-8"))
    assert loads.inline == []
    assert all(url.startswith("/static/") or url == "data:," for url in loads.urls), loads.urls
    forbidden = re.compile(
        r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|setAttribute\(\s*[\"']style"
        r"|\.cssText|\beval\(|new Function|setTimeout\(\s*[\"'`]"
        r"|https?://(?!www\.w3\.org/2000/svg\b)"  # another origin; SVG's namespace is a name
    )
    for script in sorted(STATIC.glob("*.js")):
        found = forbidden.findall(script.read_text(encoding="utf-8"))
        assert not found, f"{script.name}: {found}"


def metric_names(reference_exact: bool, model: bool = True) -> list[str]:
    """The names of the metrics table's rows for a 25-city tour answer, from metrics.js run in
    Node (skipped without it)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    answer = {
        "task": "tsp",
        "reference": [0, 1, 2, 0],
        "reference_exact": reference_exact,
        "metrics": {"valid": True, "mean_length": 2.9, "mean_gap": -0.02, "reference_cost": 3.0},
        "model": {"sequence": [0, 2, 1, 0], "strategy": "greedy", "log_prob": -1.0}
        if model
        else None,
    }
    script = (
        f"import {{ metricRows }} from {json.dumps((STATIC / 'metrics.js').as_uri())};\n"
        f"const rows = metricRows({{ name: 'tsp', drawing: 'tour' }}, "
        f"[[0, 0], [1, 0], [0, 1]], {json.dumps(answer)});\n"
        "console.log(JSON.stringify(rows.map((row) => row[0])));"
    )
    run = subprocess.run(
        [node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.mark.parametrize("model", [True, False])
def test_the_metrics_never_call_a_heuristic_reference_optimal(model: bool) -> None:
    """Beyond 20 cities the server's reference tour is near-exact and a model's tour may be
    shorter (a negative gap): the page then names it a heuristic reference, not the optimum."""
    heuristic = metric_names(reference_exact=False, model=model)
    assert not [name for name in heuristic if "optimal" in name], heuristic
    assert any("reference (heuristic)" in name for name in heuristic)
    exact = metric_names(reference_exact=True, model=model)
    assert any("optimal" in name for name in exact)


def test_the_training_charts_tick_shares_in_percent() -> None:
    """The page's training charts plot shares of instances (accuracy, valid and invalid
    outputs): their y axis reads 0%..100% as every rate on the page does, not 0..1."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    script = (
        "globalThis.ResizeObserver = class { observe() {} };\n"  # chart.js makes one on load
        f"const {{ tickText }} = await import({json.dumps((STATIC / 'chart.js').as_uri())});\n"
        "const shares = [0, 0.2, 0.4, 0.6000000000000001, 0.8, 1].map((v) => tickText(v, true));\n"
        "console.log(JSON.stringify([shares, tickText(0.2), tickText(1500)]));"
    )
    run = subprocess.run(
        [node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == [["0%", "20%", "40%", "60%", "80%", "100%"], "0.2", "1500"]
    calls = re.findall(r"yLabel: \"share of instances\"[^}]*}", (STATIC / "train.js").read_text())
    assert len(calls) == 2 and all("yPercent: true" in call for call in calls), calls


def run_node(script: str) -> object:
    """What ``script`` (an ES module) prints as JSON, run in Node (skipped without it)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    run = subprocess.run(
        [node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_the_board_drives_each_route_from_the_depot_and_back() -> None:
    """``routeStops`` (board.js): routes split at the depot (index 0), each closed on it; while
    a decoding is under way (``open``) the last route is left where it stands."""
    board = json.dumps((STATIC / "board.js").as_uri())
    stops = run_node(
        f"import {{ routeStops }} from {board};\n"
        "console.log(JSON.stringify([routeStops([3, 1, 0, 2]), routeStops([3, 1, 0, 2], true),"
        " routeStops([3, 1, 0], true), routeStops([0, 0, 2])]));"
    )
    assert stops == [
        [[0, 3, 1, 0], [0, 2, 0]],
        [[0, 3, 1, 0], [0, 2]],
        [[0, 3, 1, 0]],
        [[0, 2, 0]],
    ]


def test_the_metrics_of_routes_count_them_and_name_a_heuristic_reference() -> None:
    answer = {
        "task": "t",
        "reference": [1, 2, 0, 3],
        "reference_exact": False,
        "reference_cost": 2.5,
        "metrics": {"valid": True, "mean_length": 2.6, "mean_gap": 0.04, "reference_cost": 2.5},
        "model": {"sequence": [1, 0, 2, 0, 3], "strategy": "greedy", "log_prob": -1.0},
    }
    metrics = json.dumps((STATIC / "metrics.js").as_uri())
    rows = run_node(
        f"import {{ metricRows }} from {metrics};\n"
        f"const answer = {json.dumps(answer)};\n"
        "const task = { name: 't', drawing: 'routes' };\n"
        "const points = [[0, 0], [1, 0], [0, 1], [1, 1]];\n"
        "console.log(JSON.stringify([metricRows(task, points, answer),"
        " metricRows(task, points, { ...answer, model: null })]));"
    )
    with_model, alone = ({row[0]: row[1] for row in table} for table in rows)
    assert with_model["routes, model / reference"] == "3 / 2"
    assert with_model["gap to reference (< 0: shorter)"] == "4.0%"
    assert with_model["reference (heuristic) length"] == "2.500"
    assert alone["routes"] == "2" and alone["reference (heuristic) length"] == "2.500"


def test_a_point_added_to_a_routing_board_carries_a_demand_and_the_capacity() -> None:
    """``addedRow`` (board.js): on an empty cvrp board a depot (the task's ``added_rows``), then
    a customer under the depot's capacity, then copies of the last customer's numbers; a task
    of x and y adds x and y alone. Each such board is an instance the task takes."""
    from ptrnet.tasks import get_task

    cvrp = get_task("cvrp")
    task = json.dumps({"dim": 4, "added_rows": cvrp.added_rows})
    board = json.dumps((STATIC / "board.js").as_uri())
    rows = run_node(
        f"import {{ addedRow }} from {board};\n"
        f"const task = {task}, points = [];\n"
        "for (const xy of [[0.5, 0.5], [0.1, 0.2], [0.9, 0.8]])\n"
        "  points.push(addedRow(xy, points, task));\n"
        "const kept = [[0, 0, 0, 18], [1, 1, 7, 18]];\n"
        "console.log(JSON.stringify([points, addedRow([0.3, 0.3], kept.slice(0, 1), task),"
        " addedRow([0.3, 0.3], kept, task),"
        " addedRow([0.3, 0.3], [], { dim: 2, added_rows: null })]));"
    )
    built, after_depot, after_customer, planar = rows
    assert built == [[0.5, 0.5, 0, 20], [0.1, 0.2, 5, 20], [0.9, 0.8, 5, 20]]
    cvrp.check_points(np.array(built))  # raises for a board the server would refuse
    assert after_depot == [0.3, 0.3, 5, 18]  # the depot's capacity, not the template's
    assert after_customer == [0.3, 0.3, 7, 18]
    assert planar == [0.3, 0.3]
