"""The same notebooks through a real nbgrader course: proof that the authoring format is nbgrader's.

Used by the benchmark and by the compatibility test; it needs nothing but the installed nbgrader.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from ..errors import GraderError
from .generate import CODE_STUB, TEXT_STUB

CONFIG = """\
c = get_config()
c.CourseDirectory.root = {root!r}
c.ExecutePreprocessor.timeout = {timeout}

# Cells tagged solution-only (explanations, written-down wrong answers) never reach students.
from nbconvert.preprocessors import TagRemovePreprocessor
from nbgrader.converters import GenerateAssignment

c.ClearSolutions.code_stub = {{"python": {code_stub!r}}}
c.ClearSolutions.text_stub = {text_stub!r}
c.TagRemovePreprocessor.enabled = True
c.TagRemovePreprocessor.remove_cell_tags = {{"solution-only"}}
c.GenerateAssignment.preprocessors = (
    [TagRemovePreprocessor] + GenerateAssignment.class_traits()["preprocessors"].default())
"""


class NbgraderFailed(GraderError):
    """An nbgrader command exited with an error."""


def _nbgrader(course: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env,
                          capture_output=True, text=True)
    if done.returncode and check:
        raise NbgraderFailed(f"nbgrader {' '.join(args)} failed:\n{done.stdout[-1500:]}{done.stderr[-1500:]}")
    return done


def nbgrader_scores(source: str | Path, submissions: dict[str, Path], course: str | Path,
                    timeout: float = 30) -> dict[str, float]:
    """Grade ``{student: notebook path}`` against ``source`` with nbgrader in ``course``; returns {student: score}.
    Raises NbgraderFailed when nbgrader could not autograde every submission."""
    scores, failed = nbgrader_autograde(source, submissions, course, timeout)
    if failed:
        raise NbgraderFailed(f"nbgrader autograde failed for {', '.join(sorted(failed))}")
    return scores


def nbgrader_autograde(source: str | Path, submissions: dict[str, Path], course: str | Path,
                       timeout: float = 30) -> tuple[dict[str, float], set[str]]:
    """Grade ``{student: notebook path}`` against ``source`` with nbgrader in ``course``: {student: score} as
    nbgrader's gradebook holds it, and the students whose autograde nbgrader reported as failed (a kernel that died:
    nbgrader stops that notebook and scores every cell 0)."""
    course, assignment, name = Path(course), "lesson", Path(source).name
    (course / "source" / assignment).mkdir(parents=True)
    shutil.copy(source, course / "source" / assignment / name)
    (course / "nbgrader_config.py").write_text(CONFIG.format(root=str(course), timeout=timeout, code_stub=CODE_STUB,
                                                                     text_stub=TEXT_STUB))
    _nbgrader(course, "generate_assignment", assignment, "--force")
    for student, path in submissions.items():
        target = course / "submitted" / student / assignment
        target.mkdir(parents=True)
        shutil.copy(path, target / name)
    done = _nbgrader(course, "autograde", assignment, "--force", check=False)
    said = done.stdout + done.stderr
    failed = set(re.findall(rf"error processing assignment '{assignment}' for student '([^']+)'", said))
    if done.returncode and not failed:
        raise NbgraderFailed(f"nbgrader autograde failed:\n{said[-3000:]}")
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        return {student: gradebook.find_submission(assignment, student).score for student in submissions}, failed
