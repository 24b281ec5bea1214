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
