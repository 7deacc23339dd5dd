"""A student's self-grade, timed the way a student meets it: ``grader grade`` as a fresh process, and the numbers.

    python benchmarks/self_grade.py [--lesson 03_handoff_pseudo_tool] [--repeats R] [--floor-repeats F]

For three submissions of the lesson (blank: the student notebook as handed out; half: the first
half of its exercises answered as the solution does; complete: all of them), each with a disk
cache of its own (``GRADER_CACHE_DIR``, emptied first): the wall time of the first run after a
clean cache, and the median of ``--repeats`` runs after it. Beside them, measured in the same run:
the warm-kernel floor of the same notebook (its assembled cells run in a kernel already started,
``benchmarks/grading.py``'s ``floor``) and the interpreter's own start-up (``python -c pass``),
and the repeat run's ratio to their sum. Not a test: numbers depend on the machine.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grading import floor

from grader.authoring.metadata import grade_id, is_solution
from grader.authoring.notebooks import dumps, read_notebook

ROOT = Path(__file__).resolve().parents[1]


def submissions(lesson: str, folder: Path) -> dict[str, Path]:
    """Blank, half and complete submissions of the lesson, written into ``folder``."""
    source = read_notebook(ROOT / "solutions" / f"{lesson}.ipynb")
    answers = {grade_id(c): c.source for c in source.cells if is_solution(c) and c.cell_type == "code"}
    half = set(list(answers)[:len(answers) // 2])
    made = {}
    for name, chosen in (("blank", set()), ("half", half), ("complete", set(answers))):
        nb = read_notebook(ROOT / "student" / f"{lesson}.ipynb")
        for cell in nb.cells:
            if grade_id(cell) in chosen:
                cell.source = answers[grade_id(cell)]
        made[name] = folder / name / f"{lesson}.ipynb"  # the lesson's own file name, as a student's copy has
        made[name].parent.mkdir()
        made[name].write_text(dumps(nb), encoding="utf-8")
    return made


def wall(command: list[str], env: dict[str, str]) -> float:
    """Seconds one fresh process of ``command`` takes, start to exit."""
    start = time.perf_counter()
    subprocess.run(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lesson", default="03_handoff_pseudo_tool")
    parser.add_argument("--repeats", type=int, default=5, help="runs after the first, for the median")
    parser.add_argument("--floor-repeats", type=int, default=5, help="runs per notebook for the floor's median")
    args = parser.parse_args()
    source = ROOT / "solutions" / f"{args.lesson}.ipynb"
    with tempfile.TemporaryDirectory() as tmp:
        made = submissions(args.lesson, Path(tmp))
        startup = statistics.median(wall([sys.executable, "-c", "pass"], dict(os.environ)) for _ in range(5))
        print(f"{args.lesson}, grader grade as a fresh process, load average {os.getloadavg()[0]:.1f}; "
              f"interpreter start-up {startup * 1000:.0f} ms")
        print(f"{'submission':<10} {'first s':>8} {'repeat s':>9} {'floor s':>8} {'x (floor + start-up)':>21}")
        for name, path in made.items():
            cache = Path(tmp) / f"cache-{name}"
            shutil.rmtree(cache, ignore_errors=True)
            env = {**os.environ, "GRADER_CACHE_DIR": str(cache)}
            command = [sys.executable, "-m", "grader", "grade", str(path), "--source", str(source)]
            first = wall(command, env)
            repeat = statistics.median(wall(command, env) for _ in range(args.repeats))
            floor_s = statistics.median(floor(path.parent, source, args.floor_repeats).values())
            print(f"{name:<10} {first:8.2f} {repeat:9.2f} {floor_s:8.2f} {repeat / (floor_s + startup):20.2f}x")


if __name__ == "__main__":
    main()
