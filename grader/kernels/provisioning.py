"""jupyter_client's kernel-provisioner hook for sandboxed kernels.

``SandboxProvisioner`` starts ``python -m grader.kernels.sandbox`` as LocalProvisioner would, and after
each launch (a restart too) waits until the kernel has bound its IPC sockets, then takes their
folder back from the kernel's uid: the kernel keeps listening on them but can no longer replace
one with a link to another socket on the machine, which the grader (root) would then connect to.
``ZygoteProvisioner`` forks the launcher from this process's zygote instead (``grader.kernels.zygote``).
"""

import asyncio
import os
import select
import signal
import time
from typing import Any

from jupyter_client.connect import KernelConnectionInfo
from jupyter_client.provisioning import LocalProvisioner

from ..errors import KernelStartTimeout, SandboxError
from .zygote import zygote

STARTUP_TIMEOUT = 60.0
KILL_WAIT = 5.0  # seconds for a killed kernel to be gone, as jupyter_client waits


class SandboxProvisioner(LocalProvisioner):
    """A LocalProvisioner that returns from a launch once the kernel's sockets are bound and locked."""

    async def post_launch(self, **kwargs: Any) -> None:
        """Wait for the kernel's sockets (RuntimeError if it dies, TimeoutError), then take their folder back."""
        await super().post_launch(**kwargs)
        info = self.connection_info
        ports = (info["shell_port"], info["iopub_port"], info["stdin_port"], info["hb_port"], info["control_port"])
        sockets = [f"{info['ip']}-{port}" for port in ports]
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not all(os.path.exists(path) for path in sockets):
            if await self.poll() is not None:
                raise SandboxError("the kernel died while starting")
            if time.monotonic() > deadline:
                raise KernelStartTimeout(f"the kernel did not start within {STARTUP_TIMEOUT:g} s")
            await asyncio.sleep(0.01)
        folder = os.path.dirname(sockets[0])
        if os.stat(folder).st_uid != os.geteuid():
            os.chown(folder, os.geteuid(), os.getegid())

    async def kill(self, restart: bool = False) -> None:
        """Kill the kernel and wait for it in steps of 5 ms: jupyter_client's own wait sleeps 0.1 s before it looks."""
        await super().kill(restart)
        deadline = time.monotonic() + KILL_WAIT
        while await self.poll() is None and time.monotonic() < deadline:
            await asyncio.sleep(0.005)


class ForkedProcess:
    """The ``subprocess.Popen`` surface jupyter_client uses, for a process that is not our child (a pidfd)."""

    stdin = stdout = stderr = None

    def __init__(self, pid: int) -> None:
        self.pid, self.returncode = pid, None
        try:
            self.pidfd: int | None = os.pidfd_open(pid)
        except ProcessLookupError:
            self.pidfd, self.returncode = None, 1

    def poll(self) -> int | None:
        """None while it runs; then its exit code (1: the zygote reaped it, the code is not known here)."""
        if self.pidfd is not None and select.select([self.pidfd], [], [], 0)[0]:
            os.close(self.pidfd)
            self.pidfd, self.returncode = None, 1
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        """Wait until it exits."""
        if self.pidfd is not None:
            select.select([self.pidfd], [], [], timeout)
        return self.poll()

    def send_signal(self, signum: int) -> None:
        """Signal it, unless it is gone."""
        if self.poll() is None and self.pidfd is not None:
            signal.pidfd_send_signal(self.pidfd, signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


class ZygoteProvisioner(SandboxProvisioner):
    """A LocalProvisioner whose kernels are forked by this process's zygote instead of exec'd."""

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> KernelConnectionInfo:
        argv = cmd[cmd.index("grader.kernels.sandbox") + 1:]
        try:
            pid = zygote().fork(argv)
        except (OSError, ValueError) as error:  # a zygote killed between two kernels; start_kernel tries again
            raise SandboxError(f"the kernel zygote failed: {error}") from error
        self.process = ForkedProcess(pid)  # type: ignore[assignment]  # the Popen surface LocalProvisioner uses
        self.pid, self.pgid, self.cwd = pid, None, kwargs.get("cwd")
        return self.connection_info
