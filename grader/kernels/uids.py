"""Sandbox uids: one per running kernel, leased with an ``flock`` so no two kernels ever share one.

Each grader uses ``UID_SLOTS`` uids from ``first_uid()``; the lock of a uid is named after it, so
graders (or test sessions) with different ranges never touch each other's kernels.
"""

import fcntl
import os
import signal
import tempfile
import time
from pathlib import Path

from ..errors import SandboxError
from ..settings import settings

FIRST_UID = 1_900_000_000  # sandbox uids: FIRST_UID + slot, a range no account or container manager uses
UID_SLOTS = 1000
UID_LOCKS = Path("/run/grader-uids")  # one place for every grader on the machine, whatever its TMPDIR
CLEAN = b"clean\n"  # a lock file's content once its holder saw nothing left running as its uid


class UidLease:
    """One sandbox uid, held by this process (an flock on its slot file) until ``release``.

    Between two holders the uid is checked once: nothing may run as it. The holder that releases it
    checks and marks its slot file clean; a holder that was killed leaves no mark, and the next one
    checks instead.
    """

    def __init__(self) -> None:
        first = first_uid()
        locks = _locks()
        locks.mkdir(mode=0o700, exist_ok=True)
        info = locks.lstat()
        if info.st_uid != 0 or not locks.is_dir() or locks.is_symlink() or info.st_mode & 0o077:
            raise SandboxError(f"{locks} must be a folder of root's, mode 0700")
        for slot in range(UID_SLOTS):
            fd = os.open(locks / f"{first + slot}.lock", os.O_RDWR | os.O_CREAT, 0o600)  # by uid: ranges never share
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self.fd, self.uid = fd, first + slot
            if os.pread(fd, len(CLEAN), 0) != CLEAN:  # its last holder was killed before it checked the uid
                kill_processes_of(self.uid)
            os.ftruncate(fd, 0)  # in use: a holder killed from now on leaves the mark unset
            return
        raise SandboxError(f"all {UID_SLOTS} sandbox uids are in use")

    def release(self) -> None:
        """Kill whatever still runs as this uid, then free it for the next kernel (once)."""
        if self.fd >= 0:
            kill_processes_of(self.uid)
            os.pwrite(self.fd, CLEAN, 0)  # checked: the next holder need not scan again
            os.close(self.fd)
            self.fd = -1

    def __repr__(self) -> str:
        return f"UidLease({self.uid})"


def first_uid() -> int:
    """The first of this grader's ``UID_SLOTS`` sandbox uids (``GRADER_SANDBOX_UID`` moves the range)."""
    chosen = settings().sandbox_uid
    return FIRST_UID if chosen is None else chosen


def _locks() -> Path:
    return UID_LOCKS if UID_LOCKS.parent.is_dir() else Path(tempfile.gettempdir()) / "grader-uids"


def sweep_orphans() -> None:
    """Kill what still runs as a sandbox uid no grader holds (its holder was killed before releasing it)."""
    first, locks = first_uid(), _locks()
    running = {uid for pid in os.listdir("/proc") if pid.isdigit()
               and (uid := _uid_of(pid)) is not None and first <= uid < first + UID_SLOTS}
    for uid in sorted(running):
        try:
            fd = os.open(locks / f"{uid}.lock", os.O_RDWR)
        except FileNotFoundError:  # never leased on this machine: no grader holds it
            kill_processes_of(uid)
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # a live grader holds it and cleans it itself
        else:
            kill_processes_of(uid)
        finally:
            os.close(fd)


def _uid_of(pid: str) -> int | None:
    try:
        fd = os.open(f"/proc/{pid}/status", os.O_RDONLY)
    except OSError:
        return None
    try:
        status = os.read(fd, 4096)  # Name, State, ..., Uid: the first lines of it
    except OSError:
        return None
    finally:
        os.close(fd)
    if b"\nState:\tZ" in status or b"\nUid:\t" not in status:
        return None  # a zombie runs nothing; its parent reaps it
    return int(status.split(b"\nUid:\t", 1)[1].split()[0])


def kill_processes_of(uid: int, patience: float = 3.0) -> None:
    """SIGKILL every process running as ``uid`` until none is left (or ``patience`` seconds pass)."""
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        found = [int(pid) for pid in os.listdir("/proc") if pid.isdigit() and _uid_of(pid) == uid]
        if not found:
            return
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.02)
