"""Fixtures shared by several test modules."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def browser():
    """The system's headless Chromium under Playwright, one per test module (tests/browser.py
    holds its arguments; importing that skips a module without Chromium or Playwright)."""
    from tests.browser import ARGS, CHROMIUM, sync_api

    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()
