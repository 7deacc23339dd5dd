"""The course gate, notebook by notebook: a failure names the notebook and the exercise."""

from pathlib import Path

import pytest

from grader.course_check import course_tasks, run_task
from grader.execute import Limits

pytestmark = pytest.mark.slow  # kernels, subprocesses or a browser: not in make test-fast

ROOT = Path(__file__).resolve().parents[1]
TASKS = course_tasks(ROOT)


@pytest.mark.parametrize("kind, args", TASKS, ids=[f"{kind}:{args[0].relative_to(ROOT)}" for kind, args in TASKS])
def test_course_notebook(kind, args):
    problems = run_task(kind, args, Limits(cell_timeout=60))
    assert not problems, "\n".join(problems)
