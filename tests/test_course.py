"""The course gate, notebook by notebook: a failure names the notebook and the exercise.

Every check runs in one pool of warm workers (module fixture); each test reads its own problems.
"""

from pathlib import Path

import pytest

from grader.course_check import check_tasks, course_tasks
from grader.execute import Limits

pytestmark = pytest.mark.slow  # kernels, subprocesses or a browser: not in make test-fast

ROOT = Path(__file__).resolve().parents[1]
TASKS = course_tasks(ROOT)


@pytest.fixture(scope="module")
def checked():
    return check_tasks(TASKS, workers=2, limits=Limits(cell_timeout=60))


@pytest.mark.parametrize("kind, args", TASKS, ids=[f"{kind}:{args[0].relative_to(ROOT)}" for kind, args in TASKS])
def test_course_notebook(kind, args, checked):
    problems = checked[(kind, args)]
    assert not problems, "\n".join(problems)
