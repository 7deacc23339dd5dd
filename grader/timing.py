"""Where a worker's time goes: seconds per phase of grading one submission, recorded by the grader itself.

``phases()`` opens a record for one submission; code anywhere below it adds to a phase with
``phase(name)``, which records nothing when no record is open. The record travels back with
the worker's result (``grader.classroom.batch.Graded``) and is never printed by the grader; the
benchmark (``benchmarks/grading.py``) prints it beside the warm-kernel floor.
"""

import contextlib
import contextvars
import time
from collections.abc import Iterator

PHASES = ("start-up", "assemble", "run", "compare", "report", "files")
"""start-up: taking a started kernel and stopping it; assemble: parsing, checking and assembling the submission;
run: its cells in the kernel; compare: verdicts and mistakes; report: the report and the feedback page;
files: writing them (in the batch's client)."""
WORKER_START = "worker start"
"""Once per worker process, before its first task: its zygote and first kernels started. Recorded with the worker's
first submission but not one of its PHASES: a cost per batch, not per submission."""
_once: dict[str, float] = {}


class _Record:
    """Seconds per phase; a phase opened inside another is not counted in the outer one."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.current: str | None = None
        self.since = time.perf_counter()

    def switch(self, name: str | None) -> None:
        now = time.perf_counter()
        if self.current is not None:
            self.seconds[self.current] = self.seconds.get(self.current, 0.0) + now - self.since
        self.current, self.since = name, now


_record: contextvars.ContextVar[_Record | None] = contextvars.ContextVar("grader_phases", default=None)


@contextlib.contextmanager
def phases() -> Iterator[dict[str, float]]:
    """A fresh record of seconds per phase for the code run inside this block (filled when the block ends)."""
    record = _Record()
    record.seconds.update(_once)
    _once.clear()
    token = _record.set(record)
    try:
        yield record.seconds
    finally:
        record.switch(None)
        _record.reset(token)


def once(name: str, seconds: float) -> None:
    """Time spent once in this process, outside any submission: added to the next record ``phases`` opens."""
    _once[name] = _once.get(name, 0.0) + seconds


@contextlib.contextmanager
def phase(name: str) -> Iterator[None]:
    """Count the time spent inside this block (but in a phase opened within it) to ``name`` in the open record."""
    record = _record.get()
    if record is None:
        yield
        return
    outer = record.current
    record.switch(name)
    try:
        yield
    finally:
        record.switch(outer)
