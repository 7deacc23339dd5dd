"""The expected side of every check, from a trusted run of the solution: the values no student's kernel ever holds.

The source notebook is run graded as itself (solution cells and hidden tests included), with
each check rewritten to report both sides (``grader.grading.testcells``). That run executes no student
code. A check against ``AS_SOLUTION`` takes the value the solution itself reported as its expected one.
Its expected values are kept per source, by the hash of the source and of the grader's
own code, so a batch runs it once per lesson and hands the values to its workers as data.
The run also says where the solution fails its own checks: ``grader check`` reports those. A second
trusted run, when asked for, records how each written-down wrong answer behaves (``grader.grading.mistakes``).
When every expected side of a source is a plain literal (``6000``, ``("handoff", ("data",))``),
the values are read from the source itself and no run is needed.
"""

import ast
import functools
import hashlib
import json
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nbformat import NotebookNode

from ..authoring.metadata import is_test
from ..kernels.supply import KernelSupply
from . import cache
from .assemble import assemble
from .execute import DEFAULT_LIMITS, CellRun, Limits, execute
from .mistakes import mistake_table, tests_of, valid_table
from .testcells import rewrite_tests
from .values import difference, encode, valid
from .verdict import CheckReport, parse_reports

GRADER_DIR = Path(__file__).resolve().parents[1]  # the whole grader package, templates included


@dataclass
class Reference:
    """Each test cell's expected values by check number, and the solution's own failures."""

    expected: dict[str, dict[int, dict[str, Any]]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    mistakes: dict[str, list[dict[str, Any]]] | None = None  # grader.grading.mistakes.mistake_table; None: not run

    def to_json(self) -> str:
        return json.dumps({"expected": {gid: {str(k): v for k, v in checks.items()}
                                        for gid, checks in self.expected.items()},
                           "problems": self.problems, "mistakes": self.mistakes}, sort_keys=True)

    def __repr__(self) -> str:
        checks = sum(len(values) for values in self.expected.values())
        mistakes = "not run" if self.mistakes is None else sum(len(entries) for entries in self.mistakes.values())
        return (f"Reference({len(self.expected)} tests, {checks} checks, {len(self.problems)} problems, "
                f"mistakes: {mistakes})")

    @classmethod
    def from_json(cls, text: str) -> "Reference":
        data = json.loads(text)
        return cls({gid: {int(k): v for k, v in checks.items()} for gid, checks in data["expected"].items()},
                   list(data["problems"]), data.get("mistakes"))


@functools.cache
def grader_digest() -> str:
    """A hash of the grader's own code: a new grader means new expected values and new grades."""
    digest = hashlib.sha256()
    for path in sorted(GRADER_DIR.rglob("*")):
        if path.is_file() and path.suffix in (".py", ".j2"):
            digest.update(path.relative_to(GRADER_DIR).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def source_key(source: NotebookNode) -> str:
    """The cache key of a source notebook's reference: its content and the grader's code."""
    content = json.dumps(source, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256((grader_digest() + content).encode()).hexdigest()


def run_reference(source: NotebookNode, student: NotebookNode, limits: Limits = DEFAULT_LIMITS,
                  supply: KernelSupply | None = None) -> Reference:
    """Run the solution with every check reporting both sides; the expected values and the solution's failures."""
    assembly = assemble(source, source, student)
    codes = rewrite_tests(source, expected=True)
    tests = {assembly.positions[gid]: code for gid, code in codes.items() if gid in assembly.positions}
    runs = {run.index: run for run in execute(assembly.notebook, limits, supply, tests)}
    reference = Reference()
    for gid, code in codes.items():
        run = runs.get(assembly.positions.get(gid, -1))
        if run is None:
            reference.problems.append(f"{gid}: did not run")
            continue
        failed = [part for part in (run, run.hidden) if part is not None and not part.ok]
        if failed:
            reference.problems.append(f"{gid}: {failed[0].summary or failed[0].status}")
        expected = reference.expected.setdefault(gid, {})
        generated = {c.index for c in code.checks if c.generated}
        for report in reported(run):
            if report.check in generated and report.check not in expected and valid(report.actual):
                expected[report.check] = report.actual  # AS_SOLUTION: the solution's own value
                continue
            if report.expected is not None and valid(report.expected) and report.check not in expected:
                expected[report.check] = report.expected
                if (problem := difference(report.actual, report.expected, report.what)) is not None:
                    reference.problems.append(f"{gid}: the solution fails check {report.check + 1}: {problem}")
        missing = [c.index + 1 for c in code.checks if c.index not in expected]
        if missing and not failed:
            reference.problems.append(f"{gid}: no expected value for check(s) {missing}")
    return reference


def reported(run: CellRun) -> list[CheckReport]:
    """The check reports of a test cell's run, both parts; none when any of them is not a report."""
    parts = [run] + ([run.hidden] if run.hidden is not None else [])
    return parse_reports([raw for part in parts for raw in part.reports]) or []


_cache: dict[str, Reference] = {}


def from_literals(source: NotebookNode) -> Reference | None:
    """The reference read from the source's text, when every expected side is a literal; else None."""
    reference = Reference()
    for gid, code in rewrite_tests(source, expected=True).items():
        values = reference.expected.setdefault(gid, {})
        for check in code.checks:
            try:
                values[check.index] = encode(ast.literal_eval(check.expected))
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                return None
    return reference


def forget() -> None:
    """Forget every reference this process has run (a benchmark's batches each pay for their own)."""
    _cache.clear()


def reference_for(source: NotebookNode, student: NotebookNode, limits: Limits = DEFAULT_LIMITS,
                  supply: KernelSupply | None = None, mistakes: bool = False, disk: bool = False) -> Reference:
    """The source's reference, run once per process for each source and grader version; with ``mistakes``, also
    how each written-down wrong answer behaves (``grader.grading.mistakes``), for a batch that will name them.
    With ``disk``, what a run gives is also kept in the disk cache (``grader.grading.cache``) and read from it."""
    if not any(is_test(cell) for cell in source.cells):
        return Reference()
    key = source_key(source)
    if key not in _cache:
        _cache[key] = (disk and _from_disk(key, limits)) or from_literals(source) or _run_and_keep(
            source, student, limits, supply, _disk_key(key, limits) if disk else None)
    reference = _cache[key]
    if mistakes and reference.mistakes is None:
        reference.mistakes = mistakes_for(source, student, limits, supply, None, disk)
    return reference


def _disk_key(key: str, limits: Limits) -> str:
    """The disk cache's key for a source (its ``source_key``) under ``limits``."""
    return cache.key_of(key, repr(limits))


def _checked(data: Any) -> Reference:
    """A cached reference, only if every expected value is one the grader could have encoded."""
    reference = Reference.from_json(json.dumps(data))
    if not all(valid(value) for checks in reference.expected.values() for value in checks.values()) or \
            not all(isinstance(problem, str) for problem in reference.problems):
        raise cache.DamagedEntry("not a reference")
    reference.mistakes = None  # kept apart, by exercise (mistakes_for)
    return reference


def _from_disk(key: str, limits: Limits) -> Reference | None:
    return cache.load("reference", _disk_key(key, limits), _checked)


def _run_and_keep(source: NotebookNode, student: NotebookNode, limits: Limits, supply: KernelSupply | None,
                  disk_key: str | None) -> Reference:
    """The reference run, kept in the disk cache under ``disk_key`` when there is one."""
    reference = run_reference(source, student, limits, supply)
    if disk_key is not None:
        cache.store("reference", disk_key, json.loads(reference.to_json()))
    return reference


def mistakes_for(source: NotebookNode, student: NotebookNode, limits: Limits, supply: KernelSupply | None,
                 exercises: Collection[str] | None, disk: bool = False) -> dict[str, list[dict[str, Any]]]:
    """``mistake_table`` for ``exercises`` (all when None); with ``disk``, each exercise's entries are read from
    the disk cache when they are there and valid, and the others run and kept."""
    if not disk:
        return mistake_table(source, student, limits, supply, exercises)
    key = _disk_key(source_key(source), limits)
    kept = cache.load("mistakes", key, valid_table) or {}
    wanted = set(exercises) if exercises is not None else set(tests_of(source))
    missing = sorted(wanted - set(kept))
    if missing:
        ran = mistake_table(source, student, limits, supply, missing)
        kept |= {exercise: ran.get(exercise, []) for exercise in missing}  # an exercise with none is kept too
        cache.store("mistakes", key, kept)
    return {exercise: entries for exercise, entries in kept.items() if exercise in wanted and entries}
