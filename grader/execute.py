"""Run a notebook's code cells one by one in a fresh kernel, within time, memory and output limits.

Every limit is a mark on one cell, never the end of the run:

* a cell that runs past its timeout is interrupted and marked; if the kernel does not
  answer after the interrupt, it is restarted. The next cells run either way.
* a whole-notebook budget: once spent, the remaining cells are marked as not run.
* a kernel that dies (``os._exit``, a crash) marks that cell failed, is restarted, and
  the remaining cells run in the new kernel.
* output beyond the per-cell cap is dropped and replaced by one line saying so.
"""

import asyncio
import math
from dataclasses import dataclass
from queue import Empty
from time import monotonic

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError

from .kernel import Kernel

TIMEOUT_ENAME = "CellTimeout"


@dataclass(frozen=True)
class Limits:
    """The limits a notebook runs under; every one is configurable."""

    cell_timeout: float = 30.0
    notebook_timeout: float = 600.0
    memory_bytes: int = 2 * 1024 ** 3
    output_bytes: int = 200_000
    interrupt_grace: float = 3.0


@dataclass
class CellRun:
    """What happened when one cell ran: ok, or the one-line reason it failed."""

    index: int
    status: str  # "ok", "error", "timeout", "died", "not-run"
    ename: str = ""
    evalue: str = ""

    @property
    def ok(self):
        return self.status == "ok"

    @property
    def summary(self):
        """One line: exception type and message, or the limit that stopped the cell."""
        if self.status == "ok":
            return ""
        text = f"{self.ename}: {self.evalue}" if self.evalue else self.ename
        return " ".join(text.split())[:300]


def _output_size(msg):
    content = msg.get("content", {})
    if "text" in content:
        return len(content["text"])
    return sum(len(str(value)) for value in content.get("data", {}).values())


class CappedClient(NotebookClient):
    """An nbclient NotebookClient that keeps at most ``output_cap`` characters of output per cell."""

    def __init__(self, nb, output_cap, **kw):
        super().__init__(nb, **kw)
        self.output_cap = output_cap
        self.sizes = {}
        self.dropped = {}

    def output(self, outs, msg, display_id, cell_index):
        size = _output_size(msg)
        used = self.sizes.get(cell_index, 0)
        if used + size > self.output_cap and msg["msg_type"] in ("stream", "display_data", "execute_result"):
            self.dropped[cell_index] = self.dropped.get(cell_index, 0) + size
            return None
        self.sizes[cell_index] = used + size
        return super().output(outs, msg, display_id, cell_index)


def _error_of(cell):
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return output.get("ename", "Error"), output.get("evalue", "")
    return None


async def _responsive(client, grace):
    """Whether the kernel answers a kernel_info request within ``grace`` seconds."""
    msg_id = client.kc.kernel_info()
    deadline = monotonic() + grace
    while (left := deadline - monotonic()) > 0:
        try:
            reply = await client.kc.shell_channel.get_msg(timeout=left)
        except Empty:
            return False
        if reply["parent_header"].get("msg_id") == msg_id:
            return True
    return False


async def _restart(client):
    """Replace a dead or stuck kernel with a fresh one and reconnect the client."""
    client.kc.stop_channels()
    await client.km.restart_kernel(now=True)
    await client.async_start_new_kernel_client()


async def _run_cell(client, cell, index, timeout, limits, replies):
    client.timeout = max(1, math.ceil(timeout))  # nbclient counts whole seconds
    try:
        await client.async_execute_cell(cell, index, store_history=True)
    except DeadKernelError:
        await _restart(client)
        return CellRun(index, "died", "DeadKernelError", "the kernel died while running this cell; it was restarted")
    reply = replies.pop(index, {}).get("content", {})
    if reply.get("ename") == TIMEOUT_ENAME:
        if not await _responsive(client, limits.interrupt_grace):
            await _restart(client)
        return CellRun(index, "timeout", TIMEOUT_ENAME, f"cell did not finish within {client.timeout} s")
    error = _error_of(cell)
    return CellRun(index, "error", *error) if error else CellRun(index, "ok")


def _mark_truncated(client, nb):
    for index, dropped in client.dropped.items():
        nb.cells[index].outputs.append(nbformat.v4.new_output(
            "stream", name="stdout", text=f"\n[output truncated: {dropped} characters over the limit]\n"))


async def run_notebook(nb, limits=Limits(), supply=None):
    """Execute every code cell of ``nb`` in place, in a fresh kernel; returns a CellRun per code cell."""
    kernel = await supply.take() if supply else await Kernel(limits.memory_bytes).start()
    replies = {}
    client = CappedClient(
        nb, limits.output_bytes, km=kernel.km, timeout=limits.cell_timeout, allow_errors=True,
        interrupt_on_timeout=True, error_on_timeout={"ename": TIMEOUT_ENAME, "evalue": "timeout"},
        iopub_timeout=5, shutdown_kernel="immediate", record_timing=False,
        on_cell_executed=lambda cell, cell_index, execute_reply: replies.__setitem__(cell_index, execute_reply))
    client.kc = kernel.kc  # already connected and answering: nbclient skips its own wait for the kernel
    runs, deadline = [], monotonic() + limits.notebook_timeout
    try:
        async with client.async_setup_kernel(cleanup_kc=True):
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code":
                    continue
                left = deadline - monotonic()
                if left <= 0:
                    runs.append(CellRun(index, "not-run", "NotebookTimeout",
                                        f"the notebook's time budget of {limits.notebook_timeout:g} s was spent"))
                    continue
                runs.append(await _run_cell(client, cell, index, min(limits.cell_timeout, left), limits, replies))
    finally:
        await kernel.stop()
    _mark_truncated(client, nb)
    return runs


def execute(nb, limits=Limits(), supply=None):
    """Synchronous ``run_notebook``: on the supply's loop when given, else on a new one."""
    if supply is not None:
        return supply.run(run_notebook(nb, limits, supply))
    return asyncio.run(run_notebook(nb, limits))
