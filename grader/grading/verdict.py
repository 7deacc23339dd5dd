"""A test cell's verdict, decided in the grader: the kernel's check reports against the reference's expected values.

A test passes only when its visible part (and hidden part, if any) ran without raising and
every check was reported exactly once with a value the same, type for type, as the expected
one. Reports are untrusted data: a report that does not parse, names a check of the other
part or an unknown one, or comes twice fails the test; so does a check with no report. A
failure in the hidden part says only that it happened there, and a fixed word: the grader's own
(timeout, died) or the name of a built-in exception, never a string the kernel chose.

A test cell graded the nbgrader way (``KernelCode.plain``: it breaks the ``assert_same`` rule) has no
checks: it passes when each of its parts ran without raising, a verdict the student's kernel decides.
Its reports, if any, are ignored.
"""

import builtins
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ..messages import Message, Say, say
from .execute import CellRun, CellStatus
from .report import TestStatus
from .testcells import KernelCode
from .tracebacks import raised_at
from .values import Node, difference

STATUS = {CellStatus.OK: TestStatus.PASSED, CellStatus.ERROR: TestStatus.FAILED, CellStatus.TIMEOUT: TestStatus.TIMEOUT,
          CellStatus.DIED: TestStatus.DIED, CellStatus.NOT_RUN: TestStatus.NOT_RUN}


class CheckReport(BaseModel):
    """One check as a kernel reports it (``grader.grading.probe``): its number, its actual value, its description."""

    model_config = ConfigDict(extra="forbid", strict=True)

    check: int
    actual: dict[str, Any]
    what: str = "valor"
    expected: dict[str, Any] | None = None


def public_name(ename: str) -> str:
    """What a failed hidden part may say of its exception: a built-in exception's name, else "Exception".

    A class name is the kernel's to choose (one named after a hidden line would print it), so
    only names from the fixed built-in set are shown.
    """
    named = getattr(builtins, ename, None)
    return ename if isinstance(named, type) and issubclass(named, BaseException) else "Exception"


def parse_reports(raw: list[Any]) -> list[CheckReport] | None:
    """The reports of one part, or None when any of them is not a report."""
    try:
        return [CheckReport.model_validate(item) for item in raw]
    except ValidationError:
        return None


def _part(reports: list[Any], checks: list[int]) -> dict[int, CheckReport] | str:
    """Each check's one report, or why the part's reports cannot be used (Spanish, one line)."""
    parsed = parse_reports(reports)
    if parsed is None:
        return "un informe del kernel no es válido"
    found: dict[int, CheckReport] = {}
    for report in parsed:
        if report.check not in checks:
            return f"el kernel informó una comprobación que esta parte no tiene ({report.check + 1})"
        if report.check in found:
            return f"el kernel informó la comprobación {report.check + 1} más de una vez"
        found[report.check] = report
    return found


def _hidden_failed(hidden: CellRun, code: KernelCode | None = None) -> tuple[TestStatus, Message]:
    """A hidden part that raised or was stopped: its status, and a fixed word (ours, or a built-in exception's), with
    the kind of input when it was raised in a generated check (the line is the kernel's to report: at worst it
    names another of the author's kinds)."""
    word = hidden.ename if hidden.message is not None else public_name(hidden.ename)
    line = hidden.line if code is not None and hidden.message is None else None
    kinds = [c.what for c in code.checks if c.generated and c.line <= line <= c.end_line] if line and code else []
    return STATUS[hidden.status], _in_hidden(word, kinds[0] if kinds else None)


def _in_hidden(word: str, kind: str | None) -> Message:
    """A hidden failure, with the kind of generated input it failed on when there is one."""
    return say(Say.IN_GENERATED, ename=word, inputs=kind) if kind else say(Say.IN_HIDDEN, ename=word)


def _as_nbgrader(code: KernelCode, run: CellRun) -> tuple[TestStatus, str | Message]:
    """A cell graded the nbgrader way, whose visible part raised nothing: passed unless its hidden part did not
    run or raised."""
    if not code.hidden.strip():
        return TestStatus.PASSED, ""
    if run.hidden is None:
        return TestStatus.FAILED, say(Say.IN_HIDDEN, ename="NotRun")
    return _hidden_failed(run.hidden) if not run.hidden.ok else (TestStatus.PASSED, "")


def judge(code: KernelCode, run: CellRun, expected: dict[int, Node]) -> tuple[TestStatus, str | Message]:
    """(status, feedback) of a test cell from its run and the expected value of each check: one line, or one of
    the grader's own messages (``grader.messages``)."""
    if not run.ok:
        return STATUS[run.status], run.message or raised_at(run.summary, run.traceback, code.lines) or run.summary
    if code.plain:
        return _as_nbgrader(code, run)
    visible = [c.index for c in code.checks if not c.hidden]
    hidden = [c.index for c in code.checks if c.hidden]
    found = _part(run.reports, visible)
    if isinstance(found, str):
        return TestStatus.FAILED, f"CheckReport: {found}"
    for check in code.checks:
        if check.hidden:
            continue
        what = found[check.index].what if check.index in found else (check.what or f"comprobación {check.index + 1}")
        if check.index not in found:
            return TestStatus.FAILED, f"CheckMissing: {what}: esta comprobación no llegó a informar su valor"
        if check.index not in expected:
            return (TestStatus.FAILED,
                    f"NoExpectedValue: {what}: el grader no tiene el valor esperado de esta comprobación")
        if (problem := difference(found[check.index].actual, expected[check.index], what)) is not None:
            return TestStatus.FAILED, f"AssertionError: {problem}"
    if not hidden:
        return TestStatus.PASSED, ""
    if run.hidden is None:
        return TestStatus.FAILED, say(Say.IN_HIDDEN, ename="NotRun")
    if not run.hidden.ok:
        return _hidden_failed(run.hidden, code)
    found = _part(run.hidden.reports, hidden)
    if isinstance(found, str):
        return TestStatus.FAILED, say(Say.IN_HIDDEN, ename="AssertionError")
    for check in code.checks:
        if check.hidden and (check.index not in found or check.index not in expected
                             or difference(found[check.index].actual, expected[check.index]) is not None):
            return TestStatus.FAILED, _in_hidden("AssertionError", check.what if check.generated else None)
    return TestStatus.PASSED, ""
