"""The instructor's view of a class: ``python -m grader report GRADES_DIR`` reads a batch's reports; nothing runs.

It writes ``class.html`` (the score distribution as a plot; each exercise and each test with its
pass rate; the written-down mistakes named, counted per exercise; the suspicious and tampered
submissions; the time per submission; pairs of submissions whose answers are suspiciously alike)
and the grades in two gradebook import formats, ``canvas.csv`` and ``moodle.csv``.

Similar answers are found by winnowing (Schleimer, Wilkerson and Aiken, "Winnowing: local
algorithms for document fingerprinting", SIGMOD 2003; the method of MOSS): each submission's
answer cells are tokenized with Python's ``tokenize``, names, strings and numbers each become one
placeholder (renaming a variable changes nothing), every ``K_GRAM`` tokens are hashed, and the
smallest hash of each window of ``WINDOW`` hashes is kept as a fingerprint. Two submissions'
similarity is the Jaccard index of their fingerprints, leaving out (as MOSS does) fingerprints found in
more than a tenth of the submissions (at least 2): a short exercise's expected answer, written alike by
many, is not a copy. Pairs at or above the threshold are listed.
Answers left as the stub are not in the reports (``Report.answers``), so two blank submissions are not a pair.
"""

import csv
import hashlib
import io
import json
import statistics
import tokenize
from collections import Counter
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

from ..authoring.notebooks import write_atomic
from ..grading.report import first_line
from ..pages import class_html, score_plot
from .gradebook import Gradebook, spreadsheet_safe

K_GRAM, WINDOW = 5, 4
DEFAULT_THRESHOLD = 0.8
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
PLACEHOLDERS = {tokenize.NAME: "V", tokenize.STRING: "S", tokenize.NUMBER: "N"}
SKIPPED = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING,
           tokenize.ENDMARKER}
KEYWORDS = frozenset(__import__("keyword").kwlist)


def tokens(code: str) -> list[str]:
    """The code's tokens with names, strings and numbers as placeholders (keywords kept); [] if it does not lex."""
    found = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type in SKIPPED:
                continue
            if token.type == tokenize.NAME and token.string in KEYWORDS:
                found.append(token.string)
            else:
                found.append(PLACEHOLDERS.get(token.type, token.string))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []
    return found


def fingerprints(code: str) -> set[int]:
    """The winnowed fingerprints of ``code``: the smallest k-gram hash of each window (module docstring)."""
    found = tokens(code)
    hashes = [int.from_bytes(hashlib.blake2b(" ".join(found[i:i + K_GRAM]).encode(), digest_size=8).digest(), "big")
              for i in range(len(found) - K_GRAM + 1)]
    if len(hashes) <= WINDOW:
        return set(hashes)
    return {min(hashes[i:i + WINDOW]) for i in range(len(hashes) - WINDOW + 1)}


def similar_pairs(answers: dict[str, str], threshold: float = DEFAULT_THRESHOLD) -> list[tuple[str, str, float]]:
    """Pairs of submissions whose answers' fingerprints overlap at least ``threshold`` (Jaccard), most alike first."""
    prints = {name: fingerprints(code) for name, code in answers.items()}
    seen = Counter(h for found in prints.values() for h in found)
    common = max(2, len(prints) // 10)  # in more submissions than that: the expected answer, not a copy
    prints = {name: {h for h in found if seen[h] <= common} for name, found in prints.items()}
    pairs = []
    for (a, mine), (b, theirs) in combinations(sorted(prints.items()), 2):
        if mine and theirs and (score := len(mine & theirs) / len(mine | theirs)) >= threshold:
            pairs.append((a, b, score))
    return sorted(pairs, key=lambda pair: (-pair[2], pair[0], pair[1]))


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
                row["texts"][mistake["id"]] = first_line(mistake["text"])
        return [{**row, "mistakes": [(gid, n, row["texts"][gid]) for gid, n in row["mistakes"].most_common()]}
                for row in rows.values()]

    def flagged(self) -> list[dict[str, str]]:
        """The submissions the instructor should read: tampered cells restored, or tampering found by the scan."""
        return [{"submission": s["row"]["submission"], "tampered": s["row"].get("tampered", ""),
                 "suspicious": s["row"].get("suspicious", "")}
                for s in self.graded if s["row"].get("tampered") or s["row"].get("suspicious")]

    def pairs(self) -> list[tuple[str, str, float]]:
        """Suspiciously alike answers, per source (answers left as the stub are not in the reports)."""
        by_source: dict[str, dict[str, str]] = {}
        for saved in self.graded:
            code = "\n".join(text for _, text in sorted(saved["report"].get("answers", {}).items()))
            by_source.setdefault(saved["row"].get("source", ""), {})[saved["row"]["submission"]] = code
        return sorted((pair for answers in by_source.values() for pair in similar_pairs(answers, self.threshold)),
                      key=lambda pair: (-pair[2], pair[0], pair[1]))


def _assignment(saved: dict[str, Any]) -> str:
    return Path(saved["row"].get("source", "") or "assignment").stem


def _grade(saved: dict[str, Any]) -> str:
    """The grade a gradebook gets: the total once nothing is graded by hand any more, else the autograded score."""
    row = saved["row"]
    return row.get("total_score") or row.get("score", "") if row.get("status") == "graded" else ""


def gradebooks(saved: list[dict[str, Any]]) -> tuple[str, str]:
    """(canvas.csv, moodle.csv): one row per student, one column per assignment (the source notebook's name)."""
    assignments = sorted({_assignment(s) for s in saved})
    grades: dict[str, dict[str, str]] = {}
    maxima: dict[str, str] = {}
    for entry in saved:
        grades.setdefault(student_of(entry["row"]["submission"]), {})[_assignment(entry)] = _grade(entry)
        if entry["row"].get("total_max") or entry["row"].get("max_score"):
            maxima[_assignment(entry)] = entry["row"].get("total_max") or entry["row"]["max_score"]
    canvas, moodle = io.StringIO(), io.StringIO()
    writer = csv.writer(canvas, lineterminator="\n")
    writer.writerow((*CANVAS_COLUMNS, *assignments))
    writer.writerow(("Points Possible", "", "", "", "", *(maxima.get(a, "") for a in assignments)))
    for student, marks in sorted(grades.items()):
        writer.writerow((spreadsheet_safe(student), "", "", spreadsheet_safe(student), "",
                         *(marks.get(a, "") for a in assignments)))
    writer = csv.writer(moodle, lineterminator="\n")
    writer.writerow(("username", *assignments))
    for student, marks in sorted(grades.items()):
        writer.writerow((spreadsheet_safe(student), *(marks.get(a, "") for a in assignments)))
    return canvas.getvalue(), moodle.getvalue()


def load(out: Path) -> list[dict[str, Any]]:
    """Every saved report of a batch (row and report), sorted by submission; one that cannot be read is skipped."""
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
        plot=score_plot(percentages) if percentages else "",
        median=f"{statistics.median(percentages):.0f}" if percentages else "-",
        exercises=view.exercises(), tests=view.tests(), flagged=view.flagged(),
        pairs=[(a, b, f"{100 * score:.0f}") for a, b, score in view.pairs()], threshold=f"{100 * threshold:.0f}",
        times=sorted(times.items(), key=lambda item: -item[1]),
        median_time=f"{statistics.median(times.values()):.2f}" if times else "-")
    canvas, moodle = gradebooks(saved)
    written = [out / "class.html", out / "canvas.csv", out / "moodle.csv"]
    for path, text in zip(written, (page, canvas, moodle), strict=True):
        write_atomic(path, text)
    return written
