"""The headless Chromium the browser tests drive: the ``browser`` fixture, its arguments and the
guards.

A test module that imports from here is skipped, saying why, when the web extra, Debian's
Chromium (``apt-get install chromium``) or Playwright is missing; Playwright never downloads a
browser. A test module takes the fixture with ``pytest_plugins = ["tests.browser"]``.
"""

from __future__ import annotations

import shutil

import pytest

pytest.importorskip("fastapi", reason="the web extra is not installed")
CHROMIUM = shutil.which("chromium")
if CHROMIUM is None:
    pytest.skip(
        "no browser: install Debian's chromium (apt-get install chromium)", allow_module_level=True
    )
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TIMEOUT_MS = 20_000
TRAIN_MS = 120_000  # a short live-training run plus its validation decoding, on a busy CPU


@pytest.fixture(scope="module")
def browser():
    """The system's Chromium, headless, one per test module."""
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


def wait_count(page, selector: str, count: int, timeout: float = TIMEOUT_MS) -> None:
    """Wait until ``selector`` matches ``count`` elements. Uses Playwright's ``expect``, not
    ``wait_for_function``: the page's Content-Security-Policy (``script-src 'self'``) forbids
    the ``eval`` that a string predicate needs, and the tests keep that policy on."""
    sync_api.expect(page.locator(selector)).to_have_count(count, timeout=timeout)


def wait_text(page, selector: str, text: str, timeout: float = TIMEOUT_MS) -> None:
    """Wait until the element ``selector`` contains ``text`` (as :func:`wait_count`)."""
    sync_api.expect(page.locator(selector)).to_contain_text(text, timeout=timeout)
