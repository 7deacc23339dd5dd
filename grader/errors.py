"""One root exception for the grader: ``GraderError``, for an input the grader cannot use.

A failing cell, a tampered test or a dead kernel are not exceptions: they are marks in a
report. ``GraderError`` is for what stops a command: an unusable notebook, a source that
is not a course notebook, a missing file or folder, an external tool that failed. The one
deliberate exception outside it is ``assert_same``'s ``CheckFailed``, an ``AssertionError``: a failing test.
"""


class GraderError(Exception):
    """The root of every exception the grader raises on purpose."""


class MissingPath(GraderError, FileNotFoundError):
    """A file or folder the command needs does not exist (a lesson, the submissions folder)."""


class WrongKindOfPath(GraderError, ValueError):
    """A path names a file where a folder is wanted, or a folder where a file is (``batch alice.ipynb``)."""


class SandboxError(GraderError, RuntimeError):
    """The sandbox cannot run a kernel: no free sandbox uid, a zygote or a kernel that died while starting."""


class KernelStartTimeout(SandboxError, TimeoutError):
    """A kernel did not bind its sockets within the start-up time."""


class InvalidSetting(GraderError, ValueError):
    """An environment setting of the grader has a value it does not know."""


class SandboxSetupError(GraderError, OSError):
    """A system call that sets the sandbox up failed (in the launcher, before the kernel runs)."""


class ClusterError(GraderError):
    """A batch cannot run on the Dask cluster asked for: dask.distributed missing, a bad or unreachable scheduler."""
