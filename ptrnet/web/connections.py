"""Connection limits below HTTP: no client holds the server with connections that send nothing.

The :class:`~ptrnet.web.guard.Guard` bounds a request's body and uvicorn a keep-alive pause, but
nothing bounded the wait for a request's head: a connection that sends nothing, or one header
line every few seconds, stayed open for ever, and uvicorn's ``limit_concurrency`` counts such
connections, so 64 of them made every other client's request a 503. This module replaces
that limit with five rules, applied per connection by :class:`GuardedH11Protocol` (uvicorn's
h11 protocol with hooks at connection, data, writing and response) through one shared
:class:`ConnectionTable`:

1. **A connection is waiting** from the moment it opens, and again after each response, until
   the head (request line and headers) of its next request has arrived. A connection that waits
   longer than ``head_timeout_s`` is closed, whatever it sends meanwhile: a trickle of header
   bytes does not restart the clock. While the app handles a request the clock does not run.
2. **At most ``per_client`` connections from one client address** (an IPv6 client: its /64
   network) and **at most ``max_connections`` in all**.
3. **A new connection beyond either limit closes the connection that has waited longest** within
   that limit (the same address, or any), so idle connections cannot lock a newcomer out. Only
   when every connection within the limit is busy with a request is the newcomer refused: its
   request gets ``503`` with ``Retry-After`` and the connection is closed (it is not counted, and
   the head clock bounds its wait as any other's).
4. **An answer must be written within ``write_timeout_s``**: while a client reads so little
   that the answer's bytes pile up (the transport's buffer over its high-water mark), or while
   a closing connection still has bytes to send, a clock runs; when it runs out the connection
   is dropped, unsent bytes and all. A client that never reads holds a connection for that
   long, and never a heavy slot (the Guard frees it once the answer is computed).
5. **Event streams have limits of their own**: a request for an event stream
   (:data:`~ptrnet.web.guard.STREAM_PATHS`) moves its connection out of the rules 2 and 3, so
   streams never count against other connections, into at most ``streams_per_client`` streams
   per client address and ``max_streams`` in all; beyond them the request gets ``503`` with
   ``Retry-After``. The stream's connection closes when the stream ends (the app ends it after
   :attr:`~ptrnet.web.guard.GuardLimits.stream_lifetime_s`; the browser reconnects).

Requests themselves stay bounded by the Guard (heavy ones) and, since no connection carries two
requests at once, by ``max_connections``.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import math
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from ptrnet.web.guard import SECURITY_HEADERS, STREAM_PATHS


@dataclass(frozen=True)
class ConnectionLimits:
    """The limits of the module docstring (values stated in docs/web.md)."""

    head_timeout_s: float = 5.0
    per_client: int = 32
    max_connections: int = 256
    retry_after_s: int = 2
    write_timeout_s: float = 10.0
    streams_per_client: int = 4
    max_streams: int = 32

    def __post_init__(self) -> None:
        if not (self.head_timeout_s > 0 and 1 <= self.per_client <= self.max_connections):
            raise ValueError("head_timeout_s > 0 and 1 <= per_client <= max_connections needed")
        if not (self.write_timeout_s > 0 and 1 <= self.streams_per_client <= self.max_streams):
            raise ValueError(
                "write_timeout_s > 0 and 1 <= streams_per_client <= max_streams needed"
            )


def client_key(client: tuple[str, int] | None) -> str:
    """The address a connection counts against: an IPv4 address, an IPv6 /64 network, or ``""``
    for a client without one (a Unix socket)."""
    if not client:
        return ""
    try:
        address = ipaddress.ip_address(client[0])
    except ValueError:
        return client[0]
    if address.version == 4:
        return str(address)
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(ipaddress.ip_network(f"{address}/64", strict=False))


class ConnectionTable:
    """Who is connected, who is waiting and who streams, shared by the connections of one
    server (all called on its event loop, so no locks). A connection is any object with
    ``close()``."""

    def __init__(self, limits: ConnectionLimits) -> None:
        self.limits = limits
        self.clients: dict[Any, str] = {}  # connection -> client key
        self.waiting: dict[Any, None] = {}  # the waiting connections, longest waiting first
        self.streams: dict[Any, str] = {}  # connection -> client key, outside ``clients``

    def admit(self, conn: Any, client: str) -> bool:
        """Register ``conn`` from ``client``, waiting, making room by closing the longest-waiting
        connection where a limit is reached. False (nothing registered): no room."""
        mine = sum(1 for key in self.clients.values() if key == client)
        if mine >= self.limits.per_client and not self._evict(client):
            return False
        if len(self.clients) >= self.limits.max_connections and not self._evict(None):
            return False
        self.clients[conn] = client
        self.waiting[conn] = None
        return True

    def set_waiting(self, conn: Any, waiting: bool) -> None:
        """Mark ``conn`` waiting for a request head (to the back of the queue) or busy."""
        self.waiting.pop(conn, None)
        if waiting and conn in self.clients:
            self.waiting[conn] = None

    def open_stream(self, conn: Any) -> bool:
        """Move ``conn``, a connection whose request is an event stream, from the connections
        to the streams, which count against the stream limits only. False (nothing moved):
        its client, or the server, has as many streams as allowed."""
        client = self.clients.get(conn)
        mine = sum(1 for key in self.streams.values() if key == client)
        if client is None or mine >= self.limits.streams_per_client:
            return False
        if len(self.streams) >= self.limits.max_streams:
            return False
        self.remove(conn)
        self.streams[conn] = client
        return True

    def remove(self, conn: Any) -> None:
        """Forget ``conn`` (idempotent)."""
        self.clients.pop(conn, None)
        self.waiting.pop(conn, None)
        self.streams.pop(conn, None)

    def _evict(self, client: str | None) -> bool:
        """Close the longest-waiting connection of ``client`` (None: of anyone); False if none."""
        for conn in self.waiting:
            if client is None or self.clients[conn] == client:
                self.remove(conn)
                conn.close()
                return True
        return False


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol under the module's rules; :func:`guarded_protocol` makes the class
    for one server (``table`` is per server). Waiting means: no request of this connection is
    with the app (``cycle`` is None or its response complete). Requests reach the app through
    :meth:`dispatch`."""

    table: ConnectionTable
    head_timer: asyncio.TimerHandle | None = None  # runs while the connection waits
    write_timer: asyncio.TimerHandle | None = None  # runs while its answer cannot be written

    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.served = self.app
        # Without room, its request head gets the 503; the clock bounds the wait.
        self.app = self.dispatch if self.table.admit(self, client_key(self.client)) else self.refuse
        self._start_clock()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._track()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._track()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_clock()
        self._stop_write_clock()
        self.table.remove(self)
        super().connection_lost(exc)

    def pause_writing(self) -> None:
        super().pause_writing()
        self._start_write_clock()

    def resume_writing(self) -> None:
        super().resume_writing()
        if not self.transport.is_closing():  # a closing one must still deliver the rest
            self._stop_write_clock()

    async def dispatch(self, scope: dict, receive: Any, send: Any) -> None:
        """The ASGI app of an admitted connection: the server's app; for an event stream, once
        the connection has moved to the streams (else 503), and with ``Connection: close``
        (a connection outside the table carries no further request)."""
        if scope["path"] not in STREAM_PATHS:
            await self.served(scope, receive, send)
        elif self.table.open_stream(self):
            await self.served(scope, receive, closing(send))
        else:
            await self._refuse(send, "too many event streams; retry later")

    async def refuse(self, scope: dict, receive: Any, send: Any) -> None:
        """The ASGI app of a connection admitted without room: 503, ``Retry-After``, close.
        (Answered once its head is read, not at once: a server that closes a connection
        with the client's request still arriving resets it, and the 503 is lost.)"""
        await self._refuse(send, "too many open connections; retry later")

    async def _refuse(self, send: Any, detail: str) -> None:
        body = json.dumps({"detail": detail})
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"retry-after", str(self.table.limits.retry_after_s).encode()),
            (b"connection", b"close"),
            *SECURITY_HEADERS,
        ]
        await send({"type": "http.response.start", "status": 503, "headers": headers})
        await send({"type": "http.response.body", "body": body.encode()})

    def close(self) -> None:
        """Close the connection without an answer (a waiting one has no request to answer);
        ``connection_lost`` then tells h11, as for a client that hung up."""
        self._stop_clock()
        self.transport.close()
        self._start_write_clock()  # bytes of an earlier answer left unsent: dropped in time

    def _track(self) -> None:
        """Start the clock when the connection starts waiting, stop it when a request began;
        a closing connection gets the write clock instead."""
        if self.transport.is_closing():
            self._start_write_clock()
            return
        waiting = self.cycle is None or self.cycle.response_complete
        if waiting and self.head_timer is None:
            self.table.set_waiting(self, True)
            self._start_clock()
        elif not waiting and self.head_timer is not None:
            self.table.set_waiting(self, False)
            self._stop_clock()

    def _start_clock(self) -> None:
        self.head_timer = self.loop.call_later(self.table.limits.head_timeout_s, self._timed_out)

    def _stop_clock(self) -> None:
        if self.head_timer is not None:
            self.head_timer.cancel()
            self.head_timer = None

    def _timed_out(self) -> None:
        self.head_timer = None
        self.table.remove(self)
        self.close()

    def _start_write_clock(self) -> None:
        if self.write_timer is None:
            timeout = self.table.limits.write_timeout_s
            self.write_timer = self.loop.call_later(timeout, self._write_timed_out)

    def _stop_write_clock(self) -> None:
        if self.write_timer is not None:
            self.write_timer.cancel()
            self.write_timer = None

    def _write_timed_out(self) -> None:
        """Drop the connection and whatever it could not send (``close`` would wait for the
        client to read it); ``connection_lost`` then ends the request the app is answering."""
        self.write_timer = None
        self._stop_clock()
        self.table.remove(self)
        self.transport.abort()


def closing(send: Any) -> Any:
    """A ``send`` whose answer says ``Connection: close``."""

    async def send_closing(message: dict) -> None:
        if message["type"] == "http.response.start":
            headers = [*message.get("headers", []), (b"connection", b"close")]
            message = {**message, "headers": headers}
        await send(message)

    return send_closing


def guarded_protocol(limits: ConnectionLimits) -> type[GuardedH11Protocol]:
    """A :class:`GuardedH11Protocol` class with its own table, for one server's ``http``."""
    return type("GuardedH11Protocol", (GuardedH11Protocol,), {"table": ConnectionTable(limits)})


def server_options(limits: ConnectionLimits | None = None) -> dict[str, Any]:
    """uvicorn settings under these rules: the guarded protocol; no ``limit_concurrency`` (it
    counts waiting connections, which is the lock-out this module removes); uvicorn's own
    keep-alive pause no shorter than ``head_timeout_s``, which then decides."""
    limits = limits or ConnectionLimits()
    return {
        "http": guarded_protocol(limits),
        "limit_concurrency": None,
        "timeout_keep_alive": math.ceil(limits.head_timeout_s),
    }
