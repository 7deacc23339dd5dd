"""Run a notebook's code cells one by one in a fresh kernel, within time, memory and output limits.

A cell's run records whether the kernel's ``execute_reply`` says it raised; that marks the cell,
it never passes a test. A test cell runs as the kernel may see it (``grader.grading.testcells``): its
visible part as one request, whose outputs are kept, in its place; its hidden part as another, of which
nothing is kept but the check reports (``grader.grading.probe``), after the notebook's last cell, so that no
student cell can run after it to print what it sent. The reports are collected apart from
the outputs and judged by the caller, outside the kernel. Every request, a cell's, a part's or a
replayed cell's, takes the one path of ``grader.kernels.request``; nbclient builds the outputs.
Every limit is a mark on one cell, never the end of the run:

* a cell that runs past its timeout is interrupted and marked; if the kernel does not
  answer after the interrupt, it is restarted. The next cells run either way.
* a whole-notebook budget: once spent, the remaining cells are marked as not run.
* a kernel that dies (``os._exit``, a crash) marks that cell failed and is restarted.
* after a restart, the cells that had run fine are replayed silently (outputs discarded),
  so later exercises that depend on them still earn their points.
* every message a cell sends counts against the per-cell output cap (streams, displays and
  their updates, results, errors, comms), by what it holds once parsed (``grader.kernels.channels``),
  and against a cap for the whole notebook; beyond them, messages are dropped and one line
  says so. Check reports have caps of their own. The grader's memory stays flat however much,
  and however nested, a kernel sends.
"""

import asyncio
import enum
import logging
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from time import monotonic
from typing import Any

import nbformat
from nbclient import NotebookClient
from nbformat import NotebookNode

from ..kernels.channels import HELD, MAX_MESSAGE, REFUSED
from ..kernels.kernel import Kernel, start_kernel
from ..kernels.request import Outcome, request
from ..kernels.request import execute as execute_request
from ..kernels.supply import KernelSupply
from ..messages import Message, Say, say
from ..timing import phase
from .limits import DEFAULT_LIMITS, Limits
from .probe import MIME
from .testcells import KernelCode
from .tracebacks import cell_line

logger = logging.getLogger(__name__)

STDIN_ENAME = "StdinNotImplementedError"  # ipykernel's, for input() when the grader allows no input
REFUSED_MIB = MAX_MESSAGE // 1024 ** 2
FREE_MESSAGES = ("status", "execute_input", "clear_output")
KEPT_CHARS = 2_000      # of an exception message or traceback line kept in a CellRun
KEPT_FRAMES = 40
REPORT_BYTES = 8 * 1024 ** 2  # of check reports per part of a test cell; beyond it, reports are dropped
NOTEBOOK_REPORT_BYTES = 32 * 1024 ** 2  # of check reports in the whole notebook, likewise
NOTEBOOK_OUTPUT_BYTES = 32 * 1024 ** 2  # of outputs kept in the whole notebook; beyond it, outputs are dropped




class CellStatus(enum.StrEnum):
    """How one cell's run ended (a ``StrEnum``: JSON and printed text show the word itself)."""

    OK = "ok"
    ERROR = "error"
    TIMEOUT = "timeout"
    DIED = "died"
    NOT_RUN = "not-run"

@dataclass
class CellRun:
    """What happened when one cell ran: ok, or the one-line reason it failed."""

    index: int
    status: CellStatus
    ename: str = ""
    evalue: str = ""
    traceback: list[str] = field(default_factory=list, repr=False)
    message: Message | None = None  # when the grader, not the kernel, says why the cell failed
    reports: list[Any] = field(default_factory=list, repr=False)  # a test part's check reports, untrusted data
    hidden: "CellRun | None" = None  # a test cell's hidden part, when it ran
    line: int | None = None  # a hidden part's line where it raised, as its traceback said (untrusted)

    @property
    def ok(self) -> bool:
        return self.status == CellStatus.OK

    @property
    def summary(self) -> str:
        """One line: exception type and message, or the limit that stopped the cell."""
        if self.status == CellStatus.OK:
            return ""
        if self.message is not None:
            return self.message.english()
        text = f"{self.ename}: {self.evalue}" if self.evalue else self.ename
        return " ".join(text.split())[:300]


class CellOutputs(NotebookClient):
    """The notebook's outputs, built by nbclient from a cell's iopub messages, at most ``output_cap`` characters
    of messages per cell.

    nbclient's public ``process_message`` turns a message into outputs (display ids and their
    updates, ``clear_output``, comms); counting there covers every kind. Check reports are taken
    out there, never shown, and counted apart; while ``part`` is "hidden", nothing else is kept.
    The requests themselves go through ``grader.kernels.request``, not through nbclient.
    """

    def __init__(self, nb: NotebookNode, output_cap: int) -> None:
        super().__init__(nb, record_timing=False)
        self.output_cap = output_cap
        self.part = "cell"  # "cell", or "hidden" while a test cell's hidden part runs
        self.sizes: dict[tuple[int, str], int] = {}
        self.dropped: dict[tuple[int, str], int] = {}
        self.refused: set[tuple[int, str]] = set()  # cells one message of which was over MAX_MESSAGE
        self.reports: list[Any] = []  # the running part's check reports
        self.report_bytes = 0
        self.all_outputs = self.all_reports = 0  # bytes held by the whole notebook's outputs, and reports

    def start(self, part: str) -> None:
        """Begin a cell's part: no reports yet, and a ``clear_output(wait=True)`` of the last cell forgotten."""
        self.part, self.reports, self.report_bytes = part, [], 0
        self.clear_before_next_output = False

    def process_message(self, msg: dict[str, Any], cell: NotebookNode, cell_index: int) -> NotebookNode | None:
        kind = msg["msg_type"]
        if kind not in FREE_MESSAGES:
            key = (cell_index, self.part)
            if msg.get(REFUSED):  # its content was never parsed (grader.kernels.channels)
                self.refused.add(key)
                return None
            content = msg.get("content")
            size = msg.get(HELD, 0)  # what its content holds, parsed
            data = content.get("data") if kind == "display_data" and isinstance(content, dict) else None
            if isinstance(data, dict) and MIME in data:
                self.report_bytes += size
                self.all_reports += size
                if self.report_bytes <= REPORT_BYTES and self.all_reports <= NOTEBOOK_REPORT_BYTES:
                    sent = data[MIME]  # a list of reports (grader.grading.probe), or anything: data
                    self.reports.extend(sent if isinstance(sent, list) else [sent])
                return None
            used = self.sizes.get(key, 0)
            if used + size > self.output_cap or self.all_outputs + size > NOTEBOOK_OUTPUT_BYTES:
                self.sizes[key] = self.output_cap  # nothing more fits, however small
                self.dropped[key] = self.dropped.get(key, 0) + size
                return None
            self.sizes[key] = used + size
            self.all_outputs += size
        if self.part == "hidden":
            return None  # nothing a hidden test produces is kept: not an output, not a display update
        return super().process_message(msg, cell, cell_index)


CARRIAGE_RETURN = re.compile(r".*\r(?=[^\n])")  # a line a carriage return rewrote, up to that return


def coalesce_streams(cell: NotebookNode) -> None:
    """Join each run of the cell's prints to one stream into one output, and drop what a carriage return rewrote:
    what nbconvert's CoalesceStreamsPreprocessor stores (tests/grader/test_speed.py checks they agree), without
    importing nbconvert (0.1 s on the self-grade's critical path)."""
    if not cell.get("outputs"):
        return
    kept: list[NotebookNode] = []
    for output in cell.outputs:
        last = kept[-1] if kept else None
        if (last is not None and output.output_type == "stream" and last.output_type == "stream"
                and last.name == output.name):
            last.text += output.text
        else:
            kept.append(output)
    for output in kept:
        if output.output_type == "stream" and "\r" in output.text:
            output.text = CARRIAGE_RETURN.sub("", output.text)
    cell.outputs = kept


def _ready_while_the_kernel_starts() -> None:
    """What the first output of a run needs, made on a thread while the kernel starts (the grader mostly waits for
    it then): nbformat's output schema compiled (nbclient validates each output with it; 60 ms the first time)."""
    nbformat.validator.get_validator()  # the one nbformat.v4.new_output validates with


def _run_of(index: int, reply: dict[str, Any]) -> CellRun:
    """The cell's outcome as the kernel's execute_reply states it."""
    if reply.get("status") == "ok":
        return CellRun(index, CellStatus.OK)
    traceback = [str(line)[:KEPT_CHARS] for line in (reply.get("traceback") or [])[-KEPT_FRAMES:]]
    ename, evalue = str(reply.get("ename") or "Error")[:200], str(reply.get("evalue") or "")[:KEPT_CHARS]
    if ename == STDIN_ENAME:
        return _failed(index, CellStatus.ERROR, say(Say.STDIN))
    return CellRun(index, CellStatus.ERROR, ename, evalue, traceback)


def _failed(index: int, status: CellStatus, message: Message) -> CellRun:
    """A cell the grader marks failed, with its reason from the catalog (``grader.messages``)."""
    ename, _, evalue = message.english().partition(": ")
    return CellRun(index, status, ename, evalue, message=message)


async def _recover(kernel: Kernel, nb: NotebookNode, kept: list[int], deadline: float, limits: Limits) -> None:
    """After a restart: replay the cells that had run fine, silently (no history, outputs discarded).

    A replayed cell that does not finish (it stalls or kills the new kernel) is dropped from
    ``kept`` for good; the kernel is restarted and the replay begins again without it.
    """
    while True:
        for index in kept:
            left = min(limits.cell_timeout, deadline - monotonic())
            if left <= 0:
                return
            send = execute_request(nb.cells[index].source, silent=True, store_history=False)
            if (await request(kernel, send, left, limits.interrupt_grace)).outcome is not Outcome.REPLIED:
                logger.debug("replaying cell %d did not finish; the replay starts again without it", index)
                kept.remove(index)
                await kernel.restart()
                break
        else:
            return


async def _run_cell(kernel: Kernel, outputs: CellOutputs, cell: NotebookNode, index: int, code: str,
                    timeout: float, limits: Limits, part: str = "cell", store_history: bool = True
                    ) -> tuple[CellRun, bool]:
    """Run ``code`` for one cell (or one part of a test cell); its outcome, with its check reports, and whether
    the kernel was restarted. Outputs go to ``cell`` unless ``part`` is "hidden"."""
    outputs.start(part)
    if not code.strip():
        return CellRun(index, CellStatus.OK), False
    if part == "cell":
        cell.outputs = []
    outputs.kc = kernel.kc  # nbclient's comm handling reads it
    send = execute_request(code, store_history=store_history)
    answer = await request(kernel, send, timeout, limits.interrupt_grace,
                           lambda msg: outputs.process_message(msg, cell, index))
    if answer.lost or answer.outcome is Outcome.REFUSED:
        outputs.refused.add((index, part))
    if part == "cell" and cell.outputs:
        coalesce_streams(cell)
    seconds = max(1, math.ceil(timeout))
    match answer.outcome:
        case Outcome.REFUSED:  # the kernel lives on; only its reply was too big to read
            return _failed(index, CellStatus.ERROR, say(Say.REFUSED, mib=REFUSED_MIB)), False
        case Outcome.DIED:
            await kernel.restart()
            return _failed(index, CellStatus.DIED, say(Say.DIED)), True
        case Outcome.STUCK:
            await kernel.restart()
            return _failed(index, CellStatus.TIMEOUT, say(Say.TIMEOUT, seconds=seconds)), True
        case Outcome.TIMEOUT:
            return _failed(index, CellStatus.TIMEOUT, say(Say.TIMEOUT, seconds=seconds)), False
    run = _run_of(index, answer.reply)
    run.reports = outputs.reports
    return run, False


async def _run_hidden(kernel: Kernel, outputs: CellOutputs, nb: NotebookNode, index: int, code: KernelCode,
                      timeout: float, limits: Limits) -> tuple[CellRun, bool]:
    """Run a test cell's hidden part, of which only reports are kept; its run and whether the kernel restarted.

    Its run keeps nothing but its status, exception name and the line of the cell it was raised at: not its
    message, not its traceback.
    """
    hidden, restarted = await _run_cell(kernel, outputs, nb.cells[index], index, code.hidden, timeout, limits,
                                        "hidden", store_history=False)
    hidden.line = cell_line(hidden.traceback)
    hidden.evalue, hidden.traceback = "", []
    return hidden, restarted


def _out_of_budget(limits: Limits) -> Message:
    """Why a cell did not run: the notebook's time budget was spent."""
    return say(Say.BUDGET, seconds=f"{limits.notebook_timeout:g}")


def _mark_truncated(outputs: CellOutputs, nb: NotebookNode) -> None:
    """Say, in the student's language, where outputs were cut: the graded notebook is what the student reads."""
    notes = {index: say(Say.TRUNCATED, chars=dropped)
             for (index, part), dropped in outputs.dropped.items() if part == "cell"}
    for index, part in outputs.refused:
        if part == "cell":
            notes[index] = say(Say.TRUNCATED_MESSAGE, mib=REFUSED_MIB)
    for index, note in sorted(notes.items()):
        nb.cells[index].outputs.append(nbformat.v4.new_output("stream", name="stdout", text=f"\n{note.spanish()}\n"))


async def run_notebook(nb: NotebookNode, limits: Limits = DEFAULT_LIMITS, supply: KernelSupply | None = None,
                       tests: Mapping[int, KernelCode] | None = None, hidden_last: bool = True) -> list[CellRun]:
    """Execute every code cell of ``nb`` in a fresh kernel, outputs in place; returns a CellRun per code cell.

    ``tests`` maps the index of each test cell to the code the kernel runs for it (``grader.grading.testcells``);
    the notebook's own source of a test cell never reaches the kernel. The hidden parts run after the last
    cell; ``hidden_last=False`` runs each right after its visible part, for trusted code only (the
    written-down wrong answers, ``grader.grading.mistakes``, whose runs put the solution back after them).
    """
    tests = tests or {}
    ready = asyncio.get_running_loop().run_in_executor(None, _ready_while_the_kernel_starts)  # on a thread, now
    with phase("start-up"):
        try:
            kernel = await supply.take() if supply else await start_kernel(limits.memory_bytes)
        finally:
            await ready
    outputs = CellOutputs(nb, limits.output_bytes)
    runs: list[CellRun] = []
    kept: list[int] = []  # cells that ran fine, replayed after a restart
    pending: list[CellRun] = []  # test cells whose visible part passed and whose hidden part is still to run
    deadline = monotonic() + limits.notebook_timeout
    try:
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            left = deadline - monotonic()
            if left <= 0:
                runs.append(_failed(index, CellStatus.NOT_RUN, _out_of_budget(limits)))
                continue
            timeout = min(limits.cell_timeout, left)
            code = tests[index].visible if index in tests else cell.source
            run, restarted = await _run_cell(kernel, outputs, cell, index, code, timeout, limits,
                                             store_history=index not in tests)
            runs.append(run)
            if run.ok and index in tests and tests[index].hidden.strip():
                if hidden_last or restarted:
                    pending.append(run)
                else:
                    run.hidden, restarted = await _run_hidden(kernel, outputs, nb, index, tests[index], timeout, limits)
            if restarted:
                await _recover(kernel, nb, kept, deadline, limits)
            elif run.ok and index not in tests:
                kept.append(index)
        # the hidden parts run last, when no cell of the notebook can run any more to print what they sent
        for run in pending:
            left = deadline - monotonic()
            if left <= 0:
                run.hidden = _failed(run.index, CellStatus.NOT_RUN, _out_of_budget(limits))
                continue
            run.hidden, restarted = await _run_hidden(kernel, outputs, nb, run.index, tests[run.index],
                                                      min(limits.cell_timeout, left), limits)
            if restarted:
                await _recover(kernel, nb, kept, deadline, limits)
    finally:
        with phase("start-up"):
            await (supply.give_back(kernel) if supply else kernel.stop())
    _mark_truncated(outputs, nb)
    return runs


def execute(nb: NotebookNode, limits: Limits = DEFAULT_LIMITS, supply: KernelSupply | None = None,
            tests: Mapping[int, KernelCode] | None = None, hidden_last: bool = True) -> list[CellRun]:
    """Synchronous ``run_notebook``: on the supply's loop when given, else on a new one."""
    if supply is not None:
        return supply.run(run_notebook(nb, limits, supply, tests, hidden_last))
    return asyncio.run(run_notebook(nb, limits, tests=tests, hidden_last=hidden_last))
