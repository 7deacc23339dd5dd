"""A grade report as data: one row per test cell, the score, what was tampered; its JSON and its text table."""

import enum
import json
import unicodedata
from dataclasses import asdict, dataclass, field
from typing import Any

from ..messages import Message


class TestStatus(enum.StrEnum):
    """How a test cell was graded (a ``StrEnum``: JSON, CSV and printed text show the word itself)."""

    __test__ = False  # not a pytest class

    PASSED = "passed"
    FAILED = "failed"
    TIMEOUT = "timeout"
    DIED = "died"
    NOT_RUN = "not-run"


class ManualStatus(enum.StrEnum):
    """Where a manually graded cell stands."""

    PENDING = "pending"
    GRADED = "graded"
    UNANSWERED = "unanswered"


STATUS_MARK = {"passed": "✔", "failed": "✘", "timeout": "⏱", "died": "☠", "not-run": "…", "pending": "✎",
               "graded": "✎", "unanswered": "∅"}
STATUS_ES = {"passed": "superado", "failed": "fallido", "timeout": "tiempo agotado", "died": "el kernel murió",
             "not-run": "no ejecutado", "pending": "pendiente", "graded": "calificado", "unanswered": "sin responder"}
"""Each status as the student reads it on the feedback page (the table and the JSON keep the English word)."""
BY_HAND = "se califica a mano"
BY_HAND_DONE = "calificado a mano por el profesor"
IN_KERNEL_MARK = "*"
IN_KERNEL_ES = ("* veredicto decidido en el kernel del estudiante (test escrito con assert, como en nbgrader): "
                "un estudiante decidido podría falsearlo")
"""Said on the table and the page under the tests graded the nbgrader way, whose status carries the mark."""
UNANSWERED_ES = "sin responder: la celda sigue como se entregó, vale 0 sin nota a mano"


def printable(text: str) -> str:
    """``text`` without any control or format character (escape sequences, carriage returns, bidi marks), which
    could rewrite what a terminal shows; each becomes a visible ``?``."""
    return "".join("?" if unicodedata.category(ch)[0] == "C" else ch for ch in str(text))


@dataclass
class TestResult:
    """One test cell's outcome: points earned out of max_points, and one line of feedback."""

    __test__ = False  # not a pytest class

    grade_id: str
    points: float
    max_points: float
    status: TestStatus
    feedback: str = ""  # one line, in English when the grader wrote it (``message``)
    message: Message | None = None  # the grader's own words, rendered in Spanish on the page
    exercise: str = ""  # the exercise (solution cell grade_id) this test belongs to, if any
    in_kernel: bool = False  # graded the nbgrader way: the student's kernel decided the verdict (it can be forged)

    def shown_status(self) -> str:
        """The status as the student reads it, in Spanish, marked when the student's kernel decided it."""
        return STATUS_ES.get(self.status, self.status) + (IN_KERNEL_MARK if self.in_kernel else "")


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
    def status(self) -> ManualStatus:
        if self.points is None:
            return ManualStatus.PENDING
        return ManualStatus.UNANSWERED if self.unanswered else ManualStatus.GRADED

    def mark(self, points: float) -> None:
        """The instructor's mark for this cell."""
        self.points, self.unanswered = points, False

    def shown_points(self) -> str:
        return f"{'-' if self.points is None else format(self.points, 'g')}/{self.max_points:g}"

    def comment(self) -> str:
        """What its row says, in Spanish: unanswered, graded by hand, or still to be graded by hand."""
        if self.unanswered:
            return UNANSWERED_ES
        return BY_HAND if self.points is None else BY_HAND_DONE


@dataclass
class Report:
    """The grade of one submission against one source notebook."""

    submission: str
    source: str
    exercises: list[TestResult] = field(default_factory=list)
    tampered: list[dict[str, str]] = field(default_factory=list)
    notes: list[Message] = field(default_factory=list)  # JSON: ``notes`` in English, ``note_messages`` to render
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
    def in_kernel(self) -> list[str]:
        """The tests whose verdict the student's kernel decided (graded the nbgrader way): a student can forge it."""
        return [r.grade_id for r in self.exercises if r.in_kernel]

    @property
    def manual_pending(self) -> list[ManualResult]:
        return [m for m in self.manual if m.points is None]

    @property
    def manual_max(self) -> float:
        return sum(m.max_points for m in self.manual)

    def headline(self) -> str:
        """The score as the student reads it first, in Spanish: the total once every mark by hand is in, else the
        autograded points and the points still to be marked by hand."""
        auto = f"{self.score:g}/{self.max_score:g}"
        if not self.manual:
            return f"puntuación: {auto}"
        if self.manual_pending:
            pending = sum(m.max_points for m in self.manual_pending)
            return f"puntuación: {auto} automática; faltan {pending:g} punto(s) por calificar a mano"
        by_hand = sum(m.points or 0.0 for m in self.manual)
        return (f"puntuación: {self.score + by_hand:g}/{self.max_score + self.manual_max:g} "
                f"(automática {auto}, a mano {by_hand:g}/{self.manual_max:g})")

    def to_dict(self) -> dict[str, Any]:
        """Everything in the report as plain data (the --json format); manual cells apart from the auto score."""
        data = asdict(self)
        data["manual"] = [{**asdict(m), "status": m.status} for m in self.manual]
        data["notes"], data["note_messages"] = [n.english() for n in self.notes], [n.to_dict() for n in self.notes]
        data.update(score=self.score, max_score=self.max_score, manual_max=self.manual_max,
                    manual_pending=[m.grade_id for m in self.manual_pending], in_kernel=self.in_kernel)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Report":
        """The report ``to_dict`` gave (a saved report); the derived keys (score, statuses) are computed again. The
        notes are read from ``note_messages``: a report saved before notes were messages reads with none."""
        return cls(submission=data["submission"], source=data["source"],
                   exercises=[TestResult(r["grade_id"], r["points"], r["max_points"], TestStatus(r["status"]),
                                         r["feedback"], Message.from_dict(r["message"]) if r.get("message") else None,
                                         r.get("exercise", ""), bool(r.get("in_kernel", False)))
                              for r in data.get("exercises", [])],
                   tampered=list(data.get("tampered", [])),
                   notes=[Message.from_dict(n) for n in data.get("note_messages", [])],
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
        rows = [(printable(r.grade_id), f"{r.points:g}/{r.max_points:g}", r.shown_status(),
                 printable(comment(r, self))) for r in self.exercises]
        rows += [(m.grade_id, m.shown_points(), STATUS_ES[m.status], m.comment()) for m in self.manual]
        header = ("test", "puntos", "estado", "comentario")
        widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(3)]
        lines = ["  ".join(str(cell).ljust(width) for cell, width in zip(row[:3], widths, strict=True))
                 + "  " + row[3] for row in [header, *rows]]
        lines.append(self.headline())
        if self.in_kernel:
            lines.append(printable(f"{IN_KERNEL_ES}: {', '.join(self.in_kernel)}"))
        if self.manual_pending:
            lines.append(f"a mano: {sum(m.max_points for m in self.manual_pending):g} punto(s) pendientes de "
                         f"calificar: {', '.join(f'{m.grade_id}:{m.max_points:g}' for m in self.manual_pending)}")
        lines += [printable(f"error reconocido en {m['exercise']}: {first_line(m['text'])} ({m['id']})")
                  for m in self.mistakes]
        lines += [printable(f"restaurada: {t['grade_id']} ({t['problem']})") for t in self.tampered]
        lines += [printable(f"nota: {note.spanish()}") for note in self.notes]
        if self.suspicious:
            lines.append(f"sospechoso: {', '.join(self.suspicious)} (para que lo revise el profesor)")
        return "\n".join(line.rstrip() for line in lines)

    def _repr_markdown_(self) -> str:
        rows = "\n".join(f"| {r.grade_id} | {r.points:g}/{r.max_points:g} | {STATUS_MARK.get(r.status, '')} "
                         f"{r.status}{' (decided in the kernel)' if r.in_kernel else ''} | "
                         f"{r.feedback.replace('|', '/')} |" for r in self.exercises)
        rows += "".join(f"\n| {m.grade_id} | {m.shown_points()} | {m.status} | graded by hand |" for m in self.manual)
        return (f"**{self.score:g}/{self.max_score:g}**\n\n| exercise | points | status | feedback |\n"
                f"|---|---|---|---|\n{rows}")

    def __repr__(self) -> str:
        return f"Report({self.submission!r}: {self.score:g}/{self.max_score:g}, {len(self.exercises)} tests)"


def spanish_feedback(result: TestResult) -> str:
    """A test's feedback as the page shows it: the grader's own words in Spanish, what the student's code said
    as it was."""
    return result.message.spanish() if result.message is not None else result.feedback


def first_line(markdown: str) -> str:
    """The first line of a markdown text without its emphasis marks: a mistake's name in one line."""
    return next((line for line in markdown.splitlines() if line.strip()), "").replace("**", "").strip()


def comment(result: TestResult, report: "Report") -> str:
    """A test's comment as the student reads it: its feedback in Spanish (``Say.AFTER_YOUR_CELL`` when the exercise's
    own cell failed: that error, not what it caused in the test). A report saved without that message is read as
    it was then: the cell's error in front."""
    if result.status != TestStatus.PASSED and result.exercise and result.message is None:
        error = next((e["error"] for e in report.solution_errors if e.get("grade_id") == result.exercise), None)
        if error:
            return f"tu celda {result.exercise} falló antes de este test: {error}"
    return spanish_feedback(result)


def result_line(result: TestResult) -> str:
    """The line the page shows under a test cell: its status, points and feedback, in Spanish."""
    line = f"{result.shown_status()} ({result.points:g}/{result.max_points:g})"
    return line + (f": {spanish_feedback(result)}" if result.feedback else "")
