"""What the grader knows about a course folder: its layout, its lessons, and which source a submission answers.

    notebooks/NN_name.ipynb   guided walkthroughs
    solutions/NN_name.ipynb   the single source of every exercise
    student/NN_name.ipynb     generated from solutions/, never edited by hand
"""

import functools
from collections.abc import Callable
from pathlib import Path

from nbformat import NotebookNode

from ..course_config import GUIDED, SOLUTIONS, STUDENT
from ..errors import MissingPath
from .metadata import grade_id, is_grade, is_solution
from .notebooks import UnusableNotebook, read_notebook


def is_lesson(path: Path, name: str) -> bool:
    """Whether ``path`` is the lesson called ``name``: its full name (``03_handoff_pseudo_tool``) or number (``03``)."""
    name = Path(name).stem
    return path.stem == name or path.stem.split("_")[0] == name


def chosen(path: Path, names: tuple[str, ...] | list[str] = ()) -> bool:
    """Whether ``path`` is one of the lessons named (every lesson when none is named)."""
    return not names or any(is_lesson(path, name) for name in names)


def lessons(solutions_dir: str | Path, names: tuple[str, ...] | list[str] = ()) -> list[Path]:
    """The solution notebooks of the lessons named in ``names`` (all when none); an unknown name is an error."""
    paths = sorted(Path(solutions_dir).glob("*.ipynb"))
    missing = {Path(n).stem for n in names if not any(is_lesson(p, n) for p in paths)}
    if missing:
        raise MissingPath(f"no solution notebook for {sorted(missing)} in {solutions_dir}")
    return [p for p in paths if chosen(p, names)]


def guided_notebooks(root: Path) -> list[Path]:
    """Every guided notebook of the course."""
    return sorted((root / GUIDED).glob("*.ipynb"))


def solution_notebooks(root: Path) -> list[Path]:
    """Every solution notebook of the course."""
    return sorted((root / SOLUTIONS).glob("*.ipynb"))


def student_notebooks(root: Path) -> list[Path]:
    """Every student notebook of the course."""
    return sorted((root / STUDENT).glob("*.ipynb"))


def student_path(root: Path, source: Path) -> Path:
    """Where the student version of a solution notebook lives."""
    return root / STUDENT / source.name


def graded_ids(nb: NotebookNode) -> frozenset[str]:
    """The grade_ids of a notebook's graded and answer cells: what tells one lesson from another."""
    return frozenset(gid for cell in nb.cells if (gid := grade_id(cell)) and (is_grade(cell) or is_solution(cell)))


@functools.lru_cache(maxsize=64)
def _solution_ids(path: Path, mtime_ns: int, size: int) -> frozenset[str]:
    return graded_ids(read_notebook(path))


def _by_graded_cells(candidates: list[Path], ids: frozenset[str]) -> Path | None:
    """The one solution sharing the most graded cells with ``ids``; None when none or a tie."""
    shared = sorted(((len(ids & _solution_ids(c, (st := c.stat()).st_mtime_ns, st.st_size)), c)
                     for c in candidates), key=lambda pair: -pair[0])
    if not shared or not shared[0][0] or (len(shared) > 1 and shared[1][0] == shared[0][0]):
        return None
    return shared[0][1]


def match_source(submission: Path, source: str | Path, notebook: Callable[[], NotebookNode] | None = None) -> Path:
    """The source notebook for a submission: ``source`` itself, or the solution in it that matches.

    A file name match comes first; then the lesson is read from the submission's own graded cells
    (``notebook`` loads it, by default from ``submission``).
    """
    source = Path(source)
    if source.is_file():
        return source
    if not source.is_dir():
        raise MissingPath(f"{submission.name}: no solutions folder {source}; pass --source SOLUTION.ipynb")
    candidates = sorted(source.glob("*.ipynb"))
    exact = [c for c in candidates if c.name == submission.name]
    if exact:
        return exact[0]
    contained = [c for c in candidates if c.stem in submission.stem]
    if contained:
        return max(contained, key=lambda c: len(c.stem))
    lesson = submission.stem.split("_")[0]
    numbered = [c for c in candidates if c.stem.split("_")[0] == lesson and lesson.isdigit()]
    if len(numbered) == 1:
        return numbered[0]
    found = _by_graded_cells(candidates, graded_ids(notebook() if notebook else read_notebook(submission)))
    if found:
        return found
    raise UnusableNotebook(f"{submission.name}: no solution in {source} matches its name or its graded cells; "
                           "pass --source SOLUTION.ipynb")
