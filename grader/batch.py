"""Grade a folder of submissions in parallel: one process per worker, one fresh kernel per submission.

A bad submission becomes a row with status "error" and the batch goes on. Re-running
skips submissions whose report is already there for the same submission, source and
limits (a content hash), so an interrupted batch resumes where it stopped.
"""

import csv
import functools
import hashlib
import io
import json
import logging
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from nbformat import NotebookNode

from . import __version__
from .api import WrongLesson, grade_notebooks
from .course import match_source
from .errors import GraderError, MissingPath
from .execute import Limits
from .generate import student_version
from .kernel import start_worker_supply, worker_supply
from .notebooks import read_notebook, write_atomic
from .report import feedback_html

logger = logging.getLogger(__name__)

COLUMNS = ("submission", "source", "score", "max_score", "status", "error", "tampered", "suspicious", "cached")
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


def _key(submission: Path, source: Path, limits: Limits) -> str:
    digest = hashlib.sha256()
    for part in (submission.read_bytes(), source.read_bytes(), repr(limits).encode(), __version__.encode()):
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def _slug(submission: Path, root: Path) -> str:
    return "__".join(submission.relative_to(root).with_suffix("").parts)


@functools.lru_cache(maxsize=16)
def _source_notebooks(path: Path, mtime_ns: int) -> tuple[NotebookNode, NotebookNode]:
    """A source notebook and its student version, read and generated once per worker (grading only reads them)."""
    source = read_notebook(path)
    return source, student_version(source, str(path))


def grade_one(submission: Path, source_arg: Path, root: Path, out: Path, limits: Limits) -> dict[str, str]:
    """Grade one submission and write its JSON report and HTML feedback; returns its CSV row."""
    submission, out = Path(submission), Path(out)
    row = {**dict.fromkeys(COLUMNS, ""), "submission": str(submission.relative_to(root)), "status": "error",
           "cached": "no"}
    report_path = out / "reports" / f"{_slug(submission, root)}.json"
    try:
        source = match_source(submission, source_arg)
        row["source"] = str(source)
        key = _key(submission, source, limits)
        if report_path.exists():
            saved = json.loads(report_path.read_text(encoding="utf-8"))
            if saved.get("key") == key:
                return {**row, **saved["row"], "cached": "yes"}
        source_nb, student = _source_notebooks(source, source.stat().st_mtime_ns)
        report, feedback_nb = grade_notebooks(source_nb, read_notebook(submission), limits=limits, student=student,
                                              names=(str(source), row["submission"]), supply=worker_supply())
        row.update(score=f"{report.score:g}", max_score=f"{report.max_score:g}", status="graded",
                   tampered=" ".join(f"{t['grade_id']}:{t['problem']}" for t in report.tampered),
                   suspicious=" ".join(report.suspicious))
        write_atomic(out / "feedback" / f"{_slug(submission, root)}.html", feedback_html(report, feedback_nb))
        write_atomic(report_path, json.dumps({"key": key, "row": row, "report": report.to_dict()},
                                             indent=2, ensure_ascii=False, sort_keys=True) + "\n")
    except WrongLesson as error:
        row.update(status="wrong-lesson", error=" ".join(str(error).split()))
    except (GraderError, OSError) as error:
        row["error"] = " ".join(str(error).split())
    except Exception as error:  # noqa: BLE001 - one submission never stops the batch
        logger.debug("grading %s failed", submission, exc_info=True)
        row["error"] = f"grader error: {type(error).__name__}: {' '.join(str(error).split())}"[:500]
    return row


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


def batch(directory, source, out, workers=None, limits=Limits(), progress=True):
    """Grade every notebook under ``directory``; writes OUT/grades.csv, reports/ and feedback/; returns the rows."""
    directory, out = Path(directory), Path(out)
    for path, what in ((directory, "submissions folder"), (Path(source), "source")):
        if not path.exists():
            raise MissingPath(f"{what} {path} does not exist")
    submissions = find_submissions(directory, out)
    workers = max(1, workers or os.cpu_count() or 1)
    rows = []
    with ProcessPoolExecutor(workers, initializer=start_worker_supply, initargs=(limits.memory_bytes,)) as pool:
        futures = {pool.submit(grade_one, path, source, directory, out, limits): path for path in submissions}
        done = as_completed(futures)
        if progress:
            from tqdm import tqdm
            done = tqdm(done, total=len(futures), unit="nb", desc="grading", dynamic_ncols=True)
        for future in done:
            try:
                rows.append(future.result())
            except Exception as error:  # the worker process itself failed
                path = futures[future]
                rows.append({**dict.fromkeys(COLUMNS, ""), "submission": str(path.relative_to(directory)),
                             "status": "error", "error": f"worker failed: {type(error).__name__}: {error}",
                             "cached": "no"})
    write_csv(rows, out / "grades.csv")
    return sorted(rows, key=lambda row: row["submission"])

