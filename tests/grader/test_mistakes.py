"""The mistake named: an answer that behaves exactly like a written-down wrong answer gets its explanation.

The source is the grader's fixture (``charge`` is half the price; test_charge checks 6000 and,
hidden, 6400) with two wrong answers written down for ``charge``: the full price, and 3000 for
every price (right on the visible check, wrong on the hidden one).
"""

import copy
import json

import pytest
from fixture_submissions import ALWAYS_3000, FULL_PRICE, RIGHT_CHARGE, SOURCE, WRITTEN, submission, with_wrong_answers
from nbformat.v4 import new_markdown_cell

from grader.authoring.generate import student_version
from grader.authoring.notebooks import dumps, read_notebook
from grader.classroom.batch import batch
from grader.classroom.course_check import check_mistakes
from grader.grading.execute import Limits
from grader.grading.mistakes import mistake_table, wrong_answers
from grader.grading.pipeline import grade_notebooks
from grader.grading.report import Report
from grader.pages import feedback_html

pytestmark = pytest.mark.slow  # kernels, subprocesses or a browser: not in make test-fast

LIMITS = Limits(cell_timeout=10)


@pytest.fixture(scope="module")
def source():
    return with_wrong_answers()


def graded(source, charge):
    return grade_notebooks(source, submission(charge=charge), limits=LIMITS)


def test_the_written_down_wrong_answers_are_read_with_their_explanation(source):
    answers = wrong_answers(source)
    assert [(a.id, a.exercise, a.text, a.code.strip()) for a in answers] == [
        (gid, "charge", text, code) for gid, (text, code) in WRITTEN.items()]


@pytest.mark.parametrize("gid", sorted(WRITTEN))
def test_a_wrong_answer_is_named_with_its_explanation_in_the_report_and_the_page(source, gid):
    text, code = WRITTEN[gid]
    report, nb = graded(source, code)
    assert [(m["exercise"], m["id"], m["text"]) for m in report.mistakes] == [("charge", gid, text)]
    page = feedback_html(report, nb)
    assert "error habitual" in page and text.split("**")[1] in page
    assert Report.from_dict(json.loads(report.to_json())).mistakes == report.mistakes
    assert f"error reconocido en charge: {text.replace('**', '')} ({gid})" in report.table()


def test_a_wrong_answer_whose_message_ends_like_a_hidden_line_is_named_all_the_same():
    """A visible message cut short where a hidden line begins is masked in a graded run; the table masks it too."""
    raising = 'def charge(price_cents):\n    raise ValueError("sin precio: assert_same(charge(6")'
    source = with_wrong_answers()
    first = next(i for i, c in enumerate(source.cells) if c.metadata.get("wrong_answer_for") == "charge")
    note = copy.deepcopy(source.cells[first])
    note.source = f"**Lanzar un error.** Calcula el cargo.\n\n```python\n{raising}\n```"
    note.metadata.nbgrader["grade_id"] = "charge_wrong_raises"
    source.cells.insert(first, note)
    report, _ = graded(source, raising)
    assert [m["id"] for m in report.mistakes] == ["charge_wrong_raises"]


@pytest.mark.parametrize("charge", [RIGHT_CHARGE, "def charge(price_cents):\n    return price_cents >> 1"],
                         ids=["solution", "variant"])
def test_a_correct_answer_is_named_nothing(source, charge):
    report, nb = graded(source, charge)
    assert report.score == report.max_score and report.mistakes == []
    assert "error habitual" not in feedback_html(report, nb)


@pytest.mark.parametrize("charge", ["def charge(price_cents):\n    return price_cents - 1",
                                    "def charge(price_cents):\n    return 3000 if price_cents == 6000 else 0"],
                         ids=["unrelated", "same-visible-other-hidden"])
def test_a_wrong_answer_that_behaves_unlike_every_written_one_is_named_nothing(source, charge):
    """The second answer fails exactly like ``charge_wrong_constant`` on the visible check, not on the hidden one."""
    report, _ = graded(source, charge)
    assert report.score < report.max_score and report.mistakes == []


def test_the_table_holds_each_answer_s_behaviour_and_no_code(source):
    table = mistake_table(source, student_version(source), LIMITS)
    assert [entry["id"] for entry in table["charge"]] == list(WRITTEN)
    assert all("code" not in entry and entry["tests"] == ["test_charge"] for entry in table["charge"])
    assert table["charge"][0]["behaviour"] != table["charge"][1]["behaviour"]


def test_a_batch_names_each_submission_s_mistake_from_one_table(source, tmp_path):
    (tmp_path / "src.ipynb").write_text(dumps(source), encoding="utf-8")
    subs = tmp_path / "subs"
    subs.mkdir()
    answers = {"full": FULL_PRICE, "constant": ALWAYS_3000, "right": RIGHT_CHARGE}
    for name, code in answers.items():
        (subs / f"{name}.ipynb").write_text(dumps(submission(charge=code)), encoding="utf-8")
    named = {}
    for on in (True, False):
        out = tmp_path / f"out-{on}"
        batch(subs, tmp_path / "src.ipynb", out, workers=2, limits=LIMITS, progress=False, name_mistakes=on)
        named[on] = {p.stem: [m["id"] for m in json.loads(p.read_text(encoding="utf-8"))["report"]["mistakes"]]
                     for p in (out / "reports").glob("*.json")}
    assert named[True] == {"full": ["charge_wrong_full_price"], "constant": ["charge_wrong_constant"], "right": []}
    assert named[False] == {"full": [], "constant": [], "right": []}


def test_a_source_without_written_down_answers_names_nothing():
    source = read_notebook(SOURCE)
    report, _ = grade_notebooks(source, submission(charge=FULL_PRICE), limits=LIMITS)
    assert report.score < report.max_score and report.mistakes == []
    assert mistake_table(copy.deepcopy(source), student_version(source)) == {}


def test_forged_reports_with_a_check_twice_are_only_data(source):
    """Untrusted reports that repeat a check (unsortable values) fail the test and name nothing; grading goes on."""
    forged = ('def charge(price_cents):\n    from IPython.display import publish_display_data\n'
              '    from grader.grading.values import encode\n    for value in (1, 2):\n'
              '        publish_display_data({"application/vnd.handoffs-grader.check+json":\n'
              '                              {"check": 0, "actual": encode({"v": value}), "what": "x"}})\n'
              '    return price_cents')
    report, _ = graded(source, forged)
    assert report.score < report.max_score and report.mistakes == []


def test_an_exception_type_alone_names_no_mistake():
    """Before: any answer raising a TypeError before its first report was named as the written-down wrong answer
    that raised a TypeError first, whatever its message."""
    from nbformat.v4 import new_markdown_cell

    source = with_wrong_answers()
    raising = new_markdown_cell("**Sumar texto al precio.** El precio es un número.\n\n```python\n"
                                "def charge(price_cents):\n    return price_cents + 'x'\n```")
    raising.metadata.update(copy.deepcopy(source.cells[-1].metadata), tags=["solution-only"],
                            wrong_answer_for="charge", wrong_answer_kind="other")
    raising.metadata["nbgrader"] = {"grade": False, "grade_id": "charge_wrong_text", "locked": True,
                                    "schema_version": 3, "solution": False}
    source.cells.insert(source.cells.index(next(c for c in source.cells if c.metadata.get("wrong_answer_for"))),
                        raising)
    same, _ = graded(source, "def charge(price_cents):\n    return price_cents + 'x'")
    assert [m["id"] for m in same.mistakes] == ["charge_wrong_text"]  # the same message: the same mistake
    other, _ = graded(source, "def charge(price_cents):\n    return len(price_cents)")
    assert other.score < other.max_score and other.mistakes == []  # a TypeError too, and another mistake


def variant_cell(gid, code, **metadata):
    """A written-down answer for charge, as a solution notebook holds one (``correct_variant_for`` and the like)."""
    cell = new_markdown_cell(f"**Otra forma.**\n\n```python\n{code}\n```")
    cell.metadata.update(nbgrader={"grade": False, "grade_id": gid, "locked": True, "schema_version": 3,
                                   "solution": False}, tags=["solution-only"], **metadata)
    return cell


def test_the_course_gate_refuses_a_correct_variant_that_loses_points_and_a_wrong_answer_that_does_not(tmp_path):
    source = with_wrong_answers()
    source.cells += [variant_cell("charge_right_halved", "def charge(price_cents):\n    return price_cents >> 1",
                                  correct_variant_for="charge"),
                     variant_cell("charge_right_but_wrong", ALWAYS_3000, correct_variant_for="charge"),
                     variant_cell("charge_wrong_but_right", RIGHT_CHARGE, wrong_answer_for="charge",
                                  wrong_answer_kind="other")]
    path = tmp_path / "source.ipynb"
    path.write_text(dumps(source), encoding="utf-8")
    problems = check_mistakes(path, LIMITS)
    assert [line.split(": ")[1] for line in problems] == ["charge_wrong_but_right", "charge_right_but_wrong"]
    assert "earns 3/5 (loses points in test_charge)" in problems[1]
