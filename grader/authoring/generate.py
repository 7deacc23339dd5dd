"""Student notebooks generated from solutions with nbgrader's own preprocessors.

Each written notebook carries a stamp in its metadata (``grader.generated``): the SHA-256 of
its tidy form (``notebooks.tidy``: no outputs, counts or UI metadata, and not the stamp
itself). ``generate`` overwrites a notebook only while its tidy form still has that hash, so
a student's saved answers are never lost without ``--force``; running cells changes nothing.
"""

import copy
import functools
import hashlib
from pathlib import Path
from typing import Any

from nbformat import NotebookNode

from ..course_config import SOLUTIONS, STUDENT
from ..errors import GraderError
from .course import lessons
from .metadata import is_solution_only, metadata_problems
from .notebooks import UnusableNotebook, dumps, parse_notebook, read_notebook, tidy, write_atomic

CODE_STUB = '# ESCRIBE TU CÓDIGO AQUÍ\nraise NotImplementedError("ejercicio sin responder todavía")'
TEXT_STUB = "ESCRIBE TU RESPUESTA AQUÍ"
"""What a student finds where the solution was: in Spanish, like everything the student reads."""
STAMP = "grader"
"""The notebook metadata key of generate's stamp: ``{"generated": "<sha256 of the tidy form>"}``."""


class InvalidSource(GraderError, ValueError):
    """A solution notebook whose nbgrader metadata or markers are wrong."""


class EditedStudentNotebook(GraderError):
    """Student notebooks changed since generate wrote them: nothing is written without ``force``."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths = paths
        super().__init__("; ".join(refusal(path) for path in paths))


def refusal(path: Path) -> str:
    """The one line that refuses to overwrite an edited student notebook."""
    return f"{path}: changed since `grader generate` wrote it (a student's answers?); pass --force to overwrite it"


@functools.cache
def pipeline() -> tuple[tuple[Any, dict[str, Any]], ...]:
    """nbgrader's preprocessors, in the order they run, each with its options (the course's stubs).

    Imported on first use: importing ``nbgrader`` costs 0.7 s, which a self-grade whose student
    version is in the disk cache (``grader.grading.cache``) never pays.
    """
    from nbgrader.preprocessors import (
        CheckCellMetadata,
        ClearHiddenTests,
        ClearOutput,
        ClearSolutions,
        ComputeChecksums,
        LockCells,
    )

    stubs = {"code_stub": {"python": CODE_STUB}, "text_stub": TEXT_STUB}
    return ((CheckCellMetadata, {}), (ClearSolutions, stubs), (ClearHiddenTests, {}), (LockCells, {}),
            (ClearOutput, {}), (ComputeChecksums, {}))


def student_version(source_nb: NotebookNode, name: str = "notebook") -> NotebookNode:
    """The student notebook for a solution notebook: solutions, hidden tests and explanations removed."""
    problems = metadata_problems(source_nb, name)
    if problems:
        raise InvalidSource("\n".join(problems))
    nb = copy.deepcopy(source_nb)
    nb.cells = [cell for cell in nb.cells if not is_solution_only(cell)]
    resources: dict = {}
    for preprocessor, options in pipeline():
        nb, resources = preprocessor(**options).preprocess(nb, resources)
    return tidy(nb)


def content_hash(nb: NotebookNode) -> str:
    """The SHA-256 of a notebook's tidy form: outputs, counts, UI metadata and the stamp left out."""
    return hashlib.sha256(dumps(tidy(copy.deepcopy(nb))).encode()).hexdigest()


def stamped(student: NotebookNode) -> str:
    """The student notebook's text as generate writes it: with the stamp of its own content."""
    nb = copy.deepcopy(student)
    nb.metadata[STAMP] = {"generated": content_hash(student)}
    return dumps(nb)


def edited(text: str, student: NotebookNode, path: Path) -> bool:
    """Whether a student notebook's text holds work generate did not write (unstamped: anything new)."""
    try:
        nb = parse_notebook(text.encode("utf-8"), path)
    except UnusableNotebook:
        return True
    stamp = nb.metadata.get(STAMP)
    recorded = stamp.get("generated") if isinstance(stamp, dict) else None
    return content_hash(nb) != (recorded if isinstance(recorded, str) else content_hash(student))


def generate(solutions_dir: str | Path = SOLUTIONS, student_dir: str | Path = STUDENT,
             names: tuple[str, ...] | list[str] = (), force: bool = False) -> list[Path]:
    """Write student/NN.ipynb for each chosen solution; returns the paths whose content changed.

    All or nothing: if any target was edited since generate wrote it, nothing is written (unless ``force``).
    """
    writes, refused = [], []
    for path in lessons(solutions_dir, names):
        student = student_version(read_notebook(path), path.name)
        text, target = stamped(student), Path(student_dir) / path.name
        old = target.read_text(encoding="utf-8", errors="replace") if target.exists() else None
        if old == text:
            continue
        if old is not None and not force and edited(old, student, target):
            refused.append(target)
        writes.append((target, text))
    if refused:
        raise EditedStudentNotebook(refused)
    for target, text in writes:
        write_atomic(target, text)
    return [target for target, _ in writes]
