"""Assertions for test cells that compare exact types and values.

``assert_same(actual, expected)`` fails unless both have the very same type at every
level and equal values, so an object whose ``__eq__`` always returns True earns nothing. Its messages are
read by students, so they are Spanish. In IPython, a failed check shows the test's line and the message,
without this module's frames (``CheckFailed._render_traceback_``).

``AS_SOLUTION`` as the expected side of a hidden check (``assert_same(outputs, AS_SOLUTION, "empty lists")``)
means "what the solution gives for the same expression": the grader takes it from the reference run of the
solution (``grader.grading.reference``), so a hidden part can compare a student's outputs on many generated
inputs with the solution's, value by value, without writing them down. Run anywhere else (the solution
notebook on its own, or nbgrader, which grades in the student's kernel and has no reference), such a check
cannot know the solution's value, and passes.
"""

import math
from pathlib import Path
from types import TracebackType
from typing import Any

HERE = str(Path(__file__).resolve())


class CheckFailed(AssertionError):
    """A failed ``assert_same``: IPython shows it as an ``AssertionError`` raised at the student's line."""

    def _render_traceback_(self) -> list[str]:
        """IPython's own traceback of this error, with the frames of this module left out."""
        from IPython import get_ipython

        kept: TracebackType | None = None
        frames = []
        tb = self.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename != HERE:
                frames.append(tb)
            tb = tb.tb_next
        for tb in reversed(frames):
            kept = TracebackType(kept, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
        shell = get_ipython()
        if shell is None:  # pragma: no cover - only IPython calls this method
            return [f"AssertionError: {self}"]
        return list(shell.InteractiveTB.structured_traceback(AssertionError, self, kept))


class _AsSolution:
    """The expected side that stands for the solution's own value of the actual side (see the module)."""

    def __repr__(self) -> str:
        return "AS_SOLUTION"


AS_SOLUTION = _AsSolution()


def _same(actual: Any, expected: Any, path: str) -> None:
    if type(actual) is not type(expected):
        raise CheckFailed(f"{path}: se esperaba el tipo {type(expected).__name__}, "
                          f"se obtuvo {type(actual).__name__}")
    if isinstance(expected, dict):
        if set(actual) != set(expected):
            raise CheckFailed(f"{path}: se esperaban las claves {sorted(map(str, expected))}, "
                              f"se obtuvieron {sorted(map(str, actual))}")
        for key in expected:
            _same(actual[key], expected[key], f"{path}[{key!r}]")
    elif isinstance(expected, (list, tuple)):
        if len(actual) != len(expected):
            raise CheckFailed(f"{path}: se esperaban {len(expected)} elementos, se obtuvieron {len(actual)}")
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            _same(a, e, f"{path}[{i}]")
    elif isinstance(expected, float) and math.isnan(expected):
        if not math.isnan(actual):
            raise CheckFailed(f"{path}: se esperaba nan, se obtuvo {actual!r}")
    elif not (expected == actual and actual == expected):
        raise CheckFailed(f"{path}: se esperaba {expected!r}, se obtuvo {actual!r}")


def assert_same(actual: Any, expected: Any, what: str = "valor") -> None:
    """Fail unless ``actual`` has exactly the type and value of ``expected``, recursively (``AS_SOLUTION``: pass)."""
    if expected is not AS_SOLUTION:
        _same(actual, expected, what)
