"""An answer that returns the visible expected values of every check earns nothing, in any lesson.

A red team once earned 13/23 in lesson 10 with nothing implemented: each function read the
calling test cell (the student holds it) and returned its visible expected value. Here every
exercise's stub is replaced by exactly that: a lookup of the expected side the student's own copy
of the test cell gives the actual side being checked, evaluated where the check runs. Since every
graded test cell has a hidden part with inputs the visible part does not use, no test cell passes.
All lessons are graded in one batch.
"""

import ast
import json
from pathlib import Path

import pytest

from grader.authoring.generate import student_version
from grader.authoring.metadata import is_solution, is_test
from grader.authoring.notebooks import dumps, read_notebook
from grader.classroom.batch import batch
from grader.grading.execute import Limits

pytestmark = pytest.mark.slow  # kernels, subprocesses or a browser: not in make test-fast

ROOT = Path(__file__).resolve().parents[2]
STUB = 'raise NotImplementedError("ejercicio sin responder todavía")'

# Runs in the student's kernel: the check being run is the statement of the calling test cell that spans the
# caller's line; its actual side, as text, is looked up among the visible checks the student holds.
ORACLE = '''
import ast as _ast, linecache as _linecache, sys as _sys
_VISIBLE = __TABLE__

def _oracle():
    frame = _sys._getframe(1)
    while frame is not None and frame.f_code.co_name != "<module>":  # up to the test cell's own code
        frame = frame.f_back
    if frame is None:
        return None
    source = "".join(_linecache.getlines(frame.f_code.co_filename))
    try:
        tree = _ast.parse(source)
    except SyntaxError:
        return None
    for statement in tree.body:
        if statement.lineno <= frame.f_lineno <= statement.end_lineno and isinstance(statement, _ast.Expr) \\
                and isinstance(statement.value, _ast.Call) and len(statement.value.args) >= 2:
            actual = _ast.unparse(statement.value.args[1])
            if actual in _VISIBLE:
                return eval(_VISIBLE[actual], frame.f_globals)
    return None
'''


def visible_checks(student) -> dict[str, str]:
    """Each visible check's actual side (as ``ast.unparse`` writes it) and its expected side, from the student's
    own copy of the test cells."""
    found: dict[str, str] = {}
    for cell in student.cells:
        if not is_test(cell):
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        for statement in tree.body:
            call = statement.value if isinstance(statement, ast.Expr) else None
            if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "assert_same" and len(call.args) >= 2:
                found.setdefault(ast.unparse(call.args[0]), ast.unparse(call.args[1]))
    return found


def oracle_submission(path: Path):
    """The lesson's student version with every stub returning the looked-up visible expected value."""
    student = student_version(read_notebook(path))
    answers = [cell for cell in student.cells if is_solution(cell) and cell.cell_type == "code"]
    assert answers and all(STUB in cell.source for cell in answers), path.name
    answers[0].source = ORACLE.replace("__TABLE__", repr(visible_checks(student))) + "\n" + answers[0].source
    for cell in answers:
        cell.source = cell.source.replace(STUB, "return _oracle()")
    return student


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    root = tmp_path_factory.mktemp("oracle")
    (root / "subs").mkdir()
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        (root / "subs" / path.name).write_text(dumps(oracle_submission(path)), encoding="utf-8")
    rows = batch(root / "subs", ROOT / "solutions", root / "out", workers=2, limits=Limits(cell_timeout=20),
                 progress=False)
    assert all(row["status"] == "graded" for row in rows), rows
    return {path.stem: json.loads(path.read_text(encoding="utf-8"))["report"]
            for path in (root / "out" / "reports").glob("*.json")}


@pytest.mark.parametrize("lesson", sorted(path.stem for path in (ROOT / "solutions").glob("*.ipynb")))
def test_the_visible_expected_values_earn_nothing(reports, lesson):
    report = reports[lesson]
    earned = {test["grade_id"]: test["points"] for test in report["exercises"] if test["points"]}
    assert earned == {}, f"{lesson}: a lookup of the visible expected values earns {earned}"


def test_the_lookup_does_return_the_visible_values(reports):
    """The attack is real: it passes the visible part of some test cell in every lesson with function exercises,
    and loses the cell only on its hidden part."""
    hidden_only = {lesson: [t["grade_id"] for t in report["exercises"] if "hidden test" in t["feedback"]]
                   for lesson, report in reports.items()}
    assert sum(bool(found) for found in hidden_only.values()) >= 8, hidden_only
