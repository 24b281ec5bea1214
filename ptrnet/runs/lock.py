"""Claiming a run directory: one training at a time writes into it.

A training claims its run directory (:func:`claim_run_dir`) before it checks or writes anything
there, and holds the claim until it ends. The claim is :data:`~ptrnet.runs.LOCK_FILE` in the
directory, locked with ``flock`` (exclusive, never waited for) and naming its holder: pid, host
and start time. A second training on the same directory, whether it starts at the same moment
or while the first runs, finds the lock taken and is refused with one line naming the holder;
the check of whether the directory already holds a run then happens under the claim, so it
cannot lose a race.

Stale claims: the kernel drops a ``flock`` when the process holding it ends, however it ends
(SIGKILL, a crash), so the file a crashed run leaves behind claims nothing: the next training
(``--resume``) takes it over. A data worker forked by the holder closes its copy of the lock
at once (:func:`os.register_at_fork`), so a worker that outlives its parent does not keep the
claim. On a filesystem without ``flock`` (some network ones) the file's record decides: it is
stale when it names a process no longer alive on this host. A claim released normally removes
the file, and the directory too if the claim created it and nothing else was written.
"""

from __future__ import annotations

import errno
import fcntl
import os
import socket
import time
from contextlib import suppress
from types import TracebackType

from ptrnet.runs import LOCK_FILE, RunDirError

_RECORD_BYTES = 200  # a holder's record is one short line; more is not read
_HELD: set[int] = set()  # descriptors of the claims this process holds
_NO_LOCKS = {errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL}


class RunClaim:
    """A held claim on a run directory; release it with :meth:`release` or ``with``."""

    def __init__(self, run_dir: str, fd: int, created: bool) -> None:
        self.run_dir, self.fd, self.created, self.pid = run_dir, fd, created, os.getpid()
        self.path = os.path.join(run_dir, LOCK_FILE)
        _HELD.add(fd)

    def release(self) -> None:
        """Remove the lock file and drop the claim (in the process that claimed only); then
        remove the directory if the claim created it and it is empty."""
        if self.fd not in _HELD or os.getpid() != self.pid:
            return
        _HELD.discard(self.fd)
        try:
            os.unlink(self.path)  # before the lock is dropped: a waiting claimant re-checks
        finally:
            os.close(self.fd)
        if self.created:
            with suppress(OSError):  # the run wrote something: the directory stays
                os.rmdir(self.run_dir)

    def __enter__(self) -> RunClaim:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.release()


def claim_run_dir(run_dir: str | os.PathLike[str]) -> RunClaim:
    """Claim ``run_dir`` (created if missing) for this process until the claim is released.

    Raises:
        RunDirError: another live process holds the claim (``RUN is in use by another
            training (pid P on host H, started T; see RUN/run.lock): ...``), or the directory
            or its lock file cannot be created.
    """
    run_dir = os.fspath(run_dir)
    try:
        created = not os.path.isdir(run_dir)
        os.makedirs(run_dir, exist_ok=True)
        while True:
            fd = os.open(os.path.join(run_dir, LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o644)
            try:
                _lock(fd, run_dir)
                if _still_at_path(fd, run_dir):
                    break
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)  # the holder released the file as we locked it: claim the new one
        _write_record(fd)
    except OSError as err:
        raise RunDirError(f"cannot claim {run_dir}: {err.strerror or err}") from None
    return RunClaim(run_dir, fd, created)


def _lock(fd: int, run_dir: str) -> None:
    """Lock the open lock file ``fd`` (by ``flock``, or by its record where the filesystem
    has no locks); RunDirError naming the holder when another process holds it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise RunDirError(_in_use(run_dir, _read_record(fd))) from None
    except OSError as err:
        if err.errno not in _NO_LOCKS:
            raise
        record = _read_record(fd)
        if _alive(record):
            raise RunDirError(_in_use(run_dir, record)) from None


def _still_at_path(fd: int, run_dir: str) -> bool:
    """Whether the locked ``fd`` is still the file at the lock's path (a releasing holder
    removes the file just before unlocking it: a lock on the removed file claims nothing)."""
    try:
        now = os.stat(os.path.join(run_dir, LOCK_FILE))
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino)


def _write_record(fd: int) -> None:
    """Write this process's record into the locked file: ``pid PID host HOST since TIME``."""
    since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    record = f"pid {os.getpid()} host {socket.gethostname()} since {since}\n"
    os.ftruncate(fd, 0)
    os.pwrite(fd, record.encode(), 0)


def _read_record(fd: int) -> dict[str, str]:
    """The holder's record in the lock file ``fd`` as ``{"pid", "host", "since"}`` (those
    found; none while the holder has yet to write it)."""
    words = os.pread(fd, _RECORD_BYTES, 0).decode("utf-8", "replace").split()
    return {key: value[:64] for key, value in zip(words[::2], words[1::2], strict=False)}


def _alive(record: dict[str, str]) -> bool:
    """Whether the record names a process that may be alive: one running on this host other
    than this one (a pid reused after a crash), or any on another host, which cannot be checked
    from here. A record without a pid (its writer died before writing it) names none."""
    pid = int(record["pid"]) if record.get("pid", "").isdigit() else 0
    if pid <= 0 or (record.get("host") == socket.gethostname() and pid == os.getpid()):
        return False
    if record.get("host") != socket.gethostname():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def _in_use(run_dir: str, record: dict[str, str]) -> str:
    """The refusal: who holds ``run_dir``, and what to do."""
    pid, host, since = (record.get(key, "?") for key in ("pid", "host", "since"))
    holder = f"pid {pid} on host {host}, started {since}" if record else "one starting now"
    return (
        f"{run_dir} is in use by another training ({holder}; see "
        f"{os.path.join(run_dir, LOCK_FILE)}): wait for it to end, or pass another --out"
    )


def _close_in_child() -> None:
    """In a forked child: close the inherited claims, which the parent alone holds."""
    for fd in _HELD:
        with suppress(OSError):
            os.close(fd)
    _HELD.clear()


os.register_at_fork(after_in_child=_close_in_child)
