"""What a student reads: an answer cell's error at the line of their own cell, in Spanish everywhere, on a page
that opens from a ``file://`` URL and wraps its long lines."""

import argparse
import json
import re
import urllib.parse
from pathlib import Path

import pytest
from fixture_submissions import SOURCE, submission

from grader.authoring.notebooks import read_notebook
from grader.grading.pipeline import grade_notebooks
from grader.grading.report import Report, TestResult
from grader.grading.tracebacks import in_your_cell
from grader.messages import Say, say
from grader.pages import feedback_html

ROOT = Path(__file__).resolve().parents[2]
SYNTAX_ON_LINE_3 = "def charge(price_cents):\n    half = price_cents // 2\n    return half +\n"
IPYTHON_TRACEBACK = ["  Cell In[3], line 3\n    return half +\n                 ^\nSyntaxError: invalid syntax\n"]


def test_a_syntax_error_is_placed_at_the_line_of_the_students_own_cell():
    """The kernel's name for the cell (``<ipython-input-3-ab5...>``) is never what the student reads."""
    found = in_your_cell("SyntaxError", "invalid syntax (<ipython-input-3-ab525e3df8e1>, line 3)", IPYTHON_TRACEBACK,
                         SYNTAX_ON_LINE_3.splitlines(), "charge")
    assert found is not None
    assert found.spanish() == "SyntaxError: invalid syntax (línea 3 de tu celda charge: return half +)"
    assert found.english() == "SyntaxError: invalid syntax (line 3 of your cell charge: return half +)"
    past_the_end = in_your_cell("SyntaxError", "incomplete input (<ipython-input-3-ab525e3df8e1>, line 9)", [],
                                ["def charge(price_cents):"], "charge")
    assert past_the_end is not None
    assert past_the_end.spanish() == "SyntaxError: incomplete input (línea 9 de tu celda charge)"


def test_a_message_within_a_message_renders_in_one_language_and_round_trips_through_a_saved_report():
    inner = say(Say.IN_YOUR_CELL_LINE, error="SyntaxError: invalid syntax", line=3, cell="charge")
    outer = say(Say.AFTER_YOUR_CELL, cell="charge", error=inner)
    assert outer.spanish() == ("no se pudo ejecutar: tu celda charge falló antes de este test: "
                               "SyntaxError: invalid syntax (línea 3 de tu celda charge)")
    report = Report("a.ipynb", "s.ipynb", exercises=[TestResult("test_charge", 0, 2, "failed", outer.english(), outer,
                                                                "charge")],
                    notes=[say(Say.VISIBLE_ONLY)])
    again = Report.from_dict(json.loads(report.to_json()))
    assert again == report
    assert "nota: calificado solo con los tests visibles" in again.table()
    assert json.loads(report.to_json())["notes"] == [say(Say.VISIBLE_ONLY).english()]  # the instructor's JSON


def test_the_table_notes_are_spanish():
    """Measured before: ``nota: graded on the visible tests only (...)`` and ``nota: solution cell ... was deleted``."""
    report = Report("a.ipynb", "s.ipynb", notes=[say(Say.VISIBLE_ONLY), say(Say.STUB_GRADED, cell="charge")])
    notes = [line for line in report.table().splitlines() if line.startswith("nota: ")]
    assert notes == ["nota: calificado solo con los tests visibles (la versión del curso para estudiantes no trae "
                     "soluciones ni tests ocultos)",
                     "nota: la celda de respuesta charge se borró; se calificó la plantilla vacía"]


@pytest.mark.slow
def test_a_syntax_error_in_an_answer_is_reported_the_same_way_in_the_table_the_json_and_the_page():
    """Measured before: the table said ``(<ipython-input-3-ab5...>, line 3)``, the JSON and the page's test cells
    ``NameError: name 'charge' is not defined``, and the page's answer cell the kernel's name for it."""
    report, notebook = grade_notebooks(read_notebook(SOURCE), submission(charge=SYNTAX_ON_LINE_3),
                                       names=("source.ipynb", "alice.ipynb"))
    said = "SyntaxError: invalid syntax (línea 3 de tu celda charge: return half +)"
    table, data, page = report.table(), json.loads(report.to_json()), feedback_html(report, notebook)
    row = next(line for line in table.splitlines() if line.startswith("test_charge "))
    assert row.endswith(f"no se pudo ejecutar: tu celda charge falló antes de este test: {said}")
    test = next(r for r in data["exercises"] if r["grade_id"] == "test_charge")
    assert test["status"] == "failed" and test["points"] == 0
    assert test["message"]["say"] == "after-your-cell"
    assert test["feedback"] == ("could not run: your cell charge failed before this test: "
                                "SyntaxError: invalid syntax (line 3 of your cell charge: return half +)")
    assert data["solution_errors"][0]["error"] == ("SyntaxError: invalid syntax "
                                                   "(line 3 of your cell charge: return half +)")
    assert page.count(said.replace("'", "&#39;")) == 3  # the table's row, the answer cell's output, the test's line
    for text in (table, json.dumps(data), page):
        assert "ipython-input" not in text and "NameError" not in text


ENGLISH_WORDS = re.compile(r"\b(the|and|your|is|are|with|of|to|here|write|grade one|default)\b", re.IGNORECASE)


def _prose(text: str) -> str:
    """``text`` without its code: fenced blocks, inline code, and the command lines argparse writes."""
    text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    return re.sub(r"`[^`]*`", "", text)


def test_the_help_a_student_reads_is_spanish_and_plain_text():
    """Measured before: ``grader --help`` opened with the module's docstring, reStructuredText backticks and all,
    and ``grader grade --help`` was English."""
    from grader.__main__ import parser

    top = parser()
    grade = next(action for action in top._actions if isinstance(action, argparse._SubParsersAction)).choices["grade"]
    for help_text in (top.format_help(), grade.format_help()):
        assert "``" not in help_text and "uso: python -m grader" in help_text
    student_lines = [line for line in top.format_help().splitlines()
                     if not line.startswith(("    generate", "    batch", "    store-outputs", "    manual",
                                             "    report", "    release", "    convert", "    check", "  {", "uso",
                                             "          ", "                        "))]
    assert ENGLISH_WORDS.findall("\n".join(student_lines)) == []
    assert ENGLISH_WORDS.findall(re.sub(r"--?[a-z-]+|[A-Z_]{3,}", "", grade.format_help())) == []
    assert "grader grade NOTEBOOK" in top.format_help() and "--feedback PAGINA" in grade.format_help()


def test_the_student_release_readme_is_spanish(tmp_path):
    """Measured before: the release's README.md was English ("A Jupyter course on agent handoffs...")."""
    from grader.authoring.release import release

    out = release(ROOT, tmp_path / "course")
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("# Handoffs y transferencia de contexto: versión para estudiantes")
    assert ENGLISH_WORDS.findall(_prose(readme)) == []
    assert ".venv/bin/grader grade work/exercises/" in readme


def _slug(path: str) -> str:
    from grader.classroom.gradebook import slug

    return slug(Path("/class") / path, Path("/class"))


def _read_back(name: str) -> str:
    """A slug's path: the inverse of its encoding, to show that two paths never share a name."""
    out, at = bytearray(), 0
    while at < len(name):
        if name[at] == "+":
            out.append(int(name[at + 1:at + 3], 16))
            at += 3
        else:
            out += ("/" if name[at] == "~" else name[at]).encode()
            at += 1
    return out.decode()


def test_a_feedback_page_name_opens_from_a_file_url_as_it_is_named():
    """Measured before: ``ana/05_the_contract`` gave ``ana%2F05_the_contract.html``, which a browser reads as
    ``ana/05_the_contract.html`` (a folder): the page opened only as ``%252F``."""
    from grader.classroom.gradebook import MAX_SLUG

    paths = ["ana/05_the_contract", "ana__05_the_contract", "ana~05_the_contract", "ana+7E05_the_contract",
             "ana%2F05_the_contract", "josé maría/05", "a#b?c", "Ω/../x", "grupo 1/ana/05_the_contract"]
    names = [_slug(f"{path}.ipynb") for path in paths]
    assert names[0] == "ana~05_the_contract" and names[5] == "josé+20maría~05"
    assert len(set(names)) == len(names) and [_read_back(name) for name in names] == paths
    for name in names:  # what a browser does with file:///.../NAME.html: percent-decode it, cut at # and ?
        page = f"{name}.html"
        assert urllib.parse.unquote(page) == page and not set("%#?/\\") & set(page)
    long = [_slug(f"{'ñ' * 150}/{tail}.ipynb") for tail in ("a", "b")]
    assert long[0] != long[1] and all(len(n.encode()) <= MAX_SLUG and "%" not in n for n in long)


@pytest.mark.slow
def test_a_feedback_page_of_a_submission_in_a_subfolder_opens_from_its_typed_file_url_and_wraps(tmp_path):
    """Measured before: ``file:///.../feedback/ana%2F05_the_contract.html`` was not found (the browser read ``%2F``
    as ``/``), and a long result line ran off the right of the page, "se esperaba 6000, se obtuvo 1" with it."""
    import shutil

    playwright_api = pytest.importorskip("playwright.sync_api")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("no Chromium on PATH")
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    line = ("fallido (0/1): AssertionError: el precio de la reserva de prueba con todos los extras del "
            "catálogo aplicados uno detrás de otro: se esperaba 6000, se obtuvo 1")
    cell = new_code_cell("assert_same(price(), 6000)", outputs=[new_output("stream", name="stdout", text=line)])
    cell.metadata["nbgrader"] = {"grade_id": "test_price", "grade": True, "points": 1}
    report = Report("ana/05_the_contract.ipynb", "s.ipynb",
                    exercises=[TestResult("test_price", 0, 1, "failed", line.split(": ", 1)[1])])
    page_path = tmp_path / "feedback" / f"{_slug('ana/05_the_contract.ipynb')}.html"
    page_path.parent.mkdir()
    page_path.write_text(feedback_html(report, new_notebook(cells=[cell])), encoding="utf-8")
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 700, "height": 900})
            page.goto(f"file://{page_path}")  # as a student types it, or a terminal prints it: nothing escaped
            assert page.title() == "Retroalimentación: 05_the_contract.ipynb"
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
            for selector in ("pre.out", "td"):
                assert page.locator(selector).evaluate_all("nodes => nodes.every(n => n.scrollWidth <= n.clientWidth)")
            end = page.get_by_text("se obtuvo 1").last.bounding_box()
            assert end is not None and end["x"] + end["width"] <= 700
        finally:
            browser.close()


@pytest.mark.slow
def test_batch_without_source_finds_each_lesson_in_the_installed_course_from_any_folder(tmp_path):
    """Measured before: ``grader batch subs --out out`` stopped at "the following arguments are required: --source",
    and ``--source solutions/`` works only from the course's own folder."""
    import csv
    import shutil
    import subprocess
    import sys

    (tmp_path / "subs" / "ana").mkdir(parents=True)
    shutil.copy(ROOT / "student" / "01_handoff_vs_router.ipynb", tmp_path / "subs" / "ana")
    done = subprocess.run([sys.executable, "-m", "grader", "batch", "subs", "--out", "out", "--workers", "1",
                           "--timeout", "20"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    with open(tmp_path / "out" / "grades.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["submission"], r["source"], r["status"], r["score"]) for r in rows] == [
        ("ana/01_handoff_vs_router.ipynb", str(ROOT / "solutions" / "01_handoff_vs_router.ipynb"), "graded", "0")]
    assert (tmp_path / "out" / "feedback" / "ana~01_handoff_vs_router.html").is_file()
