"""The batch grader over every fixture submission: pinned scores, restored cells, clear errors."""

import csv
import hashlib
import json
import os
from pathlib import Path

import pytest
from fixture_submissions import FIXTURES, SUBMISSIONS
from session_kernels import kernels

from grader.classroom.batch import batch
from grader.grading.execute import Limits

pytestmark = pytest.mark.slow  # kernels, subprocesses or a browser: not in make test-fast

LIMITS = Limits(cell_timeout=3)

SCORES = {  # submission -> pinned score out of 5
    "correct": 5, "blank": 0, "partial": 3, "edited_tests": 3, "edited_metadata": 0,
    "deleted_tests": 5, "retyped_tests": 5, "duplicated_cells": 3, "infinite_loop": 2,
    "os_exit": 3, "sys_exit": 3, "memory_hog": 3, "big_output": 5, "always_equal": 3,
    "nbformat3": 5, "corrécto_ñandú_学生": 5,
}
ERRORS = {
    "malformed_json": "not valid JSON", "empty": "the file is empty",
    "not_a_notebook": "not a Jupyter notebook", "wrong_notebook": "holds no cell of the source",
}
STATUSES = {"wrong_notebook": "wrong-lesson"}  # another lesson's notebook has a status of its own
TAMPERED = {
    "edited_tests": {"test_charge": "edited"},
    "edited_metadata": {"test_quote_total": "metadata edited", "charge": "metadata edited"},
    "deleted_tests": dict.fromkeys(("test_quote_total", "test_quote_total_more", "test_charge"), "deleted"),
    "retyped_tests": dict.fromkeys(("test_quote_total", "test_quote_total_more", "test_charge"),
                                   "retyped from code to markdown"),
}


def digest(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    out = tmp_path_factory.mktemp("grades")
    before, kernels_before = digest(SUBMISSIONS), kernels()
    rows = batch(SUBMISSIONS, FIXTURES / "source.ipynb", out, workers=2, limits=LIMITS, progress=False)
    return {"out": out, "rows": {Path(r["submission"]).stem: r for r in rows},
            "unchanged": digest(SUBMISSIONS) == before, "leftover_kernels": kernels() - kernels_before}


def test_every_fixture_has_a_pinned_outcome(graded):
    assert set(graded["rows"]) == set(SCORES) | set(ERRORS)


@pytest.mark.parametrize("name, score", SCORES.items())
def test_pinned_score(graded, name, score):
    row = graded["rows"][name]
    assert (row["status"], row["error"]) == ("graded", "")
    assert (float(row["score"]), float(row["max_score"])) == (score, 5)


@pytest.mark.parametrize("name, message", ERRORS.items())
def test_unusable_submission_is_an_error_row(graded, name, message):
    row = graded["rows"][name]
    assert row["status"] == STATUSES.get(name, "error") and message in row["error"]
    assert f"{name}.ipynb" not in row["error"]  # the submission column names the file, once


@pytest.mark.parametrize("name, problems", TAMPERED.items())
def test_tampered_cells_are_restored_and_reported(graded, name, problems):
    report = json.loads((graded["out"] / "reports" / f"{name}.json").read_text(encoding="utf-8"))["report"]
    assert {t["grade_id"]: t["problem"] for t in report["tampered"]} == problems


def test_report_json_has_the_documented_fields(graded):
    report = json.loads((graded["out"] / "reports" / "partial.json").read_text(encoding="utf-8"))["report"]
    assert (report["score"], report["max_score"]) == (3, 5)
    charge = next(e for e in report["exercises"] if e["grade_id"] == "test_charge")
    assert charge == {"grade_id": "test_charge", "points": 0.0, "max_points": 2.0, "status": "failed",
                      "feedback": "AssertionError: valor: se esperaba 3000, se obtuvo 6000", "message": None,
                      "exercise": "charge", "in_kernel": False}
    slow = next(e for e in json.loads((graded["out"] / "reports" / "infinite_loop.json").read_text(
        encoding="utf-8"))["report"]["exercises"] if e["grade_id"] == "test_quote_total")
    assert slow["message"] == {"say": "timeout", "params": {"seconds": 3}}  # the page renders it in Spanish


def test_limits_mark_the_cell_and_grading_goes_on(graded):
    reports = {name: json.loads((graded["out"] / "reports" / f"{name}.json").read_text(encoding="utf-8"))["report"]
               for name in ("infinite_loop", "os_exit", "memory_hog", "always_equal")}
    statuses = {e["grade_id"]: (e["status"], e["feedback"]) for e in reports["infinite_loop"]["exercises"]}
    assert statuses["test_quote_total"] == ("timeout", "CellTimeout: cell did not finish within 3 s")
    assert statuses["test_charge"] == ("passed", "")
    assert reports["os_exit"]["solution_errors"][0]["error"].startswith("DeadKernelError: the kernel died")
    assert reports["memory_hog"]["solution_errors"][0]["error"] == (  # at the line of the student's own cell
        "MemoryError (line 1 of your cell charge: hog = bytearray(3 * 2**30))")
    assert "se esperaba el tipo int, se obtuvo Anything" in reports["always_equal"]["exercises"][2]["feedback"]


def test_hidden_tests_never_leak(graded):
    for path in (graded["out"] / "feedback").glob("*.html"):
        text = path.read_text(encoding="utf-8")
        assert "quote_total(5)" not in text and "charge(6400)" not in text and "HIDDEN TESTS" not in text
    for path in (graded["out"] / "reports").glob("*.json"):
        assert "charge(6400)" not in path.read_text(encoding="utf-8")


def test_big_output_is_capped(graded):
    html = (graded["out"] / "feedback" / "big_output.html").read_text(encoding="utf-8")
    assert "[salida recortada:" in html and "[output truncated:" not in html  # the grader's words, in Spanish
    assert os.path.getsize(graded["out"] / "feedback" / "big_output.html") < 2_000_000


def test_submissions_untouched_and_no_kernel_left(graded):
    assert graded["unchanged"]
    assert graded["leftover_kernels"] == set()


def test_csv_and_rerun_skips_unchanged(graded, tmp_path):
    with open(graded["out"] / "grades.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {"submission", "score", "max_score", "status", "error"} <= set(rows[0])
    assert len(rows) == len(SCORES) + len(ERRORS)
    again = batch(SUBMISSIONS, FIXTURES / "source.ipynb", graded["out"], workers=2, limits=LIMITS, progress=False)
    assert all(r["cached"] == "yes" for r in again if r["status"] == "graded")
    assert [r["score"] for r in again] == [r["score"] for r in rows]


def test_a_batch_says_what_it_does_before_its_bar_and_a_cached_rerun_grades_nothing(tmp_path, capsys):
    submissions = tmp_path / "in"
    submissions.mkdir()
    for name in ("correct", "partial", "malformed_json", "wrong_notebook"):
        (submissions / f"{name}.ipynb").write_bytes((SUBMISSIONS / f"{name}.ipynb").read_bytes())
    batch(submissions, FIXTURES / "source.ipynb", tmp_path / "out", workers=1, limits=LIMITS)
    first = capsys.readouterr().err
    said = ["reading 4 notebook(s)", "2 to grade, 0 unchanged since the last run (grades kept), 2 could not be graded",
            "reference run of", "starting the kernels to grade 2 notebook(s) (1 at a time)", "grading"]
    assert all(line in first for line in said), first
    assert [first.index(line) for line in said] == sorted(first.index(line) for line in said)  # in this order
    batch(submissions, FIXTURES / "source.ipynb", tmp_path / "out", workers=1, limits=LIMITS)
    again = capsys.readouterr().err
    assert "0 to grade, 2 unchanged since the last run (grades kept), 2 could not be graded" in again
    assert "reference run" not in again and "starting the kernels" not in again and "grading" not in again
