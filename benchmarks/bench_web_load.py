"""Load on the web server over loopback: many concurrent clients, a share invalid, a share heavy.

Usage: ``python benchmarks/bench_web_load.py [--clients 48] [--requests 480]``

Starts ``ptrnet serve`` (the bundled models, default guard limits) as a separate process on a
free loopback port, then fires ``--requests`` requests from ``--clients`` threads:
a third invalid bodies, a third heavy (beam 16 on 60 points), a third ``GET /api/tasks``.
Prints the status codes per kind, the light requests' latency (median, 99th percentile, max),
the heavy throughput and the server's peak resident memory (recorded in docs/reliability.md).
``tests/test_web_guard.py`` runs a small version of the same mix and asserts outcomes only.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import uvicorn
from numpy.random import default_rng

from ptrnet.tasks import get_task

KINDS = ("invalid", "heavy", "light")


@contextlib.contextmanager
def serving(app, **config) -> Iterator[str]:
    """``app`` on uvicorn on a free loopback port, in a thread; yields ``127.0.0.1:PORT``."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", **config))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    if not server.started:
        raise RuntimeError("uvicorn did not start")
    try:
        yield f"127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def one(url: str, k: int, light: list[float], n: int = 60) -> tuple[str, int, bool]:
    """Request ``k`` of the mix: invalid, heavy (beam 16 on ``n`` points) or light (the task
    list; its latency is appended to ``light``). Returns (kind, status, answer as expected)."""
    kind = KINDS[k % 3]
    with httpx.Client(base_url=url, headers={"host": "localhost"}, timeout=120) as http:
        if kind == "light":
            start = time.monotonic()
            response = http.get("/api/tasks")
            light.append(time.monotonic() - start)
            return kind, response.status_code, response.status_code == 200
        points = default_rng(k).random((n, 2)).round(6)
        body = {"task": "convex_hull", "points": points.tolist()}
        if kind == "heavy":
            body["decoding"] = {"strategy": "beam", "beam_width": 16}
        else:
            body["decoding"] = {"beam_width": "5"}  # a string: invalid
        response = http.post(
            "/api/predict",
            content=json.dumps(body).encode(),
            headers={"content-type": "application/json"},
        )
        if response.status_code != 200:
            return kind, response.status_code, response.status_code in (422, 429, 503)
        exact = get_task("convex_hull").solve(points).tolist()
        return kind, 200, response.json()["reference"] == exact


def load(url: str, clients: int, requests: int, n: int = 60):
    """Fire the mix of :func:`one`; returns (results, sorted light latencies, seconds, peak MB
    added to this process)."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    light: list[float] = []
    start = time.monotonic()
    with ThreadPoolExecutor(clients) as pool:
        results = list(pool.map(lambda k: one(url, k, light, n), range(requests)))
    elapsed = time.monotonic() - start
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    return results, sorted(light), elapsed, grown


@contextlib.contextmanager
def serve_process() -> Iterator[tuple[str, int]]:
    """``ptrnet serve`` in a child process on a free port; yields (url, pid)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-m", "ptrnet.cli.main", "serve", "--port", str(port)]
    child = subprocess.Popen(command, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/api/tasks", timeout=1).status_code == 200:
                    break
            time.sleep(0.1)
        yield url, child.pid
    finally:
        child.terminate()
        child.wait(timeout=30)


def peak_memory_mb(pid: int) -> float:
    """The process's peak resident memory (VmHWM) in MB."""
    with open(f"/proc/{pid}/status") as status:
        line = next(line for line in status if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=48)
    parser.add_argument("--requests", type=int, default=480)
    args = parser.parse_args()
    with serve_process() as (url, pid):
        idle = peak_memory_mb(pid)
        results, light, elapsed, _ = load(url, args.clients, args.requests)
        peak = peak_memory_mb(pid)
    codes = {kind: Counter(c for k, c, _ in results if k == kind) for kind in KINDS}
    heavy_ok = codes["heavy"].get(200, 0)
    print(f"{args.requests} requests from {args.clients} clients in {elapsed:.1f} s")
    for kind, counter in codes.items():
        print(f"- {kind}: status codes {dict(sorted(counter.items()))}")
    print(
        f"- light latency: median {statistics.median(light) * 1000:.0f} ms, p99 "
        f"{light[int(0.99 * (len(light) - 1))] * 1000:.0f} ms, max {light[-1] * 1000:.0f} ms\n"
        f"- heavy answered: {heavy_ok} ({heavy_ok / elapsed:.1f}/s)\n"
        f"- every answer as expected: {all(ok for _, _, ok in results)}; no 5xx but 503: "
        f"{all(c < 500 or c == 503 for _, c, _ in results)}\n"
        f"- server peak memory: {idle:.0f} MB after start, {peak:.0f} MB after the load"
    )


if __name__ == "__main__":
    main()
