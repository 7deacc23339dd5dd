"""Grade a folder of submissions in parallel: one process per worker, one fresh kernel per submission.

A bad submission becomes a row with status "error" and the batch goes on. Re-running
skips submissions whose report is already there for the same submission, source and
limits (a content hash), so an interrupted batch resumes where it stopped. Every
submission and source is read into memory before any student code runs; the output
folder, where the cache lives, is out of the kernels' reach (see grader.sandbox).
"""

import csv
import functools
import hashlib
import io
import json
import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from . import __version__
from .api import WrongLesson, grade_notebooks
from .course import match_source
from .errors import GraderError, MissingPath
from .execute import Limits
from .generate import student_version
from .kernel import worker_supply
from .notebooks import UnusableNotebook, parse_notebook, write_atomic
from .pool import run_tasks
from .report import Report, feedback_html

logger = logging.getLogger(__name__)

COLUMNS = ("submission", "source", "score", "max_score", "status", "error", "tampered", "suspicious", "cached",
           "manual_pending", "manual_score", "manual_max", "total_score", "total_max")
"""score/max_score are the autograded points only; the manual_* columns are the cells graded by hand
(``manual_pending`` lists ``grade_id:points`` still to grade); total_* is filled once nothing is pending."""
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def find_submissions(directory: str | Path, out: str | Path | None = None) -> list[Path]:
    """Every notebook under ``directory`` (checkpoints and the output folder excepted), sorted."""
    directory, resolved = Path(directory), Path(out).resolve() if out else None
    found = []
    for path in sorted(directory.rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts or (resolved and resolved in path.resolve().parents):
            continue
        found.append(path)
    return found


def _key(submission: bytes, source: bytes, limits: Limits) -> str:
    digest = hashlib.sha256()
    for part in (submission, source, repr(limits).encode(), __version__.encode()):
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def _slug(submission: Path, root: Path) -> str:
    return "__".join(submission.relative_to(root).with_suffix("").parts)


def _read(path: str | os.PathLike[str]) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise UnusableNotebook(f"{path}: cannot read the file ({error.strerror})") from None


_students: dict[bytes, tuple[Any, Any]] = {}  # per worker: source bytes -> (source, student version), built once


def _grade(source_bytes: bytes, submission_nb: Callable[[], Any], limits: Limits,
           names: tuple[str, str]) -> tuple[Report, Any]:
    if source_bytes not in _students:
        source = parse_notebook(source_bytes, names[0])
        _students[source_bytes] = source, student_version(source, names[0])
    source, student = _students[source_bytes]
    try:
        return grade_notebooks(source, submission_nb(), limits=limits, names=names, supply=worker_supply(),
                               student=student)
    except (RuntimeError, TimeoutError):  # the kernel failed to start: once more, with a new one
        return grade_notebooks(source, submission_nb(), limits=limits, names=names, supply=worker_supply(),
                               student=student)


def _unnamed(error: str, submission: Path, root: Path) -> str:
    """The error as one line, without the submission's name in front: the row's first column already says it."""
    text = " ".join(error.split())
    for name in (str(submission), str(submission.relative_to(root)), submission.name):
        if text.startswith(f"{name}: "):
            return text[len(name) + 2:]
    return text


def _error_row(submission: Path, root: Path, error: str) -> dict[str, str]:
    """A submission's CSV row before (or instead of) its grade: status error, every other column empty."""
    return {**dict.fromkeys(COLUMNS, ""), "submission": str(submission.relative_to(root)), "status": "error",
            "error": _unnamed(error, submission, root), "cached": "no"}


def grade_one(submission: str | os.PathLike[str], source: str | os.PathLike[str], root: Path,
              out: str | os.PathLike[str], limits: Limits, submission_bytes: bytes | None = None,
              source_bytes: bytes | None = None) -> dict[str, str]:
    """Grade one submission and write its JSON report and HTML feedback; returns its CSV row.

    ``source`` is the matched source notebook; the bytes of both files, when given, were read earlier.
    """
    submission, source, out = Path(submission), Path(source), Path(out)
    row = {**_error_row(submission, root, ""), "source": str(source)}
    report_path = out / "reports" / f"{_slug(submission, root)}.json"
    try:
        submission_bytes = _read(submission) if submission_bytes is None else submission_bytes
        source_bytes = _read(source) if source_bytes is None else source_bytes
        key = _key(submission_bytes, source_bytes, limits)
        if report_path.exists():
            saved = json.loads(report_path.read_text(encoding="utf-8"))
            if saved.get("key") == key:
                return {**row, **saved["row"], "cached": "yes"}
        report, feedback_nb = _grade(source_bytes, lambda: parse_notebook(submission_bytes, submission), limits,
                                     (str(source), row["submission"]))
        row.update(score=f"{report.score:g}", max_score=f"{report.max_score:g}", status="graded",
                   tampered=" ".join(f"{t['grade_id']}:{t['problem']}" for t in report.tampered),
                   suspicious=" ".join(report.suspicious), **manual_columns(report.to_dict()))
        write_atomic(out / "feedback" / f"{_slug(submission, root)}.html", feedback_html(report, feedback_nb))
        write_atomic(report_path, json.dumps({"key": key, "row": row, "report": report.to_dict()},
                                             indent=2, ensure_ascii=False, sort_keys=True) + "\n")
    except WrongLesson as error:
        row.update(status="wrong-lesson", error=_unnamed(str(error), submission, root))
    except (GraderError, OSError) as error:
        row["error"] = _unnamed(str(error), submission, root)
    except Exception as error:  # noqa: BLE001 - one submission never stops the batch
        logger.debug("grading %s failed", submission, exc_info=True)
        row["error"] = f"grader error: {type(error).__name__}: {' '.join(str(error).split())}"[:500]
    return row


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


def spreadsheet_safe(value: Any) -> str:
    """A CSV cell no spreadsheet reads as a formula: a leading =, +, -, @, tab or CR is escaped with '."""
    text = str(value)
    return f"'{text}" if text.startswith(FORMULA_START) else text


def write_csv(rows: list[dict[str, str]], path: Path) -> None:
    """Write grades.csv atomically, one row per submission, sorted by submission."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in sorted(rows, key=lambda row: row["submission"]):
        writer.writerow({key: spreadsheet_safe(row.get(key, "")) for key in COLUMNS})
    write_atomic(path, buffer.getvalue())


def batch(directory: str | os.PathLike[str], source: str | os.PathLike[str], out: str | os.PathLike[str],
          workers: int | None = None, limits: Limits = Limits(),  # noqa: B008 - Limits is frozen
          progress: bool = True) -> list[dict[str, str]]:
    """Grade every notebook under ``directory``; writes OUT/grades.csv, reports/ and feedback/; returns the rows."""
    directory, out = Path(directory), Path(out)
    for path, what in ((directory, "submissions folder"), (Path(source), "source")):
        if not path.exists():
            raise MissingPath(f"{what} {path} does not exist")
    rows: list[dict[str, str]] = []
    tasks: list[tuple[Path, Path, Path, Path, Limits, bytes, bytes]] = []
    sources: dict[Path, bytes] = {}
    for path in find_submissions(directory, out):  # every input in memory before any student code runs
        try:
            data = _read(path)
            matched = match_source(path, Path(source), functools.partial(parse_notebook, data, path))
            if matched not in sources:
                sources[matched] = _read(matched)
            tasks.append((path, matched, directory, out, limits, data, sources[matched]))
        except GraderError as error:
            rows.append(_error_row(path, directory, str(error)))
    done: Iterable[tuple[int, dict[str, str] | BaseException]] = run_tasks(grade_one, tasks, workers, limits)
    if progress:
        from tqdm import tqdm
        done = tqdm(done, total=len(tasks), unit="nb", desc="grading", dynamic_ncols=True)
    for index, result in done:
        if isinstance(result, BaseException):  # the worker process itself failed
            path = tasks[index][0]
            rows.append(_error_row(path, directory, f"worker failed: {type(result).__name__}: {result}"))
        else:
            rows.append(result)
    write_csv(rows, out / "grades.csv")
    return sorted(rows, key=lambda row: row["submission"])

