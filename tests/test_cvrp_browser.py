"""Vehicle routing on the page, end to end in headless Chromium (skipped without it): a random
instance drawn by the task's own generator (POST /api/sample), the depot as a square, the
model's routes one colour each, the metrics counting routes, a customer added on the board
under the same capacity, and a depot then a customer clicked onto a cleared board."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

pytest.importorskip("fastapi", reason="the web extra is not installed")
from ptrnet.inference import load_model  # noqa: E402
from ptrnet.model import ModelConfig, build_model  # noqa: E402
from ptrnet.runs.checkpoint import save_checkpoint  # noqa: E402
from ptrnet.runs.config import RunConfig, TrainConfig  # noqa: E402
from ptrnet.tasks import get_task  # noqa: E402
from tests.browser import opened_page, served, wait_count, wait_text  # noqa: E402

pytest_plugins = ["tests.browser"]  # the browser fixture

torch.set_num_threads(1)
CVRP = get_task("cvrp")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The app with an untrained tiny CVRP model (its routes are valid all the same)."""
    torch.manual_seed(0)
    config = RunConfig(
        ModelConfig(input_dim=4, hidden=8, features="demand"),
        TrainConfig(task="cvrp", sizes="5", steps=1),
    )
    path = tmp_path_factory.mktemp("cvrp") / "best.safetensors"
    save_checkpoint(path, config, 0, build_model(config.model))
    yield from served({"cvrp": load_model(str(path), "cvrp")})


def test_the_page_draws_routes_of_a_sampled_instance_and_adds_a_customer(browser, server):
    with opened_page(browser, server) as page:
        page.fill("#random-count", "8")
        with page.expect_response("**/api/predict") as answered:
            page.select_option("#task", "cvrp")  # another dim: the points are drawn anew
        request, answer = json.loads(answered.value.request.post_data), answered.value.json()
        while request["task"] != "cvrp" or len(request["points"]) != 9:
            with page.expect_response("**/api/predict") as answered:
                pass
            request, answer = json.loads(answered.value.request.post_data), answered.value.json()
        points = np.array(request["points"])
        assert points.shape == (9, 4) and points[0, 2] == 0 and (points[:, 3] == 18).all()  # 8 + 10
        routes = answer["model"]["sequence"]
        assert CVRP.is_valid(points, np.array(routes))
        wait_count(page, "#board rect.depot", 1)
        wait_count(page, "#board path.model.route", routes.count(0) + 1)
        wait_text(page, "#metrics", "routes, model / reference")
        with page.expect_response("**/api/predict") as answered:
            page.mouse.click(*board_xy(page, 0.93, 0.07))  # a customer in a free corner
        added = np.array(json.loads(answered.value.request.post_data)["points"])
        assert added.shape == (10, 4) and (added[-1, 2:] == points[-1, 2:]).all()
        assert answered.value.json()["metrics"]["valid"]
        page.click("#clear")  # an empty board: a click puts a depot, the next one a customer
        page.mouse.click(*board_xy(page, 0.5, 0.5))
        wait_count(page, "#board .point", 1)
        with page.expect_response(
            lambda r: "/api/predict" in r.url and r.status == 200
        ) as answered:
            page.mouse.click(*board_xy(page, 0.2, 0.8))
        rows = json.loads(answered.value.request.post_data)["points"]
        assert [row[2:] for row in rows] == [[0, 20], [5, 20]]
        assert answered.value.json()["metrics"]["valid"]


def board_xy(page, x: float, y: float) -> tuple[float, float]:
    """Where on screen the unit-square point (x, y) of the board lies (board.js's toPx: a
    600-unit square with a 30-unit margin, y upwards)."""
    box = page.locator("#board").bounding_box()
    scale = box["width"] / 600
    return box["x"] + (30 + 540 * x) * scale, box["y"] + (600 - 30 - 540 * y) * scale


def fed(response) -> bool:
    """The page's request for the 6 rows read (a depot and 5 customers)."""
    return "/api/predict" in response.url and len(response.request.post_data_json["points"]) == 6


def drawn_box(page, point) -> dict:
    """``point``'s bounding box once the board shows it: the page redraws the board when the
    answer it asked for arrives, which may be just after the test saw the response, and a
    point being redrawn has no box for that moment."""
    for _ in range(100):
        box = point.bounding_box()
        if box is not None:
            return box
        page.wait_for_timeout(50)
    raise AssertionError("the board never drew the point")


def read_then_drag(page, csv: str) -> tuple[dict, dict, dict, dict, dict]:
    """Paste ``csv`` into the cvrp board's reader, then drag the first customer: the reader's
    answer, the page's request after the read and its answer, its request after the drag and
    that answer (JSON bodies)."""
    page.select_option("#task", "cvrp")
    page.click("#read-open")
    page.fill("#read-text", csv)
    with page.expect_response("**/api/read") as read, page.expect_response(fed) as got:
        page.click("#read-go")
    page.click("#read-open")  # close the box
    customer = drawn_box(page, page.locator("#board circle.point").nth(0))
    with page.expect_response(fed) as moved:
        page.mouse.move(customer["x"] + 3, customer["y"] + 3)
        page.mouse.down()
        page.mouse.move(customer["x"] + 40, customer["y"] + 20, steps=3)
        page.mouse.up()
    assert moved.value.ok
    bodies = (read.value.json(), got.value.request.post_data_json, got.value.json())
    return (*bodies, moved.value.request.post_data_json, moved.value.json())


def test_customers_read_in_km_are_sent_in_km_and_a_moved_one_keeps_its_demand(browser, server):
    rows = CVRP.sample_points(np.random.default_rng(5), 5)
    rows[:, 3] = 12.0
    rows[:, :2] = rows[:, :2] * 800 + [300, 4000]  # km: x in 300..1100, y in 4000..4800
    csv = "x,y,demand,capacity\n" + "".join(",".join(f"{v:.6g}" for v in r) + "\n" for r in rows)
    with opened_page(browser, server) as page:
        read, request, answer, dragged, moved = read_then_drag(page, csv)
    assert len(read["mapping"]["offset"]) == 2  # x and y mapped; demand and capacity kept
    sent = np.array(request["points"])
    np.testing.assert_allclose(sent, rows.round(3), rtol=1e-5)  # the file's rows, in km
    assert answer["metrics"]["valid"]
    after = np.array(dragged["points"])
    assert moved["metrics"]["valid"]
    assert not np.allclose(after[:, :2], sent[:, :2])  # one place moved, in km
    assert (after[:, 2:] == sent[:, 2:]).all()  # every demand and the capacity kept
    assert (after[:, :2] > [250, 3950]).all()  # still in km, not the unit square


def test_customers_read_by_latitude_and_longitude_keep_their_demand_when_one_is_dragged(
    browser, server
):
    rows = CVRP.sample_points(np.random.default_rng(6), 5)
    rows[:, 3] = 12.0
    lat, lon = 60 + 5 * rows[:, 1], 10 + 8 * rows[:, 0]  # Scandinavia, degrees
    table = np.column_stack([lat, lon, rows[:, 2:]])
    lines = [f"{a:.5f},{o:.5f},{d:g},{c:g}" for a, o, d, c in table]
    csv = "lat,lon,demand,capacity\n" + "\n".join(lines)
    with opened_page(browser, server) as page:
        read, request, answer, dragged, moved = read_then_drag(page, csv)
    assert read["projected"]
    assert request["distances"] == "great_circle"  # measured in km on the globe
    sent = np.array(request["points"])
    np.testing.assert_allclose(sent[:, :2], np.column_stack([lon, lat]), atol=1e-5)
    assert answer["units"] == "km" and answer["metrics"]["valid"]
    after = np.array(dragged["points"])
    assert moved["metrics"]["valid"] and dragged["distances"] == "great_circle"
    assert not np.allclose(after[:, :2], sent[:, :2])  # one place moved, in degrees
    assert (after[:, 2:] == sent[:, 2:]).all()  # every demand and the capacity kept
    assert ((after[:, 0] > 5) & (after[:, 0] < 23) & (after[:, 1] > 55)).all()  # degrees
