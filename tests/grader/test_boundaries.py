"""The grader's boundaries: one module per job, nbgrader's own predicates, one root exception, declared packages."""

import ast
import builtins
import importlib
import importlib.metadata
import inspect
import itertools
import logging
import pkgutil
import re
import sys
import tomllib
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

import grader
from grader.errors import GraderError

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted(name.removeprefix("grader.") for _, name, _ in pkgutil.walk_packages(grader.__path__, "grader.")
                 if not name.endswith("__main__"))


def test_assertion_helpers_and_course_gate_have_names_that_cannot_be_confused():
    names = {name.rsplit(".", 1)[-1] for name in MODULES}
    assert {"asserts", "course_check", "course"} <= names
    assert not {"check", "checks"} & names
    from grader import assert_same
    from grader.grading.asserts import assert_same as same

    assert assert_same is same


# the grader's layers, lowest first: a module imports its own layer or a lower one, never a higher one or a
# sibling of its rank (authoring and kernels know nothing of each other)
LAYERS = {"base": 0, "authoring": 1, "kernels": 1, "grading": 2, "pages": 3, "classroom": 4, "cli": 5}
BASE = {"errors", "messages", "settings", "course_config", "timing"}


def _layer(module: str) -> str:
    """The layer of a dotted module name inside grader."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in ("__init__", "__main__"):
        return "cli"  # the package's facade and the command line sit on top
    return "base" if parts[1] in BASE else parts[1]


def _upward_imports(module: str, source: str) -> list[str]:
    """Each import of ``source`` (the code of grader module ``module``) that reaches a higher or sibling layer."""
    package = module if module.endswith("__init__") else module.rsplit(".", 1)[0]
    package = package.removesuffix(".__init__")
    targets = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
            targets += [base] if node.module else [f"{base}.{alias.name}" for alias in node.names]
    own = _layer(module)
    return [f"{module} ({own}) imports {target} ({_layer(target)})" for target in targets
            if target.split(".")[0] == "grader" and _layer(target) != own
            and LAYERS[_layer(target)] >= LAYERS[own]]


def test_layers_import_only_downward():
    found = []
    for path in sorted((ROOT / "grader").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        assert _layer(module) in LAYERS, f"{module} is in no layer"
        found += _upward_imports(module, path.read_text(encoding="utf-8"))
    assert found == []
    # the check sees an upward import, relative or absolute, at module level or inside a function
    assert _upward_imports("grader.grading.execute", "from ..classroom import batch")
    assert _upward_imports("grader.kernels.zygote", "def f():\n    import grader.grading.probe")
    assert _upward_imports("grader.authoring.course", "from ..kernels.supply import KernelSupply")
    assert _upward_imports("grader.errors", "from .grading.report import Report")
    assert not _upward_imports("grader.classroom.batch", "from ..grading.report import Report\nfrom . import pool")


def test_the_grades_folder_is_spelled_in_the_gradebook_alone():
    files = {"reports", "feedback", "grades.csv", "times.csv"}
    joins = {}  # module -> the grades folder's names it joins onto a path (``out / "reports"``)
    for path in (ROOT / "grader").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found = {node.right.value for node in ast.walk(tree) if isinstance(node, ast.BinOp)
                 and isinstance(node.op, ast.Div) and isinstance(node.right, ast.Constant)
                 and node.right.value in files}
        if found:
            joins[path.relative_to(ROOT).as_posix()] = found
    assert joins == {"grader/classroom/gradebook.py": files}
    for name in ("manual", "classview"):  # they read and write the grades folder through the gradebook, not batch
        source = (ROOT / "grader" / "classroom" / f"{name}.py").read_text(encoding="utf-8")
        imported = {node.module for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ImportFrom)}
        assert "gradebook" in imported and "batch" not in imported, name


def test_a_report_is_data_and_the_pages_render_it():
    imported = {}  # module -> the top-level names it imports from
    private = []  # a private name one grader module takes from another
    for path in (ROOT / "grader").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        nodes = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        imported[path.stem] = {(n.module or "").split(".")[0] for n in nodes if not n.level} | {
            a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        private += [f"{path.stem}: {a.name}" for n in nodes if n.level for a in n.names if a.name.startswith("_")]
    assert not {"jinja2", "mistune", "markupsafe"} & imported["report"]
    assert {"jinja2", "mistune", "markupsafe"} <= imported["pages"]
    assert private == []


def test_statuses_are_str_enums_that_read_and_print_as_their_word():
    import csv
    import io
    import json

    from grader.classroom.gradebook import RowStatus
    from grader.grading.execute import CellStatus
    from grader.grading.report import ManualResult, ManualStatus, Report, TestResult, TestStatus

    words = {CellStatus: ["ok", "error", "timeout", "died", "not-run"],
             TestStatus: ["passed", "failed", "timeout", "died", "not-run"],
             ManualStatus: ["pending", "graded", "unanswered"], RowStatus: ["graded", "error", "wrong-lesson"]}
    for kind, expected in words.items():
        assert [str(member) for member in kind] == expected and [f"{m}" for m in kind] == expected
        assert json.dumps(list(kind)) == json.dumps(expected)
        buffer = io.StringIO()
        csv.writer(buffer).writerow(list(kind))
        assert buffer.getvalue().strip() == ",".join(expected)
    report = Report("a.ipynb", "s.ipynb", exercises=[TestResult("t", 0, 1, TestStatus.NOT_RUN)],
                    manual=[ManualResult("m", 2)])
    data = report.to_dict()
    assert json.loads(report.to_json()) == data and data["exercises"][0]["status"] == "not-run"
    assert data["manual"][0]["status"] == "pending" and type(json.loads(report.to_json())["manual"][0]["status"]) is str
    again = Report.from_dict(data)
    assert again.exercises[0].status is TestStatus.NOT_RUN and again.manual[0].status is ManualStatus.PENDING


def test_course_folder_knowledge_lives_in_grader_course(tmp_path):
    from grader.authoring.course import is_lesson, lessons, match_source

    for name in ("01_intro", "02_intro_more", "10_other"):
        (tmp_path / f"{name}.ipynb").write_text("{}", encoding="utf-8")
    assert is_lesson(Path("03_handoff_pseudo_tool.ipynb"), "03")
    assert [p.stem for p in lessons(tmp_path, ["02"])] == ["02_intro_more"]
    with pytest.raises(FileNotFoundError, match="no solution notebook for \\['07'\\]"):
        lessons(tmp_path, ["07"])
    assert match_source(Path("alice_02_intro_more.ipynb"), tmp_path).stem == "02_intro_more"
    assert match_source(Path("10_bob.ipynb"), tmp_path).stem == "10_other"
    sources = {path.name: path.read_text(encoding="utf-8") for path in (ROOT / "grader").rglob("*.py")}
    for word in ("def is_lesson", "def lessons", "def match_source"):
        assert [name for name, text in sources.items() if word in text] == ["course.py"], word
    # the folders' names, in the one module the command line reads without importing nbformat
    assert [name for name, text in sources.items() if '"solutions"' in text] == ["course_config.py"]
    for join in ('/ "notebooks"', '/ "solutions"', '/ "student"'):
        assert [name for name, text in sources.items() if join in text] == [], join


def test_cell_predicates_agree_with_nbgraders_own_on_every_cell_and_are_guarded_against_wrong_types():
    """The grader reads nbgrader metadata as nbgrader does, without importing nbgrader on the grading path."""
    from nbgrader import utils as nbgrader_utils

    from grader.authoring import metadata
    from grader.authoring.notebooks import read_notebook

    ids = itertools.count()
    flags = [{}, *({key: value for key, value in zip(("grade", "solution", "locked"), bits, strict=True)
                   if value is not None} for bits in itertools.product((True, False, None), repeat=3))]
    cells = [nbformat.from_dict({"id": f"x{n}", "cell_type": "code", "source": "", "outputs": [],
                                 "execution_count": None, "metadata": {"nbgrader": meta} if meta else {}})
             for n, meta in enumerate(flags)]
    cells += [cell for folder in ("solutions", "student", "notebooks")
              for path in sorted((ROOT / folder).glob("*.ipynb")) for cell in read_notebook(path).cells]
    for cell in cells:
        assert (metadata.is_grade(cell), metadata.is_solution(cell), metadata.is_protected(cell)) == (
            bool(nbgrader_utils.is_grade(cell)), bool(nbgrader_utils.is_solution(cell)),
            bool(nbgrader_utils.is_locked(cell))), cell.metadata
    assert "import nbgrader" not in inspect.getsource(metadata)

    def cell(meta):
        return nbformat.from_dict({"id": f"cell-{next(ids)}", "cell_type": "code", "source": "", "outputs": [],
                                   "execution_count": None, "metadata": {"nbgrader": meta}})

    test = cell({"grade": True, "solution": False, "locked": True, "grade_id": "t", "points": 2})
    assert metadata.is_test(test) and metadata.is_protected(test) and metadata.points(test) == 2
    for odd in ("x", ["grade"], 3, None):
        assert not metadata.is_test(cell(odd)) and not metadata.is_solution(cell(odd))
        assert metadata.grade_id(cell(odd)) is None
    assert metadata.grade_id(cell({"grade_id": ["a"]})) is None
    assert metadata.points(cell({"points": "two"})) == 0
    nb = new_notebook(cells=[cell("x"), cell({"points": "2", "grade_id": ["a"], "grade": "yes"})])
    problems = metadata.type_problems(nb, "nb")
    assert problems == ["nb cell 0: nbgrader metadata must be an object, got str",
                        "nb cell 1: grade_id must be a string, got list",
                        "nb cell 1: nbgrader 'grade' must be true or false, got 'yes'",
                        "nb cell 1: points must be a number, got str"]


def test_every_exception_the_grader_defines_derives_from_grader_error():
    defined = []
    for name in MODULES:
        module = importlib.import_module(f"grader.{name}")
        defined += [obj for obj in vars(module).values() if inspect.isclass(obj) and issubclass(obj, BaseException)
                    and obj.__module__ == module.__name__]
    assert defined, "the grader defines its exceptions"
    # the one deliberate exception outside it: a failing check of assert_same is an AssertionError, not an input
    # the grader cannot use
    assert [cls.__name__ for cls in defined if not issubclass(cls, GraderError)] == ["CheckFailed"]
    assert issubclass(importlib.import_module("grader.grading.asserts").CheckFailed, AssertionError)


def test_every_raise_in_the_grader_is_a_grader_error_or_a_builtin_it_documents():
    allowed = {"AttributeError", "AssertionError", "SystemExit"}  # module __getattr__, a failing test, the sandbox
    for path in (ROOT / "grader").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and isinstance(node.exc.func, ast.Name):
                name = node.exc.func.id
                if name not in vars(builtins):
                    continue  # a grader class, checked above
                assert name in allowed, f"{path.name}:{node.lineno} raises {name}"


def _third_party_imports():
    found = set()
    for path in [*(ROOT / "grader").rglob("*.py"), *(ROOT / "shared" / "handoffs").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0])
    return {name for name in found if name not in sys.stdlib_module_names and name not in ("grader", "handoffs",
                                                                                             "reservo_tools", "")}


def test_every_imported_package_is_declared():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    every = project["dependencies"] + [dep for deps in project["optional-dependencies"].values() for dep in deps]
    declared = {re.split(r"[<>=\[ ]", dep)[0].lower().replace("_", "-") for dep in every}
    distributions = importlib.metadata.packages_distributions()
    missing = {}
    for name in _third_party_imports():
        dists = {d.lower().replace("_", "-") for d in distributions.get(name, [name])}
        if not dists & declared:
            missing[name] = sorted(dists)
    assert missing == {}


def test_the_feedback_template_ships_with_the_package_and_escapes():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "templates/*.j2" in project["tool"]["setuptools"]["package-data"]["grader"]
    assert (ROOT / "grader" / "templates" / "feedback.html.j2").exists()
    from grader.grading.report import Report, TestResult
    from grader.pages import feedback_html

    failed = TestResult("t", 0, 1, "failed", "<img src=x onerror=1>")
    report = Report("<b>alice<b>.ipynb", "s.ipynb", exercises=[failed])
    nb = new_notebook(cells=[new_markdown_cell("[x](javascript:alert(1)) <iframe>"),
                             new_code_cell("</code><script>", outputs=[nbformat.v4.new_output(
                                 "display_data", data={"text/html": "<script>x()</script>", "text/plain": "ok"})])])
    page = feedback_html(report, nb)
    assert "<script>" not in page and "<iframe>" not in page and "<img src=x" not in page
    assert "javascript:" not in page and "&lt;b&gt;alice&lt;b&gt;" in page


def test_an_unexpected_error_is_one_line_and_logged(monkeypatch, capsys, caplog):
    from grader import __main__ as cli

    def broken(args):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(cli, "cmd_generate", broken)
    parser = cli.parser
    monkeypatch.setattr(cli, "parser", lambda: _rebound(parser(), broken))
    with caplog.at_level(logging.DEBUG, logger="grader"):
        assert cli.main(["generate"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "error: grader failed: RuntimeError: boom second line (run with -v for details)"
    assert any(record.exc_info and "boom" in str(record.exc_info[1]) for record in caplog.records)


def _rebound(top, run):
    top.set_defaults(run=run)
    for action in top._subparsers._group_actions:  # every subcommand runs ``run``
        for sub in action.choices.values():
            sub.set_defaults(run=run)
    return top


def test_a_report_round_trips_through_its_dict():
    """Manual marks are merged on the dataclass (grader.classroom.manual), so a saved report must read back whole."""
    from grader.grading.report import ManualResult, Report, TestResult
    from grader.messages import Say, say

    report = Report("alice.ipynb", "s.ipynb", exercises=[TestResult("t1", 1, 1, "passed"),
                                                         TestResult("t2", 0, 2, "failed", "AssertionError: x")],
                    tampered=[{"grade_id": "t1", "problem": "edited"}], notes=[say(Say.VISIBLE_ONLY)],
                    suspicious=["frames"],
                    manual=[ManualResult("essay", 3, answer="texto"), ManualResult("other", 2, 1.5),
                            ManualResult("blank", 2, 0.0, unanswered=True)])
    data = report.to_dict()
    again = Report.from_dict(data)
    assert again == report and again.to_dict() == data
    again.manual[0].points = 2
    assert again.to_dict()["manual_pending"] == [] and again.to_dict()["manual"][0]["status"] == "graded"


def test_every_message_of_the_grader_is_written_in_both_languages_with_the_same_parameters():
    import string

    from grader.messages import CATALOG, Say

    assert set(CATALOG) == set(Say)
    for kind, (english, spanish) in CATALOG.items():
        fields = [{name for _, name, _, _ in string.Formatter().parse(text) if name} for text in (english, spanish)]
        assert fields[0] == fields[1], kind
        assert english != spanish, kind
    literals = {}  # every string the grader's code writes, docstrings aside, by module
    for path in (ROOT / "grader").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree) if isinstance(
            node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
        literals[path.name] = " ".join(node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
                                       and isinstance(node.value, str) and id(node) not in docstrings)
    for english, spanish in CATALOG.values():  # each text is written once, in the catalog
        for text in (english, spanish):
            fixed = max((part.split("}")[-1] for part in text.split("{")), key=len).strip(" :[]()")
            if len(fixed) >= 12:
                assert [name for name, found in literals.items() if fixed in found] == ["messages.py"], fixed
