"""The grading kernel: a fresh IPython kernel in a sandbox (``grader.sandbox``), over IPC sockets.

``KernelSupply`` keeps one event loop for a whole batch worker and boots the next kernel
while the current one works, so a submission rarely waits for a kernel to start.

Every grader process keeps its kernels' folders in one run folder,
``$GRADER_SANDBOX_DIR`` (default: the system's temporary folder) ``/grader-PID-START-*``,
removed when the process exits and, if it was killed, by the next grader to start.
"""

import asyncio
import atexit
import fcntl
import functools
import logging
import multiprocessing.util
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import zmq
from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.connect import channel_socket_types
from jupyter_client.kernelspec import KernelSpec
from jupyter_client.manager import AsyncKernelManager
from traitlets import Bool, Int, Type, Unicode

from . import sandbox, zygote
from .cleanup import remove_tree
from .errors import GraderError, InvalidSetting, SandboxError
from .sandbox import KERNEL_ENV

__all__ = ["KERNEL_ENV", "Kernel", "KernelSupply", "sandbox_mode", "start_worker_supply", "stop_worker_supply",
           "worker_supply"]

FIRST_UID = 1_900_000_000  # sandbox uids: FIRST_UID + slot, a range no account or container manager uses
UID_SLOTS = 1000
UID_LOCKS = Path("/run/grader-uids")  # one place for every grader on the machine, whatever its TMPDIR
MAX_SOCKETS_PATH = 100  # an IPC socket's path (sockets + "/k-1") must fit in 107 bytes
CONTROL_QUEUE = 8  # unread control messages queued at most (each under MAX_MESSAGE)
MAX_MESSAGE = 4 * 1024 ** 2  # bytes of one message part from a kernel; far above any output cap
T = TypeVar("T")
logger = logging.getLogger(__name__)


def _libc_can_isolate() -> bool:
    """Whether this process may create pid, mount and network namespaces (tried in a throwaway child)."""
    child = os.fork()
    if child == 0:
        try:
            sandbox.unshare(sandbox.CLONE_NEWPID | sandbox.CLONE_NEWNS | sandbox.CLONE_NEWNET)
            os._exit(0)
        except BaseException:  # noqa: BLE001 - the child must never return into the grader
            os._exit(1)
    return os.waitpid(child, 0)[1] == 0


@functools.cache
def sandbox_mode() -> str:
    """``full`` (root with namespaces) or ``basic``; ``GRADER_SANDBOX=basic`` forces basic."""
    wanted = os.environ.get("GRADER_SANDBOX", "auto")
    if wanted not in ("auto", "full", "basic"):
        raise InvalidSetting(f"GRADER_SANDBOX must be auto, full or basic, not {wanted!r}")
    possible = os.geteuid() == 0 and _libc_can_isolate()
    if wanted == "full" and not possible:
        raise SandboxError("GRADER_SANDBOX=full needs root and pid, mount and network namespaces")
    return "basic" if wanted == "basic" or not possible else "full"


def _base() -> Path:
    return Path(os.environ.get("GRADER_SANDBOX_DIR") or tempfile.gettempdir())


def _start_time(pid: int) -> str | None:
    """A process's start time in clock ticks since boot (with its pid, it names one process), or None."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def sweep_stale(base: Path) -> list[Path]:
    """Remove the run folders of grader processes that are gone (killed before they could clean up)."""
    removed = []
    for folder in base.glob("grader-*-*-*"):
        match = re.fullmatch(r"grader-(\d+)-(\d+)-\w+", folder.name)
        try:
            mine = folder.lstat().st_uid == os.geteuid() and folder.is_dir() and not folder.is_symlink()
        except OSError:
            continue
        if match and mine and _start_time(int(match[1])) != match[2] and remove_tree(folder):
            removed.append(folder)
    return removed


_run_folders: dict[int, Path] = {}


def run_folder() -> Path:
    """This process's run folder (mode 0700), created on first use after sweeping stale ones."""
    pid = os.getpid()
    if pid not in _run_folders:
        base = _base()
        base.mkdir(parents=True, exist_ok=True)
        sweep_stale(base)
        folder = Path(tempfile.mkdtemp(prefix=f"grader-{pid}-{_start_time(pid)}-", dir=base))
        _run_folders[pid] = folder
        multiprocessing.util.Finalize(None, remove_tree, args=(folder,), exitpriority=0)
    return _run_folders[pid]


class UidLease:
    """One sandbox uid, held by this process (an flock on its slot file) until ``release``."""

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
            kill_processes_of(self.uid)  # left behind by a grader that was killed
            return
        raise SandboxError(f"all {UID_SLOTS} sandbox uids are in use")

    def release(self) -> None:
        """Kill whatever still runs as this uid, then free it for the next kernel (once)."""
        if self.fd >= 0:
            kill_processes_of(self.uid)
            os.close(self.fd)
            self.fd = -1

    def __repr__(self) -> str:
        return f"UidLease({self.uid})"


def first_uid() -> int:
    """The first of this grader's ``UID_SLOTS`` sandbox uids (``GRADER_SANDBOX_UID`` moves the range)."""
    return int(os.environ.get("GRADER_SANDBOX_UID", FIRST_UID))


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
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    if "\nState:\tZ" in status:
        return None  # a zombie runs nothing; its parent reaps it
    return int(status.split("\nUid:\t", 1)[1].split()[0])


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


class CappedKernelClient(AsyncKernelClient):
    """A kernel client whose shell and iopub sockets refuse any message part over ``MAX_MESSAGE`` bytes.

    ZeroMQ drops the connection before it reads such a part, so a kernel that prints 200 MB at
    once costs the grader nothing. A dropped connection is not made again by ZeroMQ:
    ``refused`` tells (from the socket's monitor) and ``reconnect`` makes a new one.
    """

    def __init__(self, **kwargs: Any) -> None:
        self._monitors: dict[str, tuple[zmq.Socket[Any], zmq.Socket[Any]]] = {}  # channel: (monitor, its shadow)
        super().__init__(**kwargs)

    def _capped(self, channel: str, identity: bytes | None) -> zmq.Socket[Any]:
        sock = self.context.socket(channel_socket_types[channel])
        sock.linger = 1000
        sock.maxmsgsize = MAX_MESSAGE  # set before connecting: libzmq copies it into the connection
        if identity:
            sock.identity = identity
        # pyzmq names a monitor after the socket's fd, which a socket closed a moment ago may still hold
        monitor = sock.get_monitor_socket(zmq.EVENT_DISCONNECTED, addr=f"inproc://grader-monitor.{uuid.uuid4().hex}")
        self._close_monitor(channel)
        self._monitors[channel] = (monitor, zmq.Socket.shadow(monitor))  # the shadow is polled without a loop
        sock.connect(self._make_url(channel))
        return sock

    def _close_monitor(self, channel: str) -> None:
        if channel in self._monitors:
            self._monitors.pop(channel)[0].close(linger=0)

    def connect_iopub(self, identity: bytes | None = None) -> zmq.Socket[Any]:
        sock = self._capped("iopub", identity)
        sock.setsockopt(zmq.SUBSCRIBE, b"")
        return sock

    def connect_shell(self, identity: bytes | None = None) -> zmq.Socket[Any]:
        return self._capped("shell", identity)

    def refused(self, channel: str) -> bool:
        """Whether ``channel`` ("shell" or "iopub") lost its connection since it was made."""
        watched = self._monitors.get(channel)
        return watched is not None and bool(watched[1].poll(0))

    def reconnect(self, channel: str) -> None:
        """Replace ``channel``'s socket with a new connection; what the kernel sent meanwhile is lost."""
        getattr(self, f"{channel}_channel").close()
        setattr(self, f"_{channel}_channel", None)
        getattr(self, f"{channel}_channel")  # the property connects a new socket

    def stop_channels(self) -> None:
        super().stop_channels()
        for channel in list(self._monitors):
            self._close_monitor(channel)


class SandboxedKernelManager(AsyncKernelManager):
    """A kernel manager that starts the kernel through ``python -m grader.sandbox``; its own control socket is
    capped like the client's sockets."""

    memory_limit = Int(2 * 1024 ** 3, help="Address-space limit of the kernel, in bytes (0: none)")
    mode = Unicode("basic", help="full: own uid and namespaces (root); basic: limits only")
    uid = Int(0, help="The sandbox uid (full mode)")
    box = Unicode(help="The kernel's own folder: its connection file and work folder")
    root = Unicode(help="An empty folder the launcher builds the kernel's root on (full mode)")
    sockets = Unicode(help="The folder of the kernel's IPC sockets")
    forked = Bool(True, help="Fork the kernel from this process's zygote instead of starting a new Python")
    client_factory = Type(CappedKernelClient, klass=AsyncKernelClient)

    def _connect_control_socket(self) -> None:
        """jupyter_client's control socket, with the cap on message size and a short queue of unread messages."""
        if self._control_socket is None:
            sock = self.context.socket(zmq.DEALER)
            sock.linger, sock.maxmsgsize, sock.rcvhwm = 100, MAX_MESSAGE, CONTROL_QUEUE
            sock.connect(self._make_url("control"))
            self._control_socket = sock

    @property
    def kernel_spec(self) -> KernelSpec | None:
        """The python3 kernel spec, naming the grader's provisioner (grader.provisioning)."""
        spec = super().kernel_spec
        if spec is not None:
            name = "grader-zygote" if self.forked else "grader-sandbox"
            spec.metadata = {**spec.metadata, "kernel_provisioner": {"provisioner_name": name}}
        return spec

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        command = super().format_kernel_cmd(extra_arguments)
        return [sys.executable, "-m", "grader.sandbox", "--mode", self.mode, "--memory", str(self.memory_limit),
                "--uid", str(self.uid), "--parent", str(os.getpid()), "--box", self.box, "--sockets", self.sockets,
                "--workdir", os.path.join(self.box, "work"), "--root", self.root, "--", *command]


class Kernel:
    """One kernel process: its manager, its sandbox uid and the folders it owns."""

    def __init__(self, memory_limit: int) -> None:
        self.mode = sandbox_mode()
        self.folder = tempfile.mkdtemp(prefix="k", dir=run_folder())
        box, sockets, root = (os.path.join(self.folder, name) for name in ("b", "s", "r"))
        if len(os.fsencode(sockets)) > MAX_SOCKETS_PATH:
            remove_tree(self.folder)
            raise GraderError(f"{sockets}: too long for IPC sockets; set GRADER_SANDBOX_DIR to a short path")
        self.lease = UidLease() if self.mode == "full" else None
        self.workdir = os.path.join(box, "work")
        for path in (box, self.workdir, sockets, root):
            os.mkdir(path, 0o700)
        if self.lease is not None:
            for path in (box, self.workdir):
                os.chown(path, self.lease.uid, self.lease.uid)
        self.km = SandboxedKernelManager(
            kernel_name="python3", transport="ipc", ip=os.path.join(sockets, "k"), memory_limit=memory_limit,
            connection_file=os.path.join(self.folder, "kernel.json"), mode=self.mode,
            uid=self.lease.uid if self.lease else 0, box=box, sockets=sockets, root=root, forked=zygote.enabled())
        self.kc: AsyncKernelClient | None = None

    async def start(self, timeout: float = 60.0) -> "Kernel":
        """Start the kernel and connect a client (``self.kc``) that has seen it answer.

        The start returns once the kernel's sockets are bound (``grader.provisioning``), so the
        client connects at once; connecting here means a spare kernel is ready to run cells when
        it is taken. If the kernel cannot start, nothing of it is left (RuntimeError, TimeoutError).
        """
        try:
            await self.km.start_kernel(cwd=self.workdir, extra_arguments=["--HistoryManager.hist_file=:memory:"],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.kc = self.km.client()
            # only shell and iopub, both capped: no stdin (input() then fails at once instead of waiting for an
            # answer), no control or heartbeat socket a kernel could flood (interrupts and shutdowns go by signal)
            self.kc.start_channels(stdin=False, hb=False, control=False)
            await self.kc.wait_for_ready(timeout=timeout)
        except BaseException:
            await self.stop()
            raise
        return self

    async def stop(self) -> None:
        """Kill the kernel and everything it started, and remove its folders."""
        try:
            if self.kc is not None:
                self.kc.stop_channels()
            if self.km.has_kernel:
                await self.km.shutdown_kernel(now=True)
        finally:
            if self.lease is not None:
                self.lease.release()
            remove_tree(self.folder)

    def __repr__(self) -> str:
        return f"Kernel({self.folder}, {self.mode}, alive={self.km.has_kernel})"


async def _discard(spare: "asyncio.Task[Kernel]") -> None:
    """Stop a spare kernel, booted or still booting (a cancelled start leaves nothing behind)."""
    if not spare.done():
        spare.cancel()
    try:
        kernel = await spare
    except (asyncio.CancelledError, RuntimeError, TimeoutError):
        return
    await kernel.stop()


async def start_kernel(memory_limit: int) -> Kernel:
    """A started kernel. The one place a failed start is tried once more: a zygote killed between two kernels
    (a basic-mode kernel can kill it) is started again on the second try."""
    try:
        return await Kernel(memory_limit).start()
    except (RuntimeError, TimeoutError, OSError):
        logger.debug("a kernel failed to start; once more", exc_info=True)
        return await Kernel(memory_limit).start()


_worker_supply: "KernelSupply | None" = None


def start_worker_supply(memory_limit: int) -> None:
    """Process-pool initializer: give this worker process a warm KernelSupply, closed when it exits."""
    global _worker_supply
    _worker_supply = KernelSupply(memory_limit)
    multiprocessing.util.Finalize(None, _worker_supply.close, exitpriority=10)


def stop_worker_supply() -> None:
    """Close this worker process's KernelSupply, if it has one (a Dask worker closing, ``grader.cluster``)."""
    global _worker_supply
    supply, _worker_supply = _worker_supply, None
    if supply is not None:
        supply.close()


def worker_supply() -> "KernelSupply | None":
    """This worker process's KernelSupply, or None outside a pool worker."""
    return _worker_supply


class KernelSupply:
    """Started kernels on demand, one event loop for all of them; warm=True boots the next one early.

    The next kernel boots as a task on the supply's loop while the current notebook runs on it.
    """

    def __init__(self, memory_limit: int, warm: bool = True) -> None:
        self.memory_limit, self.warm = memory_limit, warm
        self.runner = asyncio.Runner()
        self.spare: asyncio.Task[Kernel] | None = None
        atexit.register(self.close)

    async def take(self) -> Kernel:
        """A started kernel for one notebook; the caller stops it."""
        spare, self.spare, kernel = self.spare, None, None
        if spare is not None:
            try:
                kernel = await spare
            except (RuntimeError, TimeoutError, OSError):  # the spare failed to start: a fresh one
                kernel = None
            if kernel is not None and not await kernel.km.is_alive():  # it died waiting (killed with its zygote)
                await kernel.stop()
                kernel = None
        kernel = kernel or await start_kernel(self.memory_limit)
        if self.warm:
            self.spare = asyncio.ensure_future(Kernel(self.memory_limit).start())
        return kernel

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on this supply's event loop."""
        return self.runner.run(coroutine)

    def close(self) -> None:
        """Stop the spare kernel and close the loop; no kernel outlives the supply."""
        if self.spare is not None:
            spare, self.spare = self.spare, None
            self.runner.run(_discard(spare))
        self.runner.close()
        atexit.unregister(self.close)
