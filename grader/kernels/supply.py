"""Kernels on demand: ``KernelSupply`` keeps one event loop for a batch worker and boots the next kernel early.

The next kernel boots as a task on the supply's loop while the current notebook runs on it, so a
submission rarely waits for a kernel to start.
"""

import asyncio
import atexit
import multiprocessing.util
from collections.abc import Coroutine
from typing import Any, TypeVar

from .kernel import Kernel, start_kernel

T = TypeVar("T")


async def _discard(spare: "asyncio.Task[Kernel]") -> None:
    """Stop a spare kernel, booted or still booting (a cancelled start leaves nothing behind)."""
    if not spare.done():
        spare.cancel()
    try:
        kernel = await spare
    except (asyncio.CancelledError, RuntimeError, TimeoutError):
        return
    await kernel.stop()


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
