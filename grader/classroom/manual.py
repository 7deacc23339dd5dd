"""Marks for manually graded cells: ``grader manual template GRADES_DIR``, then ``grader manual import MARKS.csv
--out GRADES_DIR``.

``template`` writes the CSV to fill in: one row per cell still pending, with the columns
``submission,grade_id,points`` (``points`` empty) and, to read while marking, ``max_points`` and
``answer``. ``import`` reads such a file (extra columns are ignored). Every mark is checked
before anything is written: an unknown submission or grade_id, a mark outside 0..the cell's
points, a repeated pair or a missing column refuses the whole file. The marks are merged into
``reports/*.json``, each marked submission's feedback page shows them, and ``grades.csv`` is
rewritten atomically with the final scores; no notebook is read and no cell runs.
"""

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

from ..authoring.notebooks import write_atomic
from ..errors import GraderError, MissingPath
from ..grading.report import Report
from ..pages import with_summary
from .gradebook import COLUMNS, Gradebook, manual_columns, spreadsheet_safe, write_saved

NEEDED = ("submission", "grade_id", "points")


class BadMarks(GraderError, ValueError):
    """A scores file the grader refuses: nothing was written."""


def _reports(book: Gradebook) -> dict[str, tuple[Path, dict[str, Any]]]:
    found = {}
    for path in book.report_files():
        saved = json.loads(path.read_text(encoding="utf-8"))
        found[saved["row"]["submission"]] = (path, saved)
    return found


def _marks(scores: Path, reports: dict[str, tuple[Path, dict[str, Any]]], book: Gradebook
           ) -> dict[tuple[str, str], float]:
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
                raise BadMarks(f"{where}: unknown submission {submission!r}: no report of it in {book.reports} "
                               "(is --out the folder the batch wrote?)")
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
    scores, book = Path(scores), Gradebook(Path(out))
    for path, what in ((scores, "scores file"), (book.grades, "grades file")):
        if not path.exists():
            raise MissingPath(f"{what} {path} does not exist")
    reports = _reports(book)
    marks = _marks(scores, reports, book)
    rows = book.read_rows()
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
        page = book.page(path.stem)
        if page.is_file():  # the page says the mark, not "pendiente"
            write_atomic(page, with_summary(page.read_text(encoding="utf-8"), Report.from_dict(saved["report"])))
        write_saved(path, saved)
    book.write_rows(rows)
    return rows


TEMPLATE_COLUMNS = (*NEEDED, "max_points", "answer")


def write_template(out: str | Path, path: str | Path | None = None) -> tuple[Path, int]:
    """Write the marks CSV to fill in for ``out``'s batch (default ``out/marks.csv``); never over an existing file.
    Returns its path and the number of cells to mark."""
    out = Path(out)
    target = Path(path) if path else out / "marks.csv"
    Gradebook(out).require_reports()
    if target.exists():
        raise BadMarks(f"{target} already exists (marks may be in it): move it, or name another file with --csv")
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=TEMPLATE_COLUMNS, lineterminator="\n")
    writer.writeheader()
    count = 0
    for submission, (_, saved) in sorted(_reports(Gradebook(out)).items()):
        for cell in saved["report"].get("manual", []):
            if cell.get("points") is None:
                writer.writerow({"submission": spreadsheet_safe(submission), "grade_id": cell["grade_id"],
                                 "points": "", "max_points": f"{cell['max_points']:g}",
                                 "answer": spreadsheet_safe(cell.get("answer", ""))})
                count += 1
    write_atomic(target, buffer.getvalue())
    return target, count
