"""The grading kernel: a fresh IPython kernel over IPC sockets, under a memory limit, in its own folder.

``KernelSupply`` keeps one event loop for a whole batch worker and boots the next kernel
while the current one works, so a submission rarely waits for a kernel to start.
"""

import asyncio
import atexit
import multiprocessing.util
import os
import shutil
import sys
import tempfile

from jupyter_client.manager import AsyncKernelManager
from traitlets import Int

KERNEL_ENV = {
    "MPLBACKEND": "Agg",           # plots render without a screen
    "PYTHONHASHSEED": "0",         # set iteration order is the same on every run
    "OPENBLAS_NUM_THREADS": "1",   # numeric libraries stay inside the memory limit
    "OMP_NUM_THREADS": "1",
}


class SandboxedKernelManager(AsyncKernelManager):
    """A kernel manager that starts the kernel through ``grader.sandbox`` with a memory limit."""

    memory_limit = Int(2 * 1024 ** 3, help="Address-space limit of the kernel, in bytes (0: none)")

    def format_kernel_cmd(self, extra_arguments=None):
        command = super().format_kernel_cmd(extra_arguments)
        return [sys.executable, "-m", "grader.sandbox", str(self.memory_limit), "--", *command]


class Kernel:
    """One kernel process: its manager, its IPC socket folder and the folder it works in."""

    def __init__(self, memory_limit):
        self.folder = tempfile.mkdtemp(prefix="gk-")
        self.workdir = os.path.join(self.folder, "work")
        os.mkdir(self.workdir)
        self.km = SandboxedKernelManager(kernel_name="python3", transport="ipc",
                                         ip=os.path.join(self.folder, "k"), memory_limit=memory_limit)

    async def start(self):
        """Spawn the kernel process; it finishes booting in the background."""
        await self.km.start_kernel(cwd=self.workdir, env={**os.environ, **KERNEL_ENV},
                                   extra_arguments=["--HistoryManager.hist_file=:memory:"],
                                   stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
        return self

    async def stop(self):
        """Kill the kernel if it still runs and remove its folders."""
        try:
            if self.km.has_kernel:
                await self.km.shutdown_kernel(now=True)
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def __repr__(self):
        return f"Kernel({self.folder}, alive={self.km.has_kernel})"


_worker_supply = None


def start_worker_supply(memory_limit):
    """Process-pool initializer: give this worker process a warm KernelSupply, closed when it exits."""
    global _worker_supply
    _worker_supply = KernelSupply(memory_limit)
    multiprocessing.util.Finalize(None, _worker_supply.close, exitpriority=10)


def worker_supply():
    """This worker process's KernelSupply, or None outside a pool worker."""
    return _worker_supply


class KernelSupply:
    """Started kernels on demand, one event loop for all of them; warm=True boots the next one early."""

    def __init__(self, memory_limit, warm=True):
        self.memory_limit, self.warm = memory_limit, warm
        self.runner = asyncio.Runner()
        self.spare = None
        atexit.register(self.close)

    async def take(self):
        """A started kernel for one notebook; the caller stops it."""
        kernel = self.spare or await Kernel(self.memory_limit).start()
        self.spare = await Kernel(self.memory_limit).start() if self.warm else None
        return kernel

    def run(self, coroutine):
        """Run a coroutine on this supply's event loop."""
        return self.runner.run(coroutine)

    def close(self):
        """Stop the spare kernel and close the loop; no kernel outlives the supply."""
        if self.spare is not None:
            spare, self.spare = self.spare, None
            self.runner.run(spare.stop())
        self.runner.close()
        atexit.unregister(self.close)
