"""The course gate, notebook by notebook: a failure names the notebook and the exercise.

Every check runs in one pool of warm workers (module fixture); each test reads its own problems.
The check that each written-down wrong answer is named as itself runs here for one lesson;
tests/course/test_wrong_answers.py proves it for every lesson, against the tests a student sees.
"""

from pathlib import Path

import pytest

from grader.classroom.course_check import check_tasks, course_tasks
from grader.grading.execute import Limits

pytestmark = pytest.mark.slow  # kernels, subprocesses or a browser: not in make test-fast

ROOT = Path(__file__).resolve().parents[2]
MISTAKES_LESSON = "04"
TASKS = course_tasks(ROOT, mistakes=False) + [task for task in course_tasks(ROOT, [MISTAKES_LESSON])
                                              if task[0] == "mistakes"]


@pytest.fixture(scope="module")
def checked():
    return check_tasks(TASKS, workers=2, limits=Limits(cell_timeout=60))


@pytest.mark.parametrize("kind, args", TASKS, ids=[f"{kind}:{args[0].relative_to(ROOT)}" for kind, args in TASKS])
def test_course_notebook(kind, args, checked):
    problems = checked[(kind, args)]
    assert not problems, "\n".join(problems)
