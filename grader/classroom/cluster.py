"""A batch on a Dask cluster (``grader batch --scheduler``): the local pool's tasks, run by Dask workers.

Each worker process gets the sandboxed kernel supply a pool worker gets (``KernelSupplyPlugin``)
and grades one submission at a time. Tasks carry bytes and return reports; no worker reads or
writes a file of the batch, so workers may run on other machines (with this package installed).
A worker killed mid-task is replaced by its nanny and Dask runs the task again elsewhere
(``distributed.scheduler.allowed-failures``); a task that ends in ``KilledWorker`` is retried
once alone, so only a submission that kills every worker it touches gets an error row.
"""

import asyncio
import logging
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import CancelledError
from contextlib import ExitStack, contextmanager
from typing import Any, TypeVar

from distributed import Client, KilledWorker, LocalCluster, Worker, WorkerPlugin, as_completed
from distributed.comm.addressing import parse_address, parse_host_port

from ..errors import ClusterError
from ..grading.execute import Limits
from ..kernels.supply import start_worker_supply, stop_worker_supply
from ..kernels.uids import sweep_orphans

R = TypeVar("R")
T = TypeVar("T")
CONNECT_TIMEOUT = 5.0  # seconds to reach a scheduler before the batch gives up
PLUGIN = "grader-kernel-supply"
_grading = threading.Lock()  # one submission at a time per worker process, whatever its thread count


class KernelSupplyPlugin(WorkerPlugin):
    """Gives a Dask worker process the warm, sandboxed kernel supply of a pool worker; closes it with the worker."""

    def __init__(self, memory_limit: int, modules: Sequence[str] = ()) -> None:
        self.memory_limit, self.modules = memory_limit, tuple(modules)

    def setup(self, worker: Worker) -> None:
        """Start this worker's supply (its kernels boot on the task thread, the first time one is taken: this runs
        on the worker's event loop, where the supply's own loop cannot)."""
        start_worker_supply(self.memory_limit, self.modules, warm_up=False)

    async def teardown(self, worker: Worker) -> None:
        """Stop the supply's kernels, off the worker's event loop (the supply runs a loop of its own)."""
        await asyncio.to_thread(_stop_supply)

    def __repr__(self) -> str:
        return f"KernelSupplyPlugin(memory_limit={self.memory_limit}, {len(self.modules)} modules)"


def _stop_supply() -> None:
    with _grading:
        stop_worker_supply()
        sweep_orphans()  # what a worker killed on this machine before could not stop


def _one_at_a_time(function: Callable[[T], R], task: T) -> R:
    """Run a task on a worker while no other task of the batch runs in that process (one kernel supply)."""
    with _grading:
        return function(task)


def _address(scheduler: str) -> str:
    """The scheduler's address, checked before any connection (a malformed one fails at once)."""
    try:
        protocol, location = parse_address(scheduler)
        if protocol in ("tcp", "tls"):
            parse_host_port(location)
    except ValueError as error:
        raise ClusterError(f"--scheduler {scheduler!r}: not a Dask scheduler address ({error}); "
                           "expected tcp://HOST:PORT or local:N") from None
    return scheduler


def _local_workers(scheduler: str) -> int:
    count = scheduler.removeprefix("local:")
    if not count.isdigit() or int(count) < 1:
        raise ClusterError(f"--scheduler {scheduler}: expected local:N with N a number of workers, 1 or more")
    return int(count)


def check_scheduler(scheduler: str) -> None:
    """Refuse a malformed ``--scheduler`` before the batch reads anything (reaching it is tried when it runs)."""
    if scheduler.startswith("local:"):
        _local_workers(scheduler)
    else:
        _address(scheduler)


def _quiet_dask() -> None:
    """Dask's own log only with -v: what matters to the instructor ends in a row or a one-line error."""
    for name in list(logging.root.manager.loggerDict):  # distributed sets levels on some of its loggers
        if name == "distributed" or name.startswith("distributed."):
            logging.getLogger(name).setLevel(logging.CRITICAL)


@contextmanager
def connect(scheduler: str) -> Iterator[Client]:
    """A client of the scheduler at ``scheduler``, or of a new local cluster for ``local:N`` (closed after)."""
    if not logging.getLogger("grader").isEnabledFor(logging.DEBUG):
        _quiet_dask()
    if scheduler.startswith("local:"):
        workers = _local_workers(scheduler)
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                          silence_logs=logging.ERROR) as cluster, Client(cluster, set_as_default=False) as client:
            yield client
        return
    try:
        client = Client(_address(scheduler), timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError, ValueError, TypeError) as error:
        raise ClusterError(f"cannot reach the Dask scheduler at {scheduler}: {' '.join(str(error).split())}") \
            from None
    with client:
        yield client


def run_tasks(scheduler: str, function: Callable[[T], R], tasks: Sequence[T], limits: Limits,
              names: Sequence[str] | None = None, modules: Sequence[str] = ()
              ) -> Iterator[tuple[int, R | BaseException]]:
    """Run ``function(task)`` for every task on the cluster; yield (task index, result or exception) as each ends.

    It connects before it returns (a bad scheduler fails here, before any result). ``names`` label the
    tasks' keys (as the dashboard shows them); each worker's zygote imports ``modules``. A task that ends in
    KilledWorker is submitted again alone, after the others; if its workers die again, its KilledWorker is its
    result.
    """
    stack = ExitStack()
    client = stack.enter_context(connect(scheduler))
    try:
        client.register_plugin(KernelSupplyPlugin(limits.memory_bytes, modules), name=PLUGIN)
    except BaseException:
        stack.close()
        raise
    return _results(stack, client, function, tasks, names or [str(i) for i in range(len(tasks))])


def _results(stack: ExitStack, client: Client, function: Callable[[T], R], tasks: Sequence[T],
             names: Sequence[str]) -> Iterator[tuple[int, R | BaseException]]:
    run = uuid.uuid4().hex[:8]

    def submit(i: int) -> Any:
        return client.submit(_one_at_a_time, function, tasks[i], key=f"grade-{names[i]}-{run}-{uuid.uuid4().hex[:6]}",
                             pure=False)

    with stack:
        futures = {submit(i): i for i in range(len(tasks))}
        killed: list[int] = []
        for future in as_completed(futures, loop=client.loop):
            i = futures.pop(future)
            try:
                yield i, _result(future)
            except KilledWorker:
                killed.append(i)
            except ClusterError:
                raise
            except Exception as error:  # noqa: BLE001 - the task's own failure is its result
                yield i, error
        for i in sorted(killed):  # alone: a submission that kills its worker takes no other one with it
            try:
                yield i, _result(submit(i))
            except ClusterError:
                raise
            except Exception as error:  # noqa: BLE001
                yield i, error


def _result(future: Any) -> Any:
    """A task's result; a task cancelled under the batch (the scheduler lost) stops the whole batch."""
    try:
        return future.result()
    except CancelledError as error:
        reason = getattr(error, "reason", None) or " ".join(str(error).split())
        raise ClusterError(f"lost the Dask cluster ({reason}); the reports written so far are kept: "
                           "run the same command again to grade the rest") from None
