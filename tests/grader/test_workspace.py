"""The student's work/ folder: filled with copies, never overwriting what a student saved, ignored by git."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from grader.authoring.course import guided_notebooks, student_notebooks
from grader.authoring.workspace import fill

pytestmark = pytest.mark.slow  # kernels, subprocesses or a browser: not in make test-fast

ROOT = Path(__file__).resolve().parents[2]


def test_fill_copies_every_notebook_byte_for_byte(tmp_path):
    copied = fill(tmp_path / "work", ROOT)
    guided, exercises = guided_notebooks(ROOT), student_notebooks(ROOT)
    assert len(copied) == len(guided) + len(exercises)
    for source in guided:
        assert (tmp_path / "work" / "guided" / source.name).read_bytes() == source.read_bytes()
    for source in exercises:
        assert (tmp_path / "work" / "exercises" / source.name).read_bytes() == source.read_bytes()
    assert not list((tmp_path / "work").rglob(".*.tmp"))


def test_a_saved_notebook_is_kept_and_a_new_lesson_appears(tmp_path):
    work = tmp_path / "work"
    fill(work, ROOT)
    saved = work / "exercises" / "03_handoff_pseudo_tool.ipynb"
    saved.write_text('{"my": "answers"}', encoding="utf-8")
    deleted = work / "guided" / "05_the_contract.ipynb"
    deleted.unlink()
    assert fill(work, ROOT) == [deleted]
    assert saved.read_text(encoding="utf-8") == '{"my": "answers"}'
    assert json.loads(deleted.read_text(encoding="utf-8"))["cells"]


def test_a_file_in_place_of_a_folder_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "guided").write_text("not a folder", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "grader.authoring.workspace", str(tmp_path / "work"),
                           "--course", str(ROOT)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"error: {tmp_path / 'work' / 'guided'} exists and is not a folder"]
    assert (tmp_path / "work" / "guided").read_text(encoding="utf-8") == "not a folder"


def test_a_course_without_notebooks_is_one_line_and_exit_2(tmp_path):
    done = subprocess.run([sys.executable, "-m", "grader.authoring.workspace", str(tmp_path / "work"),
                           "--course", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip() == f"error: no notebooks in {tmp_path / 'notebooks'}"
    assert not (tmp_path / "work").exists()


def test_work_is_ignored_by_git():
    done = subprocess.run(["git", "check-ignore", "-q", "work/exercises/03_handoff_pseudo_tool.ipynb"],
                          cwd=ROOT, capture_output=True, timeout=30)
    assert done.returncode == 0


def test_every_notebook_uses_the_standard_python3_kernel():
    folders = ("notebooks", "solutions", "student")
    names = {str(p.relative_to(ROOT)): json.loads(p.read_text(encoding="utf-8"))["metadata"]["kernelspec"]["name"]
             for folder in folders for p in sorted((ROOT / folder).glob("*.ipynb"))}
    assert names and set(names.values()) == {"python3"}, names
