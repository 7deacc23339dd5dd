"""grader: generate student notebooks, grade submissions, batch a class and check the course.

    from grader import grade
    report = grade("solutions/03_pseudo_tool.ipynb", "alice.ipynb")

Importing ``grader`` is cheap, so test cells can use ``from grader import assert_same``;
the heavier parts load on first use.

The layers, each importing only those listed before it, authoring and kernels not each other (test_boundaries):

    errors, messages, settings, course_config, timing   what every layer uses
    authoring/   the course's notebooks, their metadata, student versions, releases, the workspace
    kernels/     sandboxed kernels: the sandbox, the zygote, uids, folders, the kernel supply
    grading/     one submission: assemble, execute, judge (pipeline.grade), the report's data
    pages        the HTML pages (feedback, class view), from templates/
    classroom/   a class: batch, pool, cluster, the gradebook (the grades folder), manual marks, class view
    __main__     the command line
"""

from .grading.asserts import AS_SOLUTION, assert_same

__all__ = ["assert_same", "AS_SOLUTION", "grade", "grade_notebooks", "Limits", "UnusableNotebook", "Report",
           "TestResult"]

__version__ = "0.2.0"  # the batch cache key hashes the grader's code instead (grader.grading.reference.grader_digest)

_LAZY = {
    "grade": "grading.pipeline", "grade_notebooks": "grading.pipeline", "Limits": "grading.execute",
    "UnusableNotebook": "authoring.notebooks", "Report": "grading.report", "TestResult": "grading.report",
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'grader' has no attribute {name!r}")
