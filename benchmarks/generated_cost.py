"""What a lesson's hidden checks on generated inputs (``AS_SOLUTION``) add to its grading time, side by side.

    python benchmarks/generated_cost.py [LESSON ...] [--repeats R]

For each lesson (default: every lesson with generated checks), two sources: the solution notebook as it
is, and the same notebook with every generated block removed (in a hidden part, the lines from its
``from grader import AS_SOLUTION`` to ``### END HIDDEN TESTS``, as ``solutions/README.md`` lays them
out). Each is graded, in this process, on the lesson answered as the solution does and on the blank
student notebook; their reference runs come first and are not timed. The two sources are graded in
turn ``--repeats`` times (default 5); printed: the median seconds of each, and how much the generated
blocks add. Not a test: numbers depend on the machine.
"""

import argparse
import statistics
import tempfile
import time
from copy import deepcopy
from pathlib import Path

from grading import answered
from nbformat import NotebookNode

from grader.authoring.generate import student_version
from grader.authoring.metadata import HIDDEN_END, is_test
from grader.authoring.notebooks import read_notebook
from grader.grading.pipeline import grade_notebooks
from grader.grading.reference import reference_for

ROOT = Path(__file__).resolve().parents[1]
OPENING = "from grader import AS_SOLUTION"


def without_generated(source: NotebookNode) -> tuple[NotebookNode, int]:
    """A copy of ``source`` with every generated block of its test cells removed, and how many there were."""
    copy = deepcopy(source)
    removed = 0
    for cell in copy.cells:
        lines = cell.source.split("\n")
        if not is_test(cell) or OPENING not in (line.strip() for line in lines):
            continue
        start = next(i for i, line in enumerate(lines) if line.strip() == OPENING)
        end = next(i for i, line in enumerate(lines) if line.strip() == HIDDEN_END)
        cell.source = "\n".join(lines[:start] + lines[end:])
        removed += 1
    return copy, removed


def seconds(source: NotebookNode, submissions: list[NotebookNode]) -> float:
    """Wall seconds to grade every submission against ``source`` (its reference already run)."""
    student = student_version(source)
    reference = reference_for(source, student)
    start = time.perf_counter()
    for submission in submissions:
        grade_notebooks(source, submission, student=student, reference=reference, name_mistakes=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("lessons", nargs="*", help="lesson names (default: those with generated checks)")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    paths = sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb"))
    chosen = [p for p in paths if not args.lessons or p.stem in args.lessons or p.stem[:2] in args.lessons]
    print(f"{'lesson':26} {'blocks':>6} {'with s':>8} {'without s':>10} {'added':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for path in chosen:
            source = read_notebook(path)
            baseline, blocks = without_generated(source)
            if not blocks and not args.lessons:
                continue
            folder = Path(tmp) / path.stem
            folder.mkdir()
            submissions = [read_notebook(answered(path.stem, folder)),
                           read_notebook(ROOT / "student" / f"{path.stem}.ipynb")]
            seconds(source, submissions[:1]), seconds(baseline, submissions[:1])  # warm: references, imports
            pairs = [(seconds(source, submissions), seconds(baseline, submissions)) for _ in range(args.repeats)]
            with_s = statistics.median(a for a, _ in pairs)
            without_s = statistics.median(b for _, b in pairs)
            print(f"{path.stem:26} {blocks:6} {with_s:8.2f} {without_s:10.2f} {with_s / without_s - 1:+7.1%}")


if __name__ == "__main__":
    main()
