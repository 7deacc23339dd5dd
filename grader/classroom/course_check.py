"""The course's CI gate: every notebook runs, solutions score full marks, student versions score zero.

Problems are collected for the whole course and reported together at the end, with the warnings: lines that
begin with ``WARNING`` and fail nothing. A course whose ``[tool.grader] strict`` is true (``grader.course_config``:
this course) refuses a test cell that breaks the ``assert_same`` rule, and one without a hidden part; in any other
course such a cell is graded the nbgrader way, in the student's kernel, and is a warning. The reference runs
and the wrong answers' tables it computes are kept in the disk cache (``grader.grading.cache``), so a
self-grade after ``grader check`` starts warm.
"""

import copy
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..authoring.course import (
    chosen,
    guided_notebooks,
    is_lesson,
    solution_notebooks,
    student_notebooks,
    student_path,
)
from ..authoring.generate import stamped, student_version
from ..authoring.metadata import grade_id, is_solution, metadata_problems, tags
from ..authoring.notebooks import dumps, read_notebook, tidy, write_atomic
from ..course_config import course_strict
from ..errors import GraderError, MissingPath
from ..grading.execute import DEFAULT_LIMITS, CellStatus, Limits, execute
from ..grading.mistakes import CODE, wrong_answers
from ..grading.pipeline import grade_notebooks
from ..grading.preload import imported_modules
from ..grading.reference import reference_for
from ..grading.report import Report
from ..grading.testcells import in_kernel, without_hidden_part
from ..grading.testcells import problems as rule_problems
from ..kernels.supply import worker_supply
from .pool import run_tasks

RAISES_TAG = "raises-exception"
WARNING = "warning: "


def _text(outputs: list[Any]) -> str:
    parts = []
    for output in outputs:
        if output.get("output_type") == "stream":
            parts.append(output.get("text", ""))
        elif output.get("output_type") == "execute_result":
            parts.append(output.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def check_guided(path: Path, limits: Limits = DEFAULT_LIMITS) -> list[str]:
    """A guided notebook runs clean, its raises-exception cells raise, and stored outputs come back the same."""
    nb = read_notebook(path)
    stored = {i: _text(c.outputs) for i, c in enumerate(nb.cells) if c.cell_type == "code" and _text(c.outputs)}
    runs, problems = execute(nb, limits, worker_supply()), []
    for run in runs:
        cell = nb.cells[run.index]
        expects_error = RAISES_TAG in tags(cell)
        if expects_error and run.status == CellStatus.OK:
            problems.append(f"{path}: cell {run.index} is tagged {RAISES_TAG} but ran without error")
        elif not run.ok and not (expects_error and run.status == CellStatus.ERROR):
            problems.append(f"{path}: cell {run.index} failed: {run.summary}")
        elif run.index in stored and _text(cell.outputs) != stored[run.index]:
            problems.append(f"{path}: cell {run.index} printed something other than its stored output")
    return problems


def store_outputs(path: Path, limits: Limits = DEFAULT_LIMITS) -> list[str]:
    """Run a guided notebook and store its outputs in it, so check can prove a fresh run reproduces them."""
    nb = read_notebook(path)
    runs = execute(nb, limits, worker_supply())
    failed = [f"{path}: cell {run.index} failed: {run.summary}" for run in runs
              if not run.ok and RAISES_TAG not in tags(nb.cells[run.index])]
    if failed:
        return failed
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":  # no machine paths in a committed traceback
                output["traceback"] = [f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"]
    text = dumps(tidy(nb, keep_outputs=True))
    if Path(path).read_text(encoding="utf-8") != text:
        write_atomic(path, text)
    return []


def is_warning(line: str) -> bool:
    """Whether a line of ``check_course`` is a warning, which fails nothing."""
    return line.startswith(WARNING)


def check_solution(path: Path, limits: Limits = DEFAULT_LIMITS, strict: bool = True) -> list[str]:
    """A solution notebook has valid metadata, test cells that follow the rule of ``grader.grading.testcells`` and
    each have a hidden part (``strict``; else each cell graded in the student's kernel, or without a hidden part, is
    a warning), passes its own checks in the reference run, and earns every point, with no cell failing and nothing
    restored."""
    source = read_notebook(path)
    problems = metadata_problems(source, str(path))
    if problems:
        return problems
    hidden = [f"{path}: {problem}" for problem in without_hidden_part(source)]  # gradable all the same
    if strict:
        problems = [f"{path}: {problem}" for problem in rule_problems(source)]
        if problems:
            return problems
        problems = hidden
    else:
        try:
            plain = in_kernel(source)
        except GraderError as error:  # a cell that can be graded neither way
            return [f"{path}: {error}"]
        problems = [f"{WARNING}{path}: test cell {gid}: graded the nbgrader way, its verdict decided in the "
                    f"student's kernel (a student can forge it): {why}" for gid, why in plain.items()]
        problems += [WARNING + line for line in hidden]
    student = student_version(source, str(path))
    reference = reference_for(source, student, limits, worker_supply(), disk=True)
    problems += [f"{path}: reference run: {problem}" for problem in reference.problems]
    report, _ = grade_notebooks(source, copy.deepcopy(source), limits=limits, names=(str(path), str(path)),
                                supply=worker_supply(), student=student, reference=reference)
    problems += [f"{path}: {r.grade_id}: solution scores {r.points:g}/{r.max_points:g} ({r.feedback})"
                 for r in report.exercises if r.points != r.max_points]
    problems += [f"{path}: cell {e['cell']} ({e['grade_id'] or 'no grade_id'}) failed: {e['error']}"
                 for e in report.solution_errors + report.other_errors]
    problems += [f"{path}: {t['grade_id']}: graded against itself, reported as {t['problem']}" for t in report.tampered]
    if not report.exercises:
        problems.append(f"{path}: no graded test cells")
    return problems


def check_student(source_path: Path, student_path: Path, limits: Limits = DEFAULT_LIMITS) -> list[str]:
    """The student notebook is what generate writes, scores zero everywhere, and fails nowhere else."""
    source = read_notebook(source_path)
    student = student_version(source, str(source_path))
    if not student_path.exists():
        return [f"{student_path}: missing; run `python -m grader generate`"]
    if student_path.read_text(encoding="utf-8") not in (stamped(student), dumps(student)):  # unstamped: older
        return [f"{student_path}: out of sync with {source_path}; run `python -m grader generate`"]
    report, _ = grade_notebooks(source, read_notebook(student_path), limits=limits,
                                names=(str(source_path), str(student_path)), supply=worker_supply(),
                                student=student)
    problems = [f"{student_path}: {r.grade_id}: the unanswered stub earns {r.points:g} points"
                for r in report.exercises if r.points]
    problems += [f"{student_path}: cell {e['cell']} ({e['grade_id'] or 'no grade_id'}) failed: {e['error']}"
                 for e in report.other_errors]
    return problems


def check_mistakes(path: Path, limits: Limits = DEFAULT_LIMITS) -> list[str]:
    """Each written-down wrong answer, graded as a submission (the solution with that one answer in its place),
    loses points and is named as itself (``grader.grading.mistakes``); each written-down correct variant
    (``correct_variant_for``), graded the same way, earns every point, hidden tests included."""
    source = read_notebook(path)
    student = student_version(source, str(path))
    reference = reference_for(source, student, limits, worker_supply(), mistakes=True, disk=True)
    problems = []

    def graded(answer_id: str, exercise: str, code: str) -> Report | None:
        submission = copy.deepcopy(source)
        cell = next((c for c in submission.cells if grade_id(c) == exercise and is_solution(c)), None)
        if cell is None:
            problems.append(f"{path}: {answer_id}: written down for {exercise}, which is no exercise")
            return None
        cell.source = code
        return grade_notebooks(source, submission, limits=limits, names=(str(path), answer_id),
                               supply=worker_supply(), student=student, reference=reference)[0]

    for answer in wrong_answers(source):
        report = graded(answer.id, answer.exercise, answer.code)
        if report is None:
            continue
        named = [m["id"] for m in report.mistakes]
        if report.score >= report.max_score:
            problems.append(f"{path}: {answer.id}: the wrong answer for {answer.exercise} earns full marks")
        elif answer.id not in named:
            problems.append(f"{path}: {answer.id}: graded as a submission, it is named as {named or 'nothing'}, "
                            "not as itself (does an earlier exercise's test change what its tests see?)")
    for cell in source.cells:
        exercise, match = cell.get("metadata", {}).get("correct_variant_for"), CODE.search(cell.get("source", ""))
        if isinstance(exercise, str) and match:
            variant = grade_id(cell) or f"variant of {exercise}"
            report = graded(variant, exercise, match.group(1))
            if report is not None and report.score < report.max_score:
                lost = [r.grade_id for r in report.exercises if r.points < r.max_points]
                problems.append(f"{path}: {variant}: the correct variant for {exercise} earns "
                                f"{report.score:g}/{report.max_score:g} (loses points in {', '.join(lost)})")
    return problems


Task = tuple[str, tuple[Path, ...]]  # (kind, notebook paths)


def course_tasks(root: str | Path = ".", lessons: tuple[str, ...] | list[str] = (),
                 mistakes: bool = True) -> list[Task]:
    """Every check of the course (or of the given lessons) as (kind, args) pairs, one notebook each; ``mistakes``
    adds, per lesson, the check that each written-down wrong answer is named as itself."""
    root = Path(root)
    _check_selection(root, lessons)
    tasks: list[Task] = [("guided", (p,)) for p in guided_notebooks(root) if chosen(p, lessons)]
    for source in solution_notebooks(root):
        if chosen(source, lessons):
            tasks += [("solution", (source,)), ("student", (source, student_path(root, source)))]
            tasks += [("mistakes", (source,))] if mistakes else []
    sources = {p.name for p in solution_notebooks(root)}
    tasks += [("orphan", (p,)) for p in student_notebooks(root) if p.name not in sources and chosen(p, lessons)]
    return tasks


def _check_selection(root: Path, lessons: Sequence[str]) -> None:
    """Refuse, in one line that names what exists, a folder with no lesson or a lesson name that matches none: a check
    of nothing must never say "course OK"."""
    found = sorted({p.stem for p in (*guided_notebooks(root), *solution_notebooks(root))})
    if not found:
        raise MissingPath(f"{root}: no lesson here (no notebook in {root / 'notebooks'} or {root / 'solutions'}); "
                          "pass --root COURSE_FOLDER")
    unknown = [name for name in lessons if not any(is_lesson(Path(stem), name) for stem in found)]
    if unknown:
        raise MissingPath(f"no lesson {', '.join(map(repr, unknown))} in {root}; the lessons are: {', '.join(found)}")


def run_task(kind: str, args: tuple[Path, ...], limits: Limits = DEFAULT_LIMITS, strict: bool = True) -> list[str]:
    """Run one check (``strict``: the course's, ``check_solution``); an unreadable notebook is a problem, not a
    crash."""
    try:
        if kind == "orphan":
            return [f"{args[0]}: has no source in solutions/; delete it or add the solution"]
        if kind == "guided":
            return check_guided(args[0], limits=limits)
        if kind == "solution":
            return check_solution(args[0], limits=limits, strict=strict)
        if kind == "mistakes":
            return check_mistakes(args[0], limits=limits)
        return check_student(args[0], args[1], limits=limits)
    except GraderError as error:
        return [str(error)]


def _run(task: tuple[str, tuple[Path, ...], Limits, bool]) -> list[str]:
    """``run_task`` on one record of the pool (kind, args, limits, strict)."""
    return run_task(*task)


def check_tasks(tasks: Sequence[Task], workers: int | None = None, limits: Limits = DEFAULT_LIMITS,
                modules: Sequence[str] = (), strict: bool = True) -> dict[Task, list[str]]:
    """Run the given checks in parallel (one pool, warm kernels that find ``modules`` imported); each task's
    problems and warnings."""
    found: dict[Task, list[str]] = {}
    for index, result in run_tasks(_run, [(*task, limits, strict) for task in tasks], workers, limits, modules):
        if isinstance(result, BaseException):
            raise result
        found[tasks[index]] = result
    return found


def check_course(root: str | os.PathLike[str] = ".", workers: int | None = None, limits: Limits = DEFAULT_LIMITS,
                 lessons: Sequence[str] = (), mistakes: bool = True) -> list[str]:
    """Run every check (or those of the given lessons) in parallel and return all problems, sorted, and the
    warnings (``is_warning``), strict or not as the course's ``[tool.grader] strict`` says."""
    root = Path(root)
    modules = imported_modules(read_notebook(path) for path in solution_notebooks(root) + guided_notebooks(root)
                               if chosen(path, list(lessons)))
    found = check_tasks(course_tasks(root, list(lessons), mistakes), workers, limits, modules,
                        course_strict(root.resolve()))
    return sorted(problem for problems in found.values() for problem in problems)
