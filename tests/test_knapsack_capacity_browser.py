"""The page's capacity box, end to end in headless Chromium (skipped without it): shown for
knapsack only, its text (a number or a share, ``30%``) sent as the request's ``capacity``, the
answer within it, the capacity used in the metrics, a bad text refused in the server's words."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

pytest.importorskip("fastapi", reason="the web extra is not installed")
from ptrnet.inference import load_model  # noqa: E402
from tests.browser import opened_page, served, wait_text  # noqa: E402

pytest_plugins = ["tests.browser"]  # the browser fixture

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def server():
    """The app with the bundled knapsack folder (Bello et al.'s model and the capacity model)."""
    yield from served({"knapsack": load_model(None, "knapsack")})


def test_the_capacity_box_sends_the_capacity_and_the_answer_keeps_within_it(browser, server):
    with opened_page(browser, server) as page:
        assert page.locator("#capacity-label").is_hidden()  # the first task has no capacity
        page.select_option("#task", "knapsack")
        page.wait_for_selector("#capacity-label", state="visible")
        with page.expect_response("**/api/predict") as answered:
            page.fill("#capacity", "1.5")
            page.dispatch_event("#capacity", "change")
        request, answer = answered_with(page, answered, "1.5")
        weights = np.array(request["points"])[:, 0]
        assert answer["capacity"] == 1.5 and answer["capacity_given"] == "1.5"
        assert weights[answer["model"]["sequence"]].sum() <= 1.5
        assert answer["model"]["info"]["name"] == "capacity"  # the capacity model answered
        wait_text(page, "#metrics", "capacity1.5")
        with page.expect_response("**/api/predict") as answered:  # a share, parsed by the server
            page.fill("#capacity", "30%")
            page.dispatch_event("#capacity", "change")
        request, answer = answered_with(page, answered, "30%")
        share = float(np.array(request["points"], dtype=np.float32)[:, 0].sum()) * 0.3
        assert answer["capacity"] == pytest.approx(share, rel=1e-6)
        assert weights[answer["model"]["sequence"]].sum() <= answer["capacity"]
        wait_text(page, "#metrics", "30% of the total weight")
        with page.expect_response("**/api/predict") as answered:  # a bad text: the server's line
            page.fill("#capacity", "lots")
            page.dispatch_event("#capacity", "change")
        assert answered.value.status == 422
        wait_text(page, "#error", "'lots': expected a number > 0 (12.5)")
        page.select_option("#task", "convex_hull")
        assert page.locator("#capacity-label").is_hidden()


def answered_with(page, answered, capacity: str) -> tuple[dict, dict]:
    """The request that sent ``capacity`` (the box's text) and its answer: an earlier request
    (another capacity, or none) may answer first."""
    request, answer = json.loads(answered.value.request.post_data), answered.value.json()
    while request.get("capacity") != capacity:
        with page.expect_response("**/api/predict") as answered:
            pass
        request, answer = json.loads(answered.value.request.post_data), answered.value.json()
    return request, answer
