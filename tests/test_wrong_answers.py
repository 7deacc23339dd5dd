"""Every plausible wrong answer written down in a solution notebook loses points.

A solution-only markdown cell with ``"wrong_answer_for": "<solution grade_id>"`` in its
metadata holds a wrong answer in its first ```python block. The test grades the correct
notebook with that one solution cell replaced by the wrong answer: it must score less.
"""

import copy
import re
from pathlib import Path

import pytest

from grader.api import grade_notebooks
from grader.execute import Limits
from grader.metadata import grade_id
from grader.notebooks import read_notebook

ROOT = Path(__file__).resolve().parents[1]
CODE = re.compile(r"```python\n(.*?)```", re.DOTALL)


def wrong_answers():
    found = []
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        for index, cell in enumerate(read_notebook(path).cells):
            target = cell.metadata.get("wrong_answer_for")
            if target:
                found.append(pytest.param(path, target, cell.source, id=f"{path.stem}:{target}:cell{index}"))
    return found


WRONG = wrong_answers()


def test_every_exercise_has_two_wrong_answers():
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        nb = read_notebook(path)
        exercises = [grade_id(c) for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")]
        written = [c.metadata.get("wrong_answer_for") for c in nb.cells]
        for exercise in exercises:
            assert written.count(exercise) >= 2, f"{path.name}: {exercise} needs two written-down wrong answers"


@pytest.mark.parametrize("path, target, text", WRONG)
def test_wrong_answer_loses_points(path, target, text):
    match = CODE.search(text)
    assert match, f"{path.name}: the wrong answer for {target} has no ```python block"
    source = read_notebook(path)
    submission = copy.deepcopy(source)
    cell = next(c for c in submission.cells if grade_id(c) == target)
    cell.source = match.group(1)
    report, _ = grade_notebooks(source, submission, limits=Limits(cell_timeout=20))
    assert report.score < report.max_score, f"{path.name}: the wrong answer for {target} still earns full marks"
