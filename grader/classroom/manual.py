"""Marks for manually graded cells: ``grader manual template GRADES_DIR``, then ``grader manual import MARKS.csv
--out GRADES_DIR``.

``template`` writes the CSV to fill in: one row per cell still pending, with the columns
``submission,grade_id,points`` (``points`` empty) and, to read while marking, ``max_points`` and
``answer``; a submission's name is written as it imports back. ``import`` reads such a file (extra
columns are ignored). A missing column refuses the whole file; any other bad line (an unknown
submission or grade_id, a mark outside 0..the cell's points, a repeated pair) is refused alone,
and every one of them is reported, while the good lines are imported. The marks are merged into
``reports/*.json``, each marked submission's feedback page shows them, and ``grades.csv`` is
rewritten atomically with the final scores; no notebook is read and no cell runs.
"""

import csv
import io
import json
import math
import re
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


def _names(reports: dict[str, tuple[Path, dict[str, Any]]]) -> dict[str, str]:
    """Each submission by its own name and by the name the template wrote for it (``spreadsheet_safe``: a leading
    ``'`` before ``-``/``=``/``+``/``@``, ``?`` for a control character), when that name is no other's."""
    written: dict[str, list[str]] = {}
    for name in reports:
        written.setdefault(spreadsheet_safe(name), []).append(name)
    names = {safe: found[0] for safe, found in written.items() if len(found) == 1}
    return names | {name: name for name in reports}


def _marks(scores: Path, reports: dict[str, tuple[Path, dict[str, Any]]], book: Gradebook
           ) -> tuple[dict[tuple[str, str], float], list[str]]:
    """The marks of every good line, and one problem per bad line (a bad line never stops the others)."""
    with scores.open(encoding="utf-8-sig", newline="") as handle:  # a spreadsheet may write a BOM
        text = handle.read()
        reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=_separator(text.partition("\n")[0]))
        missing = [c for c in NEEDED if c not in (reader.fieldnames or [])]
        if missing:
            raise BadMarks(f"{scores}: missing column(s) {', '.join(missing)}; expected {','.join(NEEDED)} "
                           "(separated by commas, or by semicolons as a Spanish-locale spreadsheet saves them)")
        names = _names(reports)
        marks: dict[tuple[str, str], float] = {}
        problems: list[str] = []
        for line, record in enumerate(reader, start=2):
            try:
                key, value = _mark(record, names, reports, book)
            except BadMarks as problem:
                problems.append(f"{scores} line {line}: {problem}")
                continue
            if key in marks:
                problems.append(f"{scores} line {line}: a second mark for {key[0]} {key[1]}")
                continue
            marks[key] = value
    return marks, problems


def _separator(header: str) -> str:
    """The scores file's column separator, read from its header: a comma, or the semicolon (or tab) that a
    spreadsheet in a locale whose decimal mark is a comma (Spanish, for one) writes instead."""
    counts = {separator: header.count(separator) for separator in (",", ";", "\t")}
    return max(counts, key=lambda separator: counts[separator]) if any(counts.values()) else ","


def _number(text: str) -> float:
    """A mark as written: ``2.5``, or ``2,5`` with a decimal comma; ValueError for anything else."""
    text = text.strip()
    if re.fullmatch(r"[+-]?\d+,\d+", text):
        text = text.replace(",", ".")
    return float(text)


def _mark(record: dict[str, Any], names: dict[str, str], reports: dict[str, tuple[Path, dict[str, Any]]],
          book: Gradebook) -> tuple[tuple[str, str], float]:
    """One line's (submission, grade_id) and points; BadMarks says why the line is refused."""
    written, gid = (record.get("submission") or "").strip(), (record.get("grade_id") or "").strip()
    if written not in names:
        raise BadMarks(f"unknown submission {written!r}: no report of it in {book.reports} "
                       "(is --out the folder the batch wrote?)")
    submission = names[written]
    cells = {m["grade_id"]: m for m in reports[submission][1]["report"].get("manual", [])}
    if gid not in cells:
        raise BadMarks(f"{submission} has no manually graded cell {gid!r} (it has: {', '.join(cells) or 'none'})")
    points = record.get("points") or ""
    try:
        value = _number(points)
    except ValueError:
        raise BadMarks(f"points {points!r} is not a number") from None
    top = cells[gid]["max_points"]
    if not math.isfinite(value) or not 0 <= value <= top:
        raise BadMarks(f"{gid} takes between 0 and {top:g} points, got {points}")
    return (submission, gid), value


def import_marks(scores: str | Path, out: str | Path) -> tuple[list[dict[str, str]], list[str]]:
    """Merge the marks of ``scores``' good lines into ``out``'s reports and grades.csv; returns grades.csv's rows and
    one problem per refused line."""
    scores, book = Path(scores), Gradebook(Path(out))
    for path, what in ((scores, "scores file"), (book.grades, "grades file")):
        if not path.exists():
            raise MissingPath(f"{what} {path} does not exist")
    reports = _reports(book)
    marks, problems = _marks(scores, reports, book)
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
    as_written = {spreadsheet_safe(name): saved_row for name, saved_row in changed.items()}  # grades.csv's names
    for row in rows:
        if (saved_row := changed.get(row["submission"]) or as_written.get(row["submission"])) is not None:
            row.update({key: saved_row.get(key, "") for key in COLUMNS if key.startswith(("manual_", "total_"))})
    for submission in changed:
        path, saved = reports[submission]
        page = book.page(path.stem)
        if page.is_file():  # the page says the mark, not "pendiente"
            write_atomic(page, with_summary(page.read_text(encoding="utf-8"), Report.from_dict(saved["report"])))
        write_saved(path, saved)
    if changed:
        book.write_rows(rows)
    return rows, problems


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
