"""``grader release``: what students get holds no solution and no hidden test, and grades on the visible tests."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from grader.authoring.metadata import grade_id, is_solution, is_test
from grader.authoring.notebooks import dumps, read_notebook
from grader.course_config import course_packages
from grader.grading.hidden import hidden_lines

pytestmark = pytest.mark.slow  # kernels, subprocesses or a browser: not in make test-fast

ROOT = Path(__file__).resolve().parents[2]
LESSON = "01_handoff_vs_router"


def run(*args, env=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True, text=True, timeout=300,
                          env=env, cwd=cwd)


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    out = tmp_path_factory.mktemp("release") / "course"
    done = run("release", "--out", str(out), "--root", str(ROOT))
    assert done.returncode == 0, done.stderr
    return out


def _secrets():
    """Lines of the hidden tests, and of the solutions' answers, long enough to be unmistakable."""
    hidden, answers = set(), set()
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        for cell in read_notebook(path).cells:
            if is_test(cell):
                hidden |= {text for _, text in hidden_lines(cell) if len(text) >= 30}
            elif is_solution(cell) and cell.cell_type == "code":
                answer = re.search(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", cell.source, re.DOTALL)
                answers |= {line.strip() for line in (answer[1] if answer else "").splitlines()
                            if len(line.strip()) >= 40}
    return hidden, answers


def test_a_release_holds_no_solution_and_no_hidden_test(released):
    assert not (released / "solutions").exists() and not (released / "tests").exists()
    for folder in ("student", "notebooks"):
        assert (released / folder / f"{LESSON}.ipynb").is_file()
    assert (released / "grader" / "__init__.py").is_file() and (released / "shared" / "handoffs").is_dir()
    assert course_packages(released) == course_packages(ROOT) == ("handoffs", "reservo_tools")  # its kernels read them
    hidden, answers = _secrets()
    public = "\n".join(p.read_text(encoding="utf-8") for folder in ("student", "notebooks", "shared", "grader")
                       for p in (ROOT / folder).rglob("*") if p.suffix in (".ipynb", ".py"))
    hidden = {line for line in hidden if line not in public and json.dumps(line)[1:-1] not in public}
    everything = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in released.rglob("*")
                           if p.is_file())
    leaked = [line for line in hidden if line in everything or json.dumps(line)[1:-1] in everything]
    assert len(hidden) > 50 and leaked == []
    exercises = "\n".join(p.read_text(encoding="utf-8") for p in (released / "student").glob("*.ipynb"))
    assert len(answers) > 50 and [line for line in answers if line in json.dumps(exercises)[1:-1]] == []


def test_a_release_is_never_written_over_an_existing_folder(tmp_path):
    (tmp_path / "taken").mkdir()
    done = run("release", "--out", str(tmp_path / "taken"), "--root", str(ROOT))
    refusal = f"error: {tmp_path / 'taken'} already exists; give a new folder"
    assert (done.returncode, done.stderr.strip()) == (2, refusal)
    assert list((tmp_path / "taken").iterdir()) == []


def _answered(released):
    """The release's student notebook of the lesson, answered with the solutions' code."""
    source = read_notebook(ROOT / "solutions" / f"{LESSON}.ipynb")
    answers = {grade_id(c): re.sub(r"\n? *### (BEGIN|END) SOLUTION", "", c.source) for c in source.cells
               if is_solution(c)}
    nb = read_notebook(released / "student" / f"{LESSON}.ipynb")
    for cell in nb.cells:
        if is_solution(cell) and grade_id(cell) in answers:
            cell.source = answers[grade_id(cell)]
    return nb


def test_a_student_grades_the_visible_tests_in_a_release(released, tmp_path):
    env = {**os.environ, "PYTHONPATH": f"{released}{os.pathsep}{released / 'shared'}"}
    answered, blank = tmp_path / f"{LESSON}.ipynb", tmp_path / f"blank_{LESSON}.ipynb"
    answered.write_text(dumps(_answered(released)), encoding="utf-8")
    blank.write_text((released / "student" / f"{LESSON}.ipynb").read_text(encoding="utf-8"), encoding="utf-8")
    scores = {}
    for path in (answered, blank):
        done = run("grade", str(path), "--json", str(path.with_suffix(".json")), env=env, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        report = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
        assert report["source"] == str(released / "student" / f"{LESSON}.ipynb")
        assert any("visible tests only" in note for note in report["notes"])  # the instructor's JSON, in English
        assert "nota: calificado solo con los tests visibles" in done.stdout  # the student's table, in Spanish
        scores[path.stem] = (report["score"], report["max_score"])
    assert scores[answered.stem] == (16, 16) and scores[blank.stem] == (0, 16)
