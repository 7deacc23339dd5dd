"""Plain nbgrader test cells (``assert``, helper code, loops): graded the nbgrader way, in the student's kernel, and
said so in the report, the page, grades.csv and the class view; ``grader check`` warns, or refuses in a strict course.

The scores against real nbgrader: test_plain_nbgrader.py. ``grader convert``: test_convert.py.
"""

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from grader.authoring.notebooks import dumps, read_notebook
from grader.course_config import course_strict
from grader.errors import InvalidSetting
from grader.grading.execute import CellRun, CellStatus
from grader.grading.report import IN_KERNEL_ES, Report, TestResult, TestStatus
from grader.grading.testcells import CheckRuleError, as_written, in_kernel, rewrite_tests
from grader.grading.verdict import judge
from grader.pages import feedback_html

ROOT = Path(__file__).resolve().parents[2]
PLAIN = Path(__file__).parents[1] / "fixtures" / "plain"
CELL = ('"""f of small numbers."""\ndef close(a, b):\n    return abs(a - b) < 1e-9\nassert close(f(1), 2)\n'
        "### BEGIN HIDDEN TESTS\nassert f(2) == 4\n### END HIDDEN TESTS")


def graded_cell(gid, source, points=1):
    return new_code_cell(source, metadata={"nbgrader": {"grade": True, "solution": False, "locked": True,
                                                        "points": points, "grade_id": gid, "schema_version": 3}})


def test_a_cell_that_breaks_the_rule_runs_as_written_and_its_hidden_part_after_its_visible_part_again():
    """Before: rewrite_tests refused the notebook (``line 4: uses assert``)."""
    nb = new_notebook(cells=[new_code_cell("def f(x):\n    return 2 * x"), graded_cell("test_plain", CELL),
                             graded_cell("test_rule", '"""r."""\nassert_same(f(1), 2)')])
    codes = rewrite_tests(nb)
    plain = codes["test_plain"]
    assert plain.plain == "line 4: uses assert; every check is an assert_same call" and plain.checks == ()
    assert plain.visible == "\n".join(CELL.split("\n")[:4]) and plain.hidden == CELL
    assert plain.hidden_only == "### BEGIN HIDDEN TESTS\nassert f(2) == 4\n### END HIDDEN TESTS"
    assert codes["test_rule"].plain == "" and "assert_same" not in codes["test_rule"].visible
    assert in_kernel(nb) == {"test_plain": plain.plain}
    assert rewrite_tests(nb, expected=True)["test_plain"] == plain
    assert as_written("assert f(1) == 2", "x").hidden == ""


@pytest.mark.parametrize("cell", [
    "assert f(1) == 2\n### BEGIN HIDDEN TESTS\nassert f(2) == 4",
    "### END HIDDEN TESTS\nassert f(1) == 2\n### BEGIN HIDDEN TESTS",
    "### BEGIN HIDDEN TESTS\n### BEGIN HIDDEN TESTS\nassert f(2) == 4\n### END HIDDEN TESTS\n### END HIDDEN TESTS",
])
def test_hidden_markers_that_do_not_pair_up_are_refused_naming_the_cell(cell):
    nb = new_notebook(cells=[graded_cell("test_odd", cell)])
    with pytest.raises(CheckRuleError, match=r"^test cell test_odd: .*HIDDEN TESTS"):
        rewrite_tests(nb)


def test_two_hidden_parts_and_code_after_them_are_graded_as_written():
    cell = "x = 1\n### BEGIN HIDDEN TESTS\nassert x\n### END HIDDEN TESTS\ny = 2\n### BEGIN HIDDEN TESTS\n" \
           "assert y\n### END HIDDEN TESTS\nprint(x)"
    code = rewrite_tests(new_notebook(cells=[graded_cell("test_two", cell)]))["test_two"]
    assert code.visible == "x = 1" and code.hidden == cell


def test_a_plain_cell_passes_when_each_part_raised_nothing_and_its_reports_are_ignored():
    code = as_written(CELL, "uses assert")
    ok = CellRun(0, CellStatus.OK, hidden=CellRun(0, CellStatus.OK))
    assert judge(code, ok, {}) == (TestStatus.PASSED, "")
    forged = CellRun(0, CellStatus.OK, reports=[{"check": 9, "actual": {}}],
                     hidden=CellRun(0, CellStatus.OK, reports=["forged"]))
    assert judge(code, forged, {}) == (TestStatus.PASSED, "")
    status, message = judge(code, CellRun(0, CellStatus.OK, hidden=CellRun(0, CellStatus.ERROR, "AssertionError")), {})
    assert status == TestStatus.FAILED and message.english() == "AssertionError in a hidden test"
    status, message = judge(code, CellRun(0, CellStatus.OK, hidden=CellRun(0, CellStatus.ERROR, "MySecret")), {})
    assert message.english() == "Exception in a hidden test"  # a class name is the kernel's to choose
    assert judge(code, CellRun(0, CellStatus.OK), {})[0] == TestStatus.FAILED  # its hidden part never ran
    assert judge(code, CellRun(0, CellStatus.ERROR, "AssertionError"), {})[0] == TestStatus.FAILED
    assert judge(as_written("assert f(1) == 2", "x"), CellRun(0, CellStatus.OK), {}) == (TestStatus.PASSED, "")


def report_with_a_plain_cell():
    return Report("alice.ipynb", "src.ipynb", exercises=[
        TestResult("test_rule", 1, 1, TestStatus.PASSED),
        TestResult("test_plain", 0, 2, TestStatus.FAILED, "AssertionError", in_kernel=True)])


def test_the_report_says_which_verdicts_the_students_kernel_decided():
    """Before: a report had no way to say it (and no such cell was graded)."""
    report = report_with_a_plain_cell()
    table = report.table()
    assert "fallido*" in table and "superado*" not in table
    assert f"{IN_KERNEL_ES}: test_plain" in table
    data = json.loads(report.to_json())
    assert data["in_kernel"] == ["test_plain"] and [r["in_kernel"] for r in data["exercises"]] == [False, True]
    assert Report.from_dict(data).in_kernel == ["test_plain"]
    assert "(decided in the kernel)" in report._repr_markdown_()
    page = feedback_html(report, new_notebook())
    assert "fallido*" in page and IN_KERNEL_ES in page
    assert IN_KERNEL_ES not in Report("a", "b", exercises=[TestResult("t", 1, 1, TestStatus.PASSED)]).table()


@pytest.mark.parametrize("text, strict", [("", False), ("[tool.grader]\npackages = []\n", False),
                                          ("[tool.grader]\nstrict = true\n", True),
                                          ("[tool.grader]\nstrict = false\n", False)])
def test_a_course_is_strict_only_when_its_pyproject_says_so(tmp_path, text, strict):
    if text:
        (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    assert course_strict(tmp_path) is strict


def test_a_strict_setting_that_is_not_a_boolean_is_refused(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.grader]\nstrict = "yes"\n', encoding="utf-8")
    with pytest.raises(InvalidSetting, match="strict must be true or false"):
        course_strict(tmp_path)


def test_this_course_is_strict():
    assert course_strict(ROOT) is True


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


@pytest.mark.slow
def test_a_plain_assignment_is_graded_and_every_output_says_where_its_verdicts_were_decided(tmp_path):
    """grade, batch (grades.csv) and the class view of an ordinary nbgrader assignment. Before: every submission
    was refused, ``error: test cell test_square: line 2: uses assert; every check is an assert_same call``."""
    source, subs = PLAIN / "basics" / "source.ipynb", tmp_path / "subs"
    subs.mkdir()
    for name in ("partial", "hard_coded"):
        shutil.copy(PLAIN / "basics" / "submissions" / f"{name}.ipynb", subs)
    done = cli("grade", str(subs / "partial.ipynb"), "--source", str(source), "--json", str(tmp_path / "r.json"),
               "--feedback", str(tmp_path / "f.html"))
    assert done.returncode == 0, done.stderr
    assert "test_mean         0/2     fallido*   AssertionError: [1, 2, 3] (línea 6 de la celda" in done.stdout
    assert "\ntest_shout        2/2     superado\n" in done.stdout
    assert f"{IN_KERNEL_ES}: test_square, test_square_more, test_mean, test_count_words" in done.stdout
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["score"] == 5 and report["in_kernel"] == ["test_square", "test_square_more", "test_mean",
                                                            "test_count_words"]
    assert IN_KERNEL_ES in (tmp_path / "f.html").read_text(encoding="utf-8")
    done = cli("batch", str(subs), "--source", str(source), "--out", str(tmp_path / "out"), "--workers", "1")
    assert done.returncode == 0, done.stderr
    with (tmp_path / "out" / "grades.csv").open(encoding="utf-8") as handle:
        rows = {row["submission"]: row for row in csv.DictReader(handle)}
    assert rows["hard_coded.ipynb"]["score"] == "8"  # its hidden square(7) raised KeyError
    assert rows["hard_coded.ipynb"]["in_kernel"] == "test_square test_square_more test_mean test_count_words"
    assert cli("report", str(tmp_path / "out")).returncode == 0
    page = (tmp_path / "out" / "class.html").read_text(encoding="utf-8")
    assert "Decided in the student's kernel" in page and page.count("in the student's kernel</td>") == 4


def course(root, strict):
    """A one-lesson course of the plain ``limits`` assignment, strict or not."""
    from grader.authoring.generate import generate

    (root / "solutions").mkdir(parents=True)
    if strict is not None:
        (root / "pyproject.toml").write_text(f"[tool.grader]\nstrict = {str(strict).lower()}\n", encoding="utf-8")
    nb = read_notebook(PLAIN / "limits" / "source.ipynb")
    (root / "solutions" / "01_plain.ipynb").write_text(dumps(nb), encoding="utf-8")
    generate(root / "solutions", root / "student")


@pytest.mark.slow
def test_check_warns_of_plain_cells_and_a_strict_course_refuses_them(tmp_path):
    """Before: every plain cell was a problem, whatever the course."""
    course(tmp_path / "lenient", None)
    done = cli("check", "--root", str(tmp_path / "lenient"), "--no-mistakes", "--workers", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "course OK, 4 warning(s)"
    assert any("warning: " in line and "test cell test_double: graded the nbgrader way, its verdict decided in the "
               "student's kernel (a student can forge it): line 2: uses assert" in line for line in lines)
    assert any(line.startswith("warning: ") and "test_total: has no hidden part" in line for line in lines)
    course(tmp_path / "strict", True)
    done = cli("check", "--root", str(tmp_path / "strict"), "--no-mistakes", "--workers", "1")
    assert done.returncode == 1
    assert "test cell test_double: line 2: uses assert; every check is an assert_same call" in done.stdout
    assert done.stdout.splitlines()[-1] == "3 problem(s)"
    broken = read_notebook(tmp_path / "lenient" / "solutions" / "01_plain.ipynb")
    broken.cells[2].source += "\n### BEGIN HIDDEN TESTS\nassert double(1) == 2"  # never closed: gradable neither way
    nbformat.write(broken, tmp_path / "lenient" / "solutions" / "01_plain.ipynb")
    done = cli("check", "--root", str(tmp_path / "lenient"), "--no-mistakes", "--workers", "1")
    assert done.returncode == 1 and "'### BEGIN HIDDEN TESTS' without '### END HIDDEN TESTS'" in done.stdout
