"""nbgrader cell metadata (schema 3): what each cell is, and what is wrong with a source notebook."""

import re

SOLUTION_ONLY_TAG = "solution-only"
MARKERS = {
    "solution": ("### BEGIN SOLUTION", "### END SOLUTION"),
    "hidden tests": ("### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"),
}


def nbgrader(cell):
    """The cell's nbgrader metadata, or {}."""
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def grade_id(cell):
    """The cell's grade_id, or None."""
    return nbgrader(cell).get("grade_id")


def is_solution(cell):
    """A cell the student writes."""
    return bool(nbgrader(cell).get("solution"))


def is_test(cell):
    """An autograded test cell: a code cell with grade and no solution."""
    meta = nbgrader(cell)
    return cell.get("cell_type") == "code" and bool(meta.get("grade")) and not meta.get("solution")


def is_protected(cell):
    """A cell restored from the source at grading time: locked or a test."""
    meta = nbgrader(cell)
    return bool(meta) and not meta.get("solution") and bool(meta.get("locked") or meta.get("grade"))


def is_solution_only(cell):
    """A cell that explains the solution and is removed from the student version."""
    return SOLUTION_ONLY_TAG in cell.get("metadata", {}).get("tags", [])


def points(cell):
    """The points a test cell is worth."""
    return float(nbgrader(cell).get("points", 0) or 0)


def _marker_problems(where, source):
    problems = []
    for name, (begin, end) in MARKERS.items():
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


def metadata_problems(nb, name="notebook"):
    """Every problem in a source notebook's nbgrader metadata and markers, as readable lines."""
    problems, seen = [], {}
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
        if meta.get("grade") and points(cell) <= 0:
            problems.append(f"{where} ({gid}): a graded cell needs points > 0")
        if MARKERS["solution"][0] in cell.source and not meta.get("solution"):
            problems.append(f"{where} ({gid}): solution markers in a cell that is not a solution cell")
        if MARKERS["hidden tests"][0] in cell.source and not is_test(cell):
            problems.append(f"{where} ({gid}): hidden tests markers in a cell that is not a test cell")
    return problems
