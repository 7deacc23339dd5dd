"""nbgrader cell metadata (schema 3): what each cell is, and what is wrong with a notebook's metadata.

The cell predicates read the metadata exactly as nbgrader's own do (``nbgrader.utils.is_grade``,
``is_solution``, ``is_locked``; ``tests/grader/test_boundaries.py`` runs both on every cell of
the course and on odd metadata): importing ``nbgrader`` costs a grade 0.7 s (its package loads
its server extensions), so the grading path does not. They read only metadata of the right
types: a notebook whose metadata is wrongly typed (``"nbgrader": "x"``, points as a string, a
grade_id list) is reported by ``type_problems`` and refused before any predicate reads it.
"""

import re
from typing import Any

from nbformat import NotebookNode

SOLUTION_ONLY_TAG = "solution-only"
MARKERS = {
    "solution": ("### BEGIN SOLUTION", "### END SOLUTION"),
    "hidden tests": ("### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"),
}
FLAGS = ("grade", "solution", "locked", "task")
HIDDEN_BEGIN, HIDDEN_END = MARKERS["hidden tests"]


def nbgrader(cell: NotebookNode) -> dict[str, Any]:
    """The cell's nbgrader metadata, or {} when it is absent or not an object."""
    metadata = cell.get("metadata")
    meta = metadata.get("nbgrader") if isinstance(metadata, dict) else None
    return meta if isinstance(meta, dict) else {}


def _checked(cell: NotebookNode) -> bool:
    """Whether nbgrader's predicates may read this cell: nbgrader metadata absent, or an object."""
    metadata = cell.get("metadata")
    return isinstance(metadata, dict) and isinstance(metadata.get("nbgrader", {}), dict)


def grade_id(cell: NotebookNode) -> str | None:
    """The cell's grade_id, or None (also when it is not a string)."""
    gid = nbgrader(cell).get("grade_id")
    return gid if isinstance(gid, str) and gid else None


def is_grade(cell: NotebookNode) -> bool:
    """A graded cell (as nbgrader's ``is_grade``)."""
    return _checked(cell) and bool(nbgrader(cell).get("grade", False))


def is_solution(cell: NotebookNode) -> bool:
    """A cell the student writes (as nbgrader's ``is_solution``)."""
    return _checked(cell) and bool(nbgrader(cell).get("solution", False))


def is_protected(cell: NotebookNode) -> bool:
    """A cell restored from the source at grading time (as nbgrader's ``is_locked``): locked or a test, never a
    solution."""
    if not _checked(cell) or is_solution(cell):
        return False
    return is_grade(cell) or bool(nbgrader(cell).get("locked", False))


def is_test(cell: NotebookNode) -> bool:
    """An autograded test cell: a code cell with grade and no solution."""
    return cell.get("cell_type") == "code" and is_grade(cell) and not is_solution(cell)


def is_manual(cell: NotebookNode) -> bool:
    """A manually graded answer: grade and solution (nbgrader's "manually graded answer"), never autograded."""
    return is_grade(cell) and is_solution(cell)


def exercise_of(test_id: str, exercises: list[str]) -> str | None:
    """The exercise a test cell belongs to: the longest exercise grade_id that follows its ``test_`` prefix."""
    mine = [e for e in exercises if test_id.startswith(f"test_{e}")]
    return max(mine, key=len) if mine else None


def tags(cell: NotebookNode) -> list[str]:
    """The cell's tags; a single string is one tag (never a list of characters), anything else none."""
    metadata = cell.get("metadata")
    value = metadata.get("tags", []) if isinstance(metadata, dict) else []
    if isinstance(value, str):
        return [value]
    return [tag for tag in value if isinstance(tag, str)] if isinstance(value, list) else []


def is_solution_only(cell: NotebookNode) -> bool:
    """A cell that explains the solution and is removed from the student version."""
    return SOLUTION_ONLY_TAG in tags(cell)


def points(cell: NotebookNode) -> float:
    """The points a test cell is worth (0 when absent or not a number)."""
    value = nbgrader(cell).get("points", 0)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def type_problems(nb: NotebookNode, name: str = "notebook") -> list[str]:
    """Every wrongly typed cell field or nbgrader metadata value, as readable lines."""
    problems = []
    for index, cell in enumerate(nb.cells):
        where = f"{name} cell {index}"
        if not isinstance(cell, dict):
            problems.append(f"{where}: not an object")
            continue
        metadata = cell.get("metadata", {})
        if not isinstance(metadata, dict):
            problems.append(f"{where}: metadata is not an object")
            continue
        if not isinstance(cell.get("source", ""), str):
            problems.append(f"{where}: source is not text")
        value = metadata.get("tags", [])
        if not isinstance(value, (str, list)) or (isinstance(value, list)
                                                   and not all(isinstance(t, str) for t in value)):
            problems.append(f"{where}: tags must be a list of strings, got {type(value).__name__}")
        if "nbgrader" not in metadata:
            continue
        meta = metadata["nbgrader"]
        if not isinstance(meta, dict):
            problems.append(f"{where}: nbgrader metadata must be an object, got {type(meta).__name__}")
            continue
        if "grade_id" in meta and not isinstance(meta["grade_id"], str):
            problems.append(f"{where}: grade_id must be a string, got {type(meta['grade_id']).__name__}")
        for flag in FLAGS:
            if flag in meta and not isinstance(meta[flag], bool):
                problems.append(f"{where}: nbgrader {flag!r} must be true or false, got {meta[flag]!r:.40}")
        if "points" in meta and (isinstance(meta["points"], bool) or not isinstance(meta["points"], (int, float))):
            problems.append(f"{where}: points must be a number, got {type(meta['points']).__name__}")
    return problems


def _marker_problems(where: str, source: str) -> list[str]:
    problems = []
    for begin, end in MARKERS.values():
        depth = 0
        for line in source.splitlines():
            stripped = line.strip()
            if stripped == begin:
                depth += 1
                if depth > 1:
                    problems.append(f"{where}: nested {begin!r}")
            elif stripped == end:
                depth -= 1
                if depth < 0:
                    problems.append(f"{where}: {end!r} without {begin!r}")
                    depth = 0
        if depth > 0:
            problems.append(f"{where}: {begin!r} without {end!r}")
    return problems


def metadata_problems(nb: NotebookNode, name: str = "notebook") -> list[str]:
    """Every problem in a source notebook's nbgrader metadata and markers, as readable lines."""
    problems = type_problems(nb, name)
    if problems:
        return problems
    seen: dict[str, int] = {}
    for index, cell in enumerate(nb.cells):
        meta, where = nbgrader(cell), f"{name} cell {index}"
        problems += _marker_problems(where, cell.source)
        if not meta:
            if any(begin in cell.source for begin, _ in MARKERS.values()):
                problems.append(f"{where}: has markers but no nbgrader metadata")
            continue
        gid = meta.get("grade_id")
        if meta.get("schema_version") != 3:
            problems.append(f"{where}: nbgrader schema_version must be 3, got {meta.get('schema_version')!r}")
        if not gid or not re.fullmatch(r"[A-Za-z0-9_-]+", str(gid)):
            problems.append(f"{where}: grade_id {gid!r} must be letters, digits, '-' or '_'")
        elif gid in seen:
            problems.append(f"{where}: grade_id {gid!r} already used by cell {seen[gid]}")
        else:
            seen[gid] = index
        if is_grade(cell) and points(cell) <= 0:
            problems.append(f"{where} ({gid}): a graded cell needs points > 0")
        if MARKERS["solution"][0] in cell.source and not is_solution(cell):
            problems.append(f"{where} ({gid}): solution markers in a cell that is not a solution cell")
        if HIDDEN_BEGIN in cell.source and not is_test(cell):
            problems.append(f"{where} ({gid}): hidden tests markers in a cell that is not a test cell")
    return problems
