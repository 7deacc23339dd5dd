"""Student notebooks generated from solutions with nbgrader's own preprocessors."""

import copy
from pathlib import Path

from nbgrader.preprocessors import (
    CheckCellMetadata,
    ClearHiddenTests,
    ClearOutput,
    ClearSolutions,
    ComputeChecksums,
    LockCells,
)

from .errors import GraderError
from .metadata import is_solution_only, metadata_problems
from .notebooks import dumps, read_notebook, tidy, write_atomic

PIPELINE = (CheckCellMetadata, ClearSolutions, ClearHiddenTests, LockCells, ClearOutput, ComputeChecksums)


class InvalidSource(GraderError, ValueError):
    """A solution notebook whose nbgrader metadata or markers are wrong."""


def student_version(source_nb, name="notebook"):
    """The student notebook for a solution notebook: solutions, hidden tests and explanations removed."""
    problems = metadata_problems(source_nb, name)
    if problems:
        raise InvalidSource("\n".join(problems))
    nb = copy.deepcopy(source_nb)
    nb.cells = [cell for cell in nb.cells if not is_solution_only(cell)]
    resources = {}
    for preprocessor in PIPELINE:
        nb, resources = preprocessor().preprocess(nb, resources)
    return tidy(nb)


def is_lesson(path, name):
    """Whether ``path`` is the lesson called ``name``: its full name (``03_handoff_pseudo_tool``) or number (``03``)."""
    name = Path(name).stem
    return path.stem == name or path.stem.split("_")[0] == name


def lessons(solutions_dir, names=()):
    """The solution notebooks to generate: all of them, or the lessons named in ``names``."""
    paths = sorted(Path(solutions_dir).glob("*.ipynb"))
    if not names:
        return paths
    chosen = [p for p in paths if any(is_lesson(p, n) for n in names)]
    missing = {Path(n).stem for n in names if not any(is_lesson(p, n) for p in paths)}
    if missing:
        raise FileNotFoundError(f"no solution notebook for {sorted(missing)} in {solutions_dir}")
    return chosen


def generate(solutions_dir="solutions", student_dir="student", names=()):
    """Write student/NN.ipynb for each chosen solution; returns the paths whose content changed."""
    changed = []
    for path in lessons(solutions_dir, names):
        text = dumps(student_version(read_notebook(path), path.name))
        target = Path(student_dir) / path.name
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            write_atomic(target, text)
            changed.append(target)
    return changed
