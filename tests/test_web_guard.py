"""The web server under hostile and heavy use (ptrnet/web/guard.py): chunked bodies over the
limit, slow bodies, foreign Host headers, cross-origin text/plain posts, and many concurrent
clients, some invalid, some heavy. Assertions are on outcomes (status codes, answers, memory),
never on speed; timings are printed for the record."""

from __future__ import annotations

import asyncio
import socket
import time

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
from fastapi.testclient import TestClient  # noqa: E402

from benchmarks.bench_web_load import KINDS, load, serving  # noqa: E402
from ptrnet.web.app import MAX_BODY, create_app  # noqa: E402
from ptrnet.web.guard import Guard, GuardLimits, is_heavy  # noqa: E402
from ptrnet.web.lesson import Lessons  # noqa: E402
from tests.test_viz import tiny_model  # noqa: E402


@pytest.fixture(scope="module")
def client():
    app = create_app({"convex_hull": tiny_model("convex_hull")})
    with TestClient(app, base_url="http://localhost") as c:
        yield c


def points(n: int = 8, seed: int = 0) -> list[list[float]]:
    return np.random.default_rng(seed).random((n, 2)).round(6).tolist()


def test_chunked_body_over_the_limit_is_413(client) -> None:
    def chunks():
        for _ in range(MAX_BODY // 1000 + 10):
            yield b" " * 1000

    headers = {"content-type": "application/json"}
    response = client.post("/api/predict", content=chunks(), headers=headers)
    assert response.status_code == 413 and "over" in response.json()["detail"]


def test_foreign_host_is_refused_and_no_answer_holds_a_path(client) -> None:
    response = client.get("/api/tasks", headers={"host": "evil.example.com"})
    assert response.status_code == 400 and "unknown Host" in response.json()["detail"]
    assert client.get("/api/tasks", headers={"host": "localhost:8000"}).status_code == 200
    assert client.get("/api/tasks", headers={"host": "[::1]:8000"}).status_code == 200
    tasks = client.get("/api/tasks").json()["tasks"]
    (hull,) = [t for t in tasks if t["name"] == "convex_hull"]
    assert "path" not in hull["model"] and "/" not in hull["model"]["name"]
    answer = client.post("/api/predict", json={"task": "convex_hull", "points": points()})
    assert "/tmp" not in answer.text and str(tiny_model("convex_hull").path) not in answer.text


def test_state_changes_need_json(client) -> None:
    response = client.post(
        "/api/train/cancel", content=b"x", headers={"content-type": "text/plain"}
    )
    assert response.status_code == 415
    assert client.post("/api/train/cancel", json={}).status_code == 200


def run_guard(limits: GuardLimits, paths: list[str], hold_s: float = 0) -> list[tuple[int, dict]]:
    """Send requests for ``paths`` at once through a Guard whose app waits until all arrived
    (and ``hold_s`` more)."""
    release = asyncio.Event()
    started = []

    async def app(scope, receive, send):
        started.append(scope["path"])
        await release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    guard = Guard(app, limits)

    async def one(path: str) -> tuple[int, dict]:
        sent = []

        async def receive():
            return {"type": "http.request", "body": b"{}", "more_body": False}

        async def send(message):
            sent.append(message)

        headers = [(b"host", b"localhost"), (b"content-type", b"application/json")]
        scope = {"type": "http", "method": "POST", "path": path, "headers": headers}
        await guard(scope, receive, send)
        return sent[0]["status"], dict(sent[0].get("headers", []))

    async def main():
        tasks = [asyncio.create_task(one(p)) for p in paths]
        for _ in range(50):
            await asyncio.sleep(0)
        await asyncio.sleep(hold_s)
        release.set()
        return await asyncio.gather(*tasks)

    return asyncio.run(main())


def test_heavy_requests_queue_then_429_with_retry_after() -> None:
    limits = GuardLimits(heavy_workers=1, heavy_queue=1)
    results = run_guard(limits, ["/api/predict"] * 4 + ["/api/tasks"])
    statuses = [status for status, _ in results]
    assert statuses == [200, 200, 429, 429, 200]  # 1 runs, 1 waits, 2 refused; light passes
    assert results[2][1][b"retry-after"] == b"2"


def test_queue_timeout_is_503() -> None:
    limits = GuardLimits(heavy_workers=1, heavy_queue=4, queue_timeout_s=0.01)

    results = run_guard(limits, ["/api/train/test"] * 2, hold_s=0.3)
    assert [status for status, _ in results] == [200, 503]


def lesson_routes() -> list[str]:
    """The app's ``/api/lesson/*`` routes: each runs a model or starts a training."""
    app = create_app({}, lessons=Lessons())
    return sorted(r.path for r in app.routes if r.path.startswith("/api/lesson/"))


@pytest.mark.parametrize("path", lesson_routes())
def test_every_lesson_route_that_computes_is_heavy(path: str) -> None:
    """200 span or induction clients made the page itself slow: no lesson route escapes the
    heavy slots (one runs, none waits, the second is refused)."""
    assert is_heavy(path)
    limits = GuardLimits(heavy_workers=1, heavy_queue=0)
    assert [status for status, _ in run_guard(limits, [path, path])] == [200, 429]
    assert not is_heavy("/api/lesson") and not is_heavy("/api/tasks")


def test_a_heavy_slot_is_free_once_its_answer_starts() -> None:
    """An answer whose bytes the client never reads (its ``send`` never returns) holds no
    slot: the next heavy request runs at once instead of waiting, then 429 or 503."""
    written = asyncio.Event()  # never set: the client does not read

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    guard = Guard(app, GuardLimits(heavy_workers=1, heavy_queue=0))
    started: list[int] = []

    async def one() -> None:
        async def receive():
            return {"type": "http.request", "body": b"{}", "more_body": False}

        async def send(message):
            if message["type"] == "http.response.start":
                started.append(message["status"])
            else:
                await written.wait()

        headers = [(b"host", b"localhost"), (b"content-type", b"application/json")]
        scope = {"type": "http", "method": "POST", "path": "/api/predict", "headers": headers}
        await guard(scope, receive, send)

    async def main() -> None:
        tasks = [asyncio.create_task(one()) for _ in range(3)]
        for _ in range(50):
            await asyncio.sleep(0)
        for task in tasks:
            task.cancel()

    asyncio.run(main())
    assert started == [200, 200, 200]


@pytest.mark.parametrize(
    ("method", "path", "headers", "status"),
    [
        ("GET", "/", {}, 200),
        ("GET", "/static/app.js", {}, 200),
        ("GET", "/api/tasks", {}, 200),
        ("GET", "/api/nothing", {}, 404),
        ("GET", "/api/tasks", {"host": "evil.example.com"}, 400),
        ("POST", "/api/train/cancel", {"content-type": "text/plain"}, 415),
    ],
)
def test_every_answer_carries_the_security_headers(client, method, path, headers, status) -> None:
    """The page may not be framed (clickjacking), loads only its own scripts, styles and API
    (it has no inline script or style), and no answer is sniffed into another type."""
    response = client.request(method, path, headers=headers)
    assert response.status_code == status
    policy = response.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy and "default-src 'none'" in policy
    assert "script-src 'self';" in policy and "unsafe" not in policy
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["x-content-type-options"] == "nosniff"


@pytest.fixture(scope="module")
def server():
    """The app with a tiny hull model on uvicorn, on a free loopback port, in a thread."""
    limits = GuardLimits(body_timeout_s=0.5, heavy_workers=2, heavy_queue=4)
    app = create_app({"convex_hull": tiny_model("convex_hull")}, limits=limits)
    with serving(app, limit_concurrency=64) as address:
        yield address


def test_body_shorter_than_declared_times_out_with_408(server) -> None:
    host, port = server.split(":")
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(
            b"POST /api/predict HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json"
            b'\r\nContent-Length: 200000\r\n\r\n{"a": 1'
        )
        start = time.monotonic()
        reply = conn.recv(4096)
    print(f"408 after {time.monotonic() - start:.2f} s (limit 0.5 s)")
    assert reply.startswith(b"HTTP/1.1 408")


def test_load_mixed_clients_all_answered_correctly(server) -> None:
    """60 requests from 12 threads: a third invalid, a third heavy (beam 16, 40 points), the rest
    light; every valid answer matches the exact solver, every invalid one is 4xx, nothing 5xx
    but 503, and the process's peak memory grows by less than 300 MB."""
    results, light, elapsed, grown_mb = load(f"http://{server}", clients=12, requests=60, n=40)
    codes = {kind: sorted({c for k, c, _ in results if k == kind}) for kind in KINDS}
    print(f"{elapsed:.1f} s; codes {codes}; light max {light[-1]:.3f} s; memory +{grown_mb:.0f} MB")
    assert all(ok for _, _, ok in results), results
    assert all(code < 500 or code == 503 for _, code, _ in results)
    assert {code for kind, code, _ in results if kind == "invalid"} <= {422, 429}
    assert {code for kind, code, _ in results if kind == "light"} == {200}
    assert grown_mb < 300
