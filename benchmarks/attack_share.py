"""The share of wrong answers, written from the statements alone, that lose points with the course's grader.

    python benchmarks/attack_share.py FOLDER [FOLDER ...] [--workers W]

Each FOLDER is named after a lesson's number (``05``) and holds one notebook per answer, the lesson's
student notebook with one exercise answered: ``<exercise>__wrong_<k>.ipynb`` for an answer that is
wrong by the statement, ``<exercise>__right_<k>.ipynb`` for a correct one written another way. Each
folder is graded with ``grader batch`` against ``solutions/NN_*.ipynb``; an answer's score is the sum
of its exercise's test rows. A wrong answer that keeps every point is an escape; one that loses points
only in hidden parts is caught by hidden tests alone; a right answer that loses any is refused. It
prints a row per lesson, the totals, and each escape and refused answer. The answers themselves are
held back from the repository (an answer that is public is no longer a measurement).
Not a test: the answers are whatever the people who wrote them thought of.
"""

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HIDDEN = "in a hidden test"


def verdicts(folder: Path, workers: int) -> dict[str, str]:
    """Each answer's verdict: escape, hidden, visible (wrong answers), full or refused (right ones)."""
    source = next((ROOT / "solutions").glob(f"{folder.name}_*.ipynb"))
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([sys.executable, "-m", "grader", "batch", str(folder), "--source", str(source), "--out", out,
                        "--workers", str(workers)], cwd=ROOT, check=True, capture_output=True)
        found = {}
        for path in sorted(folder.glob("*__*_*.ipynb")):
            exercise, answer = path.stem.split("__")
            report = json.loads((Path(out) / "reports" / f"{path.stem}.json").read_text(encoding="utf-8"))
            rows = [row for row in report["report"]["exercises"] if row.get("exercise") == exercise]
            lost = [row for row in rows if row["points"] < row["max_points"]]
            if answer.startswith("right"):
                found[path.stem] = "refused" if lost or not rows else "full"
            elif not lost:
                found[path.stem] = "escape"
            else:
                found[path.stem] = "hidden" if all(HIDDEN in row["feedback"] for row in lost) else "visible"
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    totals: Counter[str] = Counter()
    named: list[str] = []
    print(f"{'lesson':8} {'wrong':>6} {'caught':>7} {'by hidden only':>15} {'escapes':>8} {'right':>6} {'refused':>8}")
    for folder in args.folders:
        found = verdicts(folder, args.workers)
        counts = Counter(found.values())
        wrong = counts["escape"] + counts["hidden"] + counts["visible"]
        print(f"{folder.name:8} {wrong:6} {wrong - counts['escape']:7} {counts['hidden']:15} {counts['escape']:8} "
              f"{counts['full'] + counts['refused']:6} {counts['refused']:8}")
        totals.update(counts)
        named += [f"{folder.name} {name}: {verdict}" for name, verdict in found.items()
                  if verdict in ("escape", "refused")]
    wrong = totals["escape"] + totals["hidden"] + totals["visible"]
    right = totals["full"] + totals["refused"]
    print(f"{'all':8} {wrong:6} {wrong - totals['escape']:7} {totals['hidden']:15} {totals['escape']:8} {right:6} "
          f"{totals['refused']:8}")
    if wrong:
        print(f"wrong answers that lose points: {(wrong - totals['escape']) / wrong:.1%}; "
              f"right answers refused: {totals['refused']} of {right}")
    for line in named:
        print(line)


if __name__ == "__main__":
    main()
