"""Grade the same N submissions three ways, side by side, and print the numbers.

    python benchmarks/grading.py [N] [--workers W] [--lesson 03_handoff_pseudo_tool] [--scheduler ADDRESS]

1. the course grader's batch (parallel workers, fresh sandboxed kernel per submission), with
   the full sandbox (as root: own uid and namespaces) and with the basic one (limits only),
   side by side: the difference is the sandbox's cost per submission;
   the same batch on a Dask cluster (``--scheduler``, default ``local:W``: a LocalCluster of W
   worker processes started for the run, its start-up included in the time);
2. sequential nbclient: each submission assembled the same way, then run with plain
   ``NotebookClient.execute()`` one after another;
3. real ``nbgrader generate_assignment`` + ``nbgrader autograde`` in a temporary course folder.

It prints wall time, submissions per minute, the ratios, and whether the three agree on
every score. Not a test: numbers depend on the machine.
"""

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from nbclient import NotebookClient

from grader import reference
from grader.assemble import assemble
from grader.batch import batch
from grader.execute import Limits
from grader.generate import student_version
from grader.kernels.mode import sandbox_mode
from grader.metadata import grade_id, is_test, points
from grader.nbgrader_course import nbgrader_scores
from grader.notebooks import dumps, read_notebook

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "grader"
T = TypeVar("T")
KINDS = ("correct", "partial", "blank", "always_equal", "edited_tests")


def answered(lesson: str, folder: Path) -> Path:
    """The lesson's student notebook with every exercise answered as the solution does: a full-marks submission."""
    source = read_notebook(ROOT / "solutions" / f"{lesson}.ipynb")
    answers = {grade_id(c): c.source for c in source.cells if c.metadata.get("nbgrader", {}).get("solution")}
    nb = read_notebook(ROOT / "student" / f"{lesson}.ipynb")
    for cell in nb.cells:
        cell.source = answers.get(grade_id(cell), cell.source)
    path = folder / "answered.ipynb"
    path.write_text(dumps(nb), encoding="utf-8")
    return path


def make_submissions(folder: Path, n: int, lesson: str | None = None) -> None:
    """N submissions named student_NNN: the fixtures' honest and hostile kinds, or a lesson answered and blank."""
    folder.mkdir(parents=True)
    kinds = ([answered(lesson, folder.parent), ROOT / "student" / f"{lesson}.ipynb"] if lesson
             else [FIXTURES / "submissions" / f"{kind}.ipynb" for kind in KINDS])
    for i in range(n):
        shutil.copy(kinds[i % len(kinds)], folder / f"student_{i:03d}.ipynb")


def run_batch(subs: Path, source: Path, out: Path, workers: int, mode: str = "auto",
              scheduler: str | None = None) -> dict[str, float]:
    """The batch grader with the sandbox in ``mode`` (auto: full as root, basic: limits only), maybe on Dask.

    Each run pays for its own reference run of the solution, as an instructor's batch does: the
    expected values kept by the previous run in this process are forgotten first.
    """
    os.environ["GRADER_SANDBOX"] = mode
    sandbox_mode.cache_clear()
    reference.forget()
    try:
        rows = batch(subs, source, out, workers=workers, limits=Limits(), progress=False, scheduler=scheduler)
    finally:
        del os.environ["GRADER_SANDBOX"]
        sandbox_mode.cache_clear()
    return {Path(r["submission"]).stem: float(r["score"]) for r in rows}


def run_sequential_nbclient(subs: Path, source_path: Path) -> dict[str, float]:
    source = read_notebook(source_path)
    student = student_version(source)
    tests = {grade_id(c): points(c) for c in source.cells if is_test(c)}
    scores: dict[str, float] = {}
    for path in sorted(subs.glob("*.ipynb")):
        assembly = assemble(source, read_notebook(path), student)
        nb = assembly.notebook
        with tempfile.TemporaryDirectory() as cwd:
            NotebookClient(nb, timeout=30, allow_errors=True, kernel_name="python3",
                           resources={"metadata": {"path": cwd}}).execute()
        scores[path.stem] = sum(
            tests[gid] for gid, index in assembly.positions.items()
            if gid in tests and not any(o.output_type == "error" for o in nb.cells[index].outputs))
    return scores


def run_nbgrader(subs: Path, source_path: Path, course: Path) -> dict[str, float]:
    """A real nbgrader course: generate_assignment, then autograde every submission."""
    return nbgrader_scores(source_path, {p.stem: p for p in sorted(subs.glob("*.ipynb"))}, course)


def timed(function: Callable[..., T], *args: Any) -> tuple[float, T]:
    start = time.perf_counter()
    result = function(*args)
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("n", type=int, nargs="?", default=20)
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument("--lesson", help="grade copies of a course lesson (e.g. 03_handoff_pseudo_tool) "
                                         "instead of the grader fixtures")
    parser.add_argument("--scheduler", help="the Dask cluster for the cluster run (default: local:WORKERS)")
    args = parser.parse_args()
    scheduler = args.scheduler or f"local:{args.workers}"
    source = ROOT / "solutions" / f"{args.lesson}.ipynb" if args.lesson else FIXTURES / "source.ipynb"
    with tempfile.TemporaryDirectory(prefix="bench-") as folder:
        tmp = Path(folder)
        subs = tmp / "submissions"
        make_submissions(subs, args.n, args.lesson)
        results = {
            "course grader (batch)": timed(run_batch, subs, source, tmp / "out", args.workers),
            "grader, basic sandbox": timed(run_batch, subs, source, tmp / "out-basic", args.workers, "basic"),
            "grader on Dask": timed(run_batch, subs, source, tmp / "out-dask", args.workers, "auto", scheduler),
            "sequential nbclient": timed(run_sequential_nbclient, subs, source),
            "nbgrader autograde": timed(run_nbgrader, subs, source, tmp / "course"),
        }
    base = results["course grader (batch)"]
    print(f"{args.n} submissions of {source.name}, {args.workers} worker(s), {os.cpu_count()} core(s), "
          f"sandbox: {sandbox_mode()}, Dask: {scheduler}")
    print(f"{'way':24} {'wall s':>8} {'subs/min':>9} {'grader speed-up':>16} {'scores agree':>13}")
    for way, (seconds, scores) in results.items():
        agree = "yes" if scores == base[1] else "NO"
        print(f"{way:24} {seconds:8.1f} {60 * args.n / seconds:9.1f} {seconds / base[0]:15.1f}x {agree:>13}")
    disagreements = {name: {way: r[1].get(name) for way, r in results.items()}
                     for name in base[1] if len({r[1].get(name) for r in results.values()}) > 1}
    for name, differing in sorted(disagreements.items()):
        print(f"  differs: {name}: {differing}")
    cost = (base[0] - results["grader, basic sandbox"][0]) * args.workers / args.n
    print(f"sandbox cost: {1000 * cost:+.0f} ms of worker time per submission (full vs basic, same run)")


if __name__ == "__main__":
    main()
