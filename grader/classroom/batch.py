"""Grade a folder of submissions in parallel: one process per worker, one fresh kernel per submission.

A worker's task is a pure function of bytes (``grade_one``): it returns the row, the report and the
feedback page, and this process writes them, so the same tasks run in the local pool or on a Dask
cluster (``grader.classroom.cluster``).

A bad submission becomes a row with status "error" and the batch goes on. Re-running
skips submissions whose report is already there for the same submission, source, limits
and grader code (a content hash), so an interrupted batch resumes where it stopped. Every
submission and source is read into memory before any student code runs; the output
folder, where the cache lives, is out of the kernels' reach (see grader.kernels.sandbox). The
expected values of each lesson's checks come from one reference run of its solution in this
process (``grader.grading.reference``), sent to the workers as data.
"""

import contextlib
import dataclasses
import functools
import logging
import os
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from ..authoring.course import match_source
from ..authoring.generate import student_version
from ..authoring.notebooks import parse_notebook, read_bytes
from ..errors import GraderError, InvalidSetting, MissingPath, WrongKindOfPath
from ..grading.execute import Limits
from ..grading.pipeline import WrongLesson, check_submission, grade_notebooks
from ..grading.preload import imported_modules
from ..grading.reference import Reference, reference_for
from ..grading.report import Report, printable
from ..kernels import zygote
from ..kernels.supply import KernelSupply, worker_supply
from ..pages import feedback_html
from ..timing import phase, phases
from .gradebook import COLUMNS, Gradebook, RowStatus, cache_key, manual_columns, slug
from .pool import check_scheduler, run_on_cluster, run_tasks

logger = logging.getLogger(__name__)



def find_submissions(directory: str | Path, out: str | Path | None = None) -> tuple[list[Path], list[Path]]:
    """Every ``*.ipynb`` under ``directory``, and every other file (skipped; hidden ones are not listed), both
    sorted: checkpoints and the output folder excepted, and no folder reached through a symbolic link. A file named
    ``*.ipynb`` that is not a regular file is listed, to be refused."""
    directory, resolved = Path(directory), Path(out).resolve() if out else None
    found, others = [], []
    for folder, subfolders, files in os.walk(directory):  # never follows a link to a folder
        here = Path(folder)
        subfolders[:] = [name for name in subfolders if name != ".ipynb_checkpoints"
                         and not (resolved and (here / name).resolve() == resolved)]
        found += [here / name for name in files if name.endswith(".ipynb")]
        others += [here / name for name in files if not name.endswith(".ipynb")
                   and not any(part.startswith(".") for part in (here / name).relative_to(directory).parts)]
    return sorted(found), sorted(others)


def _read(path: str | os.PathLike[str]) -> bytes:
    """A submission's bytes: a regular file, not a link, within the size cap."""
    return read_bytes(path, follow=False)


_students: dict[bytes, tuple[Any, Any]] = {}  # per worker: source bytes -> (source, student version), built once


def _source(source_bytes: bytes, name: str) -> tuple[Any, Any]:
    """The source notebook and its student version, built once per process."""
    if source_bytes not in _students:
        source = parse_notebook(source_bytes, name)
        _students[source_bytes] = source, student_version(source, name)
    return _students[source_bytes]


@functools.lru_cache(maxsize=4)
def _reference_of(text: str) -> Reference:
    """A source's reference from its JSON, read once per worker (every task of a source carries the same); only
    read, never changed."""
    return Reference.from_json(text)


def _grade(source_bytes: bytes, submission_nb: Callable[[], Any], limits: Limits,
           names: tuple[str, str], reference: Reference) -> tuple[Report, Any]:
    source, student = _source(source_bytes, names[0])
    return grade_notebooks(source, submission_nb(), limits=limits, names=names, supply=worker_supply(),
                           student=student, reference=reference, name_mistakes=reference.mistakes is not None)


def _reference(path: Path, source_bytes: bytes, limits: Limits, supply: KernelSupply,
               mistakes: bool) -> str | GraderError:
    """The source's reference as JSON, from trusted runs of its solution here (and of its written-down wrong
    answers, with ``mistakes``); or why it cannot be had."""
    try:
        source, student = _source(source_bytes, str(path))
        reference = reference_for(source, student, limits, supply, mistakes)
        return (reference if mistakes else dataclasses.replace(reference, mistakes=None)).to_json()
    except GraderError as error:
        return error
    except Exception as error:  # noqa: BLE001 - a source that breaks the grader is its submissions' error rows
        logger.debug("the reference run of %s failed", path, exc_info=True)
        return GraderError(f"grader error in the reference run of {path}: {type(error).__name__}: {error}"[:500])


def _imports(used: set[Path], sources: dict[Path, bytes]) -> tuple[str, ...]:
    """The modules the sources in use import (``grader.grading.preload``), read from the sources as ``_source`` keeps
    them for the reference runs; a source that cannot be used names none (``_reference`` gives its error)."""
    notebooks = []
    for path in sorted(used):
        try:
            notebooks.append(_source(sources[path], str(path))[0])
        except Exception:  # noqa: BLE001, S112 - the reference run of that source says what is wrong with it
            continue
    return imported_modules(notebooks)


def _unnamed(error: str, submission: Path, root: Path) -> str:
    """The error as one line, without the submission's name in front: the row's first column already says it."""
    text = " ".join(error.split())
    for name in (str(submission), str(submission.relative_to(root)), submission.name):
        if text.startswith(f"{name}: "):
            return text[len(name) + 2:]
    return text


def _error_row(submission: Path, root: Path, error: str, source: str = "") -> dict[str, str]:
    """A submission's CSV row before (or instead of) its grade: status error, its source if known, every other column
    empty."""
    return {**dict.fromkeys(COLUMNS, ""), "submission": str(submission.relative_to(root)), "source": source,
            "status": RowStatus.ERROR,
            "error": _unnamed(error, submission, root), "cached": "no"}


class Graded(NamedTuple):
    """What a worker sends back for one submission: its CSV row and, once graded, its report data and feedback page."""

    row: dict[str, str]
    report: dict[str, Any] | None = None
    feedback: str | None = None
    seconds: float = 0.0  # the worker's time on it, from bytes to page
    phases: dict[str, float] | None = None  # that time per phase (``grader.timing``)


class Task(NamedTuple):
    """One submission to grade as a worker receives it: every input in memory, the paths only to name things."""

    submission: Path
    source: Path
    root: Path  # the submissions folder: a row names its submission relative to it
    limits: Limits
    submission_bytes: bytes
    source_bytes: bytes
    reference: str  # the source's reference, JSON


def grade_one(task: Task) -> Graded:
    """Grade one submission from its bytes, its source's and the source's reference (JSON), reading and writing
    no file: a worker's whole task.

    The paths only name things (the row, the messages); the client writes the files (``Gradebook.save``).
    """
    submission, source, root = task.submission, task.source, task.root
    row, start = {**_error_row(submission, root, ""), "source": str(source)}, time.perf_counter()
    try:
        with phases() as record:
            with phase("assemble"):
                report, feedback_nb = _grade(task.source_bytes,
                                             lambda: parse_notebook(task.submission_bytes, submission), task.limits,
                                             (str(source), row["submission"]), _reference_of(task.reference))
            with phase("report"):
                data = report.to_dict()
                row.update(score=f"{report.score:g}", max_score=f"{report.max_score:g}", status=RowStatus.GRADED,
                           tampered=" ".join(f"{t['grade_id']}:{t['problem']}" for t in report.tampered),
                           suspicious=" ".join(report.suspicious), in_kernel=" ".join(report.in_kernel),
                           **manual_columns(data))
                page = feedback_html(report, feedback_nb)
        return Graded(row, data, page, time.perf_counter() - start, record)
    except WrongLesson as error:
        row.update(status=RowStatus.WRONG_LESSON, error=_unnamed(str(error), submission, root))
    except (GraderError, OSError) as error:
        row["error"] = _unnamed(str(error), submission, root)
    except Exception as error:  # noqa: BLE001 - one submission never stops the batch
        logger.debug("grading %s failed", submission, exc_info=True)
        row["error"] = f"grader error: {type(error).__name__}: {' '.join(str(error).split())}"[:500]
    return Graded(row)


def _say(line: str) -> None:
    """Tell the instructor, on stderr and at once, what the batch is doing before its progress bar starts."""
    print(printable(line), file=sys.stderr, flush=True)


def _quiet(line: str) -> None:
    """Say nothing (a batch run with ``progress=False``)."""


def batch(directory: str | os.PathLike[str], source: str | os.PathLike[str], out: str | os.PathLike[str],
          workers: int | None = None, limits: Limits = Limits(),  # noqa: B008 - Limits is frozen
          progress: bool = True, scheduler: str | None = None, name_mistakes: bool = True,
          timings: dict[str, dict[str, float]] | None = None) -> list[dict[str, str]]:
    """Grade every notebook under ``directory``; writes OUT/grades.csv, reports/ and feedback/; returns the rows.

    ``scheduler`` (``tcp://HOST:PORT`` or ``local:N``) runs the tasks on a Dask cluster instead of the local pool.
    ``name_mistakes`` runs each source's written-down wrong answers once here, so every report names the ones
    its answers behave like (``grader.grading.mistakes``). ``timings``, when given, receives each graded submission's
    seconds per phase (``grader.timing``), writing its files included.
    """
    directory, out = Path(directory), Path(out)
    book = Gradebook(out)
    for path, what in ((directory, "submissions folder"), (Path(source), "source")):
        if not path.exists():
            raise MissingPath(f"{what} {path} does not exist")
    if not directory.is_dir():
        raise WrongKindOfPath(f"{directory} is a file: pass the folder that holds the submissions "
                              f"(to grade one notebook: python -m grader grade {directory})")
    if out.exists() and not out.is_dir():
        raise WrongKindOfPath(f"--out {out} is a file: name a folder for the grades (it is made if missing)")
    if workers is not None and workers < 1:
        raise InvalidSetting(f"--workers must be 1 or more, not {workers}")
    if scheduler is not None:
        check_scheduler(scheduler)
    submissions, others = find_submissions(directory, out)
    if not submissions:
        raise MissingPath(f"{directory}: no notebook (*.ipynb) to grade in it or its folders"
                          + (f" ({len(others)} other file(s), skipped)" if others else ""))
    say = _say if progress else _quiet
    skipped = [str(path.relative_to(directory)) for path in others]
    say(f"reading {len(submissions)} notebook(s) under {directory}"
        + (f"; skipped, not notebooks: {', '.join(skipped)}" if skipped else ""))
    rows: list[dict[str, str]] = []
    tasks: list[Task] = []
    saves: list[tuple[str, str]] = []  # per task: its slug and cache key
    sources: dict[Path, bytes] = {}
    references: dict[Path, str | GraderError] = {}
    times: dict[str, float] = {}
    graded: list[tuple[Path, bytes, Path, str, str]] = []  # to grade: path, bytes, source, slug, cache key
    parsed: dict[Path, Any] = {}  # each source notebook, parsed once
    only = str(source) if Path(source).is_file() else ""  # the source of a submission that cannot be read, if known
    for path in submissions:  # every input in memory, and every unusable one a row, before any student code runs
        try:
            data = _read(path)
            notebook = parse_notebook(data, path)
            matched = match_source(path, Path(source), lambda: notebook)  # noqa: B023 - called here, at once
            if matched not in sources:
                sources[matched] = read_bytes(matched)
                parsed[matched] = parse_notebook(sources[matched], matched)
            check_submission(parsed[matched], notebook, str(path))
        except WrongLesson as error:
            rows.append({**_error_row(path, directory, str(error), only), "status": RowStatus.WRONG_LESSON})
            continue
        except GraderError as error:
            rows.append(_error_row(path, directory, str(error), only))
            continue
        except Exception as error:  # noqa: BLE001 - one submission never stops the batch
            logger.debug("reading %s failed", path, exc_info=True)
            rows.append(_error_row(path, directory, f"grader error: {type(error).__name__}: {error}"[:500], only))
            continue
        name, key = slug(path, directory), cache_key(data, sources[matched], limits)
        cached = book.cached(name, key)
        if cached is not None:
            rows.append({**_error_row(path, directory, ""), "source": str(matched), **cached, "cached": "yes"})
            continue
        graded.append((path, data, matched, name, key))
    unchanged = sum(row["cached"] == "yes" for row in rows)
    refused = f", {len(rows) - unchanged} could not be graded (see grades.csv)" if len(rows) > unchanged else ""
    say(f"{len(graded)} to grade, {unchanged} unchanged since the last run (grades kept){refused}")
    modules = _imports({matched for _, _, matched, _, _ in graded}, sources)
    zygote.preload(modules)
    supply = KernelSupply(limits.memory_bytes)  # the reference runs' kernels, closed before any student code runs
    for path, data, matched, name, key in graded:
        if matched not in references:
            say(f"reference run of {matched}: the solution{' and its written-down wrong answers' * name_mistakes}")
            references[matched] = _reference(matched, sources[matched], limits, supply, name_mistakes)
        reference = references[matched]
        if isinstance(reference, GraderError):
            rows.append({**_error_row(path, directory, str(reference)), "source": str(matched)})
            continue
        tasks.append(Task(path, matched, directory, limits, data, sources[matched], reference))
        saves.append((name, key))
    supply.close()
    zygote.release()  # the reference runs' kernels are gone; nothing of them outlives them here
    if tasks:
        say(f"starting the kernels to grade {len(tasks)} notebook(s)"
            + (f" on {scheduler}" if scheduler else f" ({workers} at a time)" if workers else " (one per core)"))
    done: Iterable[tuple[int, Graded | BaseException]] = (
        run_tasks(grade_one, tasks, workers, limits, modules) if scheduler is None
        else run_on_cluster(scheduler, grade_one, tasks, limits, [name for name, _ in saves], modules))
    with contextlib.ExitStack() as stack:
        if progress and tasks:  # a log line is printed above the bar, never through it
            from tqdm import tqdm
            from tqdm.contrib.logging import logging_redirect_tqdm
            done = stack.enter_context(tqdm(done, total=len(tasks), unit="nb", desc="grading", dynamic_ncols=True))
            stack.enter_context(logging_redirect_tqdm())
        for index, result in done:
            if isinstance(result, BaseException):  # the worker process itself failed
                path = tasks[index].submission
                rows.append(_error_row(path, directory, f"worker failed: {type(result).__name__}: {result}",
                                       str(tasks[index].source)))
            else:
                written = time.perf_counter()
                rows.append(book.save(*saves[index], result.row, result.report, result.feedback))
                times[rows[-1]["submission"]] = result.seconds
                if timings is not None and result.phases is not None:
                    timings[rows[-1]["submission"]] = {**result.phases, "files": time.perf_counter() - written}
    book.write_rows(rows)
    book.write_times(times)
    book.write_skipped(skipped)
    return sorted(rows, key=lambda row: row["submission"])
