"""Grade a lesson's solution notebook with one exercise cell replaced, many replacements in one batch.

Shared by ``test_wrong_answers.py`` (written-down wrong answers and correct variants) and
``mutation.py`` / ``test_mutants.py`` (mutants of the solutions). Each submission is the solution
notebook with the cell ``target`` (a grade_id) holding ``code``; with ``visible`` the hidden tests
are cleared from the source first, so the score is what the student sees while working.
"""

import json
from collections.abc import Mapping
from pathlib import Path

from nbgrader.preprocessors import ClearHiddenTests

from grader.authoring.metadata import grade_id
from grader.authoring.notebooks import dumps, read_notebook
from grader.classroom.batch import batch
from grader.grading.execute import Limits

ROOT = Path(__file__).resolve().parents[2]


# Sources whose set-up cell alone can outlast the default timeout under load: lesson 12 imports the OpenAI
# Agents SDK, LangGraph and a2a-sdk (about 5 s on a quiet machine, over 20 s at load 7 on 2 cores; a set-up
# cell that times out fails every test, and a mistake named or a mutant judged on that run means nothing).
SLOW_SETUP: dict[str, float] = {"12_frameworks": 60.0}


def grade_replacements(root: Path, submissions: Mapping[str, tuple[Path, str, str]], visible: bool,
                       cell_timeout: float = 20, name_mistakes: bool = False) -> dict:
    """``submissions``: name -> (solution notebook, grade_id of the cell replaced, its new code). Every one is
    graded in one batch (2 workers) under ``root``; returns the reports by name. Names must start with the
    solution's stem (the batch matches a submission to its source by name). ``name_mistakes``: the reports
    name the written-down wrong answers a submission matches (``grader.grading.mistakes``; costs one run of each)."""
    sources, subs, out = root / "sources", root / "subs", root / "out"
    sources.mkdir()
    subs.mkdir()
    for name, (path, target, code) in submissions.items():
        source_path = sources / path.name
        if not source_path.exists():
            source = read_notebook(path)
            if visible:
                source, _ = ClearHiddenTests().preprocess(source, {})
            source_path.write_text(dumps(source), encoding="utf-8")
        submission = read_notebook(source_path)
        next(c for c in submission.cells if grade_id(c) == target).source = code
        (subs / f"{name}.ipynb").write_text(dumps(submission), encoding="utf-8")
    if not submissions:
        return {}
    cell_timeout = max([cell_timeout] + [SLOW_SETUP.get(path.stem, 0.0) for path, _, _ in submissions.values()])
    rows = batch(subs, sources, out, workers=2, limits=Limits(cell_timeout=cell_timeout), progress=False,
                 name_mistakes=name_mistakes)
    assert all(row["status"] == "graded" for row in rows), [row for row in rows if row["status"] != "graded"]
    return {Path(p.name).stem: json.loads(p.read_text(encoding="utf-8"))["report"]
            for p in (out / "reports").glob("*.json")}
