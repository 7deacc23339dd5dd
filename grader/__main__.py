"""The grader's command line: ``python -m grader generate | grade | batch | manual template | manual import | report |
release | check | convert``."""

import argparse
import dataclasses
import logging
import sys
import warnings
from pathlib import Path
from typing import Any

# nbformat imports jsonschema, whose optional IRI format checker (rfc3987_syntax) builds a grammar at import: 0.9 s
# of every command's start for a format no notebook schema uses. Marked missing, jsonschema goes without it.
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

from .course_config import SOLUTIONS, STUDENT  # noqa: E402 - after the line above
from .errors import GraderError, WrongKindOfPath  # noqa: E402 - after the line above
from .grading.limits import DEFAULT_LIMITS, Limits  # noqa: E402 - after the line above
from .grading.report import printable  # noqa: E402 - after the line above

QUIET_LOGGERS = ("jupyter_client", "nbclient", "traitlets", "asyncio", "tornado", "distributed")
"""Libraries whose warnings (a kernel that did not answer in time...) the user sees only with -v."""
logger = logging.getLogger("grader")


def _limits(args: argparse.Namespace) -> Limits:
    """The limits the command line gives: each field of ``Limits`` from its flag, in the flag's unit."""
    given = {f.name: getattr(args, f.name) * f.metadata.get("unit", 1) for f in dataclasses.fields(Limits)}
    typed: dict[str, Any] = {name: int(value) if isinstance(getattr(DEFAULT_LIMITS, name), int) else float(value)
                             for name, value in given.items()}
    return Limits(**typed)


def cmd_generate(args: argparse.Namespace) -> int:
    from .authoring.generate import EditedStudentNotebook, generate, refusal

    try:
        changed = generate(args.solutions, args.student, args.lessons, force=args.force)
    except EditedStudentNotebook as error:  # one line per file, and nothing written
        for path in error.paths:
            print(f"error: {_one_line(refusal(path))}", file=sys.stderr)
        return 2
    for path in changed:
        print(_one_line(f"wrote {path}"))
    print(f"{len(changed)} student notebook(s) changed")
    return 0


def cmd_grade(args: argparse.Namespace) -> int:
    from .kernels import zygote

    if zygote.enabled():  # first: it imports IPython and the course while the grader imports and prepares
        zygote.zygote()
    from .authoring.course import match_source
    from .authoring.notebooks import read_notebook, write_atomic
    from .authoring.release import is_release
    from .course_config import course_root
    from .grading.pipeline import grade_notebooks

    submission = Path(args.submission)
    if args.source and Path(args.source).is_dir():
        raise WrongKindOfPath(f"--source {args.source} is a folder: pass one source notebook, or the folder "
                              f"with --solutions {args.source}")
    released = is_release(course_root()) and not args.source and not args.solutions  # a student's self-check
    solutions = Path(args.solutions) if args.solutions else course_root() / (STUDENT if released else SOLUTIONS)
    source = Path(args.source) if args.source else match_source(submission, solutions)
    report, feedback_nb = grade_notebooks(read_notebook(source), read_notebook(submission), limits=_limits(args),
                                          names=(str(source), str(submission)), visible_only=released, disk=True)
    print(report.table())
    if args.json:
        write_atomic(args.json, report.to_json())
    if args.feedback:
        from .pages import feedback_html  # jinja2 and mistune: only for a page

        write_atomic(args.feedback, feedback_html(report, feedback_nb))
    return 0


def cmd_release(args: argparse.Namespace) -> int:
    from .authoring.release import release
    from .course_config import course_root

    out = release(Path(args.root) if args.root else course_root(), args.out)
    print(f"wrote the student release to {out} (no solutions, no hidden tests; grade there on the visible tests)")
    return 0


def cmd_batch(args: argparse.Namespace) -> int:
    from .classroom.batch import batch
    from .classroom.gradebook import Gradebook
    from .course_config import course_root

    source = args.source or course_root() / SOLUTIONS  # as grade finds it: the installed course's, from any folder
    rows = batch(args.directory, source, args.out, workers=args.workers, limits=_limits(args),
                 scheduler=args.scheduler)
    graded = [r for r in rows if r["status"] == "graded"]
    errors = [r for r in rows if r["status"] != "graded"]
    print(_one_line(f"{len(graded)} graded, {len(errors)} with errors -> {Gradebook(Path(args.out)).grades}"))
    for row in errors:
        print("  " + _one_line(f"{row['submission']}: {row['error']}"))
    skipped = Gradebook(Path(args.out)).read_skipped()
    if skipped:
        print(_one_line(f"{len(skipped)} file(s) skipped, not notebooks: {', '.join(skipped)}"))
    if not graded:  # every submission an error row (another lesson's, unreadable): never a silent success
        print(_one_line(f"error: nothing was graded: all {len(errors)} submission(s) are error rows"), file=sys.stderr)
        return 1
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from .classroom.course_check import check_course, is_warning

    found = check_course(args.root, workers=args.workers, limits=_limits(args), lessons=args.lessons,
                         mistakes=not args.no_mistakes)
    warnings = [line for line in found if is_warning(line)]
    problems = [line for line in found if not is_warning(line)]
    for line in warnings + problems:
        print(_one_line(line))
    also = f", {len(warnings)} warning(s)" if warnings else ""
    print(f"{len(problems)} problem(s){also}" if problems else f"course OK{also}")
    return 1 if problems else 0


def cmd_convert(args: argparse.Namespace) -> int:
    from .grading.convert import convert

    cells = convert(args.source, args.out, _limits(args))
    for cell in cells:
        for line in cell.lines():
            print(_one_line(line) if not line.startswith("  ") else "  " + _one_line(line))
    changed = sum(len(cell.converted) for cell in cells)
    left = sum(len(cell.left) for cell in cells)
    outside = sum(not cell.graded_in_kernel for cell in cells)
    print(_one_line(f"wrote {args.out}: {changed} assert(s) converted, {left} left; {outside} of {len(cells)} test "
                    "cell(s) follow the assert_same rule (verdict decided by the grader), the others are graded in the "
                    "student's kernel"))
    return 0


def cmd_store_outputs(args: argparse.Namespace) -> int:
    from .classroom.course_check import store_outputs

    problems = [problem for path in args.notebooks for problem in store_outputs(Path(path), _limits(args))]
    for problem in problems:
        print(_one_line(problem))
    print(f"{len(problems)} problem(s)" if problems else f"stored the outputs of {len(args.notebooks)} notebook(s)")
    return 1 if problems else 0


def cmd_manual_import(args: argparse.Namespace) -> int:
    from .classroom.gradebook import Gradebook
    from .classroom.manual import import_marks

    rows, problems = import_marks(args.scores, args.out)
    for problem in problems:
        print(f"error: {_one_line(problem)}", file=sys.stderr)
    pending = [r for r in rows if r["manual_pending"]]
    print(_one_line(f"imported the marks of {args.scores} -> {Gradebook(Path(args.out)).grades}; "
                    f"{len(pending)} submission(s) still pending"
                    + (f"; {len(problems)} line(s) refused, the others imported" if problems else "")))
    return 1 if problems else 0


def cmd_manual_template(args: argparse.Namespace) -> int:
    from .classroom.manual import write_template

    path, count = write_template(args.out, args.csv)
    print(_one_line(f"wrote {path}: {count} cell(s) to mark; fill in points, then: "
                    f"python -m grader manual import {path} --out {args.out}"))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from .classroom.classview import write_class_report

    for path in write_class_report(args.out, args.threshold / 100):
        print(_one_line(f"wrote {path}"))
    return 0


class SpanishHelp(argparse.HelpFormatter):
    """argparse's help in Spanish where it writes its own words (usage), for the commands a student runs."""

    def add_usage(self, usage: str | None, actions: Any, groups: Any, prefix: str | None = None) -> None:
        super().add_usage(usage, actions, groups, "uso: " if prefix is None else prefix)


def _in_spanish(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """A parser whose own words (usage, section titles, -h) are Spanish: its arguments' help is the caller's."""
    p.formatter_class = SpanishHelp
    p._positionals.title, p._optionals.title = "argumentos", "opciones"
    p.add_argument("-h", "--help", action="help", help="muestra esta ayuda y termina")
    return p


STUDENT_HELP = ("Califica notebooks del curso. Para estudiantes: grader grade NOTEBOOK (tu tabla de tests y tu "
                "puntuación; grader grade -h para sus opciones). Las demás órdenes son del profesor y su ayuda "
                "está en inglés.")


def parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand: Spanish where a student reads it (the top and ``grade``), English
    for the instructor's commands."""
    top = _in_spanish(argparse.ArgumentParser(prog="python -m grader", description=STUDENT_HELP, add_help=False))
    top.add_argument("-v", "--verbose", action="store_true",
                     help="explica lo que hace el grader, con los tracebacks")
    sub = top.add_subparsers(dest="command", required=True, title="órdenes")

    def with_limits(p: argparse.ArgumentParser, spanish: bool = False) -> argparse.ArgumentParser:
        for f in dataclasses.fields(Limits):  # one flag per limit, its default the field's
            unit = f.metadata.get("unit", 1)
            default = getattr(DEFAULT_LIMITS, f.name) / unit if unit != 1 else getattr(DEFAULT_LIMITS, f.name)
            flag = f.metadata["flag"]
            text = (f"{f.metadata['ayuda']} (por defecto {default:g})" if spanish
                    else f"{f.metadata['help']} (default {default:g})")
            p.add_argument(flag, dest=f.name, metavar=flag.lstrip("-").upper().replace("-", "_"), default=default,
                           type=float if unit != 1 or isinstance(default, float) else int, help=text)
        return p

    p = sub.add_parser("generate", help="write student/ from solutions/")
    p.add_argument("lessons", nargs="*", help="lesson numbers or names (default: all)")
    p.add_argument("--solutions", default=SOLUTIONS)
    p.add_argument("--student", default=STUDENT)
    p.add_argument("--force", action="store_true", help="overwrite student notebooks edited since generate wrote them")
    p.set_defaults(run=cmd_generate)

    p = _in_spanish(sub.add_parser(
        "grade", add_help=False, help="califica un notebook (para estudiantes y profesores)",
        description="Califica un notebook: lo corre de arriba abajo en un kernel nuevo, con las celdas de test "
                    "del curso, e imprime la tabla de tests y la puntuación."))
    p = with_limits(p, spanish=True)
    p.add_argument("submission", metavar="NOTEBOOK", help="el notebook que se califica")
    p.add_argument("--source", metavar="SOLUCION", help="el notebook de la solución (por defecto: el de --solutions "
                                                        "con el mismo nombre, si no el que comparte sus celdas)")
    p.add_argument("--solutions", metavar="CARPETA", help="carpeta de soluciones (por defecto: la del curso "
                                                          "instalado, desde cualquier carpeta)")
    p.add_argument("--json", metavar="ARCHIVO", help="escribe aquí el informe en JSON")
    p.add_argument("--feedback", metavar="PAGINA", help="escribe aquí la página de resultados (HTML)")
    p.set_defaults(run=cmd_grade)

    p = with_limits(sub.add_parser("batch", help="grade a folder of submissions in parallel"))
    p.add_argument("directory")
    p.add_argument("--source", help="a solution notebook or a folder of them (default: the installed course's "
                                    "solutions/, from any folder; each submission matched as grade matches it)")
    p.add_argument("--out", required=True, help="folder for grades.csv, reports/ and feedback/")
    p.add_argument("--workers", type=int, help="parallel workers (default: one per core)")
    p.add_argument("--scheduler", help="grade on a Dask cluster: tcp://HOST:PORT, or local:N to start N local workers "
                                       "(needs the cluster extra; --workers is then unused)")
    p.set_defaults(run=cmd_batch)

    p = with_limits(sub.add_parser("store-outputs", help="run guided notebooks and store their outputs"))
    p.add_argument("notebooks", nargs="+")
    p.set_defaults(run=cmd_store_outputs)

    p = sub.add_parser("manual", help="manually graded cells")
    manual = p.add_subparsers(dest="manual_command", required=True)
    p = manual.add_parser("import", help="merge the instructor's marks (CSV: submission,grade_id,points) into a batch")
    p.add_argument("scores", help="CSV with the columns submission,grade_id,points")
    p.add_argument("--out", required=True, help="the batch's output folder (grades.csv and reports/)")
    p.set_defaults(run=cmd_manual_import)
    p = manual.add_parser("template", help="write the marks CSV to fill in, one row per cell still pending")
    p.add_argument("out", help="the batch's output folder (grades.csv and reports/)")
    p.add_argument("--csv", help="where to write it (default: OUT/marks.csv; never over an existing file)")
    p.set_defaults(run=cmd_manual_template)

    p = sub.add_parser("report", help="the class view of a batch: class.html, canvas.csv, moodle.csv (nothing runs)")
    p.add_argument("out", help="the batch's output folder (grades.csv and reports/)")
    p.add_argument("--threshold", type=float, default=80,
                   help="percent of fingerprints two submissions share to be listed as alike (default 80)")
    p.set_defaults(run=cmd_report)

    p = sub.add_parser("release", help="write what students get: the course without solutions or hidden tests")
    p.add_argument("--out", required=True, help="a new folder for the release")
    p.add_argument("--root", help="the course checkout (default: the installed course)")
    p.set_defaults(run=cmd_release)

    p = with_limits(sub.add_parser("convert", help="rewrite a plain nbgrader notebook's assert A == B test lines as "
                                                   "assert_same(A, B) where a run of it shows that changes no verdict"))
    p.add_argument("source", help="the solution notebook (run once, as written)")
    p.add_argument("--out", required=True, help="the new notebook to write (never the source itself)")
    p.set_defaults(run=cmd_convert)

    p = with_limits(sub.add_parser("check", help="the course's CI gate"))
    p.add_argument("lessons", nargs="*", help="lesson numbers or names (default: the whole course)")
    p.add_argument("--root", default=".")
    p.add_argument("--workers", type=int)
    p.add_argument("--no-mistakes", action="store_true",
                   help="skip grading each written-down wrong answer (that it loses points and is named as itself)")
    p.set_defaults(run=cmd_check)
    return top


def _one_line(text: str) -> str:
    """``text`` as one line a terminal shows as it is: no escape sequence or control character from a file name."""
    return printable(" ".join(text.split())[:500])


class PrintableFormatter(logging.Formatter):
    """Log lines with every control character shown as ``?`` (a file name in a message cannot rewrite the terminal)."""

    def format(self, record: logging.LogRecord) -> str:
        return "\n".join(printable(line) for line in super().format(record).split("\n"))


def main(argv: list[str] | None = None) -> int:
    """Run a subcommand; unusable input exits 2 with one line and no traceback (``-v`` logs the traceback)."""
    args = parser().parse_args(argv)
    handler = logging.StreamHandler()
    handler.setFormatter(PrintableFormatter("%(name)s: %(message)s"))
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING, handlers=[handler])
    if not args.verbose:  # a kernel's timeout or interrupt is in the report; the libraries' notes only with -v
        for name in QUIET_LOGGERS:
            logging.getLogger(name).setLevel(logging.ERROR)
    warnings.simplefilter("ignore")  # nbformat's notes on fixed cell ids are not the user's concern
    try:
        code: int = args.run(args)
        return code
    except GraderError as error:
        logger.debug("refused", exc_info=True)
        print(f"error: {_one_line(str(error))}", file=sys.stderr)
        return 2
    except Exception as error:  # noqa: BLE001 - a grader bug still ends in one line; -v shows the traceback
        logger.debug("unexpected error", exc_info=True)
        print(f"error: grader failed: {type(error).__name__}: {_one_line(str(error))} (run with -v for details)",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
