"""Points read from text, the span lesson's passage box and the induction heatmap's labels, in
headless Chromium at a laptop's 1280 x 800.

Served with the bundled models, as ``ptrnet serve`` would. A paste, a dropped file and the "Read
points" box all go to ``POST /api/read`` (the page parses nothing); the names a CSV gives are
drawn beside the points and kept through predictions and edits. With
``PTRNET_SCREENSHOTS=docs/images`` the three pictures of docs/web.md are written there
(``web_read_cities.png``, ``web_span_passage.png``, ``web_induction_labels.png``); otherwise to
a temporary folder. Skipped only without Chromium or Playwright (tests/browser.py).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

pytest.importorskip("fastapi", reason="the web extra is not installed")
from ptrnet.cli.serve import load_models  # noqa: E402
from ptrnet.solvers.geodesy import azimuthal_equidistant  # noqa: E402
from ptrnet.web.lesson import bundled_lessons  # noqa: E402

# Skips this module without Chromium or Playwright.
from tests.browser import PANELS, opened_page, served, wait_count, wait_text  # noqa: E402

pytest_plugins = ["tests.browser"]  # the browser and shots fixtures

torch.set_num_threads(1)
VIEWPORT = {"width": 1280, "height": 800}
LESSONS = bundled_lessons()
# Forty European cities, longitude and latitude (degrees), named in a CSV column.
CITIES = """\
Paris 2.35 48.86|London -0.13 51.51|Berlin 13.40 52.52|Madrid -3.70 40.42|Rome 12.50 41.90
Vienna 16.37 48.21|Amsterdam 4.90 52.37|Brussels 4.35 50.85|Prague 14.42 50.08|Warsaw 21.01 52.23
Budapest 19.04 47.50|Lisbon -9.14 38.72|Dublin -6.26 53.35|Copenhagen 12.57 55.68
Stockholm 18.07 59.33|Oslo 10.75 59.91|Helsinki 24.94 60.17|Athens 23.73 37.98
Bucharest 26.10 44.43|Sofia 23.32 42.70|Belgrade 20.46 44.79|Zagreb 15.98 45.81
Ljubljana 14.51 46.06|Bratislava 17.11 48.15|Bern 7.45 46.95|Zürich 8.54 47.38|Munich 11.58 48.14
Milan 9.19 45.46|Barcelona 2.17 41.39|Lyon 4.84 45.76|Marseille 5.37 43.30|Hamburg 9.99 53.55
Frankfurt 8.68 50.11|Kraków 19.94 50.06|Vilnius 25.28 54.69|Riga 24.11 56.95
Tallinn 24.75 59.44|Edinburgh -3.19 55.95|Porto -8.61 41.15|Naples 14.27 40.85"""
ROWS = [city.split() for city in CITIES.replace("\n", "|").split("|")]
CSV = "city,lon,lat\n" + "".join(f"{name},{lon},{lat}\n" for name, lon, lat in ROWS)


@pytest.fixture(scope="module")
def server():
    """The app with the bundled point models and lesson models."""
    yield from served(load_models([]), lessons=LESSONS)


@pytest.fixture
def page(browser, server):
    """The page at 1280 x 800; fails the test on any JavaScript or console error but a 422 (a
    refused read is logged as a failed fetch)."""
    opened = opened_page(
        browser, server, viewport=VIEWPORT, attached=(PANELS,), errors="console", ignore="422"
    )
    with opened as page:
        yield page


def board_names(page) -> list[str]:
    return page.locator("#board text.label.named").all_text_contents()


def predicted(n: int):
    """A predicate for ``expect_response``: the answer of a prediction on ``n`` points."""
    return lambda r: r.url.endswith("/api/predict") and len(r.request.post_data_json["points"]) == n


def overlaps(boxes: list[dict]) -> list[tuple[int, int]]:
    """The pairs of boxes (x, y, width, height) that overlap by more than half a pixel."""
    found = []
    for i, a in enumerate(boxes):
        for j, b in enumerate(boxes[:i]):
            dx = min(a["x"] + a["width"], b["x"] + b["width"]) - max(a["x"], b["x"])
            dy = min(a["y"] + a["height"], b["y"] + b["height"]) - max(a["y"], b["y"])
            if dx > 0.5 and dy > 0.5:
                found.append((j, i))
    return found


def test_pasted_cities_are_read_by_the_server_and_named_on_the_board(page, shots):
    page.select_option("#task", "tsp")
    page.click("#read-open")
    page.fill("#read-text", CSV)
    with page.expect_request("**/api/read") as sent, page.expect_response(predicted(40)) as got:
        page.click("#read-go")
    body = sent.value.post_data_json
    read = sent.value.response().json()
    assert body == {"task": "tsp", "text": CSV, "format": "auto"}  # no file name: a paste
    wait_count(page, "#board circle.point", 40)
    assert board_names(page) == [name for name, _, _ in ROWS]
    status = page.inner_text("#read-status")
    assert "Read pasted text: 40 points, with their names" in status
    assert "azimuthal equidistant projection" in status and "Lengths are in km" in status
    # The cities go back in degrees with their rule, and the lengths come in great-circle km.
    sent_points = got.value.request.post_data_json
    assert sent_points["distances"] == "great_circle" and sent_points["points"][25] == [8.54, 47.38]
    assert got.value.json()["units"] == "km"
    wait_text(page, "#metrics", " km")
    tip = page.locator("#board circle.point").nth(25).locator("title").text_content()
    assert tip == "26: Zürich (8.54, 47.38)"  # in the file's units, from the map sent back
    page.wait_for_selector("#board path.model-path", state="attached")
    page.click("#step-first")
    page.click("#step-next")
    assert "input " in page.inner_text("#step-info") and "(" in page.inner_text("#step-info")
    page.click("#step-last")
    page.click("#read-open")  # close the box: the board and its names in the picture
    page.locator("#playground .board-row").screenshot(path=str(shots / "web_read_cities.png"))
    # Names stay through a new prediction (beam search) and through moving and removing points.
    with page.expect_response(predicted(40)):
        page.select_option("#strategy", "beam")
    assert board_names(page) == [name for name, _, _ in ROWS]
    with page.expect_response(predicted(39)):
        page.locator("#board circle.point").nth(0).click(button="right")  # Paris removed
    assert board_names(page) == [name for name, _, _ in ROWS[1:]]
    # A city moved on the projection takes the latitude and longitude of where it is put: the
    # degrees sent, projected forward as the server projects the file, land where it was dropped.
    london = page.locator("#board circle.point").nth(0)
    point = london.bounding_box()
    with page.expect_response(predicted(39)) as moved:
        page.mouse.move(point["x"] + 5, point["y"] + 5)
        page.mouse.down()
        page.mouse.move(point["x"] + 30, point["y"] + 10, steps=3)
        page.mouse.up()
    sent = moved.value.request.post_data_json
    assert sent["distances"] == "great_circle" and moved.value.json()["units"] == "km"
    assert sent["points"][1:] == [[float(lon), float(lat)] for _, lon, lat in ROWS[2:]]
    dropped = [(float(london.get_attribute(a)) - 30) / 540 for a in ("cx", "cy")]
    dropped[1] = 1 - dropped[1]  # board pixels (SIZE 600, PAD 30) -> the unit square, y up
    centre = tuple(read["projection"]["centre"])
    plane = azimuthal_equidistant(np.array(sent["points"][:1]), centre)
    unit = (plane[0] - read["mapping"]["offset"]) / read["mapping"]["scale"]
    np.testing.assert_allclose(unit, dropped, atol=1e-9)
    assert sent["points"][0] != [-0.13, 51.51] and "antipode" not in page.inner_text("#read-status")
    lon, lat = (f"{v:.6g}" for v in sent["points"][0])
    assert london.locator("title").text_content() == f"1: London ({lon}, {lat})"
    # A planar file's points go back as the file gives them; its lengths in its own units.
    page.click("#read-open")
    page.fill("#read-text", "x,y\n0,0\n300,0\n300,200\n0,200\n150,100\n")
    with page.expect_response(predicted(5)) as planar:
        page.click("#read-go")
    assert planar.value.request.post_data_json["points"][1] == [300, 0]
    wait_text(page, "#metrics", "(file's units)")


def test_a_dropped_file_and_a_paste_read_through_the_api_and_errors_name_the_file(page):
    handle = page.evaluate_handle(
        """(text) => {
        const data = new DataTransfer();
        data.items.add(new File([text], "cities.csv", { type: "text/csv" }));
        return data;
    }""",
        "name;x;y\nA;0.1;0.1\nB;0.9;0.2\nC;0.5;0.8\nD;0.4;0.4\n",
    )
    with page.expect_request("**/api/read") as sent:
        page.dispatch_event("#board", "drop", {"dataTransfer": handle})
    assert sent.value.post_data_json["name"] == "cities.csv"
    wait_count(page, "#board circle.point", 4)
    assert board_names(page) == ["A", "B", "C", "D"]
    assert page.locator("#read-status").inner_text().startswith("Read cities.csv: 4 points")
    # A paste outside a text field: the clipboard's text, read as CSV (tabs, as a spreadsheet).
    with page.expect_request("**/api/read"):
        page.evaluate(
            """(text) => { const data = new DataTransfer(); data.setData("text/plain", text);
            document.body.dispatchEvent(
                new ClipboardEvent("paste", { clipboardData: data, bubbles: true })); }""",
            "<b>bold</b>\t0.2\t0.3\nÉvora\t0.8\t0.1\nOslo\t0.6\t0.9\n",
        )
    wait_count(page, "#board circle.point", 3)
    assert board_names(page) == ["<b>bold</b>", "Évora", "Oslo"]  # text, never markup
    assert page.locator("#board b").count() == 0
    # A file the reader refuses: its one line, naming the user's file, in the status box.
    bad = page.evaluate_handle(
        """() => { const data = new DataTransfer();
        data.items.add(new File(["x,y\\n0.1,0.2\\n0.3,zero\\n"], "mine.csv")); return data; }"""
    )
    with page.expect_response("**/api/read") as answered:
        page.dispatch_event("#board", "drop", {"dataTransfer": bad})
    assert answered.value.status == 422
    wait_text(page, "#read-status", "mine.csv:3:")
    assert "error" in page.get_attribute("#read-status", "class")
    assert page.locator("#board circle.point").count() == 3  # the points shown stay


def test_the_span_passage_box_takes_a_passage_of_several_lines(page, shots):
    if LESSONS.span is None:
        pytest.skip("no bundled span model")
    panel = page.locator("#span-panel")
    panel.scroll_into_view_if_needed()
    page.wait_for_selector("#sp-passage-words .sp-token")
    passage = (
        "Kanori Sato founded Mivel Labs in Dabeno in 1987 .\n"
        "Riho Tazuri moved from Zudata to Wavelfe in 2091 .\n"
        "Yomavel Bank paid 13988 dollars to Laka Velase on 14 April 2026 ."
    )
    assert page.locator("#sp-passage").evaluate("e => e.tagName") == "TEXTAREA"
    page.fill("#sp-passage", passage)
    box = page.locator("#sp-passage").bounding_box()
    line = page.locator("#sp-passage").evaluate("e => parseFloat(getComputedStyle(e).lineHeight)")
    assert box["height"] >= 3 * line and box["width"] >= 600  # three lines in view, not one
    page.fill("#sp-question", "who moved from zudata ?")
    with page.expect_response("**/api/lesson/span") as response:
        page.locator("#sp-passage").press("Control+Enter")
    data = response.value.json()
    assert json.dumps(data["passage"]).count('"."') == 3 and data["typed"]
    wait_count(page, "#sp-passage-words .sp-token", len(data["passage"]))
    assert page.input_value("#sp-passage") == passage  # the box keeps the user's lines
    panel.screenshot(path=str(shots / "web_span_passage.png"))


@pytest.mark.parametrize(
    "width, height, large",
    [(1280, 800, False), (1280, 800, True), (1024, 768, True)],
    ids=["1280x800", "1280x800 large text", "projector 1024x768 large text"],
)
def test_the_induction_heatmap_labels_are_readable_and_never_overlap(
    page, shots, width, height, large
):
    if LESSONS.induction is None:
        pytest.skip("no bundled induction model")
    page.set_viewport_size({"width": width, "height": height})
    if large:
        page.check("#cl-large")
    page.locator("#induction-panel").scroll_into_view_if_needed()
    page.wait_for_selector("#ih-map rect.ih-cell")  # the page's own first sequence is drawn
    tokens = " ".join(str(100 + 7 * k) for k in range(LESSONS.induction.config.length))
    page.fill("#ih-sequence", tokens)  # the longest A, of three-digit tokens
    for _ in range(5):  # a loaded machine may find the lesson's heavy slot busy: ask again
        with page.expect_response("**/api/lesson/induction") as response:
            page.click("#ih-run")
        if response.value.status == 200:
            break
        page.wait_for_timeout(1000)
    assert response.value.status == 200, response.value.text()
    size = len(response.value.json()["tokens"])
    wait_count(page, "#ih-map rect.ih-cell", size * (size + 1) // 2)
    scale = page.locator("#ih-map").bounding_box()["width"] / 600  # screen px per map unit
    least = 20 if large else 12  # on-screen pixels
    for axis in ("ih-col", "ih-row"):
        labels = page.locator(f"#ih-map text.{axis}")
        assert labels.count() >= size // 3, axis  # thinned at most to one in three
        boxes = labels.evaluate_all("ls => ls.map((l) => l.getBoundingClientRect().toJSON())")
        assert overlaps(boxes) == [], f"{axis} labels overlap"
        font = labels.first.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
        assert font * scale >= least - 0.01, f"{axis} labels of {font * scale:.1f} px"
    if labels.count() < size:
        assert "The axes label every" in page.inner_text("#ih-status")
    if not large:
        assert page.locator("#ih-map text.ih-col").count() == size  # every token at 1280 x 800
        page.locator("#ih-map").screenshot(path=str(shots / "web_induction_labels.png"))


def test_a_slow_first_answer_never_overwrites_the_sequence_typed_after_it(browser, server):
    """The page asks for a random sequence as it opens; held back until the user's typed
    sequence is drawn, that first answer arrives stale and leaves the map alone."""
    if LESSONS.induction is None:
        pytest.skip("no bundled induction model")
    held = []

    def hold_the_first(route):
        if held:
            route.continue_()
        else:
            held.append(route)  # answered below, after the typed sequence

    def route(page):
        page.route("**/api/lesson/induction", hold_the_first)

    opened = opened_page(
        browser, server, viewport=VIEWPORT, attached=(PANELS,), errors="console", before=route
    )
    with opened as page:
        page.locator("#induction-panel").scroll_into_view_if_needed()
        page.fill("#ih-sequence", "5 9 2 7 1")
        with page.expect_response("**/api/lesson/induction"):
            page.click("#ih-run")
        wait_count(page, "#ih-map rect.ih-cell", 66)  # BOS A A with |A| = 5: 66 causal cells
        assert len(held) == 1
        with page.expect_response("**/api/lesson/induction") as stale:
            held[0].continue_()
        first = stale.value.json()["tokens"]
        assert len(first) != 11  # a random A of another length, or the test proves nothing
        page.wait_for_timeout(500)  # time enough to draw it, were it drawn
        assert page.locator("#ih-map rect.ih-cell").count() == 66
        assert page.locator("#ih-tokens .word").all_inner_texts()[1:6] == ["5", "9", "2", "7", "1"]
        assert page.input_value("#ih-sequence") == "5 9 2 7 1"
