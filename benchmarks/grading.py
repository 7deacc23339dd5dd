"""Grade the same N submissions three ways, side by side, and print the numbers.

    python benchmarks/grading.py [N] [--workers W] [--lesson 03_handoff_pseudo_tool | --plain] [--scheduler ADDRESS]
                                 [--floor-repeats R] [--repeats P] [--profile FILE] [--grader-only]

The submissions: the grader's fixtures (honest and hostile kinds), a course lesson answered and blank
(``--lesson``), or a plain nbgrader assignment (``--plain``: tests/fixtures/plain/basics, test cells of
``assert`` statements, helper code and loops, graded the nbgrader way in the student's kernel, and its
submissions but the one with a deleted test cell, which the two graders score differently on purpose).

1. the course grader's batch (parallel workers, fresh sandboxed kernel per submission), with
   the full sandbox (as root: own uid and namespaces) and with the basic one (limits only),
   side by side: the difference is the sandbox's cost per submission;
   the same batch on a Dask cluster (``--scheduler``, default ``local:W``: a LocalCluster of W
   worker processes started for the run, its start-up included in the time);
2. sequential nbclient: each submission assembled the same way, then run with plain
   ``NotebookClient.execute()`` one after another;
3. real ``nbgrader generate_assignment`` + ``nbgrader autograde`` in a temporary course folder.

It prints wall time, submissions per minute, the ratios, and whether the three agree on
every score. Beside them, measured in the same run on the same submissions, the warm-kernel floor:
one kernel started once, then for each submission ``%reset -f`` and every code cell of the
assembled submission sent, waiting for idle after each (median of ``--floor-repeats``). The floor
and the course grader's batch are measured in turn ``--repeats`` times (default 3), and the pair
with the median ratio is the one printed, with every pair's ratio beside it. For each
way, the worker time per submission and how far it is above the floor; for the batch grader, that
time split into the phases the grader records itself (``grader.timing``). ``--profile FILE``
writes a cProfile of one more batch, graded in this process (``python -m pstats FILE``).
Not a test: numbers depend on the machine.
"""

import argparse
import cProfile
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar
from unittest import mock

from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

from grader.authoring.generate import student_version
from grader.authoring.metadata import grade_id, is_test, points
from grader.authoring.nbgrader_course import nbgrader_scores
from grader.authoring.notebooks import dumps, read_notebook
from grader.classroom.batch import batch
from grader.grading import reference
from grader.grading.assemble import assemble
from grader.grading.execute import Limits
from grader.kernels.mode import sandbox_mode
from grader.kernels.supply import start_worker_supply, stop_worker_supply
from grader.timing import PHASES, WORKER_START

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "grader"
PLAIN = ROOT / "tests" / "fixtures" / "plain" / "basics"
PLAIN_LEFT_OUT = ("deleted_test",)  # this grader puts a deleted test cell back; nbgrader scores it 0
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


def make_submissions(folder: Path, n: int, lesson: str | None = None, plain: bool = False) -> None:
    """N submissions named student_NNN: the fixtures' honest and hostile kinds, a lesson answered and blank, or the
    plain nbgrader assignment's submissions."""
    folder.mkdir(parents=True)
    if plain:
        kinds = [p for p in sorted((PLAIN / "submissions").glob("*.ipynb")) if p.stem not in PLAIN_LEFT_OUT]
    else:
        kinds = ([answered(lesson, folder.parent), ROOT / "student" / f"{lesson}.ipynb"] if lesson
                 else [FIXTURES / "submissions" / f"{kind}.ipynb" for kind in KINDS])
    for i in range(n):
        shutil.copy(kinds[i % len(kinds)], folder / f"student_{i:03d}.ipynb")


Timings = dict[str, dict[str, float]]  # per graded submission: seconds per phase (grader.timing)


def worker_time(timings: Timings) -> float:
    """Seconds of worker time per submission: the mean over submissions of its phases."""
    return statistics.mean(sum(t.get(name, 0.0) for name in PHASES) for t in timings.values())


def run_batch(subs: Path, source: Path, out: Path, workers: int, mode: str = "auto",
              scheduler: str | None = None, timings: Timings | None = None) -> dict[str, float]:
    """The batch grader with the sandbox in ``mode`` (auto: full as root, basic: limits only), maybe on Dask.

    Each run pays for its own reference run of the solution, as an instructor's batch does: the
    expected values kept by the previous run in this process are forgotten first.
    """
    os.environ["GRADER_SANDBOX"] = mode
    sandbox_mode.cache_clear()
    reference.forget()
    try:
        rows = batch(subs, source, out, workers=workers, limits=Limits(), progress=False, scheduler=scheduler,
                     timings=timings)
    finally:
        del os.environ["GRADER_SANDBOX"]
        sandbox_mode.cache_clear()
    return {Path(r["submission"]).stem: float(r["score"]) for r in rows}


def in_this_process(function: Callable[[Any], T], tasks: Sequence[Any], workers: int | None,
                    limits: Limits, modules: Sequence[str] = ()) -> Iterator[tuple[int, T | BaseException]]:
    """``classroom.pool.run_tasks`` as one worker that is this process: a profiler here sees the worker's code."""
    start_worker_supply(limits.memory_bytes, modules)
    try:
        for index, task in enumerate(tasks):
            yield index, function(task)
    finally:
        stop_worker_supply()


def profile_batch(subs: Path, source: Path, out: Path, profile: Path) -> None:
    """One more batch of the same submissions, graded in this process under cProfile, written to ``profile``."""
    reference.forget()
    profiler = cProfile.Profile()
    with mock.patch("grader.classroom.batch.run_tasks", in_this_process):
        profiler.runcall(batch, subs, source, out, workers=1, limits=Limits(), progress=False)
    profiler.dump_stats(profile)


def floor(subs: Path, source_path: Path, repeats: int) -> dict[str, float]:
    """The warm-kernel floor per submission: seconds to run its assembled cells in a kernel already started.

    One kernel for all; for each submission, ``repeats`` times: ``%reset -f``, then every code
    cell sent and waited for until the kernel is idle; the median. Copies of one file are measured once.
    """
    source = read_notebook(source_path)
    student = student_version(source)
    measured: dict[bytes, float] = {}
    seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as cwd:
        km = KernelManager(kernel_name="python3", transport="ipc", ip=os.path.join(cwd, "k"))  # as the grader's
        km.start_kernel(cwd=cwd)
        kc = km.client()
        kc.start_channels()
        kc.wait_for_ready(timeout=60)
        try:
            for path in sorted(subs.glob("*.ipynb")):
                data = path.read_bytes()
                if data not in measured:
                    cells = [c.source for c in assemble(source, read_notebook(path), student).notebook.cells
                             if c.cell_type == "code" and c.source.strip()]
                    runs = []
                    for _ in range(repeats):
                        kc.execute_interactive("%reset -f", timeout=30, output_hook=lambda msg: None)
                        start = time.perf_counter()
                        for code in cells:
                            kc.execute_interactive(code, timeout=30, output_hook=lambda msg: None)
                        runs.append(time.perf_counter() - start)
                    measured[data] = statistics.median(runs)
                seconds[path.stem] = measured[data]
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
    return seconds


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


def ms(seconds: float) -> str:
    return f"{1000 * seconds:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("n", type=int, nargs="?", default=20)
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument("--lesson", help="grade copies of a course lesson (e.g. 03_handoff_pseudo_tool) "
                                         "instead of the grader fixtures")
    parser.add_argument("--plain", action="store_true", help="grade copies of the plain nbgrader assignment's "
                                                              "submissions (tests/fixtures/plain/basics)")
    parser.add_argument("--scheduler", help="the Dask cluster for the cluster run (default: local:WORKERS)")
    parser.add_argument("--floor-repeats", type=int, default=10, help="runs per submission for the floor's median")
    parser.add_argument("--repeats", type=int, default=3, help="floor-then-batch pairs for the course grader; "
                                                              "its row is the pair with the median x floor")
    parser.add_argument("--grader-only", action="store_true", help="only the course grader's batch and the floor "
                                                                   "(quicker, while working on the grader's speed)")
    parser.add_argument("--profile", type=Path, help="also grade the batch once in this process under cProfile "
                                                     "and write the profile here")
    args = parser.parse_args()
    scheduler = args.scheduler or f"local:{args.workers}"
    if args.plain and args.lesson:
        parser.error("--plain and --lesson are two different assignments: pass one")
    source = (PLAIN / "source.ipynb" if args.plain else
              ROOT / "solutions" / f"{args.lesson}.ipynb" if args.lesson else FIXTURES / "source.ipynb")
    phases: dict[str, Timings] = {way: {} for way in ("course grader (batch)", "grader, basic sandbox",
                                                      "grader on Dask")}
    with tempfile.TemporaryDirectory(prefix="bench-") as folder:
        tmp = Path(folder)
        subs = tmp / "submissions"
        make_submissions(subs, args.n, args.lesson, args.plain)
        pairs = []  # (floor per submission, the batch's worker time per submission, its wall time and scores, phases)
        for repeat in range(args.repeats):  # the floor and the batch in turn, so a slower minute slows both
            floors = floor(subs, source, args.floor_repeats)
            timings: Timings = {}
            result = timed(run_batch, subs, source, tmp / f"out-{repeat}", args.workers, "auto", None, timings)
            pairs.append((statistics.mean(floors.values()), worker_time(timings), result, timings))
        floor_per_sub, _, median_result, phases["course grader (batch)"] = sorted(
            pairs, key=lambda pair: pair[1] / pair[0])[(len(pairs) - 1) // 2]
        results = {"course grader (batch)": median_result}
        if not args.grader_only:
            results |= {
                "grader, basic sandbox": timed(run_batch, subs, source, tmp / "out-basic", args.workers, "basic",
                                               None, phases["grader, basic sandbox"]),
                "grader on Dask": timed(run_batch, subs, source, tmp / "out-dask", args.workers, "auto", scheduler,
                                        phases["grader on Dask"]),
                "sequential nbclient": timed(run_sequential_nbclient, subs, source),
                "nbgrader autograde": timed(run_nbgrader, subs, source, tmp / "course"),
            }
        if args.profile:
            profile_batch(subs, source, tmp / "out-profile", args.profile)
    base = results["course grader (batch)"]
    print(f"{args.n} submissions of {source.name}, {args.workers} worker(s), {os.cpu_count()} core(s), "
          f"sandbox: {sandbox_mode()}, Dask: {scheduler}, load average {os.getloadavg()[0]:.2f}")
    print(f"warm-kernel floor: {ms(floor_per_sub)} ms per submission (median of {args.floor_repeats} runs each)")
    print(f"{'way':24} {'wall s':>8} {'subs/min':>9} {'grader speed-up':>16} {'scores agree':>13} "
          f"{'worker ms/sub':>14} {'x floor':>8} {'fixed ms/sub':>13}")
    for way, (seconds, scores) in results.items():
        agree = "yes" if scores == base[1] else "NO"
        # the batch ways: the worker time the grader measured; the sequential ways: one process, so the wall time
        worker = worker_time(phases[way]) if phases.get(way) else seconds / args.n
        print(f"{way:24} {seconds:8.1f} {60 * args.n / seconds:9.1f} {seconds / base[0]:15.1f}x {agree:>13} "
              f"{ms(worker):>14} {worker / floor_per_sub:7.2f}x {ms(worker - floor_per_sub):>13}")
    if args.repeats > 1:
        print(f"  course grader (batch), {args.repeats} floor-then-batch pairs in the order measured (floor ms, "
              f"worker ms/sub, x floor): " + "; ".join(f"{ms(f)}, {ms(w)}, {w / f:.2f}x" for f, w, _, _ in pairs)
              + "; the row above is the median pair")
    for way, timings in phases.items():
        if timings:
            split = ", ".join(f"{name} {ms(statistics.mean(t.get(name, 0.0) for t in timings.values()))}"
                              for name in PHASES)
            print(f"  {way}, ms per submission: {split}")
            starts = [t[WORKER_START] for t in timings.values() if WORKER_START in t]
            if starts:
                print(f"    and once per worker, before its first submission (not in the time per submission): "
                      f"{WORKER_START} {ms(statistics.mean(starts))} ms, {len(starts)} worker(s)")
    disagreements = {name: {way: r[1].get(name) for way, r in results.items()}
                     for name in base[1] if len({r[1].get(name) for r in results.values()}) > 1}
    for name, differing in sorted(disagreements.items()):
        print(f"  differs: {name}: {differing}")
    if "grader, basic sandbox" in results:
        cost = (base[0] - results["grader, basic sandbox"][0]) * args.workers / args.n
        print(f"sandbox cost: {1000 * cost:+.0f} ms of worker time per submission (full vs basic, same run)")
    if args.profile:
        print(f"profile of one batch graded in this process: {args.profile} (python -m pstats {args.profile})")


if __name__ == "__main__":
    main()
