"""The self-grade's disk cache: what depends only on the source and the grader is computed once, never trusted blindly.

Measured before (a blank lesson 03, two runs in a row): 13.6 and 15.7 s, the second no faster, since
the reference run and the written-down wrong answers' table lived in a per-process dictionary.
"""

import copy
import json

import pytest
from fixture_submissions import FULL_PRICE, SOURCE, submission, with_wrong_answers

import grader.authoring.generate
import grader.grading.pipeline
import grader.grading.reference
import grader.grading.testcells
from grader.authoring.generate import student_version
from grader.authoring.notebooks import read_notebook
from grader.grading import cache
from grader.grading.execute import Limits
from grader.grading.pipeline import grade_notebooks

pytestmark = pytest.mark.slow  # kernels, subprocesses or a browser: not in make test-fast

LIMITS = Limits(cell_timeout=10)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "cache"))
    grader.grading.reference.forget()  # this process's own memory of references
    return tmp_path / "cache"


def computed(source):
    """The source with expected sides that are not literals, so its reference needs a run (literals are read)."""
    for cell in source.cells:
        cell.source = cell.source.replace("assert_same(charge(6000), 3000)", "assert_same(charge(6000), 6000 // 2)")
    return source


def self_grade(source, nb):
    report, _ = grade_notebooks(source, nb, limits=LIMITS, disk=True)
    grader.grading.reference.forget()  # as a new process would: only the disk remembers
    return report


def calls(monkeypatch):
    """Count the work the cache is meant to spare: the reference, the wrong answers' table, the student version and
    the test cells rewritten for the kernel."""
    counted = {"reference": 0, "mistakes": 0, "student": 0, "tests": 0}
    for module, name, kind in ((grader.grading.reference, "run_reference", "reference"),
                               (grader.grading.reference, "mistake_table", "mistakes"),
                               (grader.grading.pipeline, "student_version", "student"),
                               (grader.grading.pipeline, "rewrite_tests", "tests")):
        real = getattr(module, name)

        def counting(*args, _real=real, _kind=kind, **kwargs):
            counted[_kind] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(module, name, counting)
    return counted


def test_a_repeat_self_grade_runs_nothing_but_the_submission(cache_dir, monkeypatch):
    source = computed(with_wrong_answers())
    counted = calls(monkeypatch)
    first = self_grade(source, submission(charge=FULL_PRICE))
    assert counted == {"reference": 1, "mistakes": 1, "student": 1, "tests": 1}
    again = self_grade(source, submission(charge=FULL_PRICE))
    assert counted == {"reference": 1, "mistakes": 1, "student": 1, "tests": 1}  # all four read back from the disk
    assert again.to_dict() == first.to_dict() and [m["id"] for m in again.mistakes] == ["charge_wrong_full_price"]
    assert sorted(path.name.split("-")[0] for path in cache_dir.iterdir()) == ["mistakes", "reference", "student",
                                                                                "tests"]


def test_an_exercise_left_as_its_stub_runs_no_wrong_answer(cache_dir, monkeypatch):
    counted = calls(monkeypatch)
    report = self_grade(with_wrong_answers(), student_version(with_wrong_answers()))
    assert report.score == 0 and report.mistakes == [] and counted["mistakes"] == 0


def test_a_changed_source_is_run_again(cache_dir, monkeypatch):
    counted = calls(monkeypatch)
    source = computed(read_notebook(SOURCE))
    self_grade(source, submission())
    source.cells[0].source += "\n\nUna línea más."
    self_grade(source, submission())
    assert counted["reference"] == 2 and len(list(cache_dir.glob("reference-*"))) == 2


def forged(saved, path, value):
    """The saved entry with the item at ``path`` (keys and indexes under its data) replaced by ``value``."""
    data = copy.deepcopy(saved)
    inner = data["data"]
    for step in path[:-1]:
        inner = inner[step]
    inner[path[-1]] = value
    return json.dumps(data)


DAMAGES = {
    ("reference", "garbage"): lambda saved: "{ not json",
    # another key's entry copied under this name: it names its own key
    ("reference", "foreign"): lambda saved: json.dumps({**saved, "key": "0" * 64}),
    ("reference", "wrong_shape"): lambda saved: json.dumps({**saved, "data": {"expected": [1, 2]}}),
    # an expected value the grader could never have encoded: a "passing" forgery
    ("reference", "bad_value"): lambda saved: forged(saved, ("expected", "test_charge", "0"), {"not": "a value node"}),
    ("tests", "garbage"): lambda saved: "[",
    # a check's number written as text: not what the grader writes, so not run in a kernel
    ("tests", "wrong_type"): lambda saved: forged(saved, ("test_charge", "checks", 0, "index"), "0"),
}


@pytest.mark.parametrize(("kind", "damage"), list(DAMAGES))
def test_a_corrupt_or_foreign_entry_is_ignored_and_rebuilt(cache_dir, monkeypatch, kind, damage):
    source = computed(read_notebook(SOURCE))
    honest = self_grade(source, submission())
    entry = next(cache_dir.glob(f"{kind}-*"))
    saved = json.loads(entry.read_text(encoding="utf-8"))
    entry.write_text(DAMAGES[kind, damage](saved), encoding="utf-8")
    grader.grading.testcells._rewritten.cache_clear()  # as a new process would
    counted = calls(monkeypatch)
    again = self_grade(source, submission())
    assert counted[kind] == 1  # made again, not trusted
    assert again.to_dict() == honest.to_dict()
    assert json.loads(entry.read_text(encoding="utf-8")) == saved  # and written back whole


def test_a_self_check_in_a_release_caches_nothing(cache_dir):
    student = student_version(read_notebook(SOURCE))
    grade_notebooks(student, submission(), limits=LIMITS, visible_only=True, disk=True)
    assert not cache_dir.exists() or list(cache_dir.iterdir()) == []


def test_a_folder_that_cannot_be_written_only_costs_time(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("GRADER_CACHE_DIR", str(blocked / "cache"))
    report = self_grade(computed(read_notebook(SOURCE)), submission())
    assert report.score == 3 and cache.load("reference", "x" * 64, dict) is None
