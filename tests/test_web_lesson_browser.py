"""The lesson panels and classroom mode in headless Chromium at a projector's 1024 x 768.

Served with the bundled convex-hull Ptr-Net and the bundled lesson models (the seq2seq baseline;
the copy model where ``ptrnet/bundled/copy/`` has one), as ``ptrnet serve`` would. Every page
must log no console error. With ``PTRNET_SCREENSHOTS=DIR`` the screenshots of docs/web.md are
written to DIR (``PTRNET_SCREENSHOTS=docs/images``); otherwise to a temporary folder.
Skipped only without Chromium or Playwright (tests/browser.py).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

pytest.importorskip("fastapi", reason="the web extra is not installed")
from ptrnet.inference import load_model  # noqa: E402
from ptrnet.web.lesson import bundled_lessons  # noqa: E402

# Skips this module without Chromium or Playwright.
from tests.browser import PANELS, TRAIN_MS, opened_page, served, wait_count, wait_text  # noqa: E402

pytest_plugins = ["tests.browser"]  # the browser and shots fixtures

torch.set_num_threads(1)
VIEWPORT = {"width": 1024, "height": 768}
LESSONS = bundled_lessons()


@pytest.fixture(scope="module")
def server():
    """The app with the bundled hull model and lesson models."""
    yield from served({"convex_hull": load_model(None, "convex_hull")}, lessons=LESSONS)


@pytest.fixture
def page(browser, server):
    """The page at 1024 x 768 with the model's path drawn; fails the test on any JavaScript or
    console error."""
    attached = (PANELS, "#board path.model-path")
    opened = opened_page(browser, server, viewport=VIEWPORT, attached=attached, errors="console")
    with opened as page:
        yield page


def inside_viewport(page, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    return (
        box is not None
        and box["x"] >= 0
        and box["y"] >= 0
        and box["x"] + box["width"] <= VIEWPORT["width"]
        and box["y"] + box["height"] <= VIEWPORT["height"]
    )


def test_board_and_step_controls_fit_together_and_the_toggles_work(page, shots):
    page.click("#step-first")
    for selector in ("#board", "#step-first", "#step-next", "#step-slider", "#step-info"):
        assert inside_viewport(page, selector), f"{selector} is not visible at 1024 x 768"
    assert page.inner_text("#step-info").startswith("Step 1 of")  # ◀◀: the first pointer
    page.click("#step-last")
    assert page.inner_text("#step-info").startswith("Whole output")  # ▶▶: the whole output
    page.click("#step-first")
    assert page.locator("#board path.ref").count() >= 1 and page.is_visible("#metrics")
    page.check("#cl-hide")
    assert not page.locator("#board path.ref").first.is_visible()
    assert not page.is_visible("#metrics")
    size = page.eval_on_selector("#playground .explain", "e => getComputedStyle(e).fontSize")
    page.check("#cl-large")
    large = page.eval_on_selector("#playground .explain", "e => getComputedStyle(e).fontSize")
    assert float(large[:-2]) >= 1.3 * float(size[:-2])
    for selector in ("#board", "#step-first", "#step-next"):
        assert inside_viewport(page, selector), f"{selector} is not visible with large text"
    page.screenshot(path=str(shots / "web_classroom.png"))
    page.uncheck("#cl-explain")
    assert not page.is_visible("#playground .explain")
    page.select_option("#task", "sort")
    assert page.inner_text("#count-unit") == "numbers"
    page.select_option("#task", "convex_hull")
    assert page.inner_text("#count-unit") == "points"


# Elements whose own text reads smaller than 20 px (visible ones; text in a chart scaled by how
# wide the chart is drawn; the boards' marks are not text to read).
SMALL_TEXT = """() => [...document.querySelectorAll("body *")].filter((e) => {
  if (![...e.childNodes].some((c) => c.nodeType === 3 && c.textContent.trim())) return false;
  if (!e.getClientRects().length || e.closest("sub, sup")) return false;
  const svg = e.closest("svg");
  if (svg && !svg.classList.contains("chart")) return false;
  const scale = svg ? svg.getBoundingClientRect().width / svg.viewBox.baseVal.width : 1;
  return parseFloat(getComputedStyle(e).fontSize) * scale < 19.5;
}).map((e) => e.id || e.getAttribute("class") || e.tagName)"""


def test_large_text_is_20_px_everywhere_and_every_panel_explains_itself(page):
    assert page.evaluate(SMALL_TEXT), "without large text some text is small"
    page.check("#cl-large")
    assert page.evaluate(SMALL_TEXT) == []
    panels = page.locator("section.panel")
    assert panels.count() == 6  # playground, vocabulary, copy, induction, span, training
    for k in range(panels.count()):
        explain = panels.nth(k).locator(":scope > .explain")
        assert explain.count() == 1 and explain.is_visible() and len(explain.inner_text()) > 80
    page.uncheck("#cl-explain")
    assert not any(panels.nth(k).locator(".explain").is_visible() for k in range(6))


def test_hiding_the_answer_hides_it_in_every_panel(page):
    page.locator("#vocab-panel").scroll_into_view_if_needed()
    page.wait_for_selector("#vc-table tbody tr")
    assert page.locator("#vc-board path.ref").count() == 1
    page.check("#cl-hide")
    for selector in ("path.ref", ".answer-only", "#metrics"):
        shown = page.locator(selector)
        assert not any(shown.nth(k).is_visible() for k in range(shown.count())), selector
    assert page.locator("#board path.model-path").is_visible()  # the model's answer stays
    page.uncheck("#cl-hide")
    assert page.locator("#vc-board path.ref").is_visible()


def count_points(page) -> int:
    return page.locator("#board circle.point").count()


def test_the_tooltips_say_what_the_buttons_do(page):
    buttons = page.locator("button")
    for k in range(buttons.count()):
        assert buttons.nth(k).get_attribute("title"), buttons.nth(k).inner_text()
    for toggle in ("#cl-large", "#cl-hide", "#cl-explain"):
        assert page.locator(f"label:has({toggle})").get_attribute("title")
    assert "points" in page.get_attribute("#randomise", "title")
    page.fill("#random-count", "7")  # "as many as the box says"
    page.click("#randomise")
    wait_count(page, "#board circle.point", 7)
    page.click("#clear")  # "remove every point"
    wait_count(page, "#board circle.point", 0)
    page.select_option("#task", "sort")
    assert "numbers" in page.get_attribute("#randomise", "title")
    assert "numbers" in page.get_attribute("#random-count", "title")
    page.fill("#random-count", "9")
    page.click("#randomise")
    assert len(page.input_value("#numbers").split()) == 9
    assert page.is_disabled("#clear")  # sort has no points to remove
    page.select_option("#task", "convex_hull")
    page.wait_for_selector("#step-first")
    page.click("#step-first")  # "first step ... nothing output yet"
    page.click("#step-next")  # "next step (one pointer on)"
    page.click("#step-next")
    page.click("#step-prev")  # "previous step (one pointer back)"
    assert page.inner_text("#step-info").startswith("Step 2 of")
    page.click("#step-last")  # "the whole output (leave the step-through)"
    assert page.inner_text("#step-info").startswith("Whole output")


def test_mixing_is_the_weighted_average_and_pointing_one_input(page, shots):
    page.fill("#random-count", "40")  # enough points for an uncertain step
    with page.expect_response("**/api/predict") as response:
        page.click("#randomise")
    trace = response.value.json()["model"]["trace"]
    page.wait_for_selector("#step-first")
    page.click("#step-first")
    page.click("#step-next")
    mark = page.locator("#board path.mix")
    got = np.array([float(mark.get_attribute("data-x")), float(mark.get_attribute("data-y"))])
    points = np.array(response.value.request.post_data_json["points"])
    weights = np.array(trace["probs"][1][1:])  # step 2's pointer over the inputs, end left out
    expected = weights @ points / weights.sum()
    np.testing.assert_allclose(got, expected, atol=1e-6)
    chosen = trace["tokens"][1]
    assert "between the inputs" in page.inner_text("#mixing-info")
    assert f"input {chosen}" in page.inner_text("#mixing-info") or chosen == 0
    doubt = int(np.argmin([max(row[1:]) for row in trace["probs"][:-1]]))  # least sure step
    page.click("#step-first")
    for _ in range(doubt):
        page.click("#step-next")
    assert page.inner_text("#step-info").startswith(f"Step {doubt + 1} of")
    page.screenshot(path=str(shots / "web_mixing.png"))


@pytest.mark.skipif(LESSONS.seq2seq is None, reason="no bundled seq2seq baseline")
def test_the_seq2seq_has_no_class_for_point_six(page, shots):
    panel = page.locator("#vocab-panel")
    panel.scroll_into_view_if_needed()
    page.wait_for_selector("#vc-table tbody tr")
    absent = page.locator("#vc-table th.absent")
    assert absent.count() == 1 and absent.inner_text() == "6"  # n = 6, vocabulary of 5 points
    assert page.locator("#vc-board .missing-point").count() == 1
    assert "cannot output" in page.inner_text("#vc-summary")
    assert "Ptr-Net" in page.inner_text("#vc-summary")
    panel.screenshot(path=str(shots / "web_vocabulary.png"))
    with page.expect_response("**/api/lesson/vocabulary"):
        page.fill("#vc-n", "8")
        page.dispatch_event("#vc-n", "change")
    wait_count(page, "#vc-table th.absent", 3)


def test_copy_panel_or_its_missing_model(page, shots):
    panel = page.locator("#copy-panel")
    panel.scroll_into_view_if_needed()
    if LESSONS.copy is None:
        assert "copy model not installed" in page.inner_text("#cp-missing")
        assert page.is_disabled("#cp-run")
        return
    page.wait_for_selector("#cp-table tbody tr")
    panel.screenshot(path=str(shots / "web_copy.png"))
    with page.expect_response("**/api/lesson/copy") as response:
        page.check("#cp-override")  # slider at 0.5; move it to 0: copying alone
    with page.expect_response("**/api/lesson/copy") as response:
        page.fill("#cp-pgen", "0")
        page.dispatch_event("#cp-pgen", "change")
    steps = response.value.json()["steps"]
    assert all(s["generate"] == 0 and s["p_gen"] == 0 for s in steps)
    assert "fixed at 0" in page.inner_text("#cp-status")


def test_induction_panel_draws_the_stripe_of_a_typed_sequence(page):
    page.locator("#induction-panel").scroll_into_view_if_needed()
    if LESSONS.induction is None:
        assert "induction model not installed" in page.inner_text("#ih-missing")
        return
    page.wait_for_selector("#ih-map rect.ih-cell")
    page.fill("#ih-sequence", "5 9 2 7 1")
    with page.expect_response("**/api/lesson/induction") as response:
        page.click("#ih-run")
    data = response.value.json()
    assert data["tokens"] == [LESSONS.induction.config.bos, *[5, 9, 2, 7, 1] * 2]
    # BOS A A, |A| = 5: 66 causal cells, the stripe on queries 6..9, 11 tokens under the map
    wait_count(page, "#ih-map rect.ih-cell", 66)
    assert page.locator("#ih-map rect.ih-stripe").count() == 4
    assert page.locator("#ih-tokens .word").count() == 11
    page.select_option("#ih-layer", "1")  # the previous-token head: stripe on queries 1..10
    assert page.locator("#ih-map rect.ih-stripe").count() == 10


def test_span_panel_shades_the_passage_and_outlines_the_span_of_a_typed_question(page):
    page.locator("#span-panel").scroll_into_view_if_needed()
    if LESSONS.span is None:
        assert "span model not installed" in page.inner_text("#sp-missing")
        return
    page.wait_for_selector("#sp-passage-words .sp-token")
    page.fill("#sp-passage", "Kanori Sato founded Mivel Labs in Dabeno in 1987 .")
    page.fill("#sp-question", "who founded mivel labs ?")
    with page.expect_response("**/api/lesson/span") as response:
        page.click("#sp-run")
    data = response.value.json()
    assert data["passage"][:2] == ["kanori", "sato"] and data["typed"]
    wait_count(page, "#sp-passage-words .sp-token", 10)
    picked = page.locator("#sp-passage-words .sp-pick")
    assert picked.count() == data["end"] - data["start"] + 1
    assert " ".join(picked.all_inner_texts()) == data["answer"]
    assert f"“{data['answer']}”" in page.inner_text("#sp-status")
    with page.expect_response("**/api/lesson/span") as response:
        page.click("#sp-random")
    drawn = response.value.json()
    assert not drawn["typed"] and page.input_value("#sp-question") == " ".join(drawn["question"])


def test_convex_hull_trains_live_then_is_tested_on_longer_inputs(page):
    page.locator("#training").scroll_into_view_if_needed()
    page.select_option("#tr-task", "convex_hull")
    assert page.input_value("#tr-lr") == "0.01"
    for field, value in {"#tr-hidden": "16", "#tr-steps": "10", "#tr-batch": "16"}.items():
        page.fill(field, value)
    page.click("#tr-start")
    wait_text(page, "#tr-status", "done", timeout=TRAIN_MS)
    page.fill("#te-lengths", "5 8")
    page.fill("#te-count", "10")
    page.click("#te-run")
    wait_text(page, "#te-status", "tested on")
    assert page.locator("#chart-gen-acc path.series").count() == 2
    assert "hull" in page.text_content("#chart-gen-acc")
