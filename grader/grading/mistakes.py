"""The mistake named: an answer that behaves exactly like one of the exercise's written-down wrong answers.

A solution notebook writes down, for each exercise, the plausible wrong answers: solution-only
markdown cells with ``"wrong_answer_for": "<exercise grade_id>"`` in their metadata, an
explanation for the student and the answer in one ```python block. Once per source, a trusted
kernel runs each wrong answer in place of its exercise's solution, with the solution back after
the exercise's tests (``mistake_table``); there, each hidden part runs right after its visible part, before
the solution is back. What each of those test
cells reported is the wrong answer's behaviour: status, exception name and every check's
actual value, hidden part included, and the message of an exception in a visible part. A student's
exercise that lost points and whose test cells reported exactly the same is named as that mistake.
Nothing is guessed: when no wrong answer behaves the same, or when all there is to compare is the
type of an exception raised before any value was reported, nothing is named.
"""

import copy
import re
from collections.abc import Collection
from typing import Any

import nbformat
from nbformat import NotebookNode
from pydantic import BaseModel, ConfigDict, TypeAdapter

from ..authoring.metadata import exercise_of, grade_id, is_solution, is_test
from ..kernels.supply import KernelSupply
from .assemble import assemble
from .execute import DEFAULT_LIMITS, CellRun, Limits, execute
from .hidden import Scrubber
from .testcells import rewrite_tests
from .verdict import parse_reports

CODE = re.compile(r"```python\n(.*?)```", re.DOTALL)
MESSAGE_CHARS = 300  # of an exception's message compared


class WrongAnswer(BaseModel):
    """A written-down wrong answer: its cell's grade_id, its exercise, its kind and its explanation (Spanish)."""

    model_config = ConfigDict(frozen=True)

    id: str
    exercise: str
    kind: str = ""
    text: str
    code: str = ""

    def __repr__(self) -> str:
        return f"WrongAnswer({self.id!r} for {self.exercise!r}, {self.kind or 'no kind'})"


class Mistake(BaseModel):
    """A wrong answer as a report names it: no code, only what the student reads, and the exercise's tests."""

    exercise: str
    id: str
    kind: str = ""
    text: str
    tests: list[str] = []


class TableEntry(Mistake):
    """A mistake as the table keeps it: with the behaviour its wrong answer showed on each test cell."""

    model_config = ConfigDict(extra="forbid")

    behaviour: list[Any]


TABLE = TypeAdapter(dict[str, list[TableEntry]])


def valid_table(data: Any) -> dict[str, list[dict[str, Any]]]:
    """A mistake table read back (from the disk cache), checked entry by entry; ValidationError if it is not one."""
    return {exercise: [entry.model_dump() for entry in entries]
            for exercise, entries in TABLE.validate_python(data).items()}


def wrong_answers(source: NotebookNode) -> list[WrongAnswer]:
    """The source's written-down wrong answers that hold a ```python block, in notebook order."""
    found: list[WrongAnswer] = []
    for cell in source.cells:
        exercise = cell.get("metadata", {}).get("wrong_answer_for")
        match = CODE.search(cell.get("source", ""))
        if isinstance(exercise, str) and match:
            text = cell.source[:match.start()].strip()
            found.append(WrongAnswer(id=grade_id(cell) or f"{exercise}:{len(found)}", exercise=exercise,
                                     kind=str(cell.metadata.get("wrong_answer_kind", "")), text=text,
                                     code=match.group(1)))
    return found


def tests_of(source: NotebookNode) -> dict[str, list[str]]:
    """Each exercise's test cells (grade_ids, in order): the test cells whose grade_id follows ``test_<exercise>``."""
    exercises = [gid for cell in source.cells if is_solution(cell) and (gid := grade_id(cell))]
    owned: dict[str, list[str]] = {}
    for cell in source.cells:
        if is_test(cell) and (gid := grade_id(cell)) and (exercise := exercise_of(gid, exercises)):
            owned.setdefault(exercise, []).append(gid)
    return owned


def behaviour(run: CellRun | None) -> list[Any]:
    """What one test cell reported, as plain data two runs can be compared by: each part's status, exception
    name and message (a hidden part keeps none) and every check's actual value."""
    if run is None:
        return ["missing"]
    parts: list[Any] = []
    for part in (run, run.hidden):
        if part is None:
            parts.append(None)
            continue
        reports = parse_reports(part.reports)
        values = None if reports is None else [[r.check, r.actual] for r in sorted(reports, key=lambda r: r.check)]
        parts.append([part.status, part.ename, part.evalue[:MESSAGE_CHARS], values])
    return parts


def _evidence(behaviours: list[list[Any]]) -> bool:
    """Whether behaviours can tell one wrong answer from another: some check reported a value, or some exception
    said a message; an exception's type alone (a ``TypeError`` before the first report) names no mistake."""
    parts = [part for cell in behaviours for part in cell if isinstance(part, list)]
    return any(part[3] or part[2] for part in parts)


def mistake_table(source: NotebookNode, student: NotebookNode, limits: Limits = DEFAULT_LIMITS,
                  supply: KernelSupply | None = None,
                  exercises: Collection[str] | None = None) -> dict[str, list[dict[str, Any]]]:
    """Each exercise's wrong answers (of ``exercises`` only, when given) with their behaviour on its test cells,
    from trusted runs (JSON-able).

    Run k puts every exercise's k-th wrong answer in place of its solution, as a student who made
    that mistake would, and the solution back right after the exercise's last test cell, so the
    exercises that follow start from the solution's state: as many runs as the exercise with the
    most wrong answers has.
    """
    owned = tests_of(source)
    by_exercise: dict[str, list[WrongAnswer]] = {}
    for answer in wrong_answers(source):
        if owned.get(answer.exercise) and (exercises is None or answer.exercise in exercises):
            by_exercise.setdefault(answer.exercise, []).append(answer)
    table: dict[str, list[dict[str, Any]]] = {}
    if not by_exercise:
        return table
    assembly = assemble(source, source, student)
    codes = rewrite_tests(source)
    # scrubbed as a graded submission's runs are (pipeline.grade_notebooks), so the behaviours compare alike
    scrub = Scrubber([c for c in source.cells if is_test(c)], [code.hidden_only for code in codes.values()])
    last = {max(assembly.positions[gid] for gid in owned[exercise]): exercise for exercise in by_exercise}
    for k in range(max(len(answers) for answers in by_exercise.values())):
        wave = {exercise: answers[k] for exercise, answers in by_exercise.items() if k < len(answers)}
        nb = copy.deepcopy(assembly.notebook)
        nb.cells, tests, where = [], {}, {}
        for index, cell in enumerate(assembly.notebook.cells):
            gid = grade_id(cell)
            if gid in wave:
                cell = nbformat.v4.new_code_cell(wave[gid].code)
            elif gid in codes:
                tests[len(nb.cells)], where[gid] = codes[gid], len(nb.cells)
            nb.cells.append(cell)
            if last.get(index) in wave:  # the solution again, for the exercises that follow
                nb.cells.append(assembly.notebook.cells[assembly.positions[last[index]]])
        runs = {run.index: run for run in execute(nb, limits, supply, tests, hidden_last=False)}
        for run in runs.values():
            scrub.run(run)
        for exercise, answer in wave.items():
            table.setdefault(exercise, []).append(
                {**Mistake(**answer.model_dump(exclude={"code"}), tests=owned[exercise]).model_dump(),
                 "behaviour": [behaviour(runs.get(where[gid])) for gid in owned[exercise]]})
    return table


def name_mistakes(table: dict[str, list[dict[str, Any]]], owned: dict[str, list[str]],
                  runs: dict[str, CellRun], lost: set[str]) -> list[Mistake]:
    """The written-down wrong answers each exercise in ``lost`` behaves exactly like (``runs`` by test grade_id)."""
    named = []
    for exercise in sorted(lost):
        if not table.get(exercise):
            continue
        mine = [behaviour(runs.get(gid)) for gid in owned.get(exercise, [])]
        if not _evidence(mine):
            continue
        for entry in table[exercise]:
            if entry["behaviour"] == mine:
                named.append(Mistake(**{k: v for k, v in entry.items() if k != "behaviour"}))
    return named
