"""Manually graded cells: kept for the student, never run, pending in the report, marks imported later."""

import csv
import json
import shutil
from pathlib import Path

import nbformat
import pytest

import grader.authoring.notebooks
import grader.classroom.batch
import grader.classroom.gradebook
import grader.grading.pipeline
from grader.__main__ import main
from grader.authoring.generate import TEXT_STUB, student_version
from grader.authoring.notebooks import dumps
from grader.classroom.batch import batch
from grader.classroom.course_check import check_solution, check_student
from grader.grading.execute import Limits
from grader.grading.pipeline import grade_notebooks
from grader.pages import feedback_html

pytestmark = pytest.mark.slow  # kernels, subprocesses or a browser: not in make test-fast


def _meta(gid, **flags):
    return {"nbgrader": {"grade": False, "solution": False, "locked": False, "grade_id": gid, "schema_version": 3,
                         **flags}}


def make_source() -> nbformat.NotebookNode:
    """One autograded exercise (2 points) and one written answer graded by hand (3 points)."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Mini lab", id="intro"),
        nbformat.v4.new_code_cell("def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION",
                                  id="double", metadata=_meta("double", solution=True)),
        nbformat.v4.new_code_cell("from grader import assert_same\nassert_same(double(3), 6, 'el doble')\n"
                                  "### BEGIN HIDDEN TESTS\nassert_same(double(5), 10)\n### END HIDDEN TESTS",
                                  id="test_double", metadata=_meta("test_double", grade=True, locked=True,
                                                                   points=2)),
        nbformat.v4.new_markdown_cell("Rúbrica: 3 puntos.", id="rubric"),
        nbformat.v4.new_markdown_cell("La hipótesis se cumple: la medición lo muestra.",
                                      id="explain", metadata=_meta("explain", grade=True, solution=True, points=3)),
    ]
    return nb


def answered(student: nbformat.NotebookNode, text: str) -> nbformat.NotebookNode:
    nb = nbformat.reads(dumps(student), as_version=4)
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid == "double":
            cell.source = "def double(x):\n    return x + x"
        elif gid == "explain":
            cell.source = text
    return nb


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A batch of three submissions (two answered, one blank), graded once for the module."""
    root = tmp_path_factory.mktemp("manual")
    source = make_source()
    (root / "source.ipynb").write_text(dumps(source), encoding="utf-8")
    student = student_version(source)
    subs = root / "subs"
    subs.mkdir()
    (subs / "ana.ipynb").write_text(dumps(answered(student, "El tiempo mejora porque <b>x</b>")), encoding="utf-8")
    (subs / "bob.ipynb").write_text(dumps(answered(student, "Otra lectura de la medición")), encoding="utf-8")
    (subs / "blank.ipynb").write_text(dumps(student), encoding="utf-8")
    rows = batch(subs, root / "source.ipynb", root / "out", workers=1, limits=Limits(), progress=False)
    return root, rows


def rows_of(path: Path) -> dict[str, dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return {row["submission"]: row for row in csv.DictReader(handle)}


def test_student_version_keeps_the_manual_cell_with_the_text_stub():
    student = student_version(make_source())
    cell = next(c for c in student.cells if c.get("id") == "explain")
    assert cell.cell_type == "markdown" and cell.source == TEXT_STUB
    assert cell.metadata["nbgrader"]["grade"] and cell.metadata["nbgrader"]["solution"]


def test_manual_cell_is_pending_apart_from_the_auto_score(tmp_path):
    source = make_source()
    student = student_version(source)
    report, feedback_nb = grade_notebooks(source, answered(student, "Mi análisis"), limits=Limits())
    assert (report.score, report.max_score) == (2, 2)
    assert [(m.grade_id, m.max_points, m.points, m.status, m.answer) for m in report.manual] == [
        ("explain", 3, None, "pending", "Mi análisis")]
    data = json.loads(report.to_json())
    assert data["manual"][0]["status"] == "pending" and data["manual_pending"] == ["explain"]
    assert data["score"] == 2 and data["max_score"] == 2 and data["manual_max"] == 3
    table = report.table()
    rows = [line.split() for line in table.splitlines()]
    assert ["explain", "-/3", "pendiente", "se", "califica", "a", "mano"] in rows
    assert "a mano: 3 punto(s) pendientes" in table
    page = feedback_html(report, feedback_nb)
    assert "explain" in page and "-/3" in page and "pendiente" in page and "Mi análisis" in page


@pytest.mark.parametrize("answer", [TEXT_STUB, f"  {TEXT_STUB}\n\n", ""], ids=["stub", "stub-respaced", "empty"])
def test_an_untouched_or_empty_written_answer_scores_0_without_a_mark(answer):
    """As in nbgrader: the stub left as it was released is no answer; it is not left pending for the instructor."""
    source = make_source()
    report, feedback_nb = grade_notebooks(source, answered(student_version(source), answer), limits=Limits())
    assert [(m.points, m.status, m.unanswered) for m in report.manual] == [(0.0, "unanswered", True)]
    assert report.manual_pending == [] and json.loads(report.to_json())["manual"][0]["status"] == "unanswered"
    assert "sin responder: la celda sigue como se entregó" in report.table()
    page = feedback_html(report, feedback_nb)
    assert "0/3" in page and "sin responder" in page


def test_course_check_leaves_manual_cells_out_of_full_marks_and_zero(tmp_path):
    source = make_source()
    (tmp_path / "solution.ipynb").write_text(dumps(source), encoding="utf-8")
    (tmp_path / "student.ipynb").write_text(dumps(student_version(source)), encoding="utf-8")
    assert check_solution(tmp_path / "solution.ipynb") == []
    assert check_student(tmp_path / "solution.ipynb", tmp_path / "student.ipynb") == []


def test_batch_lists_pending_manual_points(graded):
    root, _ = graded
    rows = rows_of(root / "out" / "grades.csv")
    assert list(next(iter(rows.values()))) == list(grader.classroom.gradebook.COLUMNS)
    ana, blank = rows["ana.ipynb"], rows["blank.ipynb"]
    assert (ana["score"], ana["max_score"], ana["manual_pending"], ana["manual_max"]) == ("2", "2", "explain:3", "3")
    assert (ana["manual_score"], ana["total_score"], ana["total_max"]) == ("", "", "5")
    assert (blank["score"], blank["manual_pending"], blank["manual_score"], blank["total_score"]) == ("0", "", "0", "0")
    assert rows["bob.ipynb"]["manual_pending"] == "explain:3"
    saved = json.loads((root / "out" / "reports" / "ana.json").read_text(encoding="utf-8"))
    assert saved["report"]["manual"][0]["answer"] == "El tiempo mejora porque <b>x</b>"


def write_scores(path: Path, lines: list[str]) -> Path:
    path.write_text("submission,grade_id,points\n" + "".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize(("line", "message"), [
    ("nobody.ipynb,explain,2", "unknown submission 'nobody.ipynb': no report of it in"),
    ("ana.ipynb,double,2", "no manually graded cell 'double'"),
    ("ana.ipynb,explain,4", "between 0 and 3"),
    ("ana.ipynb,explain,-1", "between 0 and 3"),
    ("ana.ipynb,explain,tres", "not a number"),
    ("blank.ipynb,explain,1", "a second mark for blank.ipynb explain"),
])
def test_a_bad_line_is_refused_alone_and_named(graded, tmp_path, capsys, line, message):
    """Before: one bad line refused the whole file, and only the first bad line was named."""
    root, _ = graded
    out = tmp_path / "out"
    shutil.copytree(root / "out", out)
    scores = write_scores(tmp_path / "scores.csv", ["blank.ipynb,explain,0", line, "bob.ipynb,explain,9"])
    assert main(["manual", "import", str(scores), "--out", str(out)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and "line 3: " in err[0] and message in err[0], err
    assert "line 4: explain takes between 0 and 3 points, got 9" in err[1]
    rows = rows_of(out / "grades.csv")
    assert (rows["blank.ipynb"]["manual_score"], rows["blank.ipynb"]["manual_pending"]) == ("0", "")  # imported
    assert rows["bob.ipynb"]["manual_pending"] == "explain:3"  # still pending


def test_a_spanish_locale_spreadsheets_file_is_read_and_its_bad_lines_all_named(graded, tmp_path, capsys):
    """Saved by a spreadsheet whose decimal mark is a comma: semicolons between columns, 2,5 for two and a half."""
    root, _ = graded
    out = tmp_path / "out"
    shutil.copytree(root / "out", out)
    scores = tmp_path / "notas.csv"
    scores.write_bytes(b"\xef\xbb\xbfsubmission;grade_id;points\r\nana.ipynb;explain;2,5\r\n"
                       b"bob.ipynb;explain;3,5\r\nblank.ipynb;explain;uno\r\n")
    assert main(["manual", "import", str(scores), "--out", str(out)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and "line 3: explain takes between 0 and 3 points, got 3,5" in err[0], err
    assert "line 4: points 'uno' is not a number" in err[1]
    rows = rows_of(out / "grades.csv")
    assert (rows["ana.ipynb"]["manual_score"], rows["ana.ipynb"]["total_score"]) == ("2.5", "4.5")


def test_nothing_is_written_when_every_line_is_bad(graded, tmp_path, capsys):
    root, _ = graded
    before = {p: p.read_bytes() for p in (root / "out").rglob("*") if p.is_file()}
    scores = write_scores(tmp_path / "scores.csv", ["nobody.ipynb,explain,2", "ana.ipynb,explain,7"])
    assert main(["manual", "import", str(scores), "--out", str(root / "out")]) == 1
    assert len(capsys.readouterr().err.splitlines()) == 2
    assert {p: p.read_bytes() for p in (root / "out").rglob("*") if p.is_file()} == before


def test_the_template_names_import_back_whatever_the_folder_is_called(tmp_path, capsys):
    """Before: a folder '-mallory' was written "'-mallory/..." and the import of the whole class failed on it."""
    source = make_source()
    (tmp_path / "source.ipynb").write_text(dumps(source), encoding="utf-8")
    student = student_version(source)
    names = ["-mallory", "=eve", "zoe\x07\x1b[2J"]
    for name in names:
        (tmp_path / "subs" / name).mkdir(parents=True)
        (tmp_path / "subs" / name / "lab.ipynb").write_text(dumps(answered(student, "Mi respuesta")), encoding="utf-8")
    out = tmp_path / "out"
    batch(tmp_path / "subs", tmp_path / "source.ipynb", out, workers=1, limits=Limits(), progress=False)
    assert main(["manual", "template", str(out)]) == 0
    capsys.readouterr()
    filled = (out / "marks.csv").read_text(encoding="utf-8").replace(",explain,,3,", ",explain,2,3,")
    assert "\x07" not in filled and "\x1b" not in filled  # the template is safe to open in a spreadsheet
    (tmp_path / "filled.csv").write_text(filled, encoding="utf-8")
    assert main(["manual", "import", str(tmp_path / "filled.csv"), "--out", str(out)]) == 0, capsys.readouterr().err
    rows = rows_of(out / "grades.csv")
    assert sorted(row["manual_score"] for row in rows.values()) == ["2", "2", "2"]


def test_a_scores_file_without_the_columns_is_refused(graded, tmp_path, capsys):
    root, _ = graded
    scores = tmp_path / "scores.csv"
    scores.write_text("student,cell,mark\nana.ipynb,explain,2\n", encoding="utf-8")
    assert main(["manual", "import", str(scores), "--out", str(root / "out")]) == 2
    assert "missing column(s) submission, grade_id, points" in capsys.readouterr().err


def test_import_merges_marks_without_running_anything(graded, tmp_path, monkeypatch, capsys):
    root, _ = graded
    out = tmp_path / "out"
    out.mkdir()
    for path in (root / "out").rglob("*"):
        if path.is_file():
            target = out / path.relative_to(root / "out")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())

    def no_running(*args, **kwargs):
        raise AssertionError("manual import ran a notebook")

    monkeypatch.setattr(grader.grading.pipeline, "execute", no_running)
    monkeypatch.setattr(grader.classroom.batch, "_grade", no_running)
    monkeypatch.setattr(nbformat, "read", no_running)
    monkeypatch.setattr(grader.authoring.notebooks, "read_notebook", no_running)
    scores = write_scores(tmp_path / "scores.csv", ["ana.ipynb,explain,2.5"])
    scores.write_bytes(b"\xef\xbb\xbf" + scores.read_bytes())  # as a spreadsheet saves it
    assert main(["manual", "import", str(scores), "--out", str(out)]) == 0
    assert "1 submission(s) still pending" in capsys.readouterr().out
    rows = rows_of(out / "grades.csv")
    ana, blank = rows["ana.ipynb"], rows["blank.ipynb"]
    assert (ana["score"], ana["max_score"], ana["manual_pending"]) == ("2", "2", "")
    assert (ana["manual_score"], ana["manual_max"], ana["total_score"], ana["total_max"]) == ("2.5", "3", "4.5", "5")
    assert (blank["manual_pending"], blank["total_score"]) == ("", "0")
    assert (rows["bob.ipynb"]["manual_pending"], rows["bob.ipynb"]["total_score"]) == ("explain:3", "")
    saved = json.loads((out / "reports" / "ana.json").read_text(encoding="utf-8"))
    assert saved["report"]["manual"][0]["points"] == 2.5 and saved["report"]["manual"][0]["status"] == "graded"
    assert saved["report"]["score"] == 2 and saved["report"]["manual_pending"] == []
    page = (out / "feedback" / "ana.html").read_text(encoding="utf-8")  # the page says the mark now
    assert "2.5/3" in page and "pendiente" not in page and "calificado a mano por el profesor" in page
    assert "<strong>Puntuación: 4.5/5 (automática 2/2, a mano 2.5/3)</strong>" in page  # the total, as grades.csv
    assert "<strong>Puntuación: 2/2 automática; faltan 3 punto(s) por calificar a mano</strong>" in (
        out / "feedback" / "bob.html").read_text(encoding="utf-8")
    assert page.count("&lt;b&gt;x&lt;/b&gt;") == (root / "out" / "feedback" / "ana.html").read_text(
        encoding="utf-8").count("&lt;b&gt;x&lt;/b&gt;") > 0  # the cells as they were, the answer still escaped
    assert "pendiente" in (out / "feedback" / "bob.html").read_text(encoding="utf-8")
    # a later file completes the class, and a mark replaces an unanswered cell's 0; the earlier mark stays
    scores = write_scores(tmp_path / "more.csv", ["bob.ipynb,explain,1", "blank.ipynb,explain,0.5"])
    assert main(["manual", "import", str(scores), "--out", str(out)]) == 0
    rows = rows_of(out / "grades.csv")
    assert (rows["bob.ipynb"]["total_score"], rows["ana.ipynb"]["total_score"]) == ("3", "4.5")
    assert rows["blank.ipynb"]["total_score"] == "0.5"
    saved = json.loads((out / "reports" / "blank.json").read_text(encoding="utf-8"))
    assert saved["report"]["manual"][0]["status"] == "graded" and not saved["report"]["manual"][0]["unanswered"]


def test_real_nbgrader_releases_the_same_stub_and_leaves_it_for_manual_grading(tmp_path):
    from nbgrader.api import Gradebook

    from grader.authoring.nbgrader_course import nbgrader_scores

    source = make_source()
    (tmp_path / "lab.ipynb").write_text(dumps(source), encoding="utf-8")
    (tmp_path / "ana.ipynb").write_text(dumps(answered(student_version(source), "Mi análisis")), encoding="utf-8")
    scores = nbgrader_scores(tmp_path / "lab.ipynb", {"ana": tmp_path / "ana.ipynb"}, tmp_path / "course")
    assert scores == {"ana": 2.0}  # the same auto score as ours; the written answer waits for the instructor
    released = nbformat.read(tmp_path / "course" / "release" / "lesson" / "lab.ipynb", as_version=4)
    assert next(c for c in released.cells if c.get("id") == "explain").source == TEXT_STUB
    with Gradebook(f"sqlite:///{tmp_path / 'course' / 'gradebook.db'}") as gradebook:
        submission = gradebook.find_submission("lesson", "ana")
        assert submission.needs_manual_grade
        assert submission.max_score == 5


def test_the_template_lists_each_pending_cell_to_mark_and_imports_once_filled(graded, tmp_path, capsys):
    root, _ = graded
    out = tmp_path / "out"
    shutil.copytree(root / "out", out)
    assert main(["manual", "template", str(out)]) == 0
    assert "2 cell(s) to mark" in capsys.readouterr().out
    with (out / "marks.csv").open(encoding="utf-8", newline="") as handle:
        template = list(csv.DictReader(handle))
    assert [(r["submission"], r["grade_id"], r["points"], r["max_points"]) for r in template] == [
        ("ana.ipynb", "explain", "", "3"), ("bob.ipynb", "explain", "", "3")]
    assert template[0]["answer"] == "El tiempo mejora porque <b>x</b>"
    assert main(["manual", "template", str(out)]) == 2  # never over a file that may hold marks
    assert "already exists" in capsys.readouterr().err
    filled = (out / "marks.csv").read_text(encoding="utf-8").replace(",explain,,3,", ",explain,1,3,")
    (tmp_path / "filled.csv").write_text(filled, encoding="utf-8")
    assert main(["manual", "import", str(tmp_path / "filled.csv"), "--out", str(out)]) == 0
    rows = rows_of(out / "grades.csv")
    assert (rows["ana.ipynb"]["total_score"], rows["bob.ipynb"]["total_score"]) == ("3", "3")
