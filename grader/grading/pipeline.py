"""The one-call API: ``grade(source, submission) -> Report``, no database, no course folder."""

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
from nbformat import NotebookNode
from pydantic import ConfigDict, TypeAdapter

from ..authoring.course import graded_ids
from ..authoring.generate import student_version
from ..authoring.metadata import grade_id, is_manual, is_protected, is_solution, is_test, points, type_problems
from ..authoring.notebooks import UnusableNotebook, parse_notebook, read_notebook
from ..kernels.supply import KernelSupply
from ..messages import Message, Say, say
from ..timing import phase
from . import cache
from .assemble import Assembly, assemble
from .execute import DEFAULT_LIMITS, CellRun, Limits, execute
from .hidden import Scrubber
from .mistakes import name_mistakes, tests_of
from .reference import Reference, mistakes_for, reference_for, reported, source_key
from .report import ManualResult, Report, TestResult, TestStatus, result_line
from .scan import scan_cells
from .testcells import KernelCode, rewrite_tests
from .tracebacks import in_your_cell
from .verdict import judge

VISIBLE_ONLY_NOTE = say(Say.VISIBLE_ONLY)
_KERNEL_CODES = TypeAdapter(dict[str, KernelCode], config=ConfigDict(strict=True))
"""A cached ``rewrite_tests``, read back from its JSON: each field of its own type, or the entry is not trusted."""


class WrongLesson(UnusableNotebook):
    """A submission that shares no graded cell with the source: the notebook of another lesson."""


def _results(source: NotebookNode, assembly: Assembly, runs: list[CellRun], codes: dict[str, KernelCode],
             reference: Reference, mistakes: Callable[[set[str]], dict[str, Any]] | None,
             answered: set[str]) -> dict[str, list]:
    """The report's lists: a result per test cell, the cells that failed, and the written-down mistakes that the
    ``answered`` exercises which lost points behave like (``mistakes`` runs their table when the reference has
    none; an exercise left as its stub behaves like no written-down answer, so none is run for it)."""
    report_parts: dict[str, list] = {"exercises": [], "solution_errors": [], "other_errors": [], "mistakes": []}
    test_cells = {grade_id(c): c for c in source.cells if is_test(c)}
    owned = tests_of(source)
    exercise_of_test = {gid: exercise for exercise, gids in owned.items() for gid in gids}
    kinds = {index: gid for gid, index in assembly.positions.items()}
    for run in sorted(runs, key=lambda run: run.index):
        gid = kinds.get(run.index)
        cell = assembly.notebook.cells[run.index]
        if gid is not None and gid in test_cells:
            worth = points(test_cells[gid])
            status, feedback = judge(codes[gid], run, reference.expected.get(gid, {}))
            message = feedback if isinstance(feedback, Message) else None
            earned = worth if status == TestStatus.PASSED else 0.0
            report_parts["exercises"].append(TestResult(gid, earned, worth, status,
                                                        message.english() if message else str(feedback), message,
                                                        exercise_of_test.get(gid, ""), bool(codes[gid].plain)))
        elif not run.ok and gid and is_solution(cell):
            located = run.message or in_your_cell(run.ename, run.evalue, run.traceback, cell.source.splitlines(), gid)
            report_parts["solution_errors"].append({"cell": run.index, "grade_id": gid, "error": run.summary}
                                                   | ({"message": located} if located else {}))
        elif not run.ok:
            report_parts["other_errors"].append({"cell": run.index, "grade_id": gid, "error": run.summary})
    _after_failed_answers(report_parts["exercises"], report_parts["solution_errors"])
    failed = {r.grade_id for r in report_parts["exercises"] if r.points < r.max_points}
    lost = {exercise for exercise, gids in owned.items() if failed & set(gids) and exercise in answered}
    if lost and mistakes is not None:
        table = reference.mistakes if reference.mistakes is not None else mistakes(lost)
        by_gid = {gid: run for run in runs if (gid := kinds.get(run.index)) is not None}
        report_parts["mistakes"] = [m.model_dump() for m in name_mistakes(table, owned, by_gid, lost)]
    return report_parts


def _after_failed_answers(results: list[TestResult], errors: list[dict[str, Any]]) -> None:
    """Each test of an exercise whose answer cell failed (a ``SyntaxError``...) that did not pass says it could not run
    because of that cell, with that cell's error: not the ``NameError`` the missing answer caused in the test."""
    failed = {e["grade_id"]: e.get("message") or e["error"] for e in errors}
    for result in results:
        if result.status != TestStatus.PASSED and result.exercise in failed:
            result.message = say(Say.AFTER_YOUR_CELL, cell=result.exercise, error=failed[result.exercise])
            result.feedback = result.message.english()
    for error in errors:  # the report's JSON: the error in English (no kernel's name for the cell), and its message
        if isinstance(message := error.get("message"), Message):
            error.update(error=message.english(), message=message.to_dict())


def _reported_expected(assembly: Assembly, runs: list[CellRun]) -> Reference:
    """A self-check's expected values: those the submission's own kernel reported beside each actual value."""
    kinds = {index: gid for gid, index in assembly.positions.items()}
    reference = Reference()
    for run in runs:
        if (gid := kinds.get(run.index)) is not None:
            reference.expected[gid] = {r.check: r.expected for r in reported(run) if r.expected is not None}
    return reference


def _words(text: str) -> str:
    return " ".join(text.split())


def _manual(source: NotebookNode, assembly: Assembly, student: NotebookNode) -> list[ManualResult]:
    """The manually graded cells, each with the answer that was graded (never executed): pending, or 0 when the
    answer is the student version's stub untouched or empty (nbgrader scores such a cell 0 as well)."""
    stubs = {grade_id(c): _words(c.source) for c in student.cells if grade_id(c)}
    results = []
    for cell in source.cells:
        if is_manual(cell) and (gid := grade_id(cell)) in assembly.positions:
            answer = assembly.notebook.cells[assembly.positions[gid]].source
            untouched = _words(answer) in ("", stubs.get(gid, ""))
            results.append(ManualResult(gid, points(cell), 0.0 if untouched else None, answer, untouched))
    return results


def _answers(source: NotebookNode, assembly: Assembly, student: NotebookNode) -> dict[str, str]:
    """Each autograded exercise's cell as the student wrote it, when it is not the stub (for the class view)."""
    stubs = {grade_id(c): _words(c.source) for c in student.cells if grade_id(c)}
    found = {}
    for cell in source.cells:
        if is_solution(cell) and not is_manual(cell) and (gid := grade_id(cell)) in assembly.positions:
            text = assembly.notebook.cells[assembly.positions[gid]].source
            if _words(text) not in ("", stubs.get(gid, "")):
                found[gid] = text
    return found


def feedback_notebook(assembly: Assembly, student: NotebookNode, report: Report) -> NotebookNode:
    """The graded notebook as the student may see it: visible test source, one result line per test."""
    nb = copy.copy(assembly.notebook)  # a new list of the same cells: only the test cells are copied and changed
    nb.cells = list(nb.cells)
    visible = {grade_id(c): c.source for c in student.cells if grade_id(c)}
    results = {r.grade_id: r for r in report.exercises}
    for error in report.solution_errors:  # the answer cell's error as the table says it, at the line of that cell
        if error.get("message") and error["cell"] < len(nb.cells):
            cell = nb.cells[error["cell"]] = copy.deepcopy(nb.cells[error["cell"]])
            ename, _, evalue = Message.from_dict(error["message"]).spanish().partition(": ")
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    output.update(ename=ename, evalue=evalue)
    for gid, index in assembly.positions.items():
        if gid in results:
            result = results[gid]
            cell = nb.cells[index] = copy.deepcopy(nb.cells[index])
            cell.source = visible[gid]
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=result_line(result) + "\n")]
    return nb


def check_submission(source: NotebookNode, submission: NotebookNode, name: str) -> None:
    """Refuse a submission with wrongly typed metadata, or sharing no graded cell with the source (another lesson)."""
    problems = type_problems(submission, name)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise UnusableNotebook(f"{problems[0]}{more}")
    source_ids = graded_ids(source)  # not locked cells: every lesson has a "setup" and a "summary"
    if source_ids and not source_ids & graded_ids(submission):
        raise WrongLesson(f"{name}: holds no cell of the source notebook; is it the right lesson?")


def grade_notebooks(source: NotebookNode, submission: NotebookNode, *, limits: Limits = DEFAULT_LIMITS,
                    names: tuple[str, str] = ("source", "submission"), supply: KernelSupply | None = None,
                    student: NotebookNode | None = None, reference: Reference | None = None,
                    visible_only: bool = False, name_mistakes: bool = True, disk: bool = False
                    ) -> tuple[Report, NotebookNode]:
    """Grade an in-memory submission against an in-memory source; returns (report, feedback notebook).

    ``student`` is the source's generated student version, and ``reference`` the expected values
    of its checks (``grader.grading.reference``), when the caller already has them. The student's kernel
    receives each test cell without the expected side of its checks; every verdict is decided
    here. Every output and message is scrubbed of the hidden tests before it leaves this function.

    ``visible_only`` is a student's self-check in a release (``grader.authoring.release``): the source is a
    student notebook, there is no solution to run, and each check's expected side is evaluated in
    the submission's own kernel, beside its actual side. Never use it to grade a class.

    ``disk`` keeps the reference and the mistake table in the disk cache (``grader.grading.cache``) and reads
    them from it: a student's repeated self-grade. Nothing is cached when ``visible_only``.
    """
    check_submission(source, submission, names[1])
    student = student if student is not None else _student_of(source, names[0], disk and not visible_only)
    codes = _tests_of(source, visible_only, disk and not visible_only)
    if not visible_only:
        reference = reference if reference is not None else reference_for(source, student, limits, supply,
                                                                           disk=disk)
    assembly = assemble(source, submission, student)
    suspicious = scan_cells([c.source for c in assembly.notebook.cells
                             if c.cell_type == "code" and not is_protected(c)])
    tests = {assembly.positions[gid]: code for gid, code in codes.items() if gid in assembly.positions}
    with phase("run"):
        runs = execute(assembly.notebook, limits, supply, tests)
    with phase("compare"):
        if visible_only:
            reference = _reported_expected(assembly, runs)
        assert reference is not None
        mistakes = (None if visible_only or not name_mistakes else
                    lambda lost: mistakes_for(source, student, limits, supply, lost, disk))
        scrub = Scrubber([c for c in source.cells if is_test(c)], [code.hidden_only for code in codes.values()])
        scrub.notebook(assembly.notebook)
        for run in runs:
            scrub.run(run)  # before any message is shortened or joined into one line
        answers = _answers(source, assembly, student)
        results = _results(source, assembly, runs, codes, reference, mistakes, set(answers))
    with phase("report"):
        notes = assembly.notes + ([VISIBLE_ONLY_NOTE] if visible_only else [])
        report = Report(submission=names[1], source=names[0], tampered=assembly.tampered, notes=notes,
                        suspicious=suspicious, manual=_manual(source, assembly, student), answers=answers,
                        **results)
        return report, feedback_notebook(assembly, student, report)


def _student_of(source: NotebookNode, name: str, disk: bool) -> NotebookNode:
    """The source's student version; with ``disk``, kept in the disk cache (generating it imports nbgrader)."""
    if not disk:
        return student_version(source, name)
    return cache.kept("student", cache.key_of(source_key(source), "student"), _notebook,
                      lambda: student_version(source, name))  # a NotebookNode is a dict: JSON as it is


def _tests_of(source: NotebookNode, expected: bool, disk: bool) -> dict[str, KernelCode]:
    """``rewrite_tests`` of the source; with ``disk``, kept in the disk cache (parsing every cell costs 0.2-0.4 s)."""
    if not disk:
        return rewrite_tests(source, expected=expected)
    return cache.kept("tests", cache.key_of(source_key(source), "tests"),
                      lambda data: _KERNEL_CODES.validate_json(json.dumps(data)),
                      lambda: rewrite_tests(source, expected=expected),
                      lambda codes: _KERNEL_CODES.dump_python(codes, mode="json"))


def _notebook(data: Any) -> NotebookNode:
    """A cached notebook, read back as ``read_notebook`` reads a file."""
    return parse_notebook(json.dumps(data).encode(), "cached student version")


def grade(source: str | Path, submission: str | Path, *, limits: Limits = DEFAULT_LIMITS) -> Report:
    """Grade the notebook file ``submission`` against the solution notebook ``source``."""
    source, submission = Path(source), Path(submission)
    report, _ = grade_notebooks(read_notebook(source), read_notebook(submission), limits=limits,
                                names=(str(source), str(submission)))
    return report
