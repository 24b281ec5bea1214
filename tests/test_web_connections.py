"""Connection limits of ``ptrnet serve`` (ptrnet/web/connections.py): connections that never
complete a request head are closed, idle ones cannot lock a newcomer out, and light requests
answer while 64 idle and 64 trickling connections are open. The servers run on loopback, on a
free port, in a thread; every socket a test opens is closed by it."""

from __future__ import annotations

import contextlib
import socket
import statistics
import threading
import time
from collections.abc import Iterator

import pytest

pytest.importorskip("fastapi", reason="the web extra is not installed")
pytest.importorskip("uvicorn", reason="the web extra is not installed")
from benchmarks.bench_web_load import serving  # noqa: E402
from ptrnet.web.app import create_app  # noqa: E402
from ptrnet.web.connections import (  # noqa: E402
    ConnectionLimits,
    ConnectionTable,
    client_key,
    server_options,
)
from ptrnet.web.lesson import Lessons  # noqa: E402

LIGHT = b"GET /api/tasks HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
HEAD = b"GET /api/tasks HTTP/1.1\r\nHost: localhost\r\n"  # a head that never ends
SLACK_S = 3.0  # how late a busy 2-core machine may close a connection after its deadline


@contextlib.contextmanager
def guarded_server(limits: ConnectionLimits) -> Iterator[tuple[tuple[str, int], ConnectionTable]]:
    """The app (no models) on uvicorn with ``ptrnet serve``'s connection rules under ``limits``;
    yields its (host, port) and its table of connections."""
    options = server_options(limits)
    with serving(create_app({}, lessons=Lessons()), **options) as address:
        host, port = address.split(":")
        yield (host, int(port)), options["http"].table


@contextlib.contextmanager
def connections(address, sources: list[str]) -> Iterator[list[socket.socket]]:
    """One open TCP connection from each source address (loopback: any 127.x.y.z on Linux)."""
    opened: list[socket.socket] = []
    try:
        for source in sources:
            try:
                opened.append(socket.create_connection(address, 5, source_address=(source, 0)))
            except OSError as err:  # not Linux: only 127.0.0.1 is a loopback address
                pytest.skip(f"cannot connect from {source}: {err}")
        yield opened
    finally:
        for conn in opened:
            conn.close()


@contextlib.contextmanager
def trickling(conns: list[socket.socket], every_s: float) -> Iterator[None]:
    """Each connection sends a request line, then one header line every ``every_s`` seconds."""
    stop = threading.Event()

    def send(data: bytes) -> None:
        for conn in conns:
            with contextlib.suppress(OSError):  # closed by the server: as expected
                conn.sendall(data)

    def loop() -> None:
        send(HEAD)
        while not stop.wait(every_s):
            send(b"X-Trickle: 1\r\n")

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=10)


def is_open(conn: socket.socket) -> bool:
    """Whether the server still holds ``conn`` open; what it sent before is read and dropped."""
    conn.setblocking(False)
    try:
        while conn.recv(65536):
            pass
        return False  # end of stream: closed
    except BlockingIOError:
        return True
    except OSError:  # reset by the server
        return False
    finally:
        conn.setblocking(True)


def light_request(address, source: str = "127.0.0.1") -> tuple[bytes, float]:
    """``GET /api/tasks`` on a new connection: (status line, seconds to the whole answer)."""
    start = time.monotonic()
    with socket.create_connection(address, 10, source_address=(source, 0)) as conn:
        conn.sendall(LIGHT)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    reply = b"".join(chunks)
    return reply.split(b"\r\n", 1)[0], time.monotonic() - start


def wait_closed(conns: list[socket.socket], deadline: float) -> list[socket.socket]:
    """Poll until every connection is closed or ``deadline`` passes; the ones still open."""
    left = list(conns)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [conn for conn in left if is_open(conn)]
    return left


def test_light_requests_answer_while_64_idle_and_64_trickling_connections_are_open() -> None:
    limits = ConnectionLimits()  # ptrnet serve's: a head within 5 s
    sources = [f"127.0.{1 + k // 200}.{1 + k % 200}" for k in range(128)]  # one each
    with (
        guarded_server(limits) as (address, _),
        connections(address, sources[:64]) as idle,
        connections(address, sources[64:]) as slow,
        trickling(slow, every_s=0.5),
    ):
        opened = time.monotonic()
        answers = [light_request(address) for _ in range(9)]
        measured = time.monotonic() - opened
        assert measured < limits.head_timeout_s - 1, "the machine was too slow to measure in time"
        assert sum(is_open(conn) for conn in idle + slow) == 128  # all held while measuring
        assert {status for status, _ in answers} == {b"HTTP/1.1 200 OK"}
        median = statistics.median(seconds for _, seconds in answers)
        print(f"light request: median {median * 1000:.1f} ms under 128 held connections")
        assert median < 0.1
        left = wait_closed(idle + slow, opened + limits.head_timeout_s + SLACK_S)
        assert not left, f"{len(left)} connections without a request head were not closed"
        waited = time.monotonic() - opened
        print(f"all 128 closed {waited:.2f} s after opening (head timeout 5 s)")


def test_idle_connections_from_the_same_address_make_room_for_its_next_request() -> None:
    """64 idle and 64 trickling connections from 127.0.0.1 itself, the next request's address."""
    limits = ConnectionLimits(head_timeout_s=30.0)  # only the per-client limit acts here
    with (
        guarded_server(limits) as (address, _),
        connections(address, ["127.0.0.1"] * 64) as idle,
        connections(address, ["127.0.0.1"] * 64) as slow,
        trickling(slow, every_s=0.5),
    ):
        answers = [light_request(address) for _ in range(5)]
        assert {status for status, _ in answers} == {b"HTTP/1.1 200 OK"}
        assert statistics.median(seconds for _, seconds in answers) < 0.1
        still = sum(is_open(conn) for conn in idle + slow)
        assert still <= limits.per_client  # the longest waiting were closed for the newcomers
        assert all(is_open(conn) for conn in slow[-(limits.per_client - 5) :])  # newest stay


def test_a_newcomer_gets_503_when_its_address_has_only_busy_connections() -> None:
    """Busy connections (a request whose body is still to come) are never closed for a
    newcomer: beyond the per-client limit it is refused with 503 and Retry-After."""
    limits = ConnectionLimits(per_client=2)
    head = (
        b"POST /api/predict HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        b"Content-Length: 100\r\n\r\n"
    )
    with (
        guarded_server(limits) as (address, table),
        connections(address, ["127.0.0.1"] * 2) as busy,
    ):
        for conn in busy:
            conn.sendall(head)
        deadline = time.monotonic() + 10
        while (len(table.clients) < 2 or table.waiting) and time.monotonic() < deadline:
            time.sleep(0.02)  # until both requests are with the app, waiting for their bodies
        status, _ = light_request(address)
        assert status == b"HTTP/1.1 503 Service Unavailable"
        assert all(is_open(conn) for conn in busy)
        assert light_request(address, "127.0.0.2")[0] == b"HTTP/1.1 200 OK"  # another address


def test_a_kept_alive_connection_that_trickles_its_next_head_is_closed() -> None:
    limits = ConnectionLimits(head_timeout_s=1.0)
    keep_alive = LIGHT.replace(b"Connection: close", b"Connection: keep-alive")
    with guarded_server(limits) as (address, _), connections(address, ["127.0.0.1"]) as (conn,):
        conn.sendall(keep_alive)
        assert conn.recv(65536).startswith(b"HTTP/1.1 200 OK")
        answered = time.monotonic()
        with trickling([conn], every_s=0.2):  # each line comes well within the timeout
            assert not wait_closed([conn], answered + limits.head_timeout_s + SLACK_S)
        assert time.monotonic() - answered >= limits.head_timeout_s * 0.9


class Fake:
    """A connection for the table: records whether it was closed."""

    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


def test_the_table_closes_the_longest_waiting_connection_and_never_a_busy_one() -> None:
    table = ConnectionTable(ConnectionLimits(per_client=3, max_connections=4))
    a, b, c = Fake(), Fake(), Fake()
    for conn in (a, b, c):
        assert table.admit(conn, "1.2.3.4")
    table.set_waiting(a, False)  # a's request is with the app
    table.set_waiting(b, False)
    table.set_waiting(b, True)  # b answered: waits again, now behind c
    d = Fake()
    assert table.admit(d, "1.2.3.4")  # over per_client: c, the longest waiting, goes
    assert (a.closed, b.closed, c.closed) == (False, False, True)
    e = Fake()
    assert table.admit(e, "5.6.7.8")  # 4 in all; at the limit next time
    f = Fake()
    assert table.admit(f, "9.9.9.9") and b.closed  # over max_connections: b waited longest
    table.set_waiting(d, False)
    table.set_waiting(e, False)
    table.set_waiting(f, False)
    assert not table.admit(Fake(), "1.2.3.4")  # a and d busy: no room, nobody closed
    assert not any(conn.closed for conn in (a, d, e, f))


@pytest.mark.parametrize(
    ("client", "key"),
    [
        (("127.0.0.1", 5000), "127.0.0.1"),
        (("2001:db8:1:2:3:4:5:6", 5000, 0, 0), "2001:db8:1:2::/64"),
        (("::ffff:10.0.0.7", 5000, 0, 0), "10.0.0.7"),
        (None, ""),
    ],
)
def test_clients_are_counted_by_address_and_ipv6_by_its_64_network(client, key) -> None:
    assert client_key(client) == key


def test_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="per_client"):
        ConnectionLimits(per_client=10, max_connections=5)
