"""A zygote: one process per grader process with IPython, ipykernel and the course already imported.

Starting a kernel is mostly starting Python and importing; the zygote does that once and
then forks one kernel per submission. Each child goes through the same sandbox as an exec'd
launcher (``grader.kernels.sandbox.launch``), then becomes an ipykernel in place instead of exec'ing
one. jupyter_client drives it through ``grader.kernels.provisioning.ZygoteProvisioner``.

The zygote never runs student code: it runs as the grader, imports, forks and reaps. It dies
with the grader process that started it, and a child it forked dies with it.
``GRADER_ZYGOTE=0`` turns it off: every kernel is then a fresh ``python -m grader.kernels.sandbox``.
Besides ``PRELOAD``, it imports the modules the lessons being graded import (``preload``, from the
sources only: ``grader.grading.preload``), so a kernel does not import them again.
"""

import importlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
from collections.abc import Sequence
from types import FrameType, ModuleType

from ..course_config import course_packages
from ..errors import SandboxError
from ..settings import settings
from . import sandbox
from .folders import run_folder

PRELOAD = ("ipykernel.kernelapp", "ipykernel.ipkernel", "ipykernel.zmqshell", "ipykernel.debugger", "IPython",
           "IPython.core.debugger", "grader",
           # what a kernel imports as it starts and at its first check
           "IPython.core.completerlib", "IPython.core.oinspect", "IPython.extensions.storemagic", "faulthandler",
           "tornado.platform.asyncio", "concurrent.futures.thread", "grader.grading.probe", "grader.kernels.ipython",
           "orjson", "hashlib")  # and at its first check on generated inputs (grader.grading.values.digest)

START_TIMEOUT = 120.0  # seconds for the zygote to import everything


def enabled() -> bool:
    """Whether kernels are forked from a zygote (``GRADER_ZYGOTE``, default 1)."""
    return settings().zygote_enabled


def start_in_process(command: list[str], env: dict[str, str]) -> None:
    """Become the kernel ``command`` (``python -m ipykernel_launcher ARGS``) in this already-warm process."""
    os.environ.clear()
    os.environ.update(env)
    random.seed()  # no two kernels share the zygote's random state
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD):
        signal.signal(signum, signal.SIG_DFL)
    arguments = command[command.index("ipykernel_launcher") + 1:]
    sys.argv = [command[0], *arguments]
    from ipykernel import kernelapp

    kernelapp.launch_new_instance(argv=arguments)
    os._exit(0)


def _import(name: str) -> None:
    """Import a module a lesson imports, if it is one: ``m.n`` may name a class of ``m``; a failure is the kernel's
    to meet, as it would without the zygote."""
    parent, _, attribute = name.rpartition(".")
    found = getattr(sys.modules[parent], attribute, None) if parent in sys.modules else None
    if found is not None and not isinstance(found, ModuleType):
        return
    try:
        importlib.import_module(name)
    except Exception:  # noqa: BLE001, S110 - not importable here: the kernel imports it, or fails, itself
        pass


def _format_a_traceback() -> None:
    """Format one traceback as a kernel's IPython does: what that builds on first use (above all ``inspect``'s index
    of every module's file) is then built once here, not in every kernel that shows an error."""
    from IPython.core.ultratb import AutoFormattedTB

    try:
        int("a traceback formatted before any kernel is forked")
    except ValueError as error:
        AutoFormattedTB(mode="Context", theme_name="linux").structured_traceback(type(error), error,
                                                                                 error.__traceback__)


def _reap(signum: int, frame: FrameType | None) -> None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def serve(fd: int, parent: int) -> None:
    """The zygote's loop: first a JSON line of modules to import, then one JSON line of launcher arguments in,
    one child pid out, until end of file."""
    sandbox.die_with_parent()
    if os.getppid() != parent:
        os._exit(1)
    if sys.path and sys.path[0] in ("", os.getcwd()):  # as ipykernel_launcher does; the kernel adds its own
        del sys.path[0]
    sys.modules["debugpy"] = None  # type: ignore[assignment]  # a grading kernel is never debugged: no 60 ms import
    for name in (*PRELOAD, *course_packages()):  # and the course's own packages (``course_config``)
        importlib.import_module(name)
    del sys.modules["debugpy"]  # ipykernel has gone without it; a cell may still import it
    signal.signal(signal.SIGCHLD, _reap)
    channel = socket.socket(fileno=fd)
    requests = channel.makefile("rb")
    for name in json.loads(requests.readline() or "[]"):
        _import(str(name))
    _format_a_traceback()
    channel.sendall(b"ready\n")
    zygote = os.getpid()
    for line in requests:
        child = os.fork()
        if child == 0:
            try:
                requests.close()  # both, or the descriptor stays open in the kernel
                channel.close()
                args = sandbox.parse(json.loads(line))
                args.parent, args.start = zygote, start_in_process
                sandbox.launch(args)
            finally:
                os._exit(127)
        channel.sendall(b"%d\n" % child)
    os._exit(0)


class Zygote:
    """The grader side: start the zygote, and ask it for one forked launcher per kernel."""

    def __init__(self, home: str, modules: Sequence[str] = ()) -> None:
        ours, theirs = socket.socketpair()
        env = {**sandbox.KERNEL_ENV, "HOME": home}  # what the preloaded modules see: the kernels' environment
        self.process = subprocess.Popen(
            [sys.executable, "-m", "grader.kernels.zygote", str(os.getpid()), str(theirs.fileno())],
            pass_fds=[theirs.fileno()], env=env, cwd=home, start_new_session=True,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        theirs.close()
        self.channel, self.replies = ours, ours.makefile("rb")
        self.channel.sendall(json.dumps(list(modules)).encode() + b"\n")
        self.ready = False  # it imports on its own while the grader goes on; the first fork waits for it

    def wait_ready(self) -> None:
        """Wait until the zygote has imported everything (SandboxError past ``START_TIMEOUT``)."""
        if self.ready:
            return
        self.channel.settimeout(START_TIMEOUT)  # a module that hangs as it is imported
        try:
            ready = self.replies.readline() == b"ready\n"
        except TimeoutError:
            ready = False
        if not ready:
            self.close()
            raise SandboxError(f"the kernel zygote did not start within {START_TIMEOUT:g} s")
        self.channel.settimeout(None)
        self.ready = True

    def alive(self) -> bool:
        """Whether the zygote still runs (a basic-mode kernel may have killed it)."""
        return self.process.poll() is None

    def fork(self, argv: list[str]) -> int:
        """A new child of the zygote running ``grader.kernels.sandbox`` with ``argv``; its pid."""
        self.wait_ready()
        self.channel.sendall(json.dumps(argv).encode() + b"\n")
        reply = self.replies.readline()
        if not reply:
            raise SandboxError("the kernel zygote died")
        return int(reply)

    def close(self) -> None:
        """Stop the zygote (its children die with it)."""
        self.channel.close()
        self.process.kill()
        self.process.wait()


_zygotes: dict[int, Zygote] = {}
_modules: tuple[str, ...] = ()


def preload(modules: Sequence[str]) -> None:
    """The modules the zygote this process starts next imports besides ``PRELOAD`` (``grader.grading.preload``).

    A zygote already running keeps what it has: stopping it would stop its kernels.
    """
    global _modules
    _modules = tuple(modules)


def zygote() -> Zygote:
    """This process's zygote, started (or restarted) on demand, stopped when the process exits."""
    import multiprocessing.util

    pid = os.getpid()
    if pid not in _zygotes or not _zygotes[pid].alive():
        _zygotes[pid] = Zygote(str(run_folder()), _modules)
        multiprocessing.util.Finalize(None, _zygotes[pid].close, exitpriority=5)
    return _zygotes[pid]


def release() -> None:
    """Stop this process's zygote now, if it has one (a batch's client, once its reference runs are done)."""
    found = _zygotes.pop(os.getpid(), None)
    if found is not None:
        found.close()


if __name__ == "__main__":
    serve(int(sys.argv[2]), int(sys.argv[1]))
