"""Connection limits below HTTP: no client holds the server with connections that send nothing.

The :class:`~ptrnet.web.guard.Guard` bounds a request's body and uvicorn a keep-alive pause, but
nothing bounded the wait for a request's head: a connection that sends nothing, or one header
line every few seconds, stayed open for ever, and uvicorn's ``limit_concurrency`` counts such
connections, so 64 of them made every other client's request a 503. This module replaces
that limit with three rules, applied per connection by :class:`GuardedH11Protocol` (uvicorn's
h11 protocol with hooks at connection, data and response) through one shared
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


@dataclass(frozen=True)
class ConnectionLimits:
    """The limits of the module docstring (values stated in docs/web.md)."""

    head_timeout_s: float = 5.0
    per_client: int = 32
    max_connections: int = 256
    retry_after_s: int = 2

    def __post_init__(self) -> None:
        if not (self.head_timeout_s > 0 and 1 <= self.per_client <= self.max_connections):
            raise ValueError("head_timeout_s > 0 and 1 <= per_client <= max_connections needed")


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
    """Who is connected and who is waiting, shared by the connections of one server (all
    called on its event loop, so no locks). A connection is any object with ``close()``."""

    def __init__(self, limits: ConnectionLimits) -> None:
        self.limits = limits
        self.clients: dict[Any, str] = {}  # connection -> client key
        self.waiting: dict[Any, None] = {}  # the waiting connections, longest waiting first

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

    def remove(self, conn: Any) -> None:
        """Forget ``conn`` (idempotent)."""
        self.clients.pop(conn, None)
        self.waiting.pop(conn, None)

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
    with the app (``cycle`` is None or its response complete)."""

    table: ConnectionTable
    head_timer: asyncio.TimerHandle | None = None  # runs while the connection waits

    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if not self.table.admit(self, client_key(self.client)):
            self.app = self.refuse  # its request head gets the 503; the clock bounds the wait
        self._start_clock()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._track()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._track()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_clock()
        self.table.remove(self)
        super().connection_lost(exc)

    async def refuse(self, scope: dict, receive: Any, send: Any) -> None:
        """The ASGI app of a connection admitted without room: 503, ``Retry-After``, close.
        (Answered once its head is read, not at once: a server that closes a connection
        with the client's request still arriving resets it, and the 503 is lost.)"""
        body = json.dumps({"detail": "too many open connections; retry later"})
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"retry-after", str(self.table.limits.retry_after_s).encode()),
            (b"connection", b"close"),
        ]
        await send({"type": "http.response.start", "status": 503, "headers": headers})
        await send({"type": "http.response.body", "body": body.encode()})

    def close(self) -> None:
        """Close the connection without an answer (a waiting one has no request to answer);
        ``connection_lost`` then tells h11, as for a client that hung up."""
        self._stop_clock()
        self.transport.close()

    def _track(self) -> None:
        """Start the clock when the connection starts waiting, stop it when a request began."""
        if self.transport.is_closing():
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
