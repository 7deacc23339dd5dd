"""Every plausible wrong answer written down in a solution notebook loses points on the visible tests,
and every correct variant written down earns full marks, hidden tests included.

A solution-only markdown cell with ``"wrong_answer_for": "<solution grade_id>"`` in its
metadata holds a wrong answer in its first ```python block. The test grades the correct
notebook with that one solution cell replaced by the wrong answer, against the tests a
student sees (hidden tests removed): it must score less, so the student gets that feedback
while working, not only at grading time. A cell with ``"correct_variant_for"`` instead holds
a correct answer written another way, graded against the whole solution notebook: it must
earn every point. Each kind is graded in one batch (module fixture).

A wrong answer says which shortcut it takes in ``"wrong_answer_kind"``: ``hard-coded`` (keyed
to the visible inputs), ``delegation`` (a library function that does the job), ``ignores-case``
(a case the statement names, ignored) or ``other``. In the lessons of ``THIRD_PASS`` every
exercise has the first three kinds and a correct variant.
"""

import hashlib
from pathlib import Path

import pytest
from visible_grading import ROOT, grade_replacements

from grader.authoring.metadata import grade_id, is_manual
from grader.authoring.notebooks import read_notebook
from grader.grading.mistakes import CODE, wrong_answers

pytestmark = pytest.mark.slow  # kernels, subprocesses or a browser: not in make test-fast


# Known debt, to be paid by the second edition of lessons 01-04: wrong answers only the hidden
# tests catch (strict: fixing one fails the test until its entry is removed here).
CAUGHT_ONLY_BY_HIDDEN_TESTS: set[str] = set()
KINDS = {"hard-coded", "delegation", "ignores-case", "other"}
# lessons whose exercises have every kind of wrong answer and a written-down correct variant
THIRD_PASS: set[str] = {"01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12"}


def written(key: str):
    """The written-down answers of one kind (``wrong_answer_for`` or ``correct_variant_for``), as test params."""
    found = []
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        for index, cell in enumerate(read_notebook(path).cells):
            target = cell.metadata.get(key)
            if target:
                name = f"{path.stem}:{target}:cell{index}"
                marks = ([pytest.mark.xfail(strict=True, reason="caught only by hidden tests")]
                         if name in CAUGHT_ONLY_BY_HIDDEN_TESTS else [])
                found.append(pytest.param(path, target, cell.source, id=name, marks=marks))
    return found


WRONG = written("wrong_answer_for")
VARIANTS = written("correct_variant_for")


def test_every_exercise_has_two_wrong_answers():
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        nb = read_notebook(path)
        exercises = [grade_id(c) for c in nb.cells  # a manually graded answer has no wrong answer to run
                     if c.metadata.get("nbgrader", {}).get("solution") and not is_manual(c)]
        written = [c.metadata.get("wrong_answer_for") for c in nb.cells]
        for exercise in exercises:
            assert written.count(exercise) >= 2, f"{path.name}: {exercise} needs two written-down wrong answers"


def test_wrong_answers_name_their_kind():
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        for cell in read_notebook(path).cells:
            kind = cell.metadata.get("wrong_answer_kind")
            if cell.metadata.get("wrong_answer_for") and (kind or path.name[:2] in THIRD_PASS):
                assert kind in KINDS, f"{path.name}: {grade_id(cell)}: wrong_answer_kind {kind!r} is not one of {KINDS}"


@pytest.mark.parametrize("lesson", sorted(THIRD_PASS))
def test_third_pass_exercises_have_every_kind(lesson):
    path = next((ROOT / "solutions").glob(f"{lesson}_*.ipynb"))
    nb = read_notebook(path)
    for exercise in [grade_id(c) for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")
                     and not is_manual(c)]:
        kinds = {c.metadata.get("wrong_answer_kind") for c in nb.cells
                 if c.metadata.get("wrong_answer_for") == exercise}
        missing = {"hard-coded", "delegation", "ignores-case"} - kinds
        assert not missing, f"{path.name}: {exercise} has no wrong answer of kind {sorted(missing)}"
        assert any(c.metadata.get("correct_variant_for") == exercise for c in nb.cells), \
            f"{path.name}: {exercise} has no written-down correct variant"


def _name(path, target, text):
    return f"{path.stem}__{target}__{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def _grade(root: Path, params, visible: bool) -> dict:
    """Each written-down answer in its solution notebook, graded in one batch (hidden tests cleared when
    ``visible``, and the mistakes named); the reports by name."""
    submissions = {}
    for param in params:
        path, target, text = param.values
        match = CODE.search(text)
        if match:
            submissions[_name(path, target, text)] = (path, target, match.group(1))
    return grade_replacements(root, submissions, visible, name_mistakes=visible)


def _selected(request, params):
    """The params of ``params`` whose tests this session runs (``-k 03_`` grades lesson 03's answers only)."""
    ids = {item.callspec.id for item in request.session.items if hasattr(item, "callspec")}
    return [param for param in params if param.id in ids]


@pytest.fixture(scope="module")
def graded(tmp_path_factory, request):
    """Every selected wrong answer, graded against the visible tests."""
    return _grade(tmp_path_factory.mktemp("wrong"), _selected(request, WRONG), visible=True)


@pytest.fixture(scope="module")
def graded_variants(tmp_path_factory, request):
    """Every selected correct variant, graded against the whole solution notebook."""
    return _grade(tmp_path_factory.mktemp("variants"), _selected(request, VARIANTS), visible=False)


@pytest.mark.parametrize("path, target, text", WRONG)
def test_wrong_answer_loses_points(path, target, text, graded):
    assert CODE.search(text), f"{path.name}: the wrong answer for {target} has no ```python block"
    report = graded[_name(path, target, text)]
    assert report["score"] < report["max_score"], \
        f"{path.name}: the wrong answer for {target} still earns full marks on the visible tests"


@pytest.mark.parametrize("path, target, text", WRONG)
def test_wrong_answer_is_named_as_itself(path, target, text, graded):
    """Graded as a submission, a written-down wrong answer gets its own explanation (``grader.grading.mistakes``)."""
    report = graded[_name(path, target, text)]
    own = next(answer.id for answer in wrong_answers(read_notebook(path)) if answer.code == CODE.search(text).group(1))
    named = [m["id"] for m in report["mistakes"]]
    assert own in named, f"{path.name}: the wrong answer {own} for {target} is named as {named or 'nothing'}"


@pytest.mark.parametrize("path, target, text", VARIANTS)
def test_correct_variant_earns_full_marks(path, target, text, graded_variants):
    assert CODE.search(text), f"{path.name}: the correct variant for {target} has no ```python block"
    report = graded_variants[_name(path, target, text)]
    assert report["score"] == report["max_score"], \
        f"{path.name}: the correct variant for {target} earns {report['score']}/{report['max_score']}"
