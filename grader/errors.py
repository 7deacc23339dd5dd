"""One root exception for the grader: ``GraderError``, for an input the grader cannot use.

A failing cell, a tampered test or a dead kernel are not exceptions: they are marks in a
report. ``GraderError`` is for what stops a command: an unusable notebook, a source that
is not a course notebook, an external tool that failed.
"""


class GraderError(Exception):
    """The root of every exception the grader raises on purpose."""
