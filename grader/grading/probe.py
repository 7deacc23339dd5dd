"""Runs in the kernel: a check's sides sent to the grader as typed data; the grader alone compares them.

A test cell reaches the kernel with each ``assert_same(actual, expected, what)`` rewritten as
``check(k, actual, what)`` (``grader.grading.testcells``): the kernel never sees the expected side. In
the reference run of the solution the rewritten call also carries ``expected=``. What this
sends is only data: a forged, repeated or missing report fails its check in the grader.

Reports go out together, as one display message holding a list, when the request ends
(IPython's ``post_execute`` event, which runs whether the code raised or not) or once
``BATCH`` of them or ``BATCH_CHARS`` of JSON are waiting: one message per test part instead of one
per check, each far under the size a grader's socket accepts (``grader.kernels.channels``).
"""

import json
from typing import Any

from .values import digest, encode

MIME = "application/vnd.handoffs-grader.check+json"
WHAT_CHARS = 500
BATCH = 64
BATCH_CHARS = 256 * 1024

_waiting: list[dict[str, Any]] = []
_chars = 0
_hooked = False


def check(index: int, actual: Any, what: Any = "valor", *, hashed: bool = False, **expected: Any) -> None:
    """Report check ``index``: ``actual`` (and ``expected``, in the reference run) encoded, with its description;
    ``hashed`` (a check on generated inputs): its digest instead (``grader.grading.values.digest``)."""
    global _chars
    report: dict[str, Any] = {"check": index, "actual": digest(actual) if hashed else encode(actual),
                              "what": str(what)[:WHAT_CHARS]}
    if "expected" in expected:
        report["expected"] = encode(expected["expected"])
    _waiting.append(report)
    _chars += len(json.dumps(report))
    if len(_waiting) >= BATCH or _chars >= BATCH_CHARS or not _flushed_at_the_end():
        flush()


def compare(index: int, actual: Any, expected: Any) -> Any:
    """``grader convert``'s run of a trusted source (``grader.grading.convert``): report whether ``actual ==
    expected`` holds, and both sides encoded, at once; returns ``actual == expected`` itself, so that ``assert
    compare(k, A, B)`` does what ``assert A == B`` does."""
    from IPython.display import publish_display_data

    result = actual == expected
    try:
        equal: bool | str = bool(result)
    except Exception as error:  # noqa: BLE001 - the assert raises it again; here it is only reported
        equal = type(error).__name__
    publish_display_data({MIME: [{"compare": index, "equal": equal, "actual": encode(actual),
                                  "expected": encode(expected)}]})
    return result


def flush() -> None:
    """Send the reports still waiting, as one display message (a list of reports)."""
    global _chars
    if _waiting:
        from IPython.display import publish_display_data

        reports = _waiting.copy()
        _waiting.clear()
        _chars = 0
        publish_display_data({MIME: reports})


def _flushed_at_the_end() -> bool:
    """Whether the end of this request sends what waits (``flush`` on ``post_execute``), registered the first time;
    False outside IPython."""
    global _hooked
    if not _hooked:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is None:
            return False
        shell.events.register("post_execute", flush)
        _hooked = True
    return True
