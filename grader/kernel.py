"""The grading kernel: a fresh IPython kernel over IPC sockets, under a memory limit."""

import os
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


def make_kernel_manager(memory_limit, socket_dir=None):
    """A kernel manager for the current Python, talking over IPC sockets in a private folder."""
    socket_dir = socket_dir or tempfile.mkdtemp(prefix="gk-")
    return SandboxedKernelManager(
        kernel_name="python3", transport="ipc", ip=os.path.join(socket_dir, "k"), memory_limit=memory_limit)
