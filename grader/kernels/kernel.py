"""One grading kernel: a fresh IPython kernel in a sandbox (``grader.kernels.sandbox``), over IPC sockets."""

import asyncio
import logging
import os
import subprocess
import sys
import tempfile
from time import monotonic

import zmq
import zmq.asyncio
from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.kernelspec import KernelSpec
from jupyter_client.manager import AsyncKernelManager
from traitlets import Bool, Int, Type, Unicode

from ..errors import GraderError, KernelStartTimeout, SandboxError
from . import zygote
from .channels import CONTROL_QUEUE, MAX_MESSAGE, CappedKernelClient, burst
from .cleanup import remove_tree
from .folders import run_folder
from .mode import sandbox_mode
from .uids import UidLease

# no history database to open (nothing reads it), and none written should it be opened anyway; messages packed
# by the standard json module whatever else is installed: with orjson (langgraph brings it in), jupyter_client
# packs with it, and a print flood killed the kernel under its memory limit (tests/grader/test_hostile.py);
# tracebacks without colours, which the grader removes anyway: colouring one took 11-13 ms of the kernel's time,
# and a blank notebook raises in every test cell (2-3 ms without)
KERNEL_ARGUMENTS = ["--HistoryManager.enabled=False", "--HistoryManager.hist_file=:memory:",
                    "--Session.packer=json", "--Session.unpacker=json",
                    "--IPKernelApp.kernel_class=grader.kernels.ipython.GradingKernel",
                    "--InteractiveShell.colors=nocolor"]
RESEND = 0.2  # seconds after a kernel_info reply without its idle status before another is sent
CHECK_EVERY = 1.0  # seconds between two kernel_info requests while the kernel has not replied
MAX_SOCKETS_PATH = 100  # an IPC socket's path (sockets + "/k-1") must fit in 107 bytes
logger = logging.getLogger(__name__)


class SandboxedKernelManager(AsyncKernelManager):
    """A kernel manager that starts the kernel through ``python -m grader.kernels.sandbox``; its own control socket is
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
    def kernel_spec(self) -> KernelSpec:
        """ipykernel's own spec in this interpreter, naming the grader's provisioner (grader.kernels.provisioning).

        Made here, not looked up: a search of the kernel folders cost 50 ms of each self-grade (it imports IPython),
        and could find a user's own ``python3`` spec that runs another interpreter.
        """
        if self._kernel_spec is None:
            name = "grader-zygote" if self.forked else "grader-sandbox"
            self._kernel_spec = KernelSpec(
                argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"], language="python",
                display_name="Python 3 (grader)", interrupt_mode="signal",
                metadata={"kernel_provisioner": {"provisioner_name": name}})
        return self._kernel_spec

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        command = super().format_kernel_cmd(extra_arguments)
        return [sys.executable, "-m", "grader.kernels.sandbox", "--mode", self.mode, "--memory", str(self.memory_limit),
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
            await self.km.start_kernel(cwd=self.workdir, extra_arguments=KERNEL_ARGUMENTS,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            await self._connect(timeout)
        except BaseException:
            await self.stop()
            raise
        return self

    async def restart(self, timeout: float = 60.0) -> None:
        """Replace a dead or stuck kernel process with a fresh one, in the same sandbox, and reconnect."""
        self.client.stop_channels()
        await self.km.restart_kernel(now=True)
        await self._connect(timeout)

    async def _connect(self, timeout: float) -> None:
        self.kc = self.km.client()
        # only shell and iopub, both capped: no stdin (input() then fails at once instead of waiting for an
        # answer), no control or heartbeat socket a kernel could flood (interrupts and shutdowns go by signal)
        self.kc.start_channels(stdin=False, hb=False, control=False)
        if not await self.answers(timeout):
            raise KernelStartTimeout(f"the kernel did not answer within {timeout:g} s")

    async def answers(self, timeout: float) -> bool:
        """Whether the kernel answers a ``kernel_info`` request on both channels (its reply and its idle status)
        within ``timeout`` seconds; SandboxError if it dies first.

        jupyter_client's ``wait_for_ready`` ends with 0.2 s of silence on iopub, every time; this ends
        as soon as its own request's idle status arrives. A request whose reply came without a status
        was published before the iopub subscription was in place: another is sent (``RESEND``).
        """
        kc = self.client
        shell, iopub = kc.shell_channel, kc.iopub_channel
        poller = zmq.asyncio.Poller()
        poller.register(shell.socket, zmq.POLLIN)
        poller.register(iopub.socket, zmq.POLLIN)
        sent = {kc.kernel_info()}
        replied = idle = False
        now = monotonic()
        deadline, resend = now + timeout, now + CHECK_EVERY
        while not (replied and idle):
            if now >= deadline:
                return False
            if now >= resend:
                if not await self.km.is_alive():
                    raise SandboxError("the kernel died before it answered")
                sent.add(kc.kernel_info())
                resend = now + (RESEND if replied else CHECK_EVERY)
            await poller.poll(timeout=1000 * (min(deadline, resend) - now))
            for msg in burst(iopub):
                if msg["parent_header"].get("msg_id") in sent and msg["msg_type"] == "status":
                    idle = idle or msg["content"].get("execution_state") == "idle"
            for msg in burst(shell):
                if msg["parent_header"].get("msg_id") in sent and not replied:
                    replied, resend = True, min(resend, monotonic() + RESEND)
            now = monotonic()
        return True

    @property
    def client(self) -> CappedKernelClient:
        """The connected kernel client."""
        assert isinstance(self.kc, CappedKernelClient), "the kernel is not started"
        return self.kc

    async def kill(self) -> None:
        """Kill the kernel's process now (its sandbox's processes die with it); ``stop`` still has to follow."""
        if self.kc is not None:
            self.kc.stop_channels()
            self.kc = None
        if self.km.has_kernel and self.km.provisioner is not None:
            await self.km.provisioner.kill()

    async def stop(self) -> None:
        """Kill the kernel and everything it started, and remove its folders (their clean-up on a thread)."""
        try:
            if self.kc is not None:
                self.kc.stop_channels()
            if self.km.has_kernel:
                await self.km.shutdown_kernel(now=True)
        finally:
            try:
                await asyncio.to_thread(self._release)
            except RuntimeError:  # the interpreter is exiting (a supply closed at exit): no thread starts now
                self._release()

    def _release(self) -> None:
        """Free the uid once nothing runs as it any more, and remove the folders."""
        if self.lease is not None:
            self.lease.release()
        remove_tree(self.folder)

    def __repr__(self) -> str:
        return f"Kernel({self.folder}, {self.mode}, alive={self.km.has_kernel})"


async def start_kernel(memory_limit: int) -> Kernel:
    """A started kernel. The one place a failed start is tried once more: a zygote killed between two kernels
    (a basic-mode kernel can kill it) is started again on the second try."""
    try:
        return await Kernel(memory_limit).start()
    except (RuntimeError, TimeoutError, OSError):
        logger.debug("a kernel failed to start; once more", exc_info=True)
        return await Kernel(memory_limit).start()
