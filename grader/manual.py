"""Marks for manually graded cells: ``python -m grader manual import SCORES.csv --out GRADES_DIR``.

The instructor's CSV has the columns ``submission,grade_id,points`` (``submission`` as in
grades.csv). Every mark is checked before anything is written: an unknown submission or
grade_id, a mark outside 0..the cell's points, a repeated pair or a missing column refuses
the whole file. The marks are merged into ``reports/*.json`` and ``grades.csv`` is rewritten
atomically with the final scores; no notebook is read and no cell runs.
"""

import csv
import json
import math
from pathlib import Path
from typing import Any

from .batch import COLUMNS, manual_columns, write_csv
from .errors import GraderError, MissingPath
from .notebooks import write_atomic
from .report import Report

NEEDED = ("submission", "grade_id", "points")


class BadMarks(GraderError, ValueError):
    """A scores file the grader refuses: nothing was written."""


def _reports(out: Path) -> dict[str, tuple[Path, dict[str, Any]]]:
    found = {}
    for path in sorted((out / "reports").glob("*.json")):
        saved = json.loads(path.read_text(encoding="utf-8"))
        found[saved["row"]["submission"]] = (path, saved)
    return found


def _marks(scores: Path, reports: dict[str, tuple[Path, dict[str, Any]]]) -> dict[tuple[str, str], float]:
    with scores.open(encoding="utf-8-sig", newline="") as handle:  # a spreadsheet may write a BOM
        reader = csv.DictReader(handle)
        missing = [c for c in NEEDED if c not in (reader.fieldnames or [])]
        if missing:
            raise BadMarks(f"{scores}: missing column(s) {', '.join(missing)}; expected {','.join(NEEDED)}")
        marks: dict[tuple[str, str], float] = {}
        for line, record in enumerate(reader, start=2):
            where = f"{scores} line {line}"
            submission, gid = (record["submission"] or "").strip(), (record["grade_id"] or "").strip()
            if submission not in reports:
                raise BadMarks(f"{where}: unknown submission {submission!r} (not in {scores.parent}/reports?)")
            cells = {m["grade_id"]: m for m in reports[submission][1]["report"].get("manual", [])}
            if gid not in cells:
                raise BadMarks(f"{where}: {submission} has no manually graded cell {gid!r}"
                               f" (it has: {', '.join(cells) or 'none'})")
            try:
                value = float((record["points"] or "").strip())
            except ValueError:
                raise BadMarks(f"{where}: points {record['points']!r} is not a number") from None
            top = cells[gid]["max_points"]
            if not math.isfinite(value) or not 0 <= value <= top:
                raise BadMarks(f"{where}: {gid} takes between 0 and {top:g} points, got {record['points']}")
            if (submission, gid) in marks:
                raise BadMarks(f"{where}: a second mark for {submission} {gid}")
            marks[(submission, gid)] = value
    return marks


def import_marks(scores: str | Path, out: str | Path) -> list[dict[str, str]]:
    """Merge the marks of ``scores`` into ``out``'s reports and grades.csv; returns grades.csv's rows."""
    scores, out = Path(scores), Path(out)
    for path, what in ((scores, "scores file"), (out / "grades.csv", "grades file")):
        if not path.exists():
            raise MissingPath(f"{what} {path} does not exist")
    reports = _reports(out)
    marks = _marks(scores, reports)
    with (out / "grades.csv").open(encoding="utf-8", newline="") as handle:
        rows = [{key: row.get(key) or "" for key in COLUMNS} for row in csv.DictReader(handle)]
    changed: dict[str, dict[str, str]] = {}
    for (submission, gid), value in marks.items():
        path, saved = reports[submission]
        report = Report.from_dict(saved["report"])
        for cell in report.manual:
            if cell.grade_id == gid:
                cell.mark(value)
        saved["report"] = report.to_dict()
        saved["row"].update(manual_columns(saved["report"]))
        changed[submission] = saved["row"]
    for row in rows:
        if row["submission"] in changed:
            row.update({key: changed[row["submission"]].get(key, "") for key in COLUMNS if key.startswith(
                ("manual_", "total_"))})
    for submission in changed:
        path, saved = reports[submission]
        write_atomic(path, json.dumps(saved, indent=2, ensure_ascii=False, sort_keys=True) + "\n")
    write_csv(rows, out / "grades.csv")
    return rows
