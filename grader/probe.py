"""Runs in the kernel: a check's sides sent to the grader as typed data; the grader alone compares them.

A test cell reaches the kernel with each ``assert_same(actual, expected, what)`` rewritten as
``check(k, actual, what)`` (``grader.testcells``): the kernel never sees the expected side. In
the reference run of the solution the rewritten call also carries ``expected=``. What this
sends is only data: a forged, repeated or missing report fails its check in the grader.
"""

from typing import Any

from .values import encode

MIME = "application/vnd.handoffs-grader.check+json"
WHAT_CHARS = 500


def check(index: int, actual: Any, what: Any = "valor", **expected: Any) -> None:
    """Send check ``index``: ``actual`` (and ``expected``, in the reference run) encoded, with its description."""
    from IPython.display import publish_display_data

    report: dict[str, Any] = {"check": index, "actual": encode(actual), "what": str(what)[:WHAT_CHARS]}
    if "expected" in expected:
        report["expected"] = encode(expected["expected"])
    publish_display_data({MIME: report})
