"""The grades folder of a batch (``--out``): reports/ (the cache), feedback/, grades.csv and times.csv.

One report per submission, ``reports/SLUG.json``, holds its cache key, its CSV row and its report
data; ``feedback/SLUG.html`` is its feedback page. ``grades.csv`` has one row per submission
(``COLUMNS``) and ``times.csv`` the seconds a worker spent on each. Every cell a spreadsheet
reads is spreadsheet-safe; every file is written atomically. ``batch`` writes the folder,
``manual`` merges marks into it and ``classview`` reads it.
"""

import csv
import enum
import hashlib
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..authoring.notebooks import write_atomic
from ..errors import MissingPath
from ..grading.execute import Limits
from ..grading.reference import grader_digest
from ..grading.report import printable

COLUMNS = ("submission", "source", "score", "max_score", "status", "error", "tampered", "suspicious", "in_kernel",
           "cached", "manual_pending", "manual_score", "manual_max", "total_score", "total_max")
"""score/max_score are the autograded points only; ``in_kernel`` lists the tests graded the nbgrader way, whose
verdict the student's kernel decided (a student can forge it); the manual_* columns are the cells graded by hand
(``manual_pending`` lists ``grade_id:points`` still to grade); total_* is filled once nothing is pending."""
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

SLUG_KEPT = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
MAX_SLUG = 200  # bytes of a report's file name before .json (a file name holds 255 bytes, with room for the
# temporary name a write goes through)


class RowStatus(enum.StrEnum):
    """A grades.csv row's status: graded, not graded (why: the error column), or graded against no lesson of its."""

    GRADED = "graded"
    ERROR = "error"
    WRONG_LESSON = "wrong-lesson"


def spreadsheet_safe(value: Any) -> str:
    """A CSV cell no spreadsheet reads as a formula (a leading =, +, -, @, tab or CR is escaped with ') and no
    terminal reads as a control sequence."""
    text = str(value)
    return printable(f"'{text}" if text.startswith(FORMULA_START) else text)


def cache_key(submission: bytes, source: bytes, limits: Limits) -> str:
    """A submission's cache key: its bytes, its source's, the limits and the grader's own code, hashed."""
    digest = hashlib.sha256()
    for part in (submission, source, repr(limits).encode(), grader_digest().encode()):
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def _slug_char(ch: str) -> str:
    if ch in SLUG_KEPT or (ch.isalnum() and not ch.isascii()):
        return ch
    return "~" if ch == "/" else "".join(f"+{byte:02X}" for byte in ch.encode("utf-8", "surrogatepass"))


def slug(submission: Path, root: Path) -> str:
    """The file name of a submission's report and page: its path under the folder, ``/`` written ``~``
    (``ana/05_x`` is ``ana~05_x``), a letter, digit, ``.``, ``_`` or ``-`` as it is and any other character as
    ``+`` and the hex of its UTF-8 bytes. So two submissions never share one, each name reads back as its path,
    and it has no ``%``, ``#`` or ``?``: typed after ``file://``, it opens as it is (a browser decodes ``%2F``).
    A path too long for a file name (``MAX_SLUG`` bytes) keeps its beginning and ends with ``=`` and a hash of
    the whole path; the report holds the path itself."""
    name = "".join(_slug_char(ch) for ch in submission.relative_to(root).with_suffix("").as_posix())
    if len(name.encode("utf-8")) <= MAX_SLUG:
        return name
    kept = ""
    for ch in name:
        if len((kept + ch).encode("utf-8")) > MAX_SLUG - 17:
            break
        kept += ch
    return f"{kept}={hashlib.sha256(name.encode('utf-8')).hexdigest()[:16]}"


def manual_columns(report: dict[str, Any]) -> dict[str, str]:
    """The CSV's manual-grading columns from a report's data (``Report.to_dict``, marks maybe imported)."""
    manual = report.get("manual", [])
    pending = [m for m in manual if m.get("points") is None]
    manual_score = sum(m["points"] for m in manual if m.get("points") is not None)
    manual_max = sum(m["max_points"] for m in manual)
    done, graded = not pending, len(pending) < len(manual)
    return {"manual_pending": " ".join(f"{m['grade_id']}:{m['max_points']:g}" for m in pending),
            "manual_score": f"{manual_score:g}" if graded or not manual else "",
            "manual_max": f"{manual_max:g}",
            "total_score": f"{report['score'] + manual_score:g}" if done else "",
            "total_max": f"{report['max_score'] + manual_max:g}"}


def write_csv(rows: list[dict[str, str]], path: Path) -> None:
    """Write grades.csv atomically, one row per submission, sorted by submission."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in sorted(rows, key=lambda row: row["submission"]):
        writer.writerow({key: spreadsheet_safe(row.get(key, "")) for key in COLUMNS})
    write_atomic(path, buffer.getvalue())


@dataclass(frozen=True)
class Gradebook:
    """A grades folder: where each of its files lives, and how each is read and written."""

    out: Path

    @property
    def reports(self) -> Path:
        return self.out / "reports"

    @property
    def grades(self) -> Path:
        return self.out / "grades.csv"

    @property
    def times(self) -> Path:
        return self.out / "times.csv"

    @property
    def skipped(self) -> Path:
        return self.out / "skipped.txt"

    def read_skipped(self) -> list[str]:
        """The files of the submissions folder that were not notebooks (skipped.txt), one per line; [] if none."""
        try:
            return [line for line in self.skipped.read_text(encoding="utf-8").splitlines() if line]
        except (OSError, UnicodeDecodeError):
            return []

    def write_skipped(self, names: list[str]) -> None:
        """Write skipped.txt: each file of the submissions folder that is not a notebook, one per line."""
        write_atomic(self.skipped, "".join(f"{printable(name)}\n" for name in names))

    def report(self, slug: str) -> Path:
        """The saved report of the submission named ``slug`` (its cache entry)."""
        return self.reports / f"{slug}.json"

    def page(self, slug: str) -> Path:
        """The feedback page of the submission named ``slug``."""
        return self.out / "feedback" / f"{slug}.html"

    def require_reports(self) -> None:
        """Refuse a folder no batch wrote."""
        if not self.reports.is_dir():
            raise MissingPath(f"{self.reports} does not exist: pass the --out folder of a batch")

    def report_files(self) -> list[Path]:
        """Every saved report's file, sorted."""
        return sorted(self.reports.glob("*.json"))

    def cached(self, slug: str, key: str) -> dict[str, str] | None:
        """The saved row of a submission graded before with the same key (bytes, source, limits), or None."""
        try:
            saved = json.loads(self.report(slug).read_text(encoding="utf-8"))
        except (OSError, ValueError):  # not graded yet, or a report that cannot be read: grade it again
            return None
        return saved["row"] if isinstance(saved, dict) and saved.get("key") == key and "row" in saved else None

    def save(self, slug: str, key: str, row: dict[str, str], report: dict[str, Any] | None,
             feedback: str | None) -> dict[str, str]:
        """Write a graded submission's feedback page, then its report (the cache entry); returns its CSV row."""
        if report is not None and feedback is not None:
            try:
                write_atomic(self.page(slug), feedback)
                write_saved(self.report(slug), {"key": key, "row": row, "report": report})
            except OSError as error:
                row = {**row, "error": " ".join(str(error).split())}
        return row

    def read_rows(self) -> list[dict[str, str]]:
        """grades.csv's rows, every column there (empty if missing)."""
        with self.grades.open(encoding="utf-8", newline="") as handle:
            return [{key: row.get(key) or "" for key in COLUMNS} for row in csv.DictReader(handle)]

    def write_rows(self, rows: list[dict[str, str]]) -> None:
        """Write grades.csv."""
        write_csv(rows, self.grades)

    def read_times(self) -> dict[str, float]:
        """times.csv's seconds per submission; {} if it cannot be read."""
        try:
            with self.times.open(encoding="utf-8", newline="") as handle:
                return {row["submission"]: float(row["seconds"]) for row in csv.DictReader(handle)}
        except (OSError, KeyError, ValueError, csv.Error):
            return {}

    def write_times(self, times: dict[str, float]) -> None:
        """Write times.csv (submission, seconds a worker spent on it), keeping the times of submissions not graded
        this time (cached): measured, not graded, so apart from the reports, which stay the same bytes on every
        run."""
        kept: dict[str, str] = {}
        try:
            with self.times.open(encoding="utf-8", newline="") as handle:
                kept = {row["submission"]: row["seconds"] for row in csv.DictReader(handle)}
        except (OSError, KeyError, csv.Error):
            kept = {}
        kept.update({submission: f"{seconds:.3f}" for submission, seconds in times.items()})
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(("submission", "seconds"))
        writer.writerows((spreadsheet_safe(submission), seconds) for submission, seconds in sorted(kept.items()))
        write_atomic(self.times, buffer.getvalue())


def write_saved(path: Path, saved: dict[str, Any]) -> None:
    """Write a saved report (key, row, report) as the cache reads it: sorted keys, indented, UTF-8."""
    write_atomic(path, json.dumps(saved, indent=2, ensure_ascii=False, sort_keys=True) + "\n")
