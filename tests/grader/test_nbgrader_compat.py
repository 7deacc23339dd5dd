"""Real nbgrader (generate_assignment + autograde) gives the same scores as the course grader."""

from pathlib import Path

import pytest

from grader.authoring.nbgrader_course import nbgrader_scores
from grader.classroom.batch import batch
from grader.grading.execute import Limits

pytestmark = pytest.mark.slow  # kernels, subprocesses or a browser: not in make test-fast

FIXTURES = Path(__file__).parents[1] / "fixtures" / "grader"
CASES = ("correct", "partial", "blank", "edited_tests", "always_equal")


def test_same_scores_as_nbgrader(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    for name in CASES:
        (subs / f"{name}.ipynb").write_bytes((FIXTURES / "submissions" / f"{name}.ipynb").read_bytes())
    ours = {Path(r["submission"]).stem: float(r["score"])
            for r in batch(subs, FIXTURES / "source.ipynb", tmp_path / "out", workers=2, limits=Limits(),
                           progress=False)}
    theirs = nbgrader_scores(FIXTURES / "source.ipynb", {n: subs / f"{n}.ipynb" for n in CASES}, tmp_path / "course")
    assert ours == theirs
    released = (tmp_path / "course" / "release" / "lesson" / "source.ipynb").read_text(encoding="utf-8")
    assert "solution-only" not in released and "La solución usa" not in released
    assert "BEGIN SOLUTION" not in released and "charge(6400)" not in released
    assert ours == {"correct": 5, "partial": 3, "blank": 0, "edited_tests": 3, "always_equal": 3}
