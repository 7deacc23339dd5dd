"""The grader's parts: reading, generating, assembling, asserting, and the command line."""

import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from grader import assert_same
from grader.authoring.generate import EditedStudentNotebook, InvalidSource, generate, student_version
from grader.authoring.metadata import metadata_problems
from grader.authoring.notebooks import UnusableNotebook, dumps, read_notebook
from grader.classroom.course_check import check_course, check_student
from grader.grading.assemble import assemble

pytestmark = pytest.mark.slow  # kernels, subprocesses or a browser: not in make test-fast

FIXTURES = Path(__file__).parents[1] / "fixtures" / "grader"
SOURCE = FIXTURES / "source.ipynb"


def source():
    return read_notebook(SOURCE)


def by_id(nb, grade_id):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def test_an_unanswered_stub_says_so_in_spanish():
    """Measured before: a stub left as it is raised a bare ``NotImplementedError:`` in Jupyter."""
    namespace: dict = {}
    exec(by_id(student_version(source()), "charge").source, namespace)
    with pytest.raises(NotImplementedError, match=r"^ejercicio sin responder todavía$"):
        namespace["charge"](6000)


def test_student_version_clears_solutions_hidden_tests_and_explanations():
    student = student_version(source())
    text = dumps(student)
    assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text and "charge(6400)" not in text
    assert "raise NotImplementedError(\"ejercicio sin responder todavía" in by_id(student, "charge").source
    assert "solution-only" not in text
    assert by_id(student, "test_charge").metadata["editable"] is False
    assert "checksum" in by_id(student, "test_charge").metadata["nbgrader"]
    assert [c.id for c in student.cells][:2] == ["intro", "setup"]


def test_generate_is_deterministic_and_idempotent(tmp_path):
    (tmp_path / "solutions").mkdir()
    shutil.copy(SOURCE, tmp_path / "solutions" / "01_mini.ipynb")
    first = generate(tmp_path / "solutions", tmp_path / "student")
    text = (tmp_path / "student" / "01_mini.ipynb").read_text(encoding="utf-8")
    assert first == [tmp_path / "student" / "01_mini.ipynb"]
    assert generate(tmp_path / "solutions", tmp_path / "student") == []
    assert (tmp_path / "student" / "01_mini.ipynb").read_text(encoding="utf-8") == text
    with pytest.raises(FileNotFoundError, match="no solution notebook for \\['07'\\]"):
        generate(tmp_path / "solutions", tmp_path / "student", ["07"])


def two_lessons(root):
    """A course of two lessons, generated; returns (solutions, student) folders."""
    (root / "solutions").mkdir()
    for name in ("01_mini", "02_mini"):
        shutil.copy(SOURCE, root / "solutions" / f"{name}.ipynb")
    generate(root / "solutions", root / "student")
    return root / "solutions", root / "student"


def edit_intro(path, text):
    nb = read_notebook(path)
    by_id(nb, "intro").source = text
    path.write_text(dumps(nb), encoding="utf-8")


def test_generate_refuses_to_overwrite_a_students_answers_all_or_nothing(tmp_path):
    solutions, student = two_lessons(tmp_path)
    answered = read_notebook(student / "01_mini.ipynb")
    assert answered.metadata["grader"]["generated"]  # the stamp travels inside the notebook (git clone, copies)
    by_id(answered, "charge").source = "def charge(price_cents):\n    return price_cents // 2  # mi respuesta"
    (student / "01_mini.ipynb").write_text(dumps(answered), encoding="utf-8")
    ran = read_notebook(student / "02_mini.ipynb")  # only run: outputs and counts are not work to keep
    by_id(ran, "setup").execution_count = 1
    by_id(ran, "setup").outputs = [nbformat.v4.new_output("stream", name="stdout", text="hola\n")]
    (student / "02_mini.ipynb").write_text(dumps(ran), encoding="utf-8")
    for name in ("01_mini", "02_mini"):  # the instructor changes both lessons
        edit_intro(solutions / f"{name}.ipynb", "# Mini lección, versión 2")
    before = {p.name: p.read_bytes() for p in student.iterdir()}
    done = cli("generate", "--solutions", str(solutions), "--student", str(student))
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.splitlines() == [
        f"error: {student / '01_mini.ipynb'}: changed since `grader generate` wrote it (a student's answers?); "
        "pass --force to overwrite it"]
    assert {p.name: p.read_bytes() for p in student.iterdir()} == before  # nothing written, not even 02
    done = cli("generate", "--solutions", str(solutions), "--student", str(student), "--force")
    assert done.returncode == 0, done.stderr
    assert "2 student notebook(s) changed" in done.stdout
    assert "mi respuesta" not in (student / "01_mini.ipynb").read_text(encoding="utf-8")
    assert generate(solutions, student) == []


def test_generate_without_a_stamp_overwrites_only_the_same_content(tmp_path):
    solutions, student = two_lessons(tmp_path)
    plain = dumps(student_version(read_notebook(solutions / "01_mini.ipynb")))  # as generate wrote it before stamps
    (student / "01_mini.ipynb").write_text(plain, encoding="utf-8")
    assert check_student(solutions / "01_mini.ipynb", student / "01_mini.ipynb") == []  # in sync, unstamped
    assert generate(solutions, student) == [student / "01_mini.ipynb"]  # stamped, nothing lost
    (student / "01_mini.ipynb").write_text(plain, encoding="utf-8")
    (student / "02_mini.ipynb").write_text("{not json", encoding="utf-8")
    edit_intro(solutions / "01_mini.ipynb", "# Otra introducción")
    with pytest.raises(EditedStudentNotebook) as refused:
        generate(solutions, student)
    assert refused.value.paths == [student / "01_mini.ipynb", student / "02_mini.ipynb"]
    assert (student / "01_mini.ipynb").read_text(encoding="utf-8") == plain
    assert (student / "02_mini.ipynb").read_text(encoding="utf-8") == "{not json"


def test_grading_the_solution_itself_reports_nothing_tampered():
    src = source()
    assembly = assemble(src, src, student_version(src))
    assert (assembly.tampered, assembly.notes) == ([], [])
    edited = copy.deepcopy(src)
    by_id(edited, "test_charge").source += "\nassert True"
    assert assemble(src, edited, student_version(src)).tampered == [{"grade_id": "test_charge", "problem": "edited"}]
    done = cli("grade", str(SOURCE), "--source", str(SOURCE), "--timeout", "10")
    assert done.returncode == 0, done.stderr
    assert "puntuación: 5/5" in done.stdout and "restaurada:" not in done.stdout and "nota:" not in done.stdout


ROOT = Path(__file__).resolve().parents[2]


def test_grade_finds_the_lesson_from_the_notebook_from_any_folder(tmp_path):
    shutil.copy(ROOT / "student" / "03_handoff_pseudo_tool.ipynb", tmp_path / "alice.ipynb")
    done = cli("grade", "alice.ipynb", "--timeout", "20", cwd=tmp_path)  # the README's example, as written
    assert done.returncode == 0, done.stderr
    assert "test_run_until_handoff_loop" in done.stdout and "puntuación: 0/23" in done.stdout
    (tmp_path / "notes.ipynb").write_text(dumps(nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("x = 1")])), encoding="utf-8")
    done = cli("grade", "notes.ipynb", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: notes.ipynb: no solution in {ROOT / 'solutions'} matches its name or its graded cells; "
        "pass --source SOLUTION.ipynb"]
    done = cli("grade", "alice.ipynb", "--solutions", str(tmp_path / "nowhere"), cwd=tmp_path)
    assert done.returncode == 2 and "pass --source" in done.stderr and len(done.stderr.splitlines()) == 1


def test_match_source_by_name_first_then_by_graded_cells(tmp_path):
    from grader.authoring.course import match_source

    folder = tmp_path / "solutions"
    folder.mkdir()
    shutil.copy(SOURCE, folder / "01_mini.ipynb")
    shutil.copy(ROOT / "solutions" / "03_handoff_pseudo_tool.ipynb", folder / "03_handoff_pseudo_tool.ipynb")
    alice = tmp_path / "alice.ipynb"
    shutil.copy(ROOT / "student" / "03_handoff_pseudo_tool.ipynb", alice)
    assert match_source(alice, folder) == folder / "03_handoff_pseudo_tool.ipynb"
    named = tmp_path / "01_mini.ipynb"
    shutil.copy(alice, named)  # the name wins, even over the cells
    assert match_source(named, folder) == folder / "01_mini.ipynb"
    shutil.copy(SOURCE, folder / "02_copy.ipynb")  # two solutions share every graded cell: no guess
    shutil.copy(SOURCE, alice)
    with pytest.raises(UnusableNotebook, match="alice.ipynb: no solution in .* pass --source"):
        match_source(alice, folder)


def test_batch_matches_by_graded_cells_when_names_do_not_match(tmp_path):
    from grader.classroom.batch import batch
    from grader.grading.execute import Limits

    folder, subs = tmp_path / "solutions", tmp_path / "subs"
    folder.mkdir()
    subs.mkdir()
    shutil.copy(SOURCE, folder / "01_mini.ipynb")
    shutil.copy(ROOT / "solutions" / "03_handoff_pseudo_tool.ipynb", folder / "03_handoff_pseudo_tool.ipynb")
    shutil.copy(FIXTURES / "submissions" / "correct.ipynb", subs / "bob.ipynb")
    (subs / "notes.ipynb").write_text(dumps(nbformat.v4.new_notebook()), encoding="utf-8")
    rows = batch(subs, folder, tmp_path / "out", workers=1, limits=Limits(cell_timeout=10), progress=False)
    assert [(r["submission"], r["source"], r["score"], r["status"]) for r in rows] == [
        ("bob.ipynb", str(folder / "01_mini.ipynb"), "5", "graded"), ("notes.ipynb", "", "", "error")]
    assert rows[1]["error"] == (f"no solution in {folder} matches its name or its graded cells; "
                                "pass --source SOLUTION.ipynb")  # the submission column names the file


def test_metadata_problems_are_all_reported():
    nb = source()
    by_id(nb, "test_charge").metadata["nbgrader"]["grade_id"] = "test_quote_total"
    by_id(nb, "test_quote_total_more").metadata["nbgrader"]["points"] = 0
    by_id(nb, "charge").source = by_id(nb, "charge").source.replace("### END SOLUTION", "")
    problems = metadata_problems(nb, "mini")
    assert any("grade_id 'test_quote_total' already used" in p for p in problems)
    assert any("needs points > 0" in p for p in problems)
    assert any("'### BEGIN SOLUTION' without '### END SOLUTION'" in p for p in problems)
    with pytest.raises(InvalidSource):
        student_version(nb)


def test_assemble_restores_tests_in_place_and_keeps_student_cells():
    src = source()
    student = student_version(src)
    mine = copy.deepcopy(student)
    by_id(mine, "charge").source = "def charge(p):\n    return p // 2"
    mine.cells.insert(3, nbformat.v4.new_code_cell("helper = 1", metadata={"nbgrader": {"grade": True, "points": 9}}))
    mine.cells = [c for c in mine.cells if c.metadata.get("nbgrader", {}).get("grade_id") != "test_charge"]
    assembly = assemble(src, mine, student)
    ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in assembly.notebook.cells]
    assert ids == ["intro", "setup", "quote_total", None, "test_quote_total", "test_quote_total_more", "charge",
                   "test_charge"]
    assert "charge(6400)" in assembly.notebook.cells[-1].source  # hidden tests injected at grading time
    assert assembly.notebook.cells[3].metadata.get("nbgrader") is None  # added cells can never earn points
    assert assembly.tampered == [{"grade_id": "test_charge", "problem": "deleted"}]


@pytest.mark.parametrize("content, message", [
    (b"", "the file is empty"), (b"{oops", "not valid JSON"), (b"[1, 2]", "not a Jupyter notebook"),
    (b"\xff\xfe\x00", "not UTF-8"), (json.dumps({"nbformat": 4, "cells": "x"}).encode(), "not a valid notebook"),
])
def test_unreadable_notebooks_get_a_clear_error(tmp_path, content, message):
    path = tmp_path / "bad.ipynb"
    path.write_bytes(content)
    with pytest.raises(UnusableNotebook, match=message):
        read_notebook(path)


def test_assert_same_compares_types_exactly():
    assert_same({"price_cents": 6000}, {"price_cents": 6000})
    with pytest.raises(AssertionError, match="se esperaba el tipo int, se obtuvo float"):
        assert_same(6000.0, 6000)
    with pytest.raises(AssertionError, match=r"valor\['price_cents'\]: se esperaba 6000, se obtuvo 600"):
        assert_same({"price_cents": 600}, {"price_cents": 6000})
    with pytest.raises(AssertionError, match="se esperaban las claves"):
        assert_same({"a": 1}, {"b": 1})

    class Anything:
        def __eq__(self, other):
            return True

    with pytest.raises(AssertionError, match="se esperaba el tipo int, se obtuvo Anything"):
        assert_same(Anything(), 3000)
    with pytest.raises(AssertionError, match=r"valor\[1\]: se esperaba el tipo bool, se obtuvo int"):
        assert_same([1, 1], [1, True])


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


def test_cli_grade_and_exit_codes(tmp_path):
    done = cli("grade", str(FIXTURES / "submissions" / "partial.ipynb"), "--source", str(SOURCE),
               "--json", str(tmp_path / "r.json"), "--feedback", str(tmp_path / "f.html"))
    assert done.returncode == 0, done.stderr
    assert "test_charge" in done.stdout and "puntuación: 3/5" in done.stdout
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["score"] == 3
    assert "Puntuación: 3/5" in (tmp_path / "f.html").read_text(encoding="utf-8")
    for bad in ("empty", "malformed_json", "not_a_notebook", "wrong_notebook"):
        done = cli("grade", str(FIXTURES / "submissions" / f"{bad}.ipynb"), "--source", str(SOURCE))
        assert done.returncode == 2
        assert done.stderr.startswith("error: ") and "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


HIDDEN_PART = "\n### BEGIN HIDDEN TESTS\nassert_same(quote_total(2), 4000)\n### END HIDDEN TESTS"


def make_course(root):
    """The fixture source as a one-lesson course: every test cell with a hidden part, as the course's rule asks, and
    strict as this course is (``[tool.grader] strict``)."""
    (root / "solutions").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.grader]\nstrict = true\n", encoding="utf-8")
    source = read_notebook(SOURCE)
    by_id(source, "test_quote_total").source += HIDDEN_PART
    (root / "solutions" / "01_mini.ipynb").write_text(dumps(source), encoding="utf-8")
    generate(root / "solutions", root / "student")
    guided = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("print(6000 // 2)", outputs=[
            nbformat.v4.new_output("stream", name="stdout", text="3000\n")]),
        nbformat.v4.new_code_cell("1 / 0", metadata={"tags": ["raises-exception"]}),
    ])
    (root / "notebooks").mkdir()
    (root / "notebooks" / "01_mini.ipynb").write_text(dumps(guided), encoding="utf-8")


def test_check_passes_on_a_good_course_and_names_every_problem(tmp_path):
    make_course(tmp_path)
    assert check_course(tmp_path, workers=2) == []
    student = tmp_path / "student" / "01_mini.ipynb"
    edited = student.read_text(encoding="utf-8").replace("ESCRIBE TU CÓDIGO AQUÍ", "edited")
    student.write_text(edited, encoding="utf-8")
    guided = read_notebook(tmp_path / "notebooks" / "01_mini.ipynb")
    guided.cells[0].outputs[0]["text"] = "2999\n"
    guided.cells[1].source = "1 / 1"
    (tmp_path / "notebooks" / "01_mini.ipynb").write_text(dumps(guided), encoding="utf-8")
    shutil.copy(student, tmp_path / "student" / "99_orphan.ipynb")
    problems = check_course(tmp_path, workers=2)
    assert any("01_mini.ipynb: out of sync" in p for p in problems)
    assert any("cell 0 printed something other than its stored output" in p for p in problems)
    assert any("cell 1 is tagged raises-exception but ran without error" in p for p in problems)
    assert any("99_orphan.ipynb: has no source" in p for p in problems)
    done = cli("check", "--root", str(tmp_path))
    assert done.returncode == 1 and "problem(s)" in done.stdout


def test_check_refuses_a_test_cell_without_a_hidden_part(tmp_path):
    """A visible expected value is one the student holds: a cell with no hidden part can be earned by returning it."""
    make_course(tmp_path)
    nb = read_notebook(tmp_path / "solutions" / "01_mini.ipynb")
    by_id(nb, "test_quote_total").source = by_id(nb, "test_quote_total").source.replace(HIDDEN_PART, "")
    (tmp_path / "solutions" / "01_mini.ipynb").write_text(dumps(nb), encoding="utf-8")
    generate(tmp_path / "solutions", tmp_path / "student")
    assert check_course(tmp_path, workers=1, mistakes=False) == [
        f"{tmp_path / 'solutions' / '01_mini.ipynb'}: test cell test_quote_total: has no hidden part (### BEGIN "
        "HIDDEN TESTS ... ### END HIDDEN TESTS); a visible expected value is one the student holds"]


def test_check_flags_a_stub_that_earns_points_and_a_solution_that_does_not(tmp_path):
    make_course(tmp_path)
    nb = read_notebook(tmp_path / "solutions" / "01_mini.ipynb")
    by_id(nb, "test_quote_total").source = '"""Always passes."""\nassert_same(True, True)'
    by_id(nb, "charge").source = by_id(nb, "charge").source.replace("price_cents // 2", "price_cents")
    (tmp_path / "solutions" / "01_mini.ipynb").write_text(dumps(nb), encoding="utf-8")
    generate(tmp_path / "solutions", tmp_path / "student")
    problems = check_course(tmp_path, workers=2)
    assert any("test_quote_total: the unanswered stub earns 1 points" in p for p in problems)
    assert any("test_charge: solution scores 0/2" in p for p in problems)


def test_feedback_page_never_trusts_student_html():
    from grader.grading.report import Report
    from grader.pages import feedback_html

    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Mi respuesta <script>alert(1)</script>"),
        nbformat.v4.new_code_cell("x", outputs=[nbformat.v4.new_output(
            "display_data", data={"text/html": "<script>steal()</script>", "text/plain": "<b>x</b>"})]),
    ])
    page = feedback_html(Report("alice.ipynb", "src.ipynb"), nb)
    assert "<script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "&lt;b&gt;x&lt;/b&gt;" in page


def test_feedback_page_makes_failed_tests_stand_out_in_spanish():
    from grader.grading.pipeline import grade_notebooks
    from grader.grading.report import ManualResult, Report, TestResult
    from grader.pages import feedback_html

    report, feedback_nb = grade_notebooks(source(), read_notebook(FIXTURES / "submissions" / "partial.ipynb"))
    page = feedback_html(report, feedback_nb)
    assert "2 de 3 tests superados. No pasaron: <a href=\"#test-test_charge\">test_charge</a>" in page
    assert '<tr class="fallo"><td><a href="#test-test_charge">test_charge</a></td><td>0/2</td><td>✘ fallido' in page
    assert '<tr><td><a href="#test-test_quote_total">test_quote_total</a></td><td>1/1</td><td>✔ superado' in page
    failing_cell = page.split('<div class="cell fallo" id="test-test_charge">')[1].split("</div>")[0]
    assert "fallido (0/2): AssertionError: valor: se esperaba 3000, se obtuvo 6000" in failing_cell  # the error, here
    assert page.count('id="test-test_charge"') == 1 and "charge(6400)" not in page  # no hidden test shown

    cells = [nbformat.v4.new_code_cell("x", metadata={"nbgrader": {"grade": True, "grade_id": gid, "points": 1}})
             for gid in ("t_hidden", "t_slow")]
    from grader.messages import Say, say

    hidden, slow = say(Say.IN_HIDDEN, ename="AssertionError"), say(Say.TIMEOUT, seconds=3)
    report = Report("bob.ipynb", "s.ipynb", exercises=[
        TestResult("t_hidden", 0, 1, "failed", hidden.english(), hidden),
        TestResult("t_slow", 0, 1, "timeout", slow.english(), slow)],
        manual=[ManualResult("essay", 3)])
    page = feedback_html(report, nbformat.v4.new_notebook(cells=cells))
    assert "0 de 2 tests superados" in page and "AssertionError en un test oculto" in page
    assert "⏱ tiempo agotado" in page and "✎ pendiente" in page and "se califica a mano" in page
    assert '<div class="cell fallo" id="test-t_slow">' in page
    for english in ("Score", "Feedback", "exercise", "points", "status", "passed", "failed", "pending", "graded by",
                    "hidden test", "omitted"):
        assert english not in page, english


def test_cli_batch_refuses_a_missing_folder(tmp_path):
    done = cli("batch", str(tmp_path / "missing"), "--source", str(SOURCE), "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert done.stderr.strip() == f"error: submissions folder {tmp_path / 'missing'} does not exist"
    assert not (tmp_path / "out").exists()


def test_notebook_budget_marks_the_rest_as_not_run():
    from grader.grading.execute import Limits, execute

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code) for code in (
        "import time\ntime.sleep(2)", "time.sleep(5)", "print('never')")])
    runs = execute(nb, Limits(cell_timeout=10, notebook_timeout=3))
    assert [run.status for run in runs] == ["ok", "timeout", "not-run"]
    assert runs[2].summary == "NotebookTimeout: the notebook's time budget of 3 s was spent"


def test_the_feedback_page_says_the_graders_own_words_in_spanish():
    from grader.grading.report import Report, TestResult
    from grader.messages import Say, say
    from grader.pages import feedback_html

    messages = {"t_slow": ("timeout", say(Say.TIMEOUT, seconds=3)), "t_dead": ("died", say(Say.DIED)),
                "t_hidden": ("failed", say(Say.IN_HIDDEN, ename="AssertionError"))}
    report = Report("a.ipynb", "s.ipynb", exercises=[
        TestResult(gid, 0, 1, status, message.english(), message) for gid, (status, message) in messages.items()])
    assert [r.feedback for r in report.exercises] == [
        "CellTimeout: cell did not finish within 3 s",
        "DeadKernelError: the kernel died while running this cell; it was restarted",
        "AssertionError in a hidden test"]  # the JSON, the CSV and the terminal: the instructor's English
    assert Report.from_dict(report.to_dict()) == report
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(1)", outputs=[nbformat.v4.new_output(
        "stream", name="stdout", text=f"\n{say(Say.TRUNCATED, chars=12).spanish()}\n")])])
    page = feedback_html(report, nb)
    for spanish in ("la celda no terminó en 3 s", "el kernel murió mientras corría esta celda; se reinició",
                    "AssertionError en un test oculto", "[salida recortada: 12 caracteres sobre el límite]",
                    "0 de 3 tests superados"):
        assert spanish in page, spanish
    for english in ("did not finish", "died while", "in a hidden test", "output truncated"):
        assert english not in page, english


def test_the_student_table_is_spanish_and_names_the_syntax_error_not_what_it_caused(tmp_path):
    """A SyntaxError in the answer cell is what the student must fix: the NameError in the test is only its echo."""
    from fixture_submissions import submission

    path = tmp_path / "alice.ipynb"
    path.write_text(dumps(submission(charge="def charge(price_cents:\n    return price_cents // 2")), encoding="utf-8")
    done = cli("grade", str(path), "--source", str(SOURCE), "--timeout", "10")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["test", "puntos", "estado", "comentario"]
    row = next(line for line in lines if line.startswith("test_charge "))
    assert "fallido" in row and "tu celda charge falló antes de este test: SyntaxError" in row
    assert "NameError" not in row
    assert "superado" in next(line for line in lines if line.startswith("test_quote_total "))
    assert lines[-1] == "puntuación: 3/5"


def test_a_path_of_the_wrong_kind_is_refused_before_any_grading(tmp_path):
    """A file where a folder is wanted, or a folder where a file is: one line saying what to pass, nothing written."""
    alice = tmp_path / "alice.ipynb"
    shutil.copy(SOURCE, alice)
    done = cli("batch", str(alice), "--source", str(SOURCE), "--out", str(tmp_path / "out"))
    assert done.returncode == 2 and "is a file: pass the folder that holds the submissions" in done.stderr
    assert not (tmp_path / "out").exists()
    subs, taken = tmp_path / "subs", tmp_path / "grades"
    subs.mkdir()
    shutil.copy(SOURCE, subs / "alice.ipynb")
    taken.write_text("mine", encoding="utf-8")
    done = cli("batch", str(subs), "--source", str(SOURCE), "--out", str(taken))
    assert done.returncode == 2 and f"--out {taken} is a file" in done.stderr
    assert taken.read_text(encoding="utf-8") == "mine"
    done = cli("grade", str(alice), "--source", str(tmp_path))
    assert done.returncode == 2 and f"--source {tmp_path} is a folder" in done.stderr and "--solutions" in done.stderr


def test_an_error_names_the_students_own_line_never_the_graders_or_a_hidden_one(tmp_path):
    """The row of a test whose call raised quotes the deepest line of a notebook cell: the student's helper, or the
    test's own line as the student reads it (not the probe the kernel ran); a hidden part's error gives no line."""
    from fixture_submissions import submission

    path = tmp_path / "alice.ipynb"
    # added after the two lines of the right answer: the helper's line is line 4 of the cell
    quote = 'def _hours(h):\n    return {1: 1, 3: 3}[h]\n\ndef quote_total(hours):\n    return 2000 * _hours(hours)'
    path.write_text(dumps(submission(attack=quote, charge="charge = None")), encoding="utf-8")
    report = tmp_path / "alice.json"
    done = cli("grade", str(path), "--source", str(SOURCE), "--timeout", "10", "--json", str(report))
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line for line in done.stdout.splitlines()[1:-1]}
    assert rows["test_quote_total_more"].endswith("fallido   KeyError en un test oculto")  # hidden: no line, no value
    assert rows["test_charge"].endswith(
        "TypeError: 'NoneType' object is not callable (línea 2 de la celda: assert_same(charge(6000), 3000))")
    assert "superado" in rows["test_quote_total"]
    results = {r["grade_id"]: r for r in json.loads(report.read_text(encoding="utf-8"))["exercises"]}
    assert results["test_charge"]["feedback"] == (
        "TypeError: 'NoneType' object is not callable (line 2 of the cell: assert_same(charge(6000), 3000))")
    assert "probe" not in done.stdout and "probe" not in report.read_text(encoding="utf-8")
    path.write_text(dumps(submission(attack=quote.replace("3: 3", "5: 5"))), encoding="utf-8")
    row = next(line for line in cli("grade", str(path), "--source", str(SOURCE), "--timeout", "10").stdout.splitlines()
               if line.startswith("test_quote_total "))
    assert row.endswith("KeyError: 3 (en _hours, línea 4: return {1: 1, 5: 5}[h])")


def test_a_failed_check_in_the_students_own_jupyter_shows_the_tests_line_without_the_graders_frames():
    """In the student's own kernel, a failing assert_same reads as an AssertionError at the test's line."""
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3", cwd=str(Path(__file__).parents[2]))
    try:
        client.execute_interactive("from grader import assert_same\ndef f(x):\n    return [x, {'a': 2}]", timeout=60)
        reply = client.execute_interactive('"""Un test."""\nassert_same(f(1), [1, {"a": 1}], "la lista")',
                                           timeout=60, output_hook=lambda msg: None)
    finally:
        manager.shutdown_kernel(now=True)
    from grader.grading.tracebacks import ANSI

    shown = ANSI.sub("", "\n".join(reply["content"]["traceback"]))
    assert 'assert_same(f(1), [1, {"a": 1}], "la lista")' in shown
    assert shown.rstrip().endswith("AssertionError: la lista[1]['a']: se esperaba 1, se obtuvo 2")
    assert "asserts.py" not in shown and "in _same" not in shown and "skipping hidden" not in shown


def test_a_check_of_nothing_is_an_error_that_names_what_exists(tmp_path):
    """Before: `grader check 05_the_contrat` (a typo) printed "course OK" and exited 0, having checked nothing."""
    make_course(tmp_path)
    done = cli("check", "01_mini_typo", "--root", str(tmp_path))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"error: no lesson '01_mini_typo' in {tmp_path}; the lessons are: 01_mini\n"
    empty = tmp_path / "empty"
    empty.mkdir()
    done = cli("check", "--root", str(empty))
    assert done.returncode == 2 and done.stderr.startswith(f"error: {empty}: no lesson here")


def test_a_batch_that_grades_nothing_says_so_and_fails(tmp_path):
    """Before: an empty folder, --workers 0, or a folder of another lesson's notebooks all exited 0."""
    (tmp_path / "empty").mkdir()
    done = cli("batch", str(tmp_path / "empty"), "--source", str(SOURCE), "--out", str(tmp_path / "o1"))
    assert done.returncode == 2 and "no notebook (*.ipynb) to grade" in done.stderr
    (tmp_path / "subs").mkdir()
    shutil.copy(FIXTURES / "submissions" / "partial.ipynb", tmp_path / "subs" / "a.ipynb")
    done = cli("batch", str(tmp_path / "subs"), "--source", str(SOURCE), "--out", str(tmp_path / "o2"),
               "--workers", "0")
    assert (done.returncode, done.stderr) == (2, "error: --workers must be 1 or more, not 0\n")
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(FIXTURES / "submissions" / "wrong_notebook.ipynb", other / "b.ipynb")
    done = cli("batch", str(other), "--source", str(SOURCE), "--out", str(tmp_path / "o3"), "--workers", "1")
    assert done.returncode == 1 and "error: nothing was graded: all 1 submission(s) are error rows" in done.stderr
    assert (tmp_path / "o3" / "grades.csv").is_file()  # the error row is written all the same
