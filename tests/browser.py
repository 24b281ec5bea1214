"""The headless Chromium the browser tests drive: the ``browser`` and ``shots`` fixtures, the app
served to it (:func:`served`), the page opened on it (:func:`opened_page`), Chromium's arguments
and the guards.

A test module that imports from here is skipped, saying why, when the web extra, Debian's
Chromium (``apt-get install chromium``) or Playwright is missing; Playwright never downloads a
browser. A test module takes the fixtures with ``pytest_plugins = ["tests.browser"]``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the web extra is not installed")
from benchmarks.bench_web_load import serving  # noqa: E402
from ptrnet.web.app import create_app  # noqa: E402

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
VIEWPORT = {"width": 1100, "height": 900}
POINTS = "#board .point"  # the page starts with random points on the board
PANELS = "body[data-lesson-ready]"  # set once every panel is wired


@pytest.fixture(scope="module")
def browser():
    """The system's Chromium, headless, one per test module."""
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


@pytest.fixture
def shots(tmp_path) -> Path:
    """Where a test writes its screenshots: ``$PTRNET_SCREENSHOTS`` (``docs/images`` renews
    docs/web.md's pictures), else the test's temporary folder."""
    folder = os.environ.get("PTRNET_SCREENSHOTS")
    return Path(folder) if folder else tmp_path


def served(models, **options) -> Iterator[str]:
    """``create_app(models, **options)`` on uvicorn in a thread (``bench_web_load.serving``),
    yielding its ``http://127.0.0.1:PORT``; a module-scoped ``server`` fixture ends with
    ``yield from served(...)``."""
    with serving(create_app(models, **options)) as address:
        yield f"http://{address}"


@contextmanager
def opened_page(
    browser,
    url: str,
    *,
    viewport: dict = VIEWPORT,
    visible: tuple[str, ...] = (POINTS,),
    attached: tuple[str, ...] = (),
    errors: str | None = "page",
    ignore: str | None = None,
    before: Callable | None = None,
):
    """A new page of ``browser`` at ``viewport`` (default 1100 x 900) with :data:`TIMEOUT_MS` as
    every wait's default, opened at ``url``: ``before(page)``, if given, runs before the page is
    loaded (to route requests or add an init script), then the block starts once each selector
    of ``visible`` (default: the board's points) is visible and then each of ``attached`` is in
    the document, in order.

    The page is closed on leaving the block, even by an exception. Left without one, the block
    fails if the page logged errors: with ``errors="page"`` its uncaught JavaScript exceptions,
    with ``"console"`` those and the console's errors (a failed fetch among them), with
    ``None`` nothing; errors whose text contains ``ignore`` do not count.
    """
    if errors not in ("page", "console", None):
        raise ValueError(f"errors={errors!r}: expected 'page', 'console' or None")
    page = browser.new_page(viewport=viewport)
    logged = []
    try:
        page.set_default_timeout(TIMEOUT_MS)
        if errors is not None:
            page.on("pageerror", lambda err: logged.append(str(err)))
        if errors == "console":
            page.on("console", lambda msg: logged.append(msg.text) if msg.type == "error" else None)
        if before is not None:
            before(page)
        page.goto(url)
        for selector in visible:
            page.wait_for_selector(selector)
        for selector in attached:
            page.wait_for_selector(selector, state="attached")
        yield page
    finally:
        page.close()
    logged = [e for e in logged if ignore is None or ignore not in e]
    assert not logged, f"{'JavaScript' if errors == 'page' else 'console'} errors: {logged}"


def wait_count(page, selector: str, count: int, timeout: float = TIMEOUT_MS) -> None:
    """Wait until ``selector`` matches ``count`` elements. Uses Playwright's ``expect``, not
    ``wait_for_function``: the page's Content-Security-Policy (``script-src 'self'``) forbids
    the ``eval`` that a string predicate needs, and the tests keep that policy on."""
    sync_api.expect(page.locator(selector)).to_have_count(count, timeout=timeout)


def wait_text(page, selector: str, text: str, timeout: float = TIMEOUT_MS) -> None:
    """Wait until the element ``selector`` contains ``text`` (as :func:`wait_count`)."""
    sync_api.expect(page.locator(selector)).to_contain_text(text, timeout=timeout)
