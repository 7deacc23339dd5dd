"""A grade report: one row per test cell, the score, what was tampered, and how to show it."""

import functools
import html
import json
import re
from pathlib import Path
from dataclasses import asdict, dataclass, field

STATUS_MARK = {"passed": "✔", "failed": "✘", "timeout": "⏱", "died": "☠", "not-run": "…"}


@dataclass
class TestResult:
    """One test cell's outcome: points earned out of max_points, and one line of feedback."""

    grade_id: str
    points: float
    max_points: float
    status: str  # passed | failed | timeout | died | not-run
    feedback: str = ""


@dataclass
class Report:
    """The grade of one submission against one source notebook."""

    submission: str
    source: str
    exercises: list = field(default_factory=list)
    tampered: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    solution_errors: list = field(default_factory=list)
    other_errors: list = field(default_factory=list)

    @property
    def score(self):
        return sum(result.points for result in self.exercises)

    @property
    def max_score(self):
        return sum(result.max_points for result in self.exercises)

    def to_dict(self):
        """Everything in the report as plain data (the --json format)."""
        data = asdict(self)
        data.update(score=self.score, max_score=self.max_score)
        return data

    def to_json(self):
        """The report as stable, readable JSON text."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False, sort_keys=True) + "\n"

    def table(self):
        """A plain-text table: exercise, points, status, feedback."""
        rows = [(r.grade_id, f"{r.points:g}/{r.max_points:g}", r.status, r.feedback) for r in self.exercises]
        header = ("exercise", "points", "status", "feedback")
        widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(3)]
        lines = ["  ".join(str(cell).ljust(width) for cell, width in zip(row[:3], widths)) + "  " + row[3]
                 for row in [header, *rows]]
        lines.append(f"score: {self.score:g}/{self.max_score:g}")
        lines += [f"restored: {t['grade_id']} ({t['problem']})" for t in self.tampered]
        lines += [f"note: {note}" for note in self.notes]
        return "\n".join(line.rstrip() for line in lines)

    def _repr_markdown_(self):
        rows = "\n".join(f"| {r.grade_id} | {r.points:g}/{r.max_points:g} | {STATUS_MARK.get(r.status, '')} "
                         f"{r.status} | {r.feedback.replace('|', '/')} |" for r in self.exercises)
        return (f"**{self.score:g}/{self.max_score:g}**\n\n| exercise | points | status | feedback |\n"
                f"|---|---|---|---|\n{rows}")

    def __repr__(self):
        return f"Report({self.submission!r}: {self.score:g}/{self.max_score:g}, {len(self.exercises)} tests)"


PAGE_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: .3rem .6rem; text-align: left; }
pre { background: #f6f6f6; padding: .5rem; overflow-x: auto; } pre.out { background: #fff; border-left: 3px solid #ddd; }
pre.err { color: #a00; } .cell { margin: 1rem 0; }
"""
BASE64 = re.compile(r"[A-Za-z0-9+/=\s]+")


@functools.lru_cache(maxsize=1)
def _markdown():
    import mistune

    return mistune.create_markdown(escape=True, plugins=["table", "strikethrough"])  # raw HTML is escaped


def _output_html(output):
    kind, data = output.get("output_type"), output.get("data", {})
    if kind == "stream":
        return f"<pre class='out'>{html.escape(output.get('text', ''))}</pre>"
    if kind == "error":
        return f"<pre class='out err'>{html.escape(output.get('ename', ''))}: {html.escape(output.get('evalue', ''))}</pre>"
    if BASE64.fullmatch(str(data.get("image/png", "-"))):
        return f"<img alt='figure' src='data:image/png;base64,{data['image/png']}'>"
    if "text/markdown" in data:
        return _markdown()(data["text/markdown"])
    return f"<pre class='out'>{html.escape(data['text/plain'])}</pre>" if "text/plain" in data else ""


def _cell_html(cell):
    """One cell as safe HTML: markdown rendered with raw HTML escaped, code and outputs as text."""
    if cell.cell_type == "markdown":
        return f"<div class='cell'>{_markdown()(cell.source)}</div>"
    if cell.cell_type != "code":
        return ""
    outputs = "".join(_output_html(output) for output in cell.get("outputs", []))
    return f"<div class='cell'><pre><code>{html.escape(cell.source)}</code></pre>{outputs}</div>"


def feedback_html(report, notebook):
    """A standalone HTML page: the score table, then the graded notebook as the student may see it.

    Nothing the student wrote is trusted as HTML: markdown is rendered with raw HTML escaped,
    and outputs are shown as text (or as a PNG), never as the HTML a cell produced.
    """
    rows = "".join(
        f"<tr><td>{html.escape(r.grade_id)}</td><td>{r.points:g}/{r.max_points:g}</td>"
        f"<td>{STATUS_MARK.get(r.status, '')} {r.status}</td><td>{html.escape(r.feedback)}</td></tr>"
        for r in report.exercises)
    title = html.escape(Path(report.submission).name)
    cells = "\n".join(_cell_html(cell) for cell in notebook.cells)
    return (f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>Feedback: {title}</title>"
            f"<style>{PAGE_STYLE}</style></head><body>\n<section id='grade'><h1>{title}</h1>"
            f"<p><strong>Score: {report.score:g}/{report.max_score:g}</strong></p><table><tr><th>exercise</th>"
            f"<th>points</th><th>status</th><th>feedback</th></tr>{rows}</table></section>\n{cells}\n</body></html>\n")
