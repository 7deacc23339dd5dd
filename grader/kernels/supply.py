"""Kernels on demand: ``KernelSupply`` keeps one event loop for a batch worker and boots the next kernel early.

The next kernel boots as a task on the supply's loop while the current notebook runs on it, so a
submission rarely waits for a kernel to start; a used kernel is killed at once and its clean-up
(waiting for it, freeing its uid, removing its folder) goes on in the background the same way.
Nothing is shared between kernels: each submission still gets a fresh, sandboxed process.
"""

import asyncio
import atexit
import collections
import contextvars
import multiprocessing.util
import time
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

from ..settings import settings
from ..timing import WORKER_START, once
from . import zygote
from .kernel import Kernel, start_kernel

T = TypeVar("T")


async def _boot(memory_limit: int) -> Kernel:
    """A started kernel; its folders and uid lease are made on a thread (a /proc scan), off the supply's loop."""
    made = asyncio.ensure_future(asyncio.to_thread(Kernel, memory_limit))
    try:
        kernel = await asyncio.shield(made)
    except asyncio.CancelledError:  # cancelled while its lease was taken: let it finish, then give it back
        await (await made).stop()
        raise
    return await kernel.start()


async def _discard(spare: "asyncio.Task[Kernel]") -> None:
    """Stop a spare kernel, booted or still booting (a cancelled start leaves nothing behind)."""
    if not spare.done():
        spare.cancel()
    try:
        kernel = await spare
    except (asyncio.CancelledError, RuntimeError, TimeoutError):
        return
    await kernel.stop()


async def _finish(tasks: "set[asyncio.Task[None]]") -> None:
    await asyncio.gather(*tasks, return_exceptions=True)


_worker_supply: "KernelSupply | None" = None


def start_worker_supply(memory_limit: int, modules: Sequence[str] = (), warm_up: bool = True) -> None:
    """Process-pool initializer: give this worker process a KernelSupply, closed when it exits, whose kernels find
    ``modules`` imported (``grader.kernels.zygote.preload``); ``warm_up`` boots them before the worker's first task
    (that time is recorded apart: ``grader.timing.WORKER_START``)."""
    global _worker_supply
    start = time.perf_counter()
    zygote.preload(modules)
    _worker_supply = KernelSupply(memory_limit)
    multiprocessing.util.Finalize(None, _worker_supply.close, exitpriority=10)
    if warm_up:
        _worker_supply.warm_up()
        once(WORKER_START, time.perf_counter() - start)


def stop_worker_supply() -> None:
    """Close this worker process's KernelSupply, if it has one (a Dask worker closing, ``grader.classroom.cluster``)."""
    global _worker_supply
    supply, _worker_supply = _worker_supply, None
    if supply is not None:
        supply.close()


def worker_supply() -> "KernelSupply | None":
    """This worker process's KernelSupply, or None outside a pool worker."""
    return _worker_supply


class KernelSupply:
    """Started kernels on demand, one event loop for all of them; warm=True boots the next ``ahead`` early
    (default ``GRADER_SPARES``, read when the supply starts).

    The next kernels boot as tasks on the supply's loop while the current notebook runs on it.
    """

    def __init__(self, memory_limit: int, warm: bool = True, ahead: int | None = None) -> None:
        ahead = settings().spares if ahead is None else ahead
        self.memory_limit, self.warm, self.ahead = memory_limit, warm, max(1, ahead)
        self.runner = asyncio.Runner()
        self.spares: collections.deque[asyncio.Task[Kernel]] = collections.deque()  # booting or booted, in order
        self.retiring: set[asyncio.Task[None]] = set()  # used kernels being stopped in the background
        atexit.register(self.close)

    async def take(self) -> Kernel:
        """A started kernel for one notebook; the caller gives it back (``give_back``) or stops it."""
        kernel = None
        if self.spares:
            try:
                kernel = await self.spares.popleft()
            except (RuntimeError, TimeoutError, OSError):  # the spare failed to start: a fresh one
                kernel = None
            if kernel is not None and not await kernel.km.is_alive():  # it died waiting (killed with its zygote)
                await kernel.stop()
                kernel = None
        kernel = kernel or await start_kernel(self.memory_limit)
        self._top_up()
        return kernel

    def _top_up(self) -> None:
        """Boot spares (on this loop, in the background) until ``ahead`` are booting or booted."""
        while self.warm and len(self.spares) < self.ahead:
            self.spares.append(asyncio.ensure_future(_boot(self.memory_limit)))

    async def give_back(self, kernel: Kernel) -> None:
        """A used kernel: killed now, with everything it started; the rest of its stop goes on in the background."""
        await kernel.kill()
        task = asyncio.ensure_future(kernel.stop())
        self.retiring.add(task)
        task.add_done_callback(self.retiring.discard)

    def warm_up(self) -> None:
        """Boot the spare kernels now (this process's zygote with them) and wait until they are ready."""
        async def fill() -> None:
            self._top_up()
            await asyncio.gather(*self.spares, return_exceptions=True)  # a failed boot is retried by take
        self.runner.run(fill())

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on this supply's event loop, in the caller's context (``grader.timing`` records it)."""
        return self.runner.run(coroutine, context=contextvars.copy_context())

    def close(self) -> None:
        """Stop the spare kernel, finish stopping the used ones and close the loop; no kernel outlives the supply."""
        while self.spares:
            self.runner.run(_discard(self.spares.popleft()))
        if self.retiring:
            self.runner.run(_finish(set(self.retiring)))
        self.runner.close()
        atexit.unregister(self.close)
