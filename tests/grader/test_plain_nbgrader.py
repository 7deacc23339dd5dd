"""Plain nbgrader assignments (tests/fixtures/plain/: ``assert``, helper code, loops, hidden tests) graded by this
grader and by real ``nbgrader generate_assignment`` + ``nbgrader autograde``: every score the same, but for the two
differences this grader makes on purpose, each pinned here.

* A deleted test cell: this grader puts it back in its place and runs it; nbgrader scores it 0.
* A kernel that dies: nbgrader stops grading that submission (its autograde fails, every cell 0); this grader
  restarts the kernel, replays the cells that ran fine, and grades the rest.
"""

from pathlib import Path

import pytest

from grader.authoring.nbgrader_course import nbgrader_autograde
from grader.classroom.batch import batch
from grader.grading.execute import Limits

pytestmark = pytest.mark.slow  # kernels, subprocesses or a browser: not in make test-fast

PLAIN = Path(__file__).parents[1] / "fixtures" / "plain"
TIMEOUT = 5  # seconds per cell, for both graders


def both(name, tmp_path):
    """{submission: (this grader's score, nbgrader's score)} of one assignment, and the submissions nbgrader could
    not autograde."""
    folder = PLAIN / name
    subs = sorted((folder / "submissions").glob("*.ipynb"))
    rows = batch(folder / "submissions", folder / "source.ipynb", tmp_path / "out", workers=2,
                 limits=Limits(cell_timeout=TIMEOUT), progress=False)
    assert all(row["status"] == "graded" for row in rows), rows
    ours = {Path(row["submission"]).stem: float(row["score"]) for row in rows}
    theirs, failed = nbgrader_autograde(folder / "source.ipynb", {p.stem: p for p in subs}, tmp_path / "course",
                                        timeout=TIMEOUT)
    return {stem: (ours[stem], theirs[stem]) for stem in ours}, failed


def test_scores_equal_nbgraders_on_plain_asserts_hidden_tests_partial_credit_errors_and_tampered_cells(tmp_path):
    scores, failed = both("basics", tmp_path)
    assert failed == set()
    assert scores.pop("deleted_test") == (10, 8)  # test_mean (2 points) deleted: put back here, 0 in nbgrader
    assert scores == {"blank": (0, 0), "correct": (10, 10), "error": (7, 7), "floats": (10, 10),
                      "hard_coded": (8, 8), "partial": (5, 5), "syntax_error": (8, 8), "tampered": (7, 7)}


def test_scores_equal_nbgraders_on_timeouts_and_a_dead_kernel_costs_only_its_own_cells(tmp_path):
    scores, failed = both("limits", tmp_path)
    assert failed == {"dead_kernel"}  # nbgrader: "There was an error processing assignment ... for student ..."
    assert scores.pop("dead_kernel") == (4, 0)  # test_total killed the kernel; test_double and test_last still run
    assert scores == {"blank": (0, 0), "correct": (6, 6), "timeout": (4, 4), "hidden_timeout": (3, 3)}
