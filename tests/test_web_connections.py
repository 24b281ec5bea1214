"""Connection limits of ``ptrnet serve`` (ptrnet/web/connections.py): connections that never
complete a request head are closed, idle ones cannot lock a newcomer out, and light requests
answer while 64 idle and 64 trickling connections are open; clients that never read their
answers hold no heavy slot and are closed after the write timeout; event streams stay within
limits of their own and end after their lifetime. The servers run on loopback, on a free port,
in a thread; every socket a test opens is closed by it."""

from __future__ import annotations

import contextlib
import json
import re
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
from ptrnet.web.guard import GuardLimits  # noqa: E402
from ptrnet.web.lesson import Lessons  # noqa: E402
from ptrnet.web.live_train import LiveTrainer  # noqa: E402
from tests.test_viz import instance, tiny_model  # noqa: E402

LIGHT = b"GET /api/tasks HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
HEAD = b"GET /api/tasks HTTP/1.1\r\nHost: localhost\r\n"  # a head that never ends
SLACK_S = 3.0  # how late a busy 2-core machine may close a connection after its deadline


@contextlib.contextmanager
def guarded_server(
    limits: ConnectionLimits, app=None
) -> Iterator[tuple[tuple[str, int], ConnectionTable]]:
    """``app`` (default: the app without models) on uvicorn with ``ptrnet serve``'s connection
    rules under ``limits``; yields its (host, port) and its table of connections."""
    options = server_options(limits)
    with serving(app or create_app({}, lessons=Lessons()), **options) as address:
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


def predict_request(n: int = 100) -> bytes:
    """``POST /api/predict`` of ``n`` numbers to sort, kept alive: with the trace, an answer
    of about 80 KB."""
    body = json.dumps({"task": "sort", "points": instance("sort", n).round(6).tolist()}).encode()
    head = (
        "POST /api/predict HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


@contextlib.contextmanager
def slow_readers(address, count: int, requests: int) -> Iterator[list[socket.socket]]:
    """``count`` connections with a 1 KiB receive buffer, each sending ``requests`` pipelined
    predictions (from a thread: the server stops reading them) and reading nothing."""
    conns = []
    for _ in range(count):
        conn = socket.socket()
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        conn.connect(address)
        conns.append(conn)
    data = predict_request() * requests

    def send(conn: socket.socket) -> None:
        with contextlib.suppress(OSError):  # closed by the server
            conn.sendall(data)

    threads = [threading.Thread(target=send, args=(conn,), daemon=True) for conn in conns]
    for thread in threads:
        thread.start()
    try:
        yield conns
    finally:
        for conn in conns:
            conn.close()
        for thread in threads:
            thread.join(timeout=10)


def sort_server(connection_limits: ConnectionLimits, guard_limits: GuardLimits):
    """:func:`guarded_server` with a tiny sorting model behind the Guard's ``guard_limits``."""
    app = create_app({"sort": tiny_model("sort")}, limits=guard_limits, lessons=Lessons())
    return guarded_server(connection_limits, app)


def heavy_request(address, source: str = "127.0.0.2") -> bytes:
    """A prediction of 8 numbers on a new connection: its status line."""
    body = json.dumps({"task": "sort", "points": instance("sort", 8).tolist()}).encode()
    head = (
        "POST /api/predict HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    with socket.create_connection(address, 10, source_address=(source, 0)) as conn:
        conn.sendall(head.encode() + body)
        return conn.recv(65536).split(b"\r\n", 1)[0]


def stalled(table: ConnectionTable, count: int) -> None:
    """Wait until ``count`` connections have more unread answer bytes than their transport
    buffers (uvicorn then holds their next answer until the client reads)."""
    deadline = time.monotonic() + 120  # readers pile up slowly on a machine loaded past its cores
    while sum(conn.flow.write_paused for conn in list(table.clients)) < count:
        assert time.monotonic() < deadline, "the slow readers' answers never piled up"
        time.sleep(0.02)


def settled(table: ConnectionTable, count: int) -> None:
    """Wait up to 5 s until the table holds at most ``count`` connections: a client that read
    its answer and closed is dropped when the server sees the close, a moment after."""
    deadline = time.monotonic() + 5
    while len(table.clients) > count and time.monotonic() < deadline:
        time.sleep(0.02)


def test_clients_that_never_read_hold_no_heavy_slot() -> None:
    """Two slow readers (60 pipelined predictions each, nothing read) against 2 heavy slots:
    another client's prediction is answered, not queued into a 503."""
    connection_limits = ConnectionLimits(write_timeout_s=60.0)  # only the Guard acts here
    guard_limits = GuardLimits(heavy_workers=2, queue_timeout_s=1.0)
    with (
        sort_server(connection_limits, guard_limits) as (address, table),
        slow_readers(address, count=2, requests=60) as slow,
    ):
        stalled(table, 2)
        assert [heavy_request(address) for _ in range(3)] == [b"HTTP/1.1 200 OK"] * 3
        settled(table, len(slow))  # the answered client's close may still be in flight
        assert len(table.clients) == len(slow)  # still stalled: the write timeout is 60 s


def test_an_answer_not_read_within_the_write_timeout_closes_the_connection() -> None:
    connection_limits = ConnectionLimits(write_timeout_s=1.0)
    with (
        sort_server(connection_limits, GuardLimits()) as (address, table),
        slow_readers(address, count=2, requests=60) as slow,
    ):
        stalled(table, 2)
        started = time.monotonic()
        deadline = started + connection_limits.write_timeout_s + SLACK_S
        while table.clients and time.monotonic() < deadline:  # watched here: reading would
            time.sleep(0.02)  # let the answers through
        print(f"closed {time.monotonic() - started:.2f} s after their answers stalled (limit 1 s)")
        assert not table.clients and not table.waiting
        assert not wait_closed(slow, time.monotonic() + SLACK_S)  # the clients see it closed
        assert heavy_request(address, "127.0.0.1") == b"HTTP/1.1 200 OK"


class RunningJob:
    """A training job that runs for ever, with ``count`` events so far (no training)."""

    def __init__(self, count: int) -> None:
        self.events = [{"id": k, "type": "progress", "step": k} for k in range(count)]

    def ended(self) -> bool:
        return False

    def events_from(self, index: int) -> list[dict]:
        return self.events[index:]


def events_app(count: int, lifetime_s: float = 60.0):
    """The app (no models) with a training job that never ends and ``count`` events."""
    trainer = LiveTrainer()
    trainer.job = RunningJob(count)  # type: ignore[assignment]
    limits = GuardLimits(stream_lifetime_s=lifetime_s)
    return create_app({}, trainer=trainer, limits=limits, lessons=Lessons())


def open_stream(address, source: str, last_id: int | None = None) -> tuple[socket.socket, bytes]:
    """A connection that asks for the event stream (after ``last_id``), and the first bytes of
    its answer, up to the end of the answer's head at least."""
    extra = "" if last_id is None else f"Last-Event-ID: {last_id}\r\n"
    request = f"GET /api/train/events HTTP/1.1\r\nHost: localhost\r\n{extra}\r\n"
    conn = socket.create_connection(address, 10, source_address=(source, 0))
    conn.sendall(request.encode())
    head = b""
    while b"\r\n\r\n" not in head and (chunk := conn.recv(65536)):
        head += chunk
    return conn, head


def test_event_streams_have_limits_of_their_own_and_lock_no_one_out() -> None:
    """256 streams from one address made every other request a 503 until the training ended:
    streams counted as busy connections. Now each address has 2 streams here, 3 in all."""
    limits = ConnectionLimits(per_client=4, max_connections=6, streams_per_client=2, max_streams=3)
    opened: list[tuple[socket.socket, bytes]] = []
    try:
        with guarded_server(limits, events_app(3)) as (address, table):
            opened += [open_stream(address, "127.0.0.1") for _ in range(8)]
            opened += [open_stream(address, "127.0.0.2") for _ in range(2)]
            statuses = [head.split(b"\r\n", 1)[0] for _, head in opened]
            ok, busy = b"HTTP/1.1 200 OK", b"HTTP/1.1 503 Service Unavailable"
            assert statuses == [ok] * 2 + [busy] * 6 + [ok, busy]
            assert all(b"retry-after: 2" in head for _, head in opened[2:8])
            deadline = time.monotonic() + SLACK_S  # the refused ones close after their answer
            while table.clients and time.monotonic() < deadline:
                time.sleep(0.02)
            assert len(table.streams) == 3 and not table.clients
            for source in ("127.0.0.1", "127.0.0.2", "127.0.0.3"):  # streams block no one
                assert [light_request(address, source)[0] for _ in range(5)] == [ok] * 5
    finally:
        for conn, _ in opened:
            conn.close()


def read_all(stream: tuple[socket.socket, bytes]) -> bytes:
    """The whole answer of an :func:`open_stream`: read until the server closes it."""
    conn, data = stream
    with contextlib.closing(conn):
        while chunk := conn.recv(65536):
            data += chunk
    return data


def test_an_event_stream_ends_after_its_lifetime_and_resumes_after_last_event_id() -> None:
    """The stream ends cleanly (the last chunk, then the connection closes) and the browser's
    EventSource, reconnecting with the last id it saw, gets only the events after it."""
    with guarded_server(ConnectionLimits(), events_app(3, lifetime_s=0.5)) as (address, table):
        first = read_all(open_stream(address, "127.0.0.1"))
        assert first.endswith(b"\r\n0\r\n\r\n")  # a complete chunked answer
        assert [int(x) for x in re.findall(rb"^id: (\d+)$", first, re.MULTILINE)] == [0, 1, 2]
        resumed = read_all(open_stream(address, "127.0.0.1", last_id=1))
        assert re.findall(rb"^id: (\d+)$", resumed, re.MULTILINE) == [b"2"]
        assert not table.streams


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


def test_the_table_counts_streams_apart_from_connections() -> None:
    table = ConnectionTable(ConnectionLimits(per_client=1, streams_per_client=1, max_streams=2))
    a, b, c = Fake(), Fake(), Fake()
    assert table.admit(a, "1.2.3.4")
    table.set_waiting(a, False)
    assert table.open_stream(a) and a not in table.clients  # out of the connections' count
    assert table.admit(b, "1.2.3.4")  # so the address has room for a connection
    table.set_waiting(b, False)
    assert not table.open_stream(b) and table.clients[b] == "1.2.3.4"  # 1 stream per address
    assert table.admit(c, "5.6.7.8") and table.open_stream(c)
    table.remove(a)
    assert list(table.streams) == [c] and not any(x.closed for x in (a, b, c))


def test_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="per_client"):
        ConnectionLimits(per_client=10, max_connections=5)
    with pytest.raises(ValueError, match="streams_per_client"):
        ConnectionLimits(streams_per_client=5, max_streams=4)
