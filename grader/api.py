"""The one-call API: ``grade(source, submission) -> Report``, no database, no course folder."""

import copy
from pathlib import Path

import nbformat

from .assemble import assemble
from .execute import Limits, execute
from .generate import student_version
from .metadata import grade_id, is_solution, is_test, points
from .notebooks import UnusableNotebook, read_notebook
from .report import Report, TestResult

STATUS = {"ok": "passed", "error": "failed", "timeout": "timeout", "died": "died", "not-run": "not-run"}


def _results(source, assembly, runs):
    by_index = {run.index: run for run in runs}
    report_parts = {"exercises": [], "solution_errors": [], "other_errors": []}
    test_cells = {grade_id(c): c for c in source.cells if is_test(c)}
    kinds = {index: gid for gid, index in assembly.positions.items()}
    for index, run in sorted(by_index.items()):
        gid = kinds.get(index)
        if gid in test_cells:
            report_parts["exercises"].append(TestResult(
                gid, points(test_cells[gid]) if run.ok else 0.0, points(test_cells[gid]),
                STATUS[run.status], run.summary))
        elif not run.ok:
            cell = assembly.notebook.cells[index]
            kind = "solution_errors" if gid and is_solution(cell) else "other_errors"
            report_parts[kind].append({"cell": index, "grade_id": gid, "error": run.summary})
    return report_parts


def feedback_notebook(assembly, student, report):
    """The graded notebook as the student may see it: visible test source, one result line per test."""
    nb = copy.deepcopy(assembly.notebook)
    visible = {grade_id(c): c.source for c in student.cells if grade_id(c)}
    results = {r.grade_id: r for r in report.exercises}
    for gid, index in assembly.positions.items():
        cell = nb.cells[index]
        if gid in results:
            result = results[gid]
            cell.source = visible[gid]
            line = f"{result.status} ({result.points:g}/{result.max_points:g})"
            line += f": {result.feedback}" if result.feedback else ""
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=line + "\n")]
    return nb


def check_submission(source, submission, name):
    """Refuse a submission that holds no cell of the source: it is the wrong notebook."""
    source_ids = {grade_id(c) for c in source.cells if grade_id(c)}
    if source_ids and not source_ids & {grade_id(c) for c in submission.cells}:
        raise UnusableNotebook(f"{name}: holds no cell of the source notebook; is it the right lesson?")


def grade_notebooks(source, submission, *, limits=Limits(), names=("source", "submission"), supply=None,
                    student=None):
    """Grade an in-memory submission against an in-memory source; returns (report, feedback notebook).

    ``student`` is the source's generated student version, when the caller already has it.
    """
    check_submission(source, submission, names[1])
    student = student if student is not None else student_version(source, names[0])
    assembly = assemble(source, submission, student)
    runs = execute(assembly.notebook, limits, supply)
    report = Report(submission=names[1], source=names[0], tampered=assembly.tampered, notes=assembly.notes,
                    **_results(source, assembly, runs))
    return report, feedback_notebook(assembly, student, report)


def grade(source, submission, *, limits=Limits()):
    """Grade the notebook file ``submission`` against the solution notebook ``source``."""
    source, submission = Path(source), Path(submission)
    report, _ = grade_notebooks(read_notebook(source), read_notebook(submission), limits=limits,
                                names=(str(source), str(submission)))
    return report
