"""The grader's worker pool, set up in one place for batch and check.

Each worker process holds a warm ``KernelSupply``. A worker that dies (killed by a
submission when the sandbox cannot stop it, or by the system) breaks the whole pool:
the pool is rebuilt and every task that had not finished is retried alone, one by one,
so only the task that kills its worker loses its result. ``run_on_cluster`` runs the same
tasks on a Dask cluster instead (``grader.classroom.cluster``, the optional ``cluster`` extra).
"""

import importlib
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from types import ModuleType
from typing import TypeVar

from ..errors import ClusterError
from ..grading.execute import Limits
from ..kernels.supply import start_worker_supply
from ..kernels.uids import sweep_orphans

R = TypeVar("R")
T = TypeVar("T")


def worker_pool(workers: int | None, limits: Limits, modules: Sequence[str] = ()) -> ProcessPoolExecutor:
    """A process pool of ``workers`` (default: one per core), each with a warm kernel supply whose kernels find
    ``modules`` imported (``grader.grading.preload``)."""
    return ProcessPoolExecutor(max(1, workers or os.cpu_count() or 1), initializer=start_worker_supply,
                               initargs=(limits.memory_bytes, tuple(modules)))


def run_tasks(function: Callable[[T], R], tasks: Sequence[T], workers: int | None,
              limits: Limits, modules: Sequence[str] = ()) -> Iterator[tuple[int, R | BaseException]]:
    """Run ``function(task)`` for every task in a worker pool; yield (task index, result or exception) as each ends.

    A task whose worker died twice (once in the shared pool, once alone) yields its BrokenProcessPool.
    """
    unfinished: list[int] = []
    with worker_pool(workers, limits, modules) as pool:
        futures: dict[Future[R], int] = {pool.submit(function, task): i for i, task in enumerate(tasks)}
        for future in as_completed(futures):
            try:
                yield futures[future], future.result()
            except BrokenProcessPool:
                unfinished.append(futures[future])
            except Exception as error:  # noqa: BLE001 - the task's own failure is its result
                yield futures[future], error
    alone: ProcessPoolExecutor | None = None
    try:
        for i in sorted(unfinished):
            alone = alone or worker_pool(1, limits, modules)
            try:
                yield i, alone.submit(function, tasks[i]).result()
            except BrokenProcessPool as error:
                alone.shutdown(wait=False, cancel_futures=True)
                alone = None
                yield i, error
            except Exception as error:  # noqa: BLE001
                yield i, error
    finally:
        if alone is not None:
            alone.shutdown()
        sweep_orphans()  # what a worker killed mid-task could not stop


def _cluster() -> ModuleType:
    """The Dask side of the batch (``grader.classroom.cluster``), or ClusterError saying what to install."""
    try:
        return importlib.import_module(f"{__package__}.cluster")
    except ImportError as error:
        raise ClusterError(f"--scheduler needs dask.distributed ({error.name or 'it'} is not installed): "
                           "pip install 'handoffs-course[cluster]'") from None


def check_scheduler(scheduler: str) -> None:
    """Refuse, before a batch reads anything, a ``--scheduler`` that is malformed or needs what is not installed."""
    _cluster().check_scheduler(scheduler)


def run_on_cluster(scheduler: str, function: Callable[[T], R], tasks: Sequence[T], limits: Limits,
                   names: Sequence[str] | None = None, modules: Sequence[str] = ()
                   ) -> Iterator[tuple[int, R | BaseException]]:
    """``run_tasks`` on the Dask cluster at ``scheduler`` (``tcp://HOST:PORT``, or ``local:N`` to start one here)."""
    return _cluster().run_tasks(scheduler, function, tasks, limits, names, modules)
