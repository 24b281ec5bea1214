"""The server's first line of defence, an ASGI middleware in front of every route.

In order, for each HTTP request:

1. **Host allow-list** (against DNS rebinding): the ``Host`` header must name one of the hosts
   the server was started for, else 400. A page on ``evil.example`` that rebinds its name to
   127.0.0.1 still sends ``Host: evil.example``.
2. **JSON only for state changes**: a POST must say ``Content-Type: application/json``, else
   415. Browsers send cross-origin ``text/plain`` forms without a preflight; JSON needs one,
   which this server never grants.
3. **Body limit, counted as bytes arrive**: a declared ``Content-Length`` over ``max_body`` is
   refused unread, and a chunked body is cut off at ``max_body`` bytes, both with 413; the body
   must arrive within ``body_timeout_s`` (408), so a client that declares 200,000 bytes and
   sends 7 cannot hold a connection.
4. **Heavy requests share fairly**: at most ``heavy_workers`` requests that compute (decoding,
   reading a pasted file, training, every ``/api/lesson/*`` route: :func:`is_heavy`) run at
   once, ``heavy_queue`` more wait (up to ``queue_timeout_s``, then 503); beyond that the
   answer is 429 at once. Both carry ``Retry-After``. A slot is given back as soon as its
   answer is computed (the answer starts), not when the client has read it: a client that
   does not read holds no slot (writing is bounded by :mod:`ptrnet.web.connections`). Light
   requests (the page, the task list, the event stream) never wait for heavy ones.

Every answer, the Guard's own refusals included, carries :data:`SECURITY_HEADERS`: a
Content-Security-Policy that lets the page load only its own scripts, styles and API (it has no
inline script or style), and may not be framed. ``stream_lifetime_s`` is read by the app: an
event stream ends after it, and the browser's EventSource reconnects with ``Last-Event-ID``.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

DEFAULT_HOSTS = ("localhost", "127.0.0.1", "::1")
HEAVY_PATHS = frozenset({"/api/predict", "/api/read", "/api/train", "/api/train/test"})
LESSON_PREFIX = "/api/lesson/"  # every route under it runs a model or starts a training
STREAM_PATHS = frozenset({"/api/train/events"})  # long answers: server-sent events
CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src data:",  # the page's empty icon, data:,
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    )
)
SECURITY_HEADERS = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
)


@dataclass(frozen=True)
class GuardLimits:
    """The limits of the module docstring (values in docs/reliability.md)."""

    hosts: tuple[str, ...] = DEFAULT_HOSTS
    max_body: int = 256 * 1024  # bytes; 300 points need about 15 KB
    body_timeout_s: float = 10.0
    heavy_workers: int = 2
    heavy_queue: int = 8
    queue_timeout_s: float = 20.0
    retry_after_s: int = 2
    stream_lifetime_s: float = 60.0  # then an event stream ends; EventSource reconnects

    def __post_init__(self) -> None:
        if self.heavy_workers < 1 or self.heavy_queue < 0 or self.max_body < 1:
            raise ValueError("heavy_workers >= 1, heavy_queue >= 0 and max_body >= 1 needed")
        if not self.stream_lifetime_s > 0:
            raise ValueError("stream_lifetime_s > 0 needed")


class Guard:
    """ASGI middleware applying :class:`GuardLimits` to ``app``."""

    def __init__(self, app: Any, limits: GuardLimits) -> None:
        self.app = app
        self.limits = limits
        self.waiting = 0
        self._slots: asyncio.Semaphore | None = None  # created on the server's event loop

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = secured(send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self._refusal(scope, headers)
        if refusal is None:
            body, refusal = await self._read_body(receive, headers)
        if refusal is not None:
            await _reply(send, *refusal)
            return
        replay = _replay(body, receive)
        if not is_heavy(scope["path"]):
            await self.app(scope, replay, send)
            return
        await self._heavy(scope, replay, send)

    def _refusal(self, scope: dict, headers: dict[str, str]) -> tuple[int, str] | None:
        """(status, detail) when the request is refused on its headers alone."""
        if host_name(headers.get("host", "")) not in self.limits.hosts:
            return 400, f"unknown Host; this server answers for {', '.join(self.limits.hosts)}"
        if scope["method"] == "POST":
            kind = headers.get("content-type", "").split(";")[0].strip().lower()
            if kind != "application/json":
                return 415, "POST requests must have Content-Type: application/json"
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.limits.max_body):
            return 413, f"request body over {self.limits.max_body} bytes or bad Content-Length"
        return None

    async def _read_body(
        self, receive: Any, headers: dict[str, str]
    ) -> tuple[bytes, tuple[int, str] | None]:
        """The whole body, counted as it arrives; or a 413/408 refusal."""
        chunks, size, more = [], 0, True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.limits.body_timeout_s
        while more:
            try:
                message = await asyncio.wait_for(receive(), deadline - loop.time())
            except asyncio.TimeoutError:
                return b"", (
                    408,
                    f"request body not received within {self.limits.body_timeout_s} s",
                )
            if message["type"] != "http.request":
                return b"", (400, "client disconnected")
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limits.max_body:
                return b"", (413, f"request body over {self.limits.max_body} bytes")
            chunks.append(chunk)
            more = message.get("more_body", False)
        return b"".join(chunks), None

    async def _heavy(self, scope: dict, receive: Any, send: Any) -> None:
        """Run a heavy request in one of the bounded slots, or refuse it with Retry-After."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.limits.heavy_workers)
        if not self._slots.locked():
            await self._slots.acquire()  # a free slot: taken at once, no suspension
        elif self.waiting >= self.limits.heavy_queue:
            await _reply(send, 429, "too many requests at once; retry later", self.limits)
            return
        else:
            self.waiting += 1
            try:
                await asyncio.wait_for(self._slots.acquire(), self.limits.queue_timeout_s)
            except asyncio.TimeoutError:
                await _reply(send, 503, "server busy; retry later", self.limits)
                return
            finally:
                self.waiting -= 1
        held = True

        def release() -> None:
            nonlocal held
            if held:
                held = False
                self._slots.release()

        async def send_answer(message: dict) -> None:
            if message["type"] == "http.response.start":
                release()  # computed: writing it to a client that may not read holds no slot
            await send(message)

        try:
            await self.app(scope, receive, send_answer)
        finally:
            release()


def is_heavy(path: str) -> bool:
    """Whether a request for ``path`` computes (a model, a solver, a file's reader, a
    training), so that it runs in one of the Guard's bounded slots."""
    return path in HEAVY_PATHS or path.startswith(LESSON_PREFIX)


def secured(send: Any) -> Any:
    """A ``send`` that adds :data:`SECURITY_HEADERS` to the answer's headers."""

    async def send_secured(message: dict) -> None:
        if message["type"] == "http.response.start":
            headers = [*message.get("headers", []), *SECURITY_HEADERS]
            message = {**message, "headers": headers}
        await send(message)

    return send_secured


def host_name(host: str) -> str:
    """The name in a ``Host`` header, without the port (``[::1]:8000`` -> ``::1``)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _replay(body: bytes, receive: Any) -> Any:
    """A ``receive`` that hands the app the body already read, then defers to ``receive``."""
    sent = False

    async def replay() -> dict:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _reply(send: Any, status: int, detail: str, limits: GuardLimits | None = None) -> None:
    """A JSON ``{"detail": ...}`` answer; with ``limits``, a ``Retry-After`` header too."""
    payload = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(payload))]
    if limits is not None:
        headers.append((b"retry-after", str(limits.retry_after_s).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
