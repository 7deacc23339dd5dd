"""A grade report: one row per test cell, the score, what was tampered, and how to show it."""

import functools
import json
import re
import unicodedata
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import mistune
from markupsafe import Markup
from nbformat import NotebookNode

from ..authoring.metadata import grade_id
from ..messages import Message

STATUS_MARK = {"passed": "✔", "failed": "✘", "timeout": "⏱", "died": "☠", "not-run": "…", "pending": "✎",
               "graded": "✎", "unanswered": "∅"}
STATUS_ES = {"passed": "superado", "failed": "fallido", "timeout": "tiempo agotado", "died": "el kernel murió",
             "not-run": "no ejecutado", "pending": "pendiente", "graded": "calificado", "unanswered": "sin responder"}
"""Each status as the student reads it on the feedback page (the table and the JSON keep the English word)."""
BY_HAND = "se califica a mano"
UNANSWERED_ES = "sin responder: la celda sigue como se entregó, vale 0 sin nota a mano"


def printable(text: str) -> str:
    """``text`` without any control or format character (escape sequences, carriage returns, bidi marks), which
    could rewrite what a terminal shows; each becomes a visible ``?``."""
    return "".join("?" if unicodedata.category(ch)[0] == "C" else ch for ch in str(text))


@dataclass
class TestResult:
    """One test cell's outcome: points earned out of max_points, and one line of feedback."""

    grade_id: str
    points: float
    max_points: float
    status: str  # passed | failed | timeout | died | not-run
    feedback: str = ""  # one line, in English when the grader wrote it (``message``)
    message: Message | None = None  # the grader's own words, rendered in Spanish on the page
    exercise: str = ""  # the exercise (solution cell grade_id) this test belongs to, if any


@dataclass
class ManualResult:
    """A manually graded cell: pending until the instructor's mark is imported (``grader manual import``).

    An answer left as the student version's stub scores 0 without a mark, as in nbgrader; an
    imported mark still replaces that 0.
    """

    grade_id: str
    max_points: float
    points: float | None = None  # None while pending
    answer: str = ""  # what the student wrote, for the instructor to read
    unanswered: bool = False  # the stub, untouched (or nothing at all): 0 points until a mark says otherwise

    @property
    def status(self) -> str:
        if self.points is None:
            return "pending"
        return "unanswered" if self.unanswered else "graded"

    def mark(self, points: float) -> None:
        """The instructor's mark for this cell."""
        self.points, self.unanswered = points, False

    def shown_points(self) -> str:
        return f"{'-' if self.points is None else format(self.points, 'g')}/{self.max_points:g}"


@dataclass
class Report:
    """The grade of one submission against one source notebook."""

    submission: str
    source: str
    exercises: list[TestResult] = field(default_factory=list)
    tampered: list[dict[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    solution_errors: list[dict[str, Any]] = field(default_factory=list)
    other_errors: list[dict[str, Any]] = field(default_factory=list)
    suspicious: list[str] = field(default_factory=list)  # tampering the static scan found; never scored
    manual: list[ManualResult] = field(default_factory=list)  # graded by hand; apart from score/max_score
    mistakes: list[dict[str, str]] = field(default_factory=list)  # wrong answers written down and matched (mistakes)
    answers: dict[str, str] = field(default_factory=dict)  # each autograded exercise's cell as submitted

    @property
    def score(self) -> float:
        return sum(result.points for result in self.exercises)

    @property
    def max_score(self) -> float:
        return sum(result.max_points for result in self.exercises)

    @property
    def manual_pending(self) -> list[ManualResult]:
        return [m for m in self.manual if m.points is None]

    @property
    def manual_max(self) -> float:
        return sum(m.max_points for m in self.manual)

    def to_dict(self) -> dict[str, Any]:
        """Everything in the report as plain data (the --json format); manual cells apart from the auto score."""
        data = asdict(self)
        data["manual"] = [{**asdict(m), "status": m.status} for m in self.manual]
        data.update(score=self.score, max_score=self.max_score, manual_max=self.manual_max,
                    manual_pending=[m.grade_id for m in self.manual_pending])
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Report":
        """The report ``to_dict`` gave (a saved report); the derived keys (score, statuses) are computed again."""
        return cls(submission=data["submission"], source=data["source"],
                   exercises=[TestResult(r["grade_id"], r["points"], r["max_points"], r["status"], r["feedback"],
                                         Message.from_dict(r["message"]) if r.get("message") else None,
                                         r.get("exercise", "")) for r in data.get("exercises", [])],
                   tampered=list(data.get("tampered", [])), notes=list(data.get("notes", [])),
                   solution_errors=list(data.get("solution_errors", [])),
                   other_errors=list(data.get("other_errors", [])), suspicious=list(data.get("suspicious", [])),
                   manual=[ManualResult(m["grade_id"], m["max_points"], m.get("points"), m.get("answer", ""),
                                        bool(m.get("unanswered", False))) for m in data.get("manual", [])],
                   mistakes=list(data.get("mistakes", [])), answers=dict(data.get("answers", {})))

    def to_json(self) -> str:
        """The report as stable, readable JSON text."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False, sort_keys=True) + "\n"

    def table(self) -> str:
        """The plain-text table a student reads, in Spanish: test, points, status, comment; then the score line.
        No control character reaches the terminal."""
        rows = [(printable(r.grade_id), f"{r.points:g}/{r.max_points:g}", STATUS_ES.get(r.status, r.status),
                 printable(comment(r, self))) for r in self.exercises]
        rows += [(m.grade_id, m.shown_points(), STATUS_ES[m.status], UNANSWERED_ES if m.unanswered else BY_HAND)
                 for m in self.manual]
        header = ("test", "puntos", "estado", "comentario")
        widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(3)]
        lines = ["  ".join(str(cell).ljust(width) for cell, width in zip(row[:3], widths, strict=True))
                 + "  " + row[3] for row in [header, *rows]]
        lines.append(f"puntuación: {self.score:g}/{self.max_score:g}")
        if self.manual_pending:
            lines.append(f"a mano: {sum(m.max_points for m in self.manual_pending):g} punto(s) pendientes de "
                         f"calificar: {', '.join(f'{m.grade_id}:{m.max_points:g}' for m in self.manual_pending)}")
        lines += [printable(f"error reconocido en {m['exercise']}: {first_line(m['text'])} ({m['id']})")
                  for m in self.mistakes]
        lines += [printable(f"restaurada: {t['grade_id']} ({t['problem']})") for t in self.tampered]
        lines += [printable(f"nota: {note}") for note in self.notes]
        if self.suspicious:
            lines.append(f"sospechoso: {', '.join(self.suspicious)} (para que lo revise el profesor)")
        return "\n".join(line.rstrip() for line in lines)

    def _repr_markdown_(self) -> str:
        rows = "\n".join(f"| {r.grade_id} | {r.points:g}/{r.max_points:g} | {STATUS_MARK.get(r.status, '')} "
                         f"{r.status} | {r.feedback.replace('|', '/')} |" for r in self.exercises)
        rows += "".join(f"\n| {m.grade_id} | {m.shown_points()} | {m.status} | graded by hand |" for m in self.manual)
        return (f"**{self.score:g}/{self.max_score:g}**\n\n| exercise | points | status | feedback |\n"
                f"|---|---|---|---|\n{rows}")

    def __repr__(self) -> str:
        return f"Report({self.submission!r}: {self.score:g}/{self.max_score:g}, {len(self.exercises)} tests)"


PAGE_STYLE = Markup("""
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: .3rem .6rem; text-align: left; }
pre { background: #f6f6f6; padding: .5rem; overflow-x: auto; }
pre.out { background: #fff; border-left: 3px solid #ddd; }
pre.err { color: #a00; } .cell { margin: 1rem 0; }
tr.fallo { background: #fde8e8; font-weight: bold; } div.fallo { border-left: 4px solid #c00; padding-left: .5rem; }
p.con-fallos { color: #a00; } :target { outline: 2px solid #c00; }
div.error-habitual { background: #fff8e1; border-left: 4px solid #f0a000; padding: .2rem .8rem; margin-top: .5rem; }
""")
PAGE_CHARS = 1_000_000  # of cell sources and outputs on one page; the rest is omitted, and counted
BASE64 = re.compile(r"[A-Za-z0-9+/=\s]+")


@functools.lru_cache(maxsize=2)
def _template(name: str = "feedback.html.j2") -> jinja2.Template:
    env = jinja2.Environment(loader=jinja2.PackageLoader("grader", "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined)
    return env.get_template(name)


@functools.lru_cache(maxsize=1)
def _markdown() -> Callable[[str], str]:
    """Markdown to HTML, raw HTML escaped; each text rendered once per process (a lesson's cells are the same on
    every page of a batch)."""
    render = mistune.create_markdown(escape=True, plugins=["table", "strikethrough"])  # raw HTML is escaped
    return functools.lru_cache(maxsize=4096)(lambda text: str(render(text)))


class _Budget:
    """Characters left for the page; what does not fit is counted as omitted."""

    def __init__(self, chars: int) -> None:
        self.left, self.omitted = chars, 0

    def take(self, text: str) -> str:
        kept = text[:max(self.left, 0)]
        self.left -= len(kept)
        self.omitted += len(text) - len(kept)
        return kept


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _shown(image: str = "", markdown: Markup | None = None, css: str = "out", text: str = "") -> dict[str, Any]:
    return {"image": image, "markdown": markdown, "css": css, "text": text}


def _output(output: dict[str, Any], budget: _Budget) -> dict[str, Any] | None:
    kind, data = output.get("output_type"), output.get("data", {})
    if kind == "stream":
        return _shown(text=budget.take(_text(output.get("text", ""))))
    if kind == "error":
        error = f"{output.get('ename', '')}: {output.get('evalue', '')}"
        return _shown(css="out err", text=budget.take(error))
    png = _text(data.get("image/png", "-"))
    if BASE64.fullmatch(png) and len(png) <= budget.left:
        return _shown(image=budget.take(png))
    if "text/markdown" in data:
        return _shown(markdown=Markup(_markdown()(budget.take(_text(data["text/markdown"])))))
    if "text/plain" in data:
        return _shown(text=budget.take(_text(data["text/plain"])))
    return None  # HTML, JavaScript and the rest are never rendered


def _cell(cell: NotebookNode, budget: _Budget, anchor: str = "", failed: bool = False) -> dict[str, Any] | None:
    if cell.cell_type == "markdown":
        return {"markdown": Markup(_markdown()(budget.take(cell.source))), "anchor": anchor, "failed": failed}
    if cell.cell_type != "code":
        return None
    outputs = [view for output in cell.get("outputs", []) if (view := _output(output, budget))]
    return {"markdown": None, "source": budget.take(cell.source), "outputs": outputs, "anchor": anchor,
            "failed": failed}


def anchor(gid: str) -> str:
    """The page's id for a test cell, linked from its row."""
    return f"test-{gid}"


def spanish_feedback(result: TestResult) -> str:
    """A test's feedback as the page shows it: the grader's own words in Spanish, what the student's code said
    as it was."""
    return result.message.spanish() if result.message is not None else result.feedback


def first_line(markdown: str) -> str:
    """The first line of a markdown text without its emphasis marks: a mistake's name in one line."""
    return next((line for line in markdown.splitlines() if line.strip()), "").replace("**", "").strip()


def comment(result: TestResult, report: "Report") -> str:
    """A test's comment as the student reads it: when the exercise's own cell failed (a SyntaxError...), that
    error, not what it caused in the test; else its feedback in Spanish."""
    if result.status != "passed" and result.exercise:
        error = next((e["error"] for e in report.solution_errors if e.get("grade_id") == result.exercise), None)
        if error:
            return f"tu celda {result.exercise} falló antes de este test: {error}"
    return spanish_feedback(result)


def result_line(result: TestResult) -> str:
    """The line the page shows under a test cell: its status, points and feedback, in Spanish."""
    line = f"{STATUS_ES.get(result.status, result.status)} ({result.points:g}/{result.max_points:g})"
    return line + (f": {spanish_feedback(result)}" if result.feedback else "")


def feedback_html(report: Report, notebook: NotebookNode) -> str:
    """A standalone HTML page in Spanish: N of M tests passed, the table with failed rows highlighted and
    linked to their cells, then the graded notebook as the student may see it.

    Rendered from ``templates/feedback.html.j2`` with autoescape on. Nothing the student wrote is
    trusted as HTML: markdown is rendered with raw HTML escaped, and outputs are shown as text
    (or as a PNG), never as the HTML a cell produced. The page holds at most ``PAGE_CHARS``
    characters of cells and outputs.
    """
    budget = _Budget(PAGE_CHARS)
    tests = {r.grade_id: r for r in report.exercises}
    named: dict[str, list[dict[str, Any]]] = {}  # first failed test cell of an exercise -> its mistakes
    for mistake in report.mistakes:
        first = next((gid for gid in mistake.get("tests", []) if gid in tests and tests[gid].status != "passed"), "")
        named.setdefault(first, []).append(mistake)
    cells = []
    for cell in notebook.cells:
        result = tests.get(grade_id(cell) or "")
        failed = result is not None and result.status != "passed"
        if view := _cell(cell, budget, anchor(result.grade_id) if result else "", failed):
            view["mistakes"] = [Markup(_markdown()(budget.take(m["text"])))
                                for m in (named.get(result.grade_id, []) if failed and result else [])]
            cells.append(view)
    return _template().render(title=Path(report.submission).name, style=PAGE_STYLE, summary=summary_html(report),
                              cells=cells, omitted=budget.omitted)


SUMMARY_START, SUMMARY_END = '<section id="calificacion">', "</section>"


def summary_html(report: Report) -> Markup:
    """The page's first section: the score, N of M tests passed, and the table (failed rows linked to their cells)."""
    rows = [{"grade_id": r.grade_id, "points": f"{r.points:g}/{r.max_points:g}", "mark": STATUS_MARK.get(r.status, ""),
             "status": STATUS_ES.get(r.status, r.status), "feedback": comment(r, report),
             "anchor": anchor(r.grade_id), "failed": r.status != "passed"} for r in report.exercises]
    rows += [{"grade_id": m.grade_id, "points": m.shown_points(), "mark": STATUS_MARK.get(m.status, ""),
              "status": STATUS_ES.get(m.status, m.status), "feedback": UNANSWERED_ES if m.unanswered else BY_HAND,
              "anchor": "", "failed": m.unanswered}
             for m in report.manual]
    passed = sum(r.status == "passed" for r in report.exercises)
    return Markup(_template("summary.html.j2").render(
        title=Path(report.submission).name, rows=rows, score=f"{report.score:g}/{report.max_score:g}", passed=passed,
        total=len(report.exercises), failed=[row for row in rows if row["failed"]]))


def with_summary(page: str, report: Report) -> str:
    """A feedback page with its first section rendered again from ``report`` (marks imported); the cells as they
    were. Everything the student wrote is escaped on the page, so the first end of section is the summary's."""
    start = page.index(SUMMARY_START)
    end = page.index(SUMMARY_END, start) + len(SUMMARY_END)
    return page[:start] + str(summary_html(report)) + page[end:]
