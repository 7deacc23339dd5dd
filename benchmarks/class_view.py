"""A sample class for the instructor's view: N submissions of one lesson, graded and summed up, with the numbers.

    python benchmarks/class_view.py [N] [--lesson 03_handoff_pseudo_tool] [--seed 0] [--out DIR]

Each submission answers every exercise of the lesson with a seeded choice among the solution (45 %),
the exercise's written-down correct variants (15 %), its written-down wrong answers (30 %) and the
stub (10 %); every fifth submission copies the one before it, with a comment added to each answer
and its blank lines changed: the alike pairs the class view must list. The class is graded with
``grader batch`` (wrong answers named) and summed up with ``grader report``; it prints the time of
each, how many answered exercises lost points, how many of those that hold a wrong answer were
named as that very mistake (and named as another one), and how many planted copies were listed.
With ``--out`` the grades folder is kept there (open ``class.html``). Not a test: times depend on
the machine; the counts do not.
"""

import argparse
import os
import random
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from grader.authoring.metadata import grade_id
from grader.authoring.notebooks import dumps, read_notebook
from grader.classroom.batch import batch
from grader.classroom.classview import ClassView, load, write_class_report
from grader.grading import reference
from grader.grading.mistakes import CODE, wrong_answers

ROOT = Path(__file__).resolve().parents[1]
CHOICES = (("solution", 45), ("variant", 15), ("wrong", 30), ("stub", 10))


def written(source: Any, key: str) -> dict[str, list[tuple[str, str]]]:
    """Per exercise, its written-down answers of one kind (``correct_variant_for``), as (id, code)."""
    found: dict[str, list[tuple[str, str]]] = {}
    for cell in source.cells:
        exercise, match = cell.metadata.get(key), CODE.search(cell.source)
        if isinstance(exercise, str) and match:
            answers = found.setdefault(exercise, [])
            answers.append((grade_id(cell) or f"{exercise}:{len(answers)}", match.group(1)))
    return found


def make_class(lesson: str, n: int, seed: int, folder: Path) -> dict[str, dict[str, str]]:
    """N submissions under ``folder``; returns, per submission, each exercise's choice ("solution", a wrong id...)."""
    source = read_notebook(ROOT / "solutions" / f"{lesson}.ipynb")
    solutions = {grade_id(c): c.source for c in source.cells if c.metadata.get("nbgrader", {}).get("solution")}
    wrong: dict[str, list[tuple[str, str]]] = {}  # ids as the grader names them (grader.grading.mistakes)
    for answer in wrong_answers(source):
        wrong.setdefault(answer.exercise, []).append((answer.id, answer.code))
    variants = written(source, "correct_variant_for")
    exercises = [gid for gid in solutions if gid in wrong]  # the autograded ones (written-down mistakes)
    rng = random.Random(seed)
    plan: dict[str, dict[str, str]] = {}
    previous: dict[str, str] = {}
    folder.mkdir(parents=True)
    for i in range(n):
        name = f"student_{i:03d}"
        answers: dict[str, str] = {}
        if i % 5 == 4 and previous:  # a copy of the one before, lightly disguised
            answers = {gid: "# mi respuesta\n" + re.sub(r"\n\n+", "\n", code) for gid, code in previous.items()}
            plan[name] = {**plan[f"student_{i - 1:03d}"], "copy of": f"student_{i - 1:03d}"}
        else:
            plan[name] = {}
            for gid in exercises:
                kind = rng.choices([c for c, _ in CHOICES], [w for _, w in CHOICES])[0]
                kind = "solution" if kind == "variant" and gid not in variants else kind
                if kind == "solution":
                    answers[gid] = solutions[gid]
                elif kind == "variant":
                    answers[gid] = rng.choice(variants[gid])[1]
                elif kind == "wrong":
                    wrong_id, answers[gid] = rng.choice(wrong[gid])
                    kind = wrong_id
                plan[name][gid] = kind
        nb = read_notebook(ROOT / "student" / f"{lesson}.ipynb")
        for cell in nb.cells:
            cell.source = answers.get(grade_id(cell) or "", cell.source)
        (folder / f"{name}.ipynb").write_text(dumps(nb), encoding="utf-8")
        previous = answers
    return plan


def summary(plan: dict[str, dict[str, str]], out: Path) -> dict[str, int]:
    """What the class view found against what was planted."""
    saved = {Path(s["row"]["submission"]).stem: s for s in load(out) if "report" in s}
    counts = dict.fromkeys(("lost", "wrong", "named", "named other", "unexpected"), 0)
    for name, choices in plan.items():
        report = saved[name]["report"]
        lost = {r["exercise"] for r in report["exercises"] if r["points"] < r["max_points"]}
        named: dict[str, set[str]] = {}
        for mistake in report["mistakes"]:
            named.setdefault(mistake["exercise"], set()).add(mistake["id"])
        for exercise, choice in choices.items():
            if exercise == "copy of":
                continue
            counts["lost"] += exercise in lost
            if choice in ("solution", "variant", "stub"):
                counts["unexpected"] += choice != "stub" and (exercise in lost or exercise in named)
                continue
            counts["wrong"] += 1
            counts["named"] += choice in named.get(exercise, set())
            counts["named other"] += bool(named.get(exercise, set()) - {choice})
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("n", type=int, nargs="?", default=40)
    parser.add_argument("--lesson", default="03_handoff_pseudo_tool")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument("--out", type=Path, help="keep the grades folder here (class.html, canvas.csv, moodle.csv)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="class-") as folder:
        tmp = Path(folder)
        plan = make_class(args.lesson, args.n, args.seed, tmp / "submissions")
        out = tmp / "grades"
        reference.forget()
        start = time.perf_counter()
        batch(tmp / "submissions", ROOT / "solutions" / f"{args.lesson}.ipynb", out, workers=args.workers,
              progress=False)
        graded = time.perf_counter() - start
        start = time.perf_counter()
        written_files = write_class_report(out)
        reported = time.perf_counter() - start
        counts = summary(plan, out)
        pairs = {tuple(sorted((Path(a).stem, Path(b).stem))) for a, b, _ in ClassView(load(out)).pairs()}
        copies = [(plan[name]["copy of"], name) for name in plan if "copy of" in plan[name]]
        found = sum(copy in pairs for copy in copies)
        print(f"{args.n} submissions of {args.lesson} (seed {args.seed}), {args.workers} workers, "
              f"load {os.getloadavg()[0]:.1f}")
        print(f"  grader batch (wrong answers named): {graded:.1f} s; grader report: {reported:.2f} s "
              f"({', '.join(p.name for p in written_files)})")
        print(f"  answered exercises that lost points: {counts['lost']}; holding a written-down wrong answer: "
              f"{counts['wrong']}, named as that mistake: {counts['named']}, also named as another: "
              f"{counts['named other']}; a solution or variant that lost points or was named: {counts['unexpected']}")
        print(f"  planted copies: {len(copies)}, listed as alike: {found}; pairs listed in all: {len(pairs)}")
        if args.out:
            shutil.copytree(out, args.out, dirs_exist_ok=False)
            print(f"  kept in {args.out}")


if __name__ == "__main__":
    main()
