"""One root exception for the grader: ``GraderError``, for an input the grader cannot use.

A failing cell, a tampered test or a dead kernel are not exceptions: they are marks in a
report. ``GraderError`` is for what stops a command: an unusable notebook, a source that
is not a course notebook, a missing file or folder, an external tool that failed. The one
deliberate exception outside it is ``AssertionError`` from ``assert_same``: a failing test.
"""


class GraderError(Exception):
    """The root of every exception the grader raises on purpose."""


class MissingPath(GraderError, FileNotFoundError):
    """A file or folder the command needs does not exist (a lesson, the submissions folder)."""
