"""Run a notebook's code cells one by one in a fresh kernel, within time, memory and output limits.

A cell's run records whether the kernel's ``execute_reply`` says it raised; that marks the cell,
it never passes a test. A test cell runs as the kernel may see it (``grader.testcells``): its
visible part as one request, whose outputs are kept, then its hidden part as another, of which
nothing is kept but the check reports (``grader.probe``); the reports are collected apart from
the outputs and judged by the caller, outside the kernel.
Every limit is a mark on one cell, never the end of the run:

* a cell that runs past its timeout is interrupted and marked; if the kernel does not
  answer after the interrupt, it is restarted. The next cells run either way.
* a whole-notebook budget: once spent, the remaining cells are marked as not run.
* a kernel that dies (``os._exit``, a crash) marks that cell failed and is restarted.
* after a restart, the cells that had run fine are replayed silently (outputs discarded),
  so later exercises that depend on them still earn their points.
* every message a cell sends counts against the per-cell output cap (streams, displays and
  their updates, results, errors, comms); beyond it, messages are dropped and one line
  says so. The grader's memory stays flat however much a kernel sends.
"""

import asyncio
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from queue import Empty
from time import monotonic
from typing import Any

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError
from nbformat import NotebookNode

from .kernels.channels import MAX_MESSAGE
from .kernels.kernel import start_kernel
from .kernels.supply import KernelSupply
from .messages import Message, Say, say
from .probe import MIME
from .testcells import KernelCode

logger = logging.getLogger(__name__)

TIMEOUT_ENAME = "CellTimeout"
STDIN_ENAME = "StdinNotImplementedError"  # ipykernel's, for input() when the grader allows no input
REFUSED_MIB = MAX_MESSAGE // 1024 ** 2
SILENT_TIMEOUT = 10.0
FREE_MESSAGES = ("status", "execute_input", "clear_output")
KEPT_CHARS = 2_000      # of an exception message or traceback line kept in a CellRun
KEPT_FRAMES = 40
REPORT_BYTES = 8 * 1024 ** 2  # of check reports per part of a test cell; beyond it, reports are dropped


@dataclass(frozen=True)
class Limits:
    """The limits a notebook runs under; every one is configurable."""

    cell_timeout: float = 30.0
    notebook_timeout: float = 600.0
    memory_bytes: int = 2 * 1024 ** 3
    output_bytes: int = 200_000
    interrupt_grace: float = 3.0


DEFAULT_LIMITS = Limits()

@dataclass
class CellRun:
    """What happened when one cell ran: ok, or the one-line reason it failed."""

    index: int
    status: str  # "ok", "error", "timeout", "died", "not-run"
    ename: str = ""
    evalue: str = ""
    traceback: list[str] = field(default_factory=list, repr=False)
    message: Message | None = None  # when the grader, not the kernel, says why the cell failed
    reports: list[Any] = field(default_factory=list, repr=False)  # a test part's check reports, untrusted data
    hidden: "CellRun | None" = None  # a test cell's hidden part, when it ran

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def summary(self) -> str:
        """One line: exception type and message, or the limit that stopped the cell."""
        if self.status == "ok":
            return ""
        if self.message is not None:
            return self.message.english()
        text = f"{self.ename}: {self.evalue}" if self.evalue else self.ename
        return " ".join(text.split())[:300]


def _size(value: Any, depth: int = 0) -> int:
    """Characters in a message's content: every string, key and number, however nested."""
    if isinstance(value, (str, bytes, bytearray, memoryview)):
        return len(value)
    if isinstance(value, dict):
        return sum(len(str(k)) + _size(v, depth + 1) for k, v in value.items()) if depth < 20 else 1
    if isinstance(value, (list, tuple)):
        return sum(_size(v, depth + 1) for v in value) if depth < 20 else 1
    return 8


class CappedClient(NotebookClient):
    """An nbclient NotebookClient that keeps at most ``output_cap`` characters of messages per cell.

    ``process_message`` is nbclient's single entry point for a cell's iopub messages (pinned
    nbclient 0.10-0.11): counting there covers every kind, including ``update_display_data``
    and comm messages that never pass through ``output``. Check reports are taken out there,
    never shown, and counted apart; while ``part`` is "hidden", nothing else is kept at all.
    """

    def __init__(self, nb: NotebookNode, output_cap: int, **kw: Any) -> None:
        super().__init__(nb, **kw)
        self.output_cap = output_cap
        self.part = "cell"  # "cell", or "hidden" while a test cell's hidden part runs
        self.sizes: dict[tuple[int, str], int] = {}
        self.dropped: dict[tuple[int, str], int] = {}
        self.refused: set[tuple[int, str]] = set()  # cells one message of which was over MAX_MESSAGE
        self.reports: list[Any] = []  # the running part's check reports
        self.report_bytes = 0
        self.reply_refused = False

    async def _async_check_alive(self) -> None:
        """nbclient's check, run each second while a cell runs; a refused reply ends the wait like a death."""
        await super()._async_check_alive()
        if _kc(self).refused("shell"):
            self.reply_refused = True
            raise DeadKernelError("the kernel's reply was refused")

    def process_message(self, msg: dict[str, Any], cell: NotebookNode, cell_index: int) -> NotebookNode | None:
        kind = msg["msg_type"]
        if kind not in FREE_MESSAGES:
            content = msg.get("content")
            size = _size(content) + sum(len(b) for b in msg.get("buffers") or [])
            data = content.get("data") if kind == "display_data" and isinstance(content, dict) else None
            if isinstance(data, dict) and MIME in data:
                self.report_bytes += size
                if self.report_bytes <= REPORT_BYTES:
                    self.reports.append(data[MIME])
                return None
            key = (cell_index, self.part)
            used = self.sizes.get(key, 0)
            if used + size > self.output_cap:
                self.sizes[key] = self.output_cap  # nothing more fits, however small
                self.dropped[key] = self.dropped.get(key, 0) + size
                return None
            self.sizes[key] = used + size
        if self.part == "hidden" and kind != "status":
            return None  # nothing a hidden test produces is kept: not an output, not a display update
        return super().process_message(msg, cell, cell_index)


def _run_of(index: int, reply: dict[str, Any]) -> CellRun:
    """The cell's outcome as the kernel's execute_reply states it."""
    if reply.get("status") == "ok":
        return CellRun(index, "ok")
    traceback = [str(line)[:KEPT_CHARS] for line in (reply.get("traceback") or [])[-KEPT_FRAMES:]]
    ename, evalue = str(reply.get("ename") or "Error")[:200], str(reply.get("evalue") or "")[:KEPT_CHARS]
    if ename == STDIN_ENAME:
        return _failed(index, "error", say(Say.STDIN))
    return CellRun(index, "error", ename, evalue, traceback)


def _failed(index: int, status: str, message: Message) -> CellRun:
    """A cell the grader marks failed, with its reason from the catalog (``grader.messages``)."""
    ename, _, evalue = message.english().partition(": ")
    return CellRun(index, status, ename, evalue, message=message)


def _kc(client: NotebookClient) -> Any:
    """The client's kernel client, which exists while the kernel is set up."""
    assert client.kc is not None, "the kernel client is not started"
    return client.kc


async def _heal(client: NotebookClient) -> bool:
    """Reconnect the sockets that refused an oversized message (``CappedKernelClient``); True if any did.

    A new iopub subscription misses what the kernel publishes before it is in place, so this
    returns once the kernel's status messages arrive on it (or after ``SILENT_TIMEOUT``).
    """
    kc = _kc(client)
    healed = [channel for channel in ("shell", "iopub") if kc.refused(channel)]
    for channel in healed:
        kc.reconnect(channel)
    deadline = monotonic() + SILENT_TIMEOUT
    while "iopub" in healed and monotonic() < deadline:
        kc.kernel_info()  # its busy/idle status is published to every subscriber that is in place
        try:
            await kc.iopub_channel.get_msg(timeout=0.2)
            break
        except Empty:
            continue
    return bool(healed)


async def _reply(client: NotebookClient, msg_id: str, timeout: float) -> dict[str, Any] | None:
    """The content of the shell reply to ``msg_id``; None if none came within ``timeout`` seconds or the kernel died."""
    deadline = monotonic() + timeout
    while (left := deadline - monotonic()) > 0:
        try:
            reply = await _kc(client).shell_channel.get_msg(timeout=min(left, 1.0))
        except Empty:
            assert client.km is not None
            if not await client.km.is_alive():  # type: ignore[misc]
                return None
            continue
        if reply["parent_header"].get("msg_id") == msg_id:
            content: dict[str, Any] = reply["content"]
            return content
    return None


async def _silent(client: NotebookClient, code: str, timeout: float) -> dict[str, Any] | None:
    """Run code the student never sees: no history, no cell events, outputs discarded; the reply or None."""
    await _heal(client)
    msg_id: str = _kc(client).execute(code, silent=True, store_history=False, stop_on_error=False)
    return await _reply(client, msg_id, timeout)


async def _responsive(client: NotebookClient, grace: float) -> bool:
    """Whether the kernel answers a kernel_info request within ``grace`` seconds."""
    await _heal(client)
    return await _reply(client, _kc(client).kernel_info(), grace) is not None


async def _restart(client: NotebookClient) -> None:
    """Replace a dead or stuck kernel with a fresh one and reconnect the client."""
    _kc(client).stop_channels()
    assert client.km is not None
    await client.km.restart_kernel(now=True)  # type: ignore[misc]
    await client.async_start_new_kernel_client()


async def _recover(client: NotebookClient, nb: NotebookNode, kept: list[int], deadline: float,
                   limits: Limits) -> None:
    """After a restart: replay the cells that had run fine, silently.

    A replayed cell that does not finish (it stalls or kills the new kernel) is dropped from
    ``kept`` for good; the kernel is restarted and the replay begins again without it.
    """
    while True:
        for index in kept:
            left = min(limits.cell_timeout, deadline - monotonic())
            if left <= 0:
                return
            if await _silent(client, nb.cells[index].source, left) is None:
                logger.debug("replaying cell %d did not finish; the replay starts again without it", index)
                kept.remove(index)
                await _restart(client)
                break
        else:
            return


async def _run_cell(client: CappedClient, cell: NotebookNode, index: int, timeout: float, limits: Limits,
                    replies: dict[int, Any], store_history: bool = True) -> tuple[CellRun, bool]:
    """Run one cell (or one part of a test cell); returns its outcome, with its check reports, and whether the
    kernel was restarted."""
    client.timeout = max(1, math.ceil(timeout))  # nbclient counts whole seconds
    client.reports, client.report_bytes = [], 0
    if not cell.source.strip():
        return CellRun(index, "ok"), False
    await _heal(client)
    try:
        await client.async_execute_cell(cell, index, store_history=store_history)
    except DeadKernelError:
        if client.reply_refused:  # the kernel lives on; only its reply was too big to read
            client.reply_refused = False
            client.refused.add((index, client.part))
            await _heal(client)
            return _failed(index, "error", say(Say.REFUSED, mib=REFUSED_MIB)), False
        await _restart(client)
        return _failed(index, "died", say(Say.DIED)), True
    if await _heal(client):
        client.refused.add((index, client.part))
    reply = replies.pop(index, {}).get("content", {})
    if reply.get("ename") == TIMEOUT_ENAME:
        restarted = not await _responsive(client, limits.interrupt_grace)
        if restarted:
            await _restart(client)
        return _failed(index, "timeout", say(Say.TIMEOUT, seconds=client.timeout)), restarted
    run = _run_of(index, reply)
    run.reports = client.reports
    return run, False


async def _run_test(client: CappedClient, cell: NotebookNode, index: int, code: KernelCode, timeout: float,
                    limits: Limits, replies: dict[int, Any]) -> tuple[CellRun, bool]:
    """Run a test cell as ``code``: its visible part in place, then its hidden part, of which only reports are kept.

    The hidden part runs only after the visible part ran fine, and its run keeps nothing but its
    status and exception name: not its message, not its traceback.
    """
    shown = cell.source
    cell.source = code.visible
    try:
        run, restarted = await _run_cell(client, cell, index, timeout, limits, replies, store_history=False)
    finally:
        cell.source = shown
    if run.ok and code.hidden.strip():
        client.part = "hidden"
        try:
            hidden, restarted = await _run_cell(client, nbformat.v4.new_code_cell(code.hidden), index, timeout,
                                                limits, replies, store_history=False)
        finally:
            client.part = "cell"
            client.nb.cells[index] = cell  # nbclient put the throwaway cell of the hidden part in its place
        hidden.evalue, hidden.traceback = "", []
        run.hidden = hidden
    return run, restarted


def _mark_truncated(client: CappedClient, nb: NotebookNode) -> None:
    """Say, in the student's language, where outputs were cut: the graded notebook is what the student reads."""
    notes = {index: say(Say.TRUNCATED, chars=dropped)
             for (index, part), dropped in client.dropped.items() if part == "cell"}
    for index, part in client.refused:
        if part == "cell":
            notes[index] = say(Say.TRUNCATED_MESSAGE, mib=REFUSED_MIB)
    for index, note in sorted(notes.items()):
        nb.cells[index].outputs.append(nbformat.v4.new_output("stream", name="stdout", text=f"\n{note.spanish()}\n"))


async def run_notebook(nb: NotebookNode, limits: Limits = DEFAULT_LIMITS, supply: KernelSupply | None = None,
                       tests: Mapping[int, KernelCode] | None = None) -> list[CellRun]:
    """Execute every code cell of ``nb`` in a fresh kernel, outputs in place; returns a CellRun per code cell.

    ``tests`` maps the index of each test cell to the code the kernel runs for it (``grader.testcells``);
    the notebook's own source of a test cell never reaches the kernel.
    """
    tests = tests or {}
    kernel = await supply.take() if supply else await start_kernel(limits.memory_bytes)
    replies: dict[int, Any] = {}
    client = CappedClient(
        nb, limits.output_bytes, km=kernel.km, timeout=limits.cell_timeout, allow_errors=True,
        interrupt_on_timeout=True, error_on_timeout={"ename": TIMEOUT_ENAME, "evalue": "timeout"},
        iopub_timeout=5, shutdown_kernel="immediate", record_timing=False, coalesce_streams=True,
        on_cell_executed=lambda cell, cell_index, execute_reply: replies.__setitem__(cell_index, execute_reply))
    client.kc = kernel.kc  # already connected and answering: nbclient skips its own wait for the kernel
    runs: list[CellRun] = []
    kept: list[int] = []  # cells that ran fine, replayed after a restart
    deadline = monotonic() + limits.notebook_timeout
    try:
        async with client.async_setup_kernel(cleanup_kc=True):
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code":
                    continue
                left = deadline - monotonic()
                if left <= 0:
                    runs.append(_failed(index, "not-run", say(Say.BUDGET, seconds=f"{limits.notebook_timeout:g}")))
                    continue
                timeout = min(limits.cell_timeout, left)
                if index in tests:
                    run, restarted = await _run_test(client, cell, index, tests[index], timeout, limits, replies)
                else:
                    run, restarted = await _run_cell(client, cell, index, timeout, limits, replies)
                runs.append(run)
                if restarted:
                    await _recover(client, nb, kept, deadline, limits)
                elif run.ok and index not in tests:
                    kept.append(index)
    finally:
        await kernel.stop()
    _mark_truncated(client, nb)
    return runs


def execute(nb: NotebookNode, limits: Limits = DEFAULT_LIMITS, supply: KernelSupply | None = None,
            tests: Mapping[int, KernelCode] | None = None) -> list[CellRun]:
    """Synchronous ``run_notebook``: on the supply's loop when given, else on a new one."""
    if supply is not None:
        return supply.run(run_notebook(nb, limits, supply, tests))
    return asyncio.run(run_notebook(nb, limits, tests=tests))
