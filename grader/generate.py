"""Student notebooks generated from solutions with nbgrader's own preprocessors."""

import copy
from pathlib import Path

from nbformat import NotebookNode
from nbgrader.preprocessors import (
    CheckCellMetadata,
    ClearHiddenTests,
    ClearOutput,
    ClearSolutions,
    ComputeChecksums,
    LockCells,
)

from .course import SOLUTIONS, STUDENT, lessons
from .errors import GraderError
from .metadata import is_solution_only, metadata_problems
from .notebooks import dumps, read_notebook, tidy, write_atomic

PIPELINE = (CheckCellMetadata, ClearSolutions, ClearHiddenTests, LockCells, ClearOutput, ComputeChecksums)

CODE_STUB = "# ESCRIBE TU CÓDIGO AQUÍ\nraise NotImplementedError()"
TEXT_STUB = "ESCRIBE TU RESPUESTA AQUÍ"
"""What a student finds where the solution was: in Spanish, like everything the student reads."""
STUBS = {ClearSolutions: {"code_stub": {"python": CODE_STUB}, "text_stub": TEXT_STUB}}


class InvalidSource(GraderError, ValueError):
    """A solution notebook whose nbgrader metadata or markers are wrong."""


def student_version(source_nb: NotebookNode, name: str = "notebook") -> NotebookNode:
    """The student notebook for a solution notebook: solutions, hidden tests and explanations removed."""
    problems = metadata_problems(source_nb, name)
    if problems:
        raise InvalidSource("\n".join(problems))
    nb = copy.deepcopy(source_nb)
    nb.cells = [cell for cell in nb.cells if not is_solution_only(cell)]
    resources: dict = {}
    for preprocessor in PIPELINE:
        nb, resources = preprocessor(**STUBS.get(preprocessor, {})).preprocess(nb, resources)
    return tidy(nb)


def generate(solutions_dir: str | Path = SOLUTIONS, student_dir: str | Path = STUDENT,
             names: tuple[str, ...] | list[str] = ()) -> list[Path]:
    """Write student/NN.ipynb for each chosen solution; returns the paths whose content changed."""
    changed = []
    for path in lessons(solutions_dir, names):
        text = dumps(student_version(read_notebook(path), path.name))
        target = Path(student_dir) / path.name
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            write_atomic(target, text)
            changed.append(target)
    return changed
