"""The instructor's view of a class: ``python -m grader report GRADES_DIR`` reads a batch's reports; nothing runs.

It writes ``class.html`` (the score distribution as a plot; each exercise and each test with its
pass rate; the written-down mistakes named, counted per exercise; the suspicious and tampered
submissions; the time per submission; pairs of submissions whose answers are suspiciously alike)
and the grades in two gradebook import formats, ``canvas.csv`` and ``moodle.csv``.

Similar answers and groups of them: ``grader.classroom.similarity``. Answers left as the stub are not in
the reports (``Report.answers``), so two blank submissions are not a pair.
"""

import csv
import functools
import io
import json
import statistics
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..authoring.metadata import is_solution
from ..authoring.notebooks import read_notebook, write_atomic
from ..errors import GraderError
from ..grading.mistakes import wrong_answers
from ..pages import class_html, markdown_html, score_plot
from .gradebook import Gradebook, spreadsheet_safe
from .similarity import DEFAULT_THRESHOLD, Group, groups, prints_of, similar_pairs

CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")


def student_of(submission: str) -> str:
    """The student a submission belongs to: its first folder (``alice/03.ipynb``), else its file name's stem."""
    parts = Path(submission).parts
    return parts[0] if len(parts) > 1 else Path(submission).stem


@dataclass
class ClassView:
    """What a batch's reports say about the class, ready to show."""

    saved: list[dict[str, Any]]
    threshold: float = DEFAULT_THRESHOLD

    @property
    def graded(self) -> list[dict[str, Any]]:
        return [s for s in self.saved if s["row"].get("status") == "graded" and "report" in s]

    def percentages(self) -> list[float]:
        return [100 * s["report"]["score"] / s["report"]["max_score"] for s in self.graded if s["report"]["max_score"]]

    def tests(self) -> list[dict[str, Any]]:
        """Each test cell: its exercise, how many submissions passed it, its mean points."""
        seen: dict[str, dict[str, Any]] = {}
        for saved in self.graded:
            for result in saved["report"]["exercises"]:
                entry = seen.setdefault(result["grade_id"], {"grade_id": result["grade_id"], "points": [],
                                                             "exercise": result.get("exercise", ""), "passed": 0})
                entry["points"].append(result["points"])
                entry["max_points"] = result["max_points"]
                entry["passed"] += result["status"] == "passed"
                entry["in_kernel"] = entry.get("in_kernel", False) or bool(result.get("in_kernel"))
        return [{**e, "count": len(e["points"]), "mean": statistics.fmean(e["points"])} for e in seen.values()]

    def exercises(self) -> list[dict[str, Any]]:
        """Each exercise: submissions that passed all its tests, and the mistakes named in it, most frequent first."""
        rows: dict[str, dict[str, Any]] = {}
        for saved in self.graded:
            report = saved["report"]
            results: dict[str, list[bool]] = {}
            for result in report["exercises"]:
                exercise = result.get("exercise") or result["grade_id"]
                results.setdefault(exercise, []).append(result["status"] == "passed")
            for exercise, passed in results.items():
                row = rows.setdefault(exercise, {"exercise": exercise, "count": 0, "passed": 0, "mistakes": Counter(),
                                                 "texts": {}})
                row["count"] += 1
                row["passed"] += all(passed)
            for mistake in report.get("mistakes", []):
                row = rows[mistake["exercise"]]
                row["mistakes"][mistake["id"]] += 1
                row["texts"][mistake["id"]] = markdown_html(mistake["text"])  # whole, as the lesson wrote it
        return [{**row, "mistakes": [(gid, n, row["texts"][gid]) for gid, n in row["mistakes"].most_common()]}
                for row in rows.values()]

    def students(self) -> list[dict[str, str]]:
        """One line per submission, by student: the autograded score, the marks by hand, the total (or why none)."""
        lines = []
        for saved in self.saved:
            row = saved["row"]
            graded = saved in self.graded
            total, most = (row.get("total_score", ""), row.get("total_max", "")) if graded else ("", "")
            shown = f"{total}/{most}" if total else ""
            percent = f"{100 * float(total) / float(most):.0f}" if total and float(most or 0) else ""
            lines.append({"student": student_of(row.get("submission", "")), "submission": row.get("submission", ""),
                          "score": f"{row.get('score')}/{row.get('max_score')}" if graded else "",
                          "manual": (f"{row.get('manual_score')}/{row.get('manual_max')}"
                                     if graded and row.get("manual_max") not in ("", "0") else ""),
                          "pending": row.get("manual_pending", ""), "total": shown, "percent": percent,
                          "status": row.get("status", ""), "error": row.get("error", "")})
        return sorted(lines, key=lambda line: (line["student"], line["submission"]))

    def flagged(self) -> list[dict[str, str]]:
        """The submissions the instructor should read: tampered cells restored, or tampering found by the scan."""
        return [{"submission": s["row"]["submission"], "tampered": s["row"].get("tampered", ""),
                 "suspicious": s["row"].get("suspicious", "")}
                for s in self.graded if s["row"].get("tampered") or s["row"].get("suspicious")]

    def pairs(self) -> list[tuple[str, str, float]]:
        """Suspiciously alike answers, per source (answers left as the stub are not in the reports)."""
        by_source: dict[str, dict[str, list[str]]] = {}
        for saved in self.graded:
            cells = [text for _, text in sorted(saved["report"].get("answers", {}).items())]
            by_source.setdefault(saved["row"].get("source", ""), {})[saved["row"]["submission"]] = cells
        return sorted((pair for source, answers in by_source.items()
                       for pair in similar_pairs(answers, self.threshold, expected_prints(source))),
                      key=lambda pair: (-pair[2], pair[0], pair[1]))

    def groups(self) -> list[Group]:
        """Three or more submissions joined by alike pairs: a copy ring, shown as one group."""
        return groups(self.pairs())


@functools.lru_cache(maxsize=16)
def expected_prints(source: str) -> frozenset[int]:
    """The fingerprints of what the source itself holds: its solution's answers, their stubs and its written-down
    wrong answers, which students write alike without copying (none when the source cannot be read)."""
    from ..authoring.generate import student_version

    try:
        nb = read_notebook(source)
    except (GraderError, OSError):
        return frozenset()
    cells = [cell.source for cell in nb.cells if is_solution(cell)]
    cells += [cell.source for cell in student_version(nb).cells if is_solution(cell)]
    cells += [answer.code for answer in wrong_answers(nb)]
    return frozenset(prints_of(cells))


def _assignment(saved: dict[str, Any], only: str = "assignment") -> str:
    """The assignment a submission belongs to: its source notebook's name; ``only`` when its row names none (it could
    not be read, so its lesson is unknown: the batch's one assignment, if it has one)."""
    source = saved["row"].get("source", "")
    return Path(source).stem if source else only


def _why_not(saved: dict[str, Any]) -> str:
    """Why a submission has no grade, in one line, or "" when it was graded."""
    row = saved["row"]
    return "" if row.get("status") == "graded" else f"not graded ({row.get('status', 'error')}): {row.get('error', '')}"


def _grade(saved: dict[str, Any]) -> str:
    """The grade a gradebook gets: the total once nothing is graded by hand any more, else the autograded score."""
    row = saved["row"]
    return row.get("total_score") or row.get("score", "") if row.get("status") == "graded" else ""


def gradebooks(saved: list[dict[str, Any]]) -> tuple[str, str]:
    """(canvas.csv, moodle.csv): one row per student, one column per assignment (the source notebook's name); a
    submission that could not be graded has an empty grade, and Moodle's file says why in the assignment's
    feedback column (Canvas's import has none)."""
    named = {_assignment(s, "") for s in saved} - {""}
    only = next(iter(named)) if len(named) == 1 else "assignment"
    assignments = sorted({_assignment(s, only) for s in saved})
    grades: dict[str, dict[str, str]] = {}
    feedback: dict[str, dict[str, str]] = {}
    maxima: dict[str, str] = {}
    for entry in saved:
        student, assignment = student_of(entry["row"]["submission"]), _assignment(entry, only)
        grades.setdefault(student, {})[assignment] = _grade(entry)
        feedback.setdefault(student, {})[assignment] = _why_not(entry)
        if entry["row"].get("total_max") or entry["row"].get("max_score"):
            maxima[assignment] = entry["row"].get("total_max") or entry["row"]["max_score"]
    canvas, moodle = io.StringIO(), io.StringIO()
    writer = csv.writer(canvas, lineterminator="\n")
    writer.writerow((*CANVAS_COLUMNS, *assignments))
    writer.writerow(("Points Possible", "", "", "", "", *(maxima.get(a, "") for a in assignments)))
    for student, marks in sorted(grades.items()):
        writer.writerow((spreadsheet_safe(student), "", "", spreadsheet_safe(student), "",
                         *(marks.get(a, "") for a in assignments)))
    writer = csv.writer(moodle, lineterminator="\n")
    writer.writerow(("username", *assignments, *(f"{a} feedback" for a in assignments)))
    for student, marks in sorted(grades.items()):
        writer.writerow((spreadsheet_safe(student), *(marks.get(a, "") for a in assignments),
                         *(spreadsheet_safe(feedback[student].get(a, "")) for a in assignments)))
    return canvas.getvalue(), moodle.getvalue()


def load(out: Path) -> list[dict[str, Any]]:
    """Every saved report of a batch (row and report), and the row alone of each submission grades.csv has without a
    report (it could not be graded), sorted by submission; a report that cannot be read is skipped."""
    book = Gradebook(out)
    book.require_reports()
    saved = []
    for path in book.report_files():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("row"), dict):
            saved.append(data)
    reported = {s["row"].get("submission") for s in saved}
    try:  # a submission that could not be graded has a row in grades.csv and no report: it is still a student's
        saved += [{"row": row} for row in book.read_rows() if row["submission"] not in reported]
    except (OSError, ValueError, csv.Error):
        pass
    return sorted(saved, key=lambda s: s["row"].get("submission", ""))


def write_class_report(out: str | Path, threshold: float = DEFAULT_THRESHOLD) -> list[Path]:
    """Write class.html, canvas.csv and moodle.csv into ``out`` from its reports; returns their paths."""
    out = Path(out)
    saved = load(out)
    view = ClassView(saved, threshold)
    times = Gradebook(out).read_times()
    percentages = view.percentages()
    page = class_html(
        submissions=len(saved), graded=len(view.graded), errors=[s["row"] for s in saved if s not in view.graded],
        skipped=Gradebook(out).read_skipped(),
        plot=score_plot(percentages) if percentages else "",
        median=f"{statistics.median(percentages):.0f}" if percentages else "-",
        students=view.students(), exercises=view.exercises(), tests=view.tests(), flagged=view.flagged(),
        pairs=[(a, b, f"{100 * score:.0f}") for a, b, score in view.pairs()], groups=view.groups(),
        threshold=f"{100 * threshold:.0f}",
        times=sorted(times.items(), key=lambda item: -item[1]),
        median_time=f"{statistics.median(times.values()):.2f}" if times else "-")
    canvas, moodle = gradebooks(saved)
    written = [out / "class.html", out / "canvas.csv", out / "moodle.csv"]
    for path, text in zip(written, (page, canvas, moodle), strict=True):
        write_atomic(path, text)
    return written
