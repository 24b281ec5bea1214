"""End to end in a real headless Chromium: uvicorn in a thread, the page driven by Playwright.

Uses the system's Chromium (Debian's ``chromium`` package); Playwright never downloads a browser.
Skipped, saying why, only when no Chromium or no Playwright is installed. With
``PTRNET_SCREENSHOTS=DIR`` the page's pictures at 1024x768 and 1920x1080 are written to DIR
(``PTRNET_SCREENSHOTS=docs/images``); otherwise to a temporary folder.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
import torch

pytest.importorskip("fastapi", reason="the web extra is not installed")
from ptrnet.cli.serve import load_models  # noqa: E402
from ptrnet.web.lesson import bundled_lessons  # noqa: E402

# Skips this module without Chromium or Playwright.
from tests.browser import (  # noqa: E402
    PANELS,
    TIMEOUT_MS,
    TRAIN_MS,
    opened_page,
    served,
    wait_count,
    wait_text,
)
from tests.test_viz import tiny_model  # noqa: E402

pytest_plugins = ["tests.browser"]  # the browser and shots fixtures

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def server():
    """The app with a tiny convex-hull model, served by uvicorn on a free port in a thread."""
    yield from served({"convex_hull": tiny_model("convex_hull")})


@pytest.fixture
def page(browser, server):
    """The page with its points drawn and every panel wired; fails on a JavaScript error."""
    with opened_page(browser, server, attached=(PANELS,)) as page:
        yield page


def click_points(page, coords):
    box = page.locator("#board").bounding_box()
    for x, y in coords:  # unit square, y up; the board has a 30 px margin in 600 px
        px = box["x"] + (30 + 540 * x) * box["width"] / 600
        py = box["y"] + (570 - 540 * y) * box["height"] / 600
        page.mouse.click(px, py)


def test_click_predict_step_and_drag(page, tmp_path):
    page.click("#clear")
    with page.expect_response("**/api/predict"):
        click_points(page, [(0.1, 0.1), (0.9, 0.15), (0.85, 0.9), (0.2, 0.8), (0.5, 0.5)])
    wait_count(page, "#board circle.point", 5)
    page.wait_for_selector("#board path.model-path", state="attached")
    page.wait_for_selector("#board path.ref.hull")
    assert "hull correct?" in page.inner_text("#metrics")
    assert "area coverage" in page.inner_text("#metrics")
    page.click("#step-first")
    assert "end symbol" in page.inner_text("#end-prob")
    assert page.locator("#board .halo").count() >= 1
    page.click("#step-next")
    assert page.inner_text("#step-info").startswith("Step 2 of")
    point = page.locator("#board circle.point").nth(4).bounding_box()
    with page.expect_response("**/api/predict"):
        page.mouse.move(point["x"] + 5, point["y"] + 5)
        page.mouse.down()
        page.mouse.move(point["x"] + 60, point["y"] - 40, steps=5)
        page.mouse.up()
    page.screenshot(path=str(tmp_path / "hull.png"), full_page=True)
    assert (tmp_path / "hull.png").stat().st_size > 10_000


def test_task_without_model_shows_the_exact_answer(page):
    page.select_option("#task", "tsp")
    page.wait_for_selector("#board path.ref.tour")
    assert "No model loaded for tsp" in page.inner_text("#model-status")
    assert "optimal tour length" in page.inner_text("#metrics")


def test_live_training_then_length_test(page, tmp_path):
    for field, value in {
        "#tr-hidden": "8",
        "#tr-steps": "30",
        "#tr-max": "4",
        "#tr-min": "2",
    }.items():
        page.fill(field, value)
    page.click("#tr-start")
    wait_text(page, "#tr-status", "done", timeout=TRAIN_MS)
    assert page.locator("#chart-loss path.series").count() >= 1
    page.fill("#te-lengths", "3 6")
    page.fill("#te-count", "10")
    page.click("#te-run")
    wait_text(page, "#te-status", "tested on", timeout=TRAIN_MS)
    assert page.locator("#chart-gen-acc path.series").count() >= 2
    page.screenshot(path=str(tmp_path / "training.png"), full_page=True)


def test_an_answer_for_the_previous_task_is_not_drawn(browser, server):
    """A hull answer that arrives after the switch to TSP must not be drawn as a tour."""
    held = {}  # task -> its first /api/predict request, held back until released

    def hold(route):
        task = json.loads(route.request.post_data)["task"]
        if task in held:
            route.continue_()
        else:
            held[task] = route

    def wait_until_held(page, task):
        deadline = time.monotonic() + TIMEOUT_MS / 1000
        while task not in held and time.monotonic() < deadline:
            page.wait_for_timeout(20)
        assert task in held, f"the page sent no {task} request"

    routed = opened_page(
        browser,
        server,
        visible=(),
        errors=None,
        before=lambda page: page.route("**/api/predict", hold),
    )
    with routed as page:
        wait_until_held(page, "convex_hull")
        page.select_option("#task", "tsp")
        held["convex_hull"].continue_()
        wait_until_held(page, "tsp")  # sent only once the hull answer has been handled
        assert page.locator("#board path.ref").count() == 0  # the hull answer was not drawn
        held["tsp"].continue_()
        page.wait_for_selector("#board path.ref.tour")
        assert "optimal tour length" in page.inner_text("#metrics")


# Seeded Math.random (mulberry32): the page's random instances are the same on every run.
SEEDED_RANDOM = """(() => { let a = 20261203;
  Math.random = () => { a = (a + 0x6D2B79F5) | 0; let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t; return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
})();"""
# Per chart: its width on screen, its drawing's width, the lines drawn and the legend entries.
CHARTS = """() => [...document.querySelectorAll("svg.chart")].map((svg) => ({
  id: svg.id, shown: svg.getBoundingClientRect().width, drawn: svg.viewBox.baseVal.width,
  lines: svg.querySelectorAll(".series-group").length,
  legend: [...svg.querySelectorAll(".legend-entry")].map((e) => e.textContent),
}))"""


@pytest.fixture(scope="module")
def bundled_server():
    """The app with the bundled models and lesson models, as ``ptrnet serve`` has them."""
    yield from served(load_models([]), lessons=bundled_lessons())


def test_page_grows_with_the_window_and_every_chart_line_says_what_it_measures(
    browser, bundled_server, shots
):
    """At 1920x1080 the board and the charts use the width (the board was 450 px), at 1024x768
    all still fits; every line of every chart has a legend entry, the unconstrained decoding's
    is named and explained. Screenshots of both sizes (``web_1920x1080.png``, ...)."""
    seeded = opened_page(
        browser,
        bundled_server,
        viewport={"width": 1920, "height": 1080},
        visible=(),
        attached=(PANELS,),
        before=lambda page: page.add_init_script(SEEDED_RANDOM),
    )
    with seeded as page:
        page.select_option("#tr-task", "convex_hull")
        settings = {"#tr-hidden": "16", "#tr-steps": "60", "#tr-min": "4", "#tr-max": "6"}
        for field, value in settings.items():
            page.fill(field, value)
        page.click("#tr-start")
        wait_text(page, "#tr-status", "done", timeout=TRAIN_MS)
        page.fill("#te-lengths", "5 10 20")
        page.fill("#te-count", "20")
        page.click("#te-run")
        wait_text(page, "#te-status", "tested on", timeout=TRAIN_MS)
        page.wait_for_selector("#board path.model-path", state="attached")
        sizes = {}
        for width, height in ((1920, 1080), (1024, 768)):
            page.set_viewport_size({"width": width, "height": height})
            page.wait_for_timeout(300)  # the charts redraw at their new width
            board = page.locator("#board").bounding_box()
            sizes[width] = board["width"]
            assert board["x"] + board["width"] <= width and board["y"] + board["height"] <= height
            sideways = page.evaluate("document.scrollingElement.scrollWidth")
            assert sideways <= width  # no sideways scroll
            for chart in page.evaluate(CHARTS):
                assert abs(chart["shown"] - chart["drawn"]) <= 2, chart  # drawn at its width
                assert chart["lines"] == len(chart["legend"]), chart  # every line in the legend
                if width == 1920:
                    assert chart["shown"] > 0.4 * width, chart  # two charts share the row
            page.screenshot(path=str(shots / f"web_{width}x{height}.png"), full_page=True)
        assert sizes[1920] > 800 and 480 < sizes[1024] < sizes[1920]
        invalid = page.evaluate(CHARTS)[3]
        assert any("without the mask (unconstrained)" in entry for entry in invalid["legend"])
        tooltips = page.locator("#chart-gen-invalid .series-group title").all_text_contents()
        assert any("Unconstrained decoding: at each step" in text for text in tooltips)
        assert "unconstrained decoding" in page.inner_text("#te-caption")


def metric_table(page) -> dict[str, str]:
    """The metrics table as name -> value."""
    rows = page.locator("#metrics tr").all()
    return dict(row.locator("td").all_inner_texts() for row in rows)


def closed_length(points, sequence) -> float:
    """The length of the path ``sequence`` through ``points`` (a closed tour repeats its start)."""
    xy = np.asarray(points)[sequence]
    return float(np.linalg.norm(np.diff(xy, axis=0), axis=1).sum())


def test_a_tour_search_is_asked_for_drawn_over_the_models_own_tour_and_named(
    browser, bundled_server
):
    """The Search controls (TSP only) send the search fields; the searched tour is drawn with the
    model's own dashed beneath, the metrics name the search and give both lengths, no
    log-likelihood and no step-through; the server's 422 (too much search work) is shown."""
    with opened_page(browser, bundled_server, visible=(), attached=(PANELS,)) as page:
        assert page.locator("#search-controls").is_hidden()  # convex hull: no tour to search
        page.select_option("#task", "tsp")
        page.wait_for_selector("#board path.model-path", state="attached")
        assert page.locator("#search-controls").is_visible()
        assert "log-likelihood" in metric_table(page) and page.locator("#stepper").is_visible()

        page.select_option("#search", "or_opt")
        with page.expect_response(
            lambda r: '"iterations":2' in (r.request.post_data or "")
        ) as answered:
            page.fill("#rrc-rounds", "2")
            page.locator("#rrc-rounds").blur()  # a change event, as when typed
        body = json.loads(answered.value.request.post_data)
        search = {key: body["decoding"].get(key) for key in ("improve", "iterations", "or_opt")}
        assert search == {"improve": "rrc", "iterations": 2, "or_opt": True}
        model = answered.value.json()["model"]
        wait_text(page, "#metrics", "searched")
        table = metric_table(page)
        assert table["searched"] == "RRC 2 rounds, then 2-opt and Or-opt"
        own = closed_length(body["points"], model["decoded_sequence"])
        assert table["model's own tour length"] == f"{own:.3f}"
        searched = closed_length(body["points"], model["sequence"])
        assert table["searched tour length"] == f"{searched:.3f}"
        assert "log-likelihood" not in table
        assert page.locator("#board path.model.decoded").count() == 1
        assert page.locator("#legend-decoded").is_visible()
        assert page.locator("#stepper").is_hidden()
        assert "no step-through" in page.inner_text("#no-step")

        page.fill("#random-count", "61")
        with page.expect_response("**/api/predict"):
            page.click("#randomise")
        page.fill("#rrc-rounds", "100")  # 100 rounds x 61 cities: over the 6,000 the server allows
        with page.expect_response("**/api/predict") as refused:
            page.locator("#rrc-rounds").blur()
        assert refused.value.status == 422
        page.wait_for_selector("#error:not(.hidden)")
        assert "too much search work" in page.inner_text("#error")

        with page.expect_request("**/api/predict") as asked:
            page.select_option("#task", "convex_hull")
        decoding = json.loads(asked.value.post_data)["decoding"]
        assert not {"improve", "iterations", "two_opt", "or_opt"} & set(decoding)
        assert page.locator("#search-controls").is_hidden()
