"""``grader convert SOURCE --out NEW``: a plain nbgrader notebook's ``assert A == B[, msg]`` lines rewritten as
``assert_same(A, B[, msg])`` where that changes no verdict on a run of SOURCE.

A plain ``assert`` makes its test cell graded in the student's kernel (``grader.grading.testcells``).
``assert_same`` compares exact types and values, and ``==`` does not (``1 == 1.0``; an object whose
``__eq__`` says yes). So SOURCE is run once, as written, each candidate reporting whether ``==`` held and
both sides as typed values (``grader.grading.probe.compare``); an assert is converted only when ``==``
held and the two sides are the same, type for type, as the grader compares them. A candidate is an
``assert`` at the top of a test cell (a check is a statement of its own there) comparing two sides with
one ``==``. One is also left when its cell would then follow the rule and its expected side reads a name
the student's code sets: graded outside the kernel, that side's value would come from the solution's run
instead of the student's kernel. Each cell that needs it gets ``from grader import assert_same`` after its
docstring. Everything left is said, with the reason; NEW is a new file, never SOURCE.

A student's answer that ``==`` accepts with another type (``3.0`` for ``3``) passes the ``assert`` and
fails the ``assert_same``: the run of SOURCE cannot know such answers. That is the one change of meaning
a conversion makes.
"""

import ast
import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nbformat import NotebookNode

from ..authoring.metadata import grade_id, is_solution, is_test
from ..authoring.notebooks import dumps, read_notebook, write_atomic
from ..errors import WrongKindOfPath
from .execute import DEFAULT_LIMITS, CellRun, Limits, execute
from .testcells import CHECK_NAME, rewrite_tests
from .values import difference, valid

COMPARE = '__import__("grader.grading.probe").grading.probe.compare'
IMPORT = f"from grader import {CHECK_NAME}"
SHOWN = 100  # characters of an assert quoted in a line


@dataclass(frozen=True)
class Candidate:
    """An ``assert A == B[, msg]`` at the top of a test cell: its number in the cell and its parts' source."""

    index: int
    node: ast.Assert
    actual: ast.expr
    expected: ast.expr


@dataclass
class CellConversion:
    """What ``convert`` did to one test cell: the asserts it converted and those it left, each with its line."""

    grade_id: str
    converted: list[tuple[int, str]] = field(default_factory=list)  # (line, "assert ... -> assert_same(...)")
    left: list[tuple[int, str]] = field(default_factory=list)  # (line, "assert ...: why"); line 0: the whole cell
    followed: bool = False  # it followed the assert_same rule already: nothing to do
    graded_in_kernel: str = ""  # after the conversion, why it is still graded in the student's kernel ("": it is not)

    def lines(self) -> list[str]:
        """Its part of what ``grader convert`` prints: a headline, then one line per assert, in the cell's order (lines
        of the source's cell)."""
        if self.followed:
            return [f"{self.grade_id}: follows the assert_same rule already; unchanged"]
        after = "follows the assert_same rule now: its verdict is decided by the grader"
        if self.graded_in_kernel:
            after = f"still graded in the student's kernel; in the new cell, {self.graded_in_kernel}"
        done = [(line, f"converted line {line}: {text}") for line, text in self.converted]
        done += [(line, f"left line {line}: {text}" if line else f"left {text}") for line, text in self.left]
        return [f"{self.grade_id}: {len(self.converted)} converted, {len(self.left)} left; {after}"] + [
            f"  {text}" for _, text in sorted(done)]


class _Source:
    """A cell's source as UTF-8 bytes, which ``ast``'s columns count."""

    def __init__(self, text: str) -> None:
        self.data = text.encode("utf-8")
        self.starts = [0, 0]
        for line in self.data.split(b"\n")[:-1]:
            self.starts.append(self.starts[-1] + len(line) + 1)

    def span(self, node: ast.stmt | ast.expr) -> tuple[int, int]:
        return (self.starts[node.lineno] + node.col_offset,
                self.starts[node.end_lineno or node.lineno] + (node.end_col_offset or 0))

    def text(self, node: ast.stmt | ast.expr) -> str:
        begin, end = self.span(node)
        return self.data[begin:end].decode("utf-8")

    def replaced(self, spans: list[tuple[int, int, str]]) -> str:
        pieces, end = [], 0
        for begin, stop, text in sorted(spans):
            pieces += [self.data[end:begin], text.encode("utf-8")]
            end = stop
        return b"".join(pieces + [self.data[end:]]).decode("utf-8")


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SHOWN else text[:SHOWN - 1] + "…"


def _candidates(tree: ast.Module, source: _Source, done: CellConversion) -> list[Candidate]:
    """The asserts of a cell that may be converted; each other assert is noted in ``done.left``, with why."""
    top = {id(statement) for statement in tree.body}
    found: list[Candidate] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assert):
            continue
        where = f"{_short(source.text(node))}:"
        test = node.test
        if id(node) not in top:
            done.left.append((node.lineno, f"{where} inside a block (a loop, a function, an if...); a check is a "
                                           "statement of its own at the top of the cell"))
        elif not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
            done.left.append((node.lineno, f"{where} not one == comparison; assert_same states only equality"))
        else:
            found.append(Candidate(len(found), node, test.left, test.comparators[0]))
    return sorted(found, key=lambda c: c.node.lineno)


def _probed(text: str, candidates: list[Candidate]) -> str:
    """The cell with each candidate's test reporting both sides (``probe.compare``) and doing what it did."""
    source = _Source(text)
    return source.replaced([(*source.span(c.node.test), f"{COMPARE}({c.index}, {source.text(c.actual)}, "
                                                        f"{source.text(c.expected)})") for c in candidates])


def _compared(run: CellRun | None) -> dict[int, dict[str, Any]]:
    """The candidates' reports of one cell's run, by number (the run is the instructor's own: trusted)."""
    found: dict[int, dict[str, Any]] = {}
    for report in run.reports if run is not None else []:
        if isinstance(report, dict) and isinstance(report.get("compare"), int):
            found.setdefault(report["compare"], report)
    return found


def _why_not(report: dict[str, Any] | None, run: CellRun | None) -> str:
    """Why a candidate is left after the run ("" when it is converted)."""
    if report is None:
        failed = f" (the cell failed before it: {run.summary})" if run is not None and not run.ok else ""
        return f"never ran in the run of the source{failed}"
    if report["equal"] is not True:
        return ("== did not hold in the run of the source" if report["equal"] is False else
                f"bool(A == B) raised {report['equal']} in the run of the source")
    actual, expected = report.get("actual"), report.get("expected")
    if not (isinstance(actual, dict) and isinstance(expected, dict) and valid(actual) and valid(expected)) \
            or "error" in actual or "error" in expected:
        return "a side is not a value the grader can compare (it cannot be encoded)"
    if (problem := difference(actual, expected, "value")) is not None:
        return f"== holds, but assert_same does not ({problem})"
    return ""


def _bound(tree: ast.AST) -> set[str]:
    """The names a piece of code binds, imports aside."""
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    return names | {node.name for node in ast.walk(tree)
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def _students(nb: NotebookNode) -> set[str]:
    """Names whose value may depend on what the student wrote: bound in an answer cell, or in any code cell from the
    first answer cell on (test cells included)."""
    names: set[str] = set()
    reached = False
    for cell in nb.cells:
        reached = reached or is_solution(cell)
        if reached and cell.get("cell_type") == "code":
            try:
                names |= _bound(ast.parse(cell.source))
            except SyntaxError:
                continue
    return names


def _as_check(source: _Source, c: Candidate) -> str:
    """``assert A == B[, msg]`` as ``assert_same(A, B[, msg])``."""
    message = f", {source.text(c.node.msg)}" if c.node.msg is not None else ""
    return f"{CHECK_NAME}({source.text(c.actual)}, {source.text(c.expected)}{message})"


def _rewritten(text: str, chosen: list[Candidate]) -> str:
    """The cell with the chosen asserts as ``assert_same`` calls, and the import after its docstring if it has none."""
    source = _Source(text)
    spans = [(*source.span(c.node), _as_check(source, c)) for c in chosen]
    tree = ast.parse(text)
    imported = any(isinstance(node, ast.ImportFrom) and node.module == "grader"
                   and any(alias.name == CHECK_NAME and alias.asname is None for alias in node.names)
                   for node in tree.body)
    if chosen and not imported:
        first = tree.body[0] if tree.body else None
        docstring = (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                     and isinstance(first.value.value, str))
        if docstring and first is not None:
            end = source.span(first)[1]
            spans.append((end, end, "\n" + IMPORT))
        else:
            spans.append((0, 0, IMPORT + "\n"))
    return source.replaced(spans)


def convert(source_path: str | Path, out: str | Path, limits: Limits = DEFAULT_LIMITS) -> list[CellConversion]:
    """Write SOURCE with its convertible asserts as ``assert_same`` calls to ``out`` (never SOURCE itself); what was
    done, cell by cell."""
    source_path, out = Path(source_path), Path(out)
    if out.resolve() == source_path.resolve() or (out.exists() and out.samefile(source_path)):
        raise WrongKindOfPath(f"--out {out} is the source itself: grader convert never writes in place")
    source = read_notebook(source_path)
    before = rewrite_tests(source)
    done: dict[int, CellConversion] = {}
    candidates: dict[int, list[Candidate]] = {}
    probed = copy.deepcopy(source)
    for index, cell in enumerate(source.cells):
        if not (is_test(cell) and cell.get("cell_type") == "code"):
            continue
        gid = grade_id(cell) or "?"
        done[index] = CellConversion(gid, followed=not before[gid].plain)
        if done[index].followed:
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError as error:
            done[index].left.append((0, f"the whole cell: it does not parse as Python (line {error.lineno}: "
                                        f"{error.msg})"))
            continue
        candidates[index] = _candidates(tree, _Source(cell.source), done[index])
        probed.cells[index].source = _probed(cell.source, candidates[index])
    runs = {run.index: run for run in execute(probed, limits)} if any(candidates.values()) else {}
    chosen: dict[int, list[Candidate]] = {}
    for index, found in candidates.items():
        reports, text = _compared(runs.get(index)), _Source(source.cells[index].source)
        for c in found:
            why = _why_not(reports.get(c.index), runs.get(index))
            if why:
                done[index].left.append((c.node.lineno, f"{_short(text.text(c.node))}: {why}"))
            else:
                chosen.setdefault(index, []).append(c)
    students = _students(source)
    while True:  # a cell that would follow the rule takes its expected values from the solution's run
        converted = copy.deepcopy(source)
        for index, found in chosen.items():
            converted.cells[index].source = _rewritten(source.cells[index].source, found)
        codes = rewrite_tests(converted)
        unsafe = {index: [c for c in found if _names(c.expected) & students]
                  for index, found in chosen.items() if not codes[done[index].grade_id].plain}
        unsafe = {index: found for index, found in unsafe.items() if found}
        if not unsafe:
            break
        for index, found in unsafe.items():
            text = _Source(source.cells[index].source)
            for c in found:
                chosen[index].remove(c)
                done[index].left.append((c.node.lineno, (
                    f"{_short(text.text(c.node))}: its expected side reads "
                    f"{', '.join(sorted(_names(c.expected) & students))}, which the student's code sets; converted, "
                    "the cell would follow the rule and take that value from the solution's run")))
    for index, conversion in done.items():
        text = _Source(source.cells[index].source)
        conversion.converted = [(c.node.lineno, f"{_short(text.text(c.node))} -> {_short(_as_check(text, c))}")
                                for c in chosen.get(index, [])]
        conversion.graded_in_kernel = codes[conversion.grade_id].plain
    write_atomic(out, dumps(converted))
    return list(done.values())


def _names(node: ast.expr) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
