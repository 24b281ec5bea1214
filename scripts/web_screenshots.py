"""Remake the screenshots of docs/web.md that tests/test_web_lesson_browser.py does not make.

Usage: ``python scripts/web_screenshots.py [--out docs/images] [--only NAME ...]``

Starts ``ptrnet serve`` (the bundled models, as a user would) on a free loopback port and drives
the page in Debian's headless Chromium through Playwright (never a downloaded browser), with
``Math.random`` seeded so the random instances are the same every time. Writes:

* ``web_playground.png`` -- the playground: 12 random points, the bundled hull model's answer
  over the exact hull, the metrics;
* ``web_stepping.png`` -- the same board stepped to the third pointer of a 20-point instance;
* ``web_training.png`` -- the live-training panel after two sorting runs with the page's
  proposed settings, one with the mask in training and one without, each tested on longer lists;
* ``web_training_hull.png`` -- the same for convex hull.

The two training pictures train four small models for real (about a minute of CPU each on an
idle core; several times longer on a busy one). The other pictures of docs/web.md come from
``PTRNET_SCREENSHOTS=docs/images python -m pytest tests/test_web_lesson_browser.py``.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
from playwright.sync_api import Page, sync_playwright

NAMES = ("playground", "stepping", "training", "training_hull")
VIEWPORT = {"width": 1100, "height": 900}
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
# A seeded Math.random (mulberry32), so "Random" draws the same points on every run.
SEEDED_RANDOM = """(() => { let a = 20261201;
  Math.random = () => { a = (a + 0x6D2B79F5) | 0; let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t; return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
})();"""
TRAIN_TIMEOUT_MS = 1_800_000  # a live run on a busy machine


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(port: int) -> subprocess.Popen:
    """``ptrnet serve`` on ``port``; returns once it answers."""
    server = subprocess.Popen([sys.executable, "-m", "ptrnet", "serve", "--port", str(port)])
    deadline = time.monotonic() + 600  # loading every bundled model, on a busy machine
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/api/tasks", timeout=2).raise_for_status()
            return server
        except httpx.HTTPError:
            time.sleep(0.5)
    server.terminate()
    raise SystemExit("web_screenshots: ptrnet serve did not start")


def randomise(page: Page, count: int) -> None:
    with page.expect_response("**/api/predict"):
        page.fill("#random-count", str(count))
        page.click("#randomise")
    page.wait_for_selector("#board path.model-path", state="attached")


def playground(page: Page, out: Path) -> None:
    randomise(page, 12)
    page.locator("#playground").screenshot(path=str(out / "web_playground.png"))


def stepping(page: Page, out: Path) -> None:
    randomise(page, 20)
    page.click("#step-first")
    page.click("#step-next")
    page.click("#step-next")
    page.locator("#playground").screenshot(path=str(out / "web_stepping.png"))


def train_two_runs(page: Page, task: str, out: Path, name: str) -> None:
    """A run with the mask in training and one without, each tested on longer inputs."""
    panel = page.locator("#training")
    panel.scroll_into_view_if_needed()
    page.select_option("#tr-task", task)
    for number, masked in ((1, True), (2, False)):
        page.set_checked("#tr-masked", masked)
        page.click("#tr-start")
        page.wait_for_function(  # the status of this run, not the one before
            f"document.querySelector('#tr-status').textContent.startsWith('Run #{number} done')",
            timeout=TRAIN_TIMEOUT_MS,
        )
        page.click("#te-run")
        page.wait_for_function(
            "document.querySelector('#te-status').textContent.includes('tested on')",
            timeout=TRAIN_TIMEOUT_MS,
        )
        print(f"{task}: {page.inner_text('#tr-status')}", flush=True)
    panel.screenshot(path=str(out / name))


def shoot(page: Page, name: str, out: Path) -> None:
    if name == "playground":
        playground(page, out)
    elif name == "stepping":
        stepping(page, out)
    elif name == "training":
        train_two_runs(page, "sort", out, "web_training.png")
    else:
        train_two_runs(page, "convex_hull", out, "web_training_hull.png")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("docs/images"))
    parser.add_argument("--only", nargs="+", choices=NAMES, default=list(NAMES))
    args = parser.parse_args()
    chromium = shutil.which("chromium")
    if chromium is None:
        raise SystemExit("web_screenshots: no chromium (apt-get install chromium)")
    port = free_port()
    server = start_server(port)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=ARGS)
            for name in args.only:  # a fresh page each: no earlier run in the charts
                page = browser.new_page(viewport=VIEWPORT)
                page.set_default_timeout(60_000)
                page.add_init_script(SEEDED_RANDOM)
                page.goto(f"http://localhost:{port}/")
                page.wait_for_selector("body[data-lesson-ready]", state="attached")
                page.wait_for_selector("#board path.model-path", state="attached")
                shoot(page, name, args.out)
                print(f"web_screenshots: {name} done", flush=True)
                page.close()
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
