"""How long each lesson takes a student, estimated from the notebooks themselves.

    python benchmarks/lesson_times.py            # the table: guided and exercise minutes per lesson, and the total
    python benchmarks/lesson_times.py --write    # also write each estimate into its notebooks' "Tiempo estimado" line

The model, one rate per activity (what a careful first reading costs, not a skim):

- prose is read at ``WORDS_PER_MINUTE`` (technical Spanish read with attention, close to reading aloud);
- code is read at ``SECONDS_PER_CODE_LINE`` a line, and each code cell costs ``SECONDS_PER_RUN`` to run and
  look at its output;
- an exercise costs what its difficulty says (``EXERCISE_MINUTES``), on top of reading its statement and
  tests; a cell answered in writing and graded by hand costs ``WRITTEN_ANSWER_MINUTES``.

The guided notebook is read from ``notebooks/``; the exercises from ``student/`` (what a student gets: no
solution, no hidden test). Each total is rounded up to 5 minutes. ``tests/course/test_lesson_text.py``
checks that every notebook states the estimate this script gives, and the README's lesson table too.
"""

import argparse
import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from grader.authoring.notebooks import dumps, read_notebook, write_atomic

ROOT = Path(__file__).resolve().parents[1]
WORDS_PER_MINUTE = 120
SECONDS_PER_CODE_LINE = 4
SECONDS_PER_RUN = 15
EXERCISE_MINUTES = {"Fácil": 10, "Medio": 20, "Difícil": 35}
WRITTEN_ANSWER_MINUTES = 15
OPENING = 5  # the cells where a notebook states its time (title, objective)
EXERCISE_HEADING = re.compile(r"^#+ Ejercicio \d+ · (Fácil|Medio|Difícil) ·", re.M)
STATED = re.compile(r"\*\*Tiempo estimado:\*\* unos (\d+) minutos para la lección guiada \(`[^`]+`\) y unos\s+(\d+) "
                    r"para los ejercicios \(`[^`]+`\)[^.]*\.")


@dataclass(frozen=True)
class Estimate:
    """A lesson's estimated minutes: the guided walkthrough and the exercises."""

    lesson: str
    guided: int
    exercises: int

    @property
    def total(self) -> int:
        """Both notebooks together."""
        return self.guided + self.exercises


def _cells(path: Path) -> list[dict]:
    cells: list[dict] = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return cells


def _source(cell: dict) -> str:
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def _reading_minutes(cells: list[dict]) -> float:
    words = sum(len(re.findall(r"\w+", STATED.sub("", _source(c)))) for c in cells if c["cell_type"] == "markdown")
    code = [c for c in cells if c["cell_type"] == "code"]
    lines = sum(1 for c in code for line in _source(c).splitlines() if line.strip())
    return words / WORDS_PER_MINUTE + (lines * SECONDS_PER_CODE_LINE + len(code) * SECONDS_PER_RUN) / 60


def _work_minutes(cells: list[dict]) -> float:
    text = "\n".join(_source(c) for c in cells if c["cell_type"] == "markdown")
    written = sum(1 for c in cells if c.get("metadata", {}).get("nbgrader", {}).get("grade")
                  and c["metadata"]["nbgrader"].get("solution") and c["cell_type"] == "markdown")
    return sum(EXERCISE_MINUTES[level] for level in EXERCISE_HEADING.findall(text)) + written * WRITTEN_ANSWER_MINUTES


def _round_up(minutes: float) -> int:
    return 5 * math.ceil(minutes / 5)


def estimate(lesson: str, root: Path = ROOT) -> Estimate:
    """The estimate for one lesson (``03_handoff_pseudo_tool``)."""
    guided = _cells(root / "notebooks" / f"{lesson}.ipynb")
    student = _cells(root / "student" / f"{lesson}.ipynb")
    return Estimate(lesson, _round_up(_reading_minutes(guided)),
                    _round_up(_reading_minutes(student) + _work_minutes(student)))


def lessons(root: Path = ROOT) -> list[str]:
    """Every lesson with a guided notebook, in order."""
    return sorted(p.stem for p in (root / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def stated(path: Path) -> tuple[int, int] | None:
    """The (guided, exercises) minutes a notebook's opening cells state, or None."""
    found = [match for cell in _cells(path)[:OPENING] for match in STATED.finditer(_source(cell))]
    return (int(found[0][1]), int(found[0][2])) if len(found) == 1 else None


def sentence(found: Estimate) -> str:
    """The "Tiempo estimado" line every notebook of a lesson states."""
    return (f"**Tiempo estimado:** unos {found.guided} minutos para la lección guiada "
            f"(`work/guided/{found.lesson}.ipynb`) y unos {found.exercises} para los ejercicios "
            f"(`work/exercises/{found.lesson}.ipynb`).")


def write(found: Estimate, path: Path) -> bool:
    """State the estimate in ``path``, replacing a stated one (else after its objective); whether it changed."""
    notebook = read_notebook(path)
    cells = notebook.cells[:OPENING]
    cell = next((c for c in cells if STATED.search(c.source)), None)
    if cell is not None:
        new = STATED.sub(sentence(found), cell.source)
    else:
        cell = next((c for c in cells if "## Objetivo" in c.source), notebook.cells[0])
        at = cell.source.find("\n\n", cell.source.find("## Objetivo") + 1)
        at = len(cell.source) if at < 0 else at
        new = cell.source[:at] + "\n\n" + sentence(found) + cell.source[at:]
    if new == cell.source:
        return False
    cell.source = new
    write_atomic(path, dumps(notebook))
    return True


def main(argv: list[str] | None = None) -> int:
    """Print the table; with ``--write``, also state each estimate in its guided and solution notebooks."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true",
                        help="write each estimate into notebooks/ and solutions/ (then run grader generate)")
    args = parser.parse_args(argv)
    found = [estimate(lesson) for lesson in lessons()]
    print(f"{'lesson':<28} {'guided':>6} {'exercises':>9} {'total':>6}   (minutes; python benchmarks/lesson_times.py)")
    for one in found:
        print(f"{one.lesson:<28} {one.guided:>6} {one.exercises:>9} {one.total:>6}")
    total = sum(one.total for one in found)
    print(f"{'all lessons':<28} {sum(o.guided for o in found):>6} {sum(o.exercises for o in found):>9} {total:>6}"
          f"   = {total / 60:.1f} hours")
    if args.write:
        for one in found:
            for folder in ("notebooks", "solutions"):
                if write(one, ROOT / folder / f"{one.lesson}.ipynb"):
                    print(f"wrote {folder}/{one.lesson}.ipynb")
    return 0


if __name__ == "__main__":
    sys.exit(main())
