"""The course's CI gate: every notebook runs, solutions score full marks, student versions score zero.

Problems are collected for the whole course and reported together at the end.
"""

import copy
import os
from collections.abc import Sequence
from pathlib import Path

from .api import grade_notebooks
from .execute import Limits, execute
from .generate import InvalidSource, is_lesson, student_version
from .kernel import worker_supply
from .metadata import metadata_problems
from .notebooks import UnusableNotebook, dumps, read_notebook, tidy, write_atomic
from .pool import run_tasks

RAISES_TAG = "raises-exception"


def _text(outputs):
    parts = []
    for output in outputs:
        if output.get("output_type") == "stream":
            parts.append(output.get("text", ""))
        elif output.get("output_type") == "execute_result":
            parts.append(output.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def check_guided(path, limits=Limits()):
    """A guided notebook runs clean, its raises-exception cells raise, and stored outputs come back the same."""
    nb = read_notebook(path)
    stored = {i: _text(c.outputs) for i, c in enumerate(nb.cells) if c.cell_type == "code" and _text(c.outputs)}
    runs, problems = execute(nb, limits, worker_supply()), []
    for run in runs:
        cell = nb.cells[run.index]
        expects_error = RAISES_TAG in cell.metadata.get("tags", [])
        if expects_error and run.status == "ok":
            problems.append(f"{path}: cell {run.index} is tagged {RAISES_TAG} but ran without error")
        elif not run.ok and not (expects_error and run.status == "error"):
            problems.append(f"{path}: cell {run.index} failed: {run.summary}")
        elif run.index in stored and _text(cell.outputs) != stored[run.index]:
            problems.append(f"{path}: cell {run.index} printed something other than its stored output")
    return problems


def store_outputs(path, limits=Limits()):
    """Run a guided notebook and store its outputs in it, so check can prove a fresh run reproduces them."""
    nb = read_notebook(path)
    runs = execute(nb, limits, worker_supply())
    failed = [f"{path}: cell {run.index} failed: {run.summary}" for run in runs
              if not run.ok and RAISES_TAG not in nb.cells[run.index].metadata.get("tags", [])]
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


def check_solution(path, limits=Limits()):
    """A solution notebook has valid metadata and earns every point, with no cell failing."""
    source = read_notebook(path)
    problems = metadata_problems(source, str(path))
    if problems:
        return problems
    report, _ = grade_notebooks(source, copy.deepcopy(source), limits=limits, names=(str(path), str(path)),
                                supply=worker_supply())
    problems += [f"{path}: {r.grade_id}: solution scores {r.points:g}/{r.max_points:g} ({r.feedback})"
                 for r in report.exercises if r.points != r.max_points]
    problems += [f"{path}: cell {e['cell']} ({e['grade_id'] or 'no grade_id'}) failed: {e['error']}"
                 for e in report.solution_errors + report.other_errors]
    if not report.exercises:
        problems.append(f"{path}: no graded test cells")
    return problems


def check_student(source_path, student_path, limits=Limits()):
    """The student notebook is what generate writes, scores zero everywhere, and fails nowhere else."""
    source = read_notebook(source_path)
    student = student_version(source, str(source_path))
    expected = dumps(student)
    if not student_path.exists():
        return [f"{student_path}: missing; run `python -m grader generate`"]
    if student_path.read_text(encoding="utf-8") != expected:
        return [f"{student_path}: out of sync with {source_path}; run `python -m grader generate`"]
    report, _ = grade_notebooks(source, read_notebook(student_path), limits=limits,
                                names=(str(source_path), str(student_path)), supply=worker_supply(),
                                student=student)
    problems = [f"{student_path}: {r.grade_id}: the unanswered stub earns {r.points:g} points"
                for r in report.exercises if r.points]
    problems += [f"{student_path}: cell {e['cell']} ({e['grade_id'] or 'no grade_id'}) failed: {e['error']}"
                 for e in report.other_errors]
    return problems


def _chosen(path, lessons):
    return not lessons or any(is_lesson(path, name) for name in lessons)


def course_tasks(root=".", lessons=()):
    """Every check of the course (or of the given lessons) as (kind, args) pairs, one notebook each."""
    root = Path(root)
    tasks = [("guided", (p,)) for p in sorted((root / "notebooks").glob("*.ipynb")) if _chosen(p, lessons)]
    for source in sorted((root / "solutions").glob("*.ipynb")):
        if _chosen(source, lessons):
            tasks += [("solution", (source,)), ("student", (source, root / "student" / source.name))]
    sources = {p.name for p in (root / "solutions").glob("*.ipynb")}
    tasks += [("orphan", (p,)) for p in sorted((root / "student").glob("*.ipynb"))
              if p.name not in sources and _chosen(p, lessons)]
    return tasks


def run_task(kind, args, limits=Limits()):
    """Run one check; an unreadable notebook is a problem, not a crash."""
    try:
        if kind == "orphan":
            return [f"{args[0]}: has no source in solutions/; delete it or add the solution"]
        check = {"guided": check_guided, "solution": check_solution, "student": check_student}[kind]
        return check(*args, limits=limits)
    except (UnusableNotebook, InvalidSource) as error:
        return [str(error)]


def check_course(root: str | os.PathLike[str] = ".", workers: int | None = None,
                 limits: Limits = Limits(), lessons: Sequence[str] = ()) -> list[str]:  # noqa: B008 - frozen
    """Run every check (or those of the given lessons) in parallel and return all problems, sorted."""
    tasks = course_tasks(root, lessons)
    problems: list[str] = []
    for _, result in run_tasks(run_task, [(*task, limits) for task in tasks], workers, limits):
        if isinstance(result, BaseException):
            raise result
        problems += result
    return sorted(problems)
