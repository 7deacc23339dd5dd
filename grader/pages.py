"""The grader's HTML pages (a feedback page, its summary, the class view), rendered from ``templates/``, autoescaped."""

import base64
import functools
import io
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
import mistune
from markupsafe import Markup
from nbformat import NotebookNode

from .authoring.metadata import grade_id
from .grading.report import IN_KERNEL_ES, STATUS_ES, STATUS_MARK, Report, comment

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PAGE_STYLE = Markup("""
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: .3rem .6rem; text-align: left; }
td { overflow-wrap: anywhere; }
pre { background: #f6f6f6; padding: .5rem; overflow-x: auto; }
pre.out { background: #fff; border-left: 3px solid #ddd; white-space: pre-wrap; overflow-wrap: anywhere; }
pre.err { color: #a00; } .cell { margin: 1rem 0; }
tr.fallo { background: #fde8e8; font-weight: bold; } div.fallo { border-left: 4px solid #c00; padding-left: .5rem; }
p.con-fallos { color: #a00; } :target { outline: 2px solid #c00; }
div.error-habitual { background: #fff8e1; border-left: 4px solid #f0a000; padding: .2rem .8rem; margin-top: .5rem; }
""")
PAGE_CHARS = 1_000_000  # of cell sources and outputs on one page; the rest is omitted, and counted
BASE64 = re.compile(r"[A-Za-z0-9+/=\s]+")

# A page loads nothing from outside itself: no script, no font, no remote image (a web beacon in a student's
# markdown would tell its author when the instructor opened the page); only its own styles and data: images
CSP = Markup("default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'")


@functools.lru_cache(maxsize=4)
def template(name: str = "feedback.html.j2") -> jinja2.Template:
    """A page's template from ``grader/templates/``, autoescaped, loaded once per process."""
    env = jinja2.Environment(loader=jinja2.PackageLoader("grader", "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined)
    env.globals["csp"] = CSP
    return env.get_template(name)


class _OwnImagesOnly(mistune.HTMLRenderer):
    """Markdown's HTML, with an image that is not a ``data:`` image shown as its alt text, never fetched."""

    def image(self, text: str, url: str, title: str | None = None) -> str:
        if url.startswith("data:image/"):
            return super().image(text, url, title)
        return f"<span class=\"imagen\">[imagen: {mistune.escape(mistune.util.striptags(text))}]</span>"


@functools.lru_cache(maxsize=1)
def _markdown() -> Callable[[str], str]:
    """Markdown to HTML, raw HTML escaped, remote images dropped; each text rendered once per process (a lesson's
    cells are the same on every page of a batch)."""
    render = mistune.create_markdown(escape=True, renderer=_OwnImagesOnly(escape=True),
                                     plugins=["table", "strikethrough"])
    return functools.lru_cache(maxsize=4096)(lambda text: str(render(text)))


def markdown_html(text: str) -> Markup:
    """A markdown text as safe HTML: raw HTML escaped, remote images dropped (``_markdown``)."""
    return Markup(_markdown()(text))  # noqa: S704 - mistune escaped every raw HTML of the text


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
    return template().render(title=Path(report.submission).name, style=PAGE_STYLE, summary=summary_html(report),
                              cells=cells, omitted=budget.omitted)


SUMMARY_START, SUMMARY_END = '<section id="calificacion">', "</section>"


def _capital(text: str) -> str:
    """``text`` with its first letter upper case and nothing else changed."""
    return text[:1].upper() + text[1:]


def summary_html(report: Report) -> Markup:
    """The page's first section: the score, N of M tests passed, and the table (failed rows linked to their cells)."""
    rows = [{"grade_id": r.grade_id, "points": f"{r.points:g}/{r.max_points:g}", "mark": STATUS_MARK.get(r.status, ""),
             "status": r.shown_status(), "feedback": comment(r, report),
             "anchor": anchor(r.grade_id), "failed": r.status != "passed"} for r in report.exercises]
    rows += [{"grade_id": m.grade_id, "points": m.shown_points(), "mark": STATUS_MARK.get(m.status, ""),
              "status": STATUS_ES.get(m.status, m.status), "feedback": m.comment(),
              "anchor": "", "failed": m.unanswered}
             for m in report.manual]
    passed = sum(r.status == "passed" for r in report.exercises)
    return Markup(template("summary.html.j2").render(
        title=Path(report.submission).name, rows=rows, headline=_capital(report.headline()), passed=passed,
        total=len(report.exercises), failed=[row for row in rows if row["failed"]],
        in_kernel=IN_KERNEL_ES if report.in_kernel else ""))


def with_summary(page: str, report: Report) -> str:
    """A feedback page with its first section rendered again from ``report`` (marks imported); the cells as they
    were. Everything the student wrote is escaped on the page, so the first end of section is the summary's."""
    start = page.index(SUMMARY_START)
    end = page.index(SUMMARY_END, start) + len(SUMMARY_END)
    return page[:start] + str(summary_html(report)) + page[end:]


def score_figure(percentages: list[float]) -> "Figure":
    """The score distribution as a histogram: a bar per 10 %, a count of submissions on an integer axis.

    A bare ``Figure``, as matplotlib advises for web servers: no pyplot, no backend, no global state.
    """
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    figure = Figure(figsize=(6, 2.6), dpi=100)
    axes = figure.subplots()
    axes.hist(percentages, bins=list(range(0, 101, 10)), color="#4a7ab5", edgecolor="white")
    axes.set_xlabel("score (% of the autograded points)")
    axes.set_ylabel("submissions")
    axes.set_xlim(0, 100)
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))  # a count of submissions: never 0.5
    figure.tight_layout()
    return figure


def score_plot(percentages: list[float]) -> str:
    """The score distribution (``score_figure``) as a PNG, base64 (the same bytes for the same scores)."""
    buffer = io.BytesIO()
    score_figure(percentages).savefig(buffer, format="png", metadata={"Software": None})
    return base64.b64encode(buffer.getvalue()).decode()


def class_html(**context: Any) -> str:
    """The class view's page (``grader.classroom.classview``) from what it computed."""
    return template("class.html.j2").render(**context)
