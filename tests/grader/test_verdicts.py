"""Verdicts decided outside the student's kernel: each attack that earned full marks when tests were judged inside it.

The student's kernel receives each test cell with the expected side of every check removed
(``grader.grading.testcells``); it reports values (``grader.grading.probe``) and the grader compares them with the
expected values of a trusted run of the solution (``grader.grading.reference``). Each test here is one
real attack, graded by the real grader; the fixture source has test_quote_total (1 point),
test_quote_total_more (2, hidden part: quote_total(5) is 10000) and test_charge (2, hidden part:
charge(6400) is 3200). The honest answers below (quote_total right, charge wrong) score 3.
"""

import ast
import base64
import binascii
import json
import re
from pathlib import Path

import pytest
from fixture_submissions import RIGHT_CHARGE, RIGHT_QUOTE, SOURCE, WRONG_CHARGE, cell_of, submission
from nbformat.v4 import new_code_cell

from grader.authoring.generate import student_version
from grader.authoring.metadata import is_test
from grader.authoring.notebooks import dumps, read_notebook
from grader.classroom.batch import batch
from grader.grading.execute import Limits
from grader.grading.pipeline import grade_notebooks
from grader.grading.testcells import rewrite_tests

pytestmark = pytest.mark.slow  # kernels, subprocesses or a browser: not in make test-fast

ROOT = Path(__file__).resolve().parents[2]
LIMITS = Limits(cell_timeout=10)
HIDDEN_EXPECTED = ("3200", "10000")  # the hidden checks' expected values, in no input of the fixture


# The measured attacks of issue 17, each a full mark (or a leak) under the first design.
REBIND = "assert_same = lambda *a, **k: None"
FRAME_READER = '''def charge(price_cents):
    """Returns the expected side of the check that called it, read from the test cell's source."""
    import ast, linecache, sys
    frame = sys._getframe(1)
    tree = ast.parse("".join(linecache.getlines(frame.f_code.co_filename)))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and len(node.args) >= 2 and node.lineno == frame.f_lineno:
            try:
                return eval(compile(ast.Expression(node.args[1]), "<peek>", "eval"), frame.f_globals)
            except Exception:
                pass
    return price_cents'''
FORGED_REPLY = '''_kernel = get_ipython().kernel
_send = _kernel.session.send
def _forge(stream, msg_or_type, content=None, *args, **kwargs):
    if msg_or_type == "execute_reply" and isinstance(content, dict) and content.get("status") == "error":
        content = {"status": "ok", "execution_count": content.get("execution_count"), "user_expressions": {},
                   "payload": []}
    return _send(stream, msg_or_type, content, *args, **kwargs)
_kernel.session.send = _forge'''
RAISING_CHARGE = "def charge(price_cents):\n    raise ValueError('sin implementar')"
OK_REPLY_FOR_ITS_TEST = '''def charge(price_cents):
    """Sends the "ok" execute_reply of the test that called it, then raises."""
    k = get_ipython().kernel
    k.session.send(k.shell_stream, "execute_reply", {"status": "ok", "execution_count": 1, "user_expressions": {},
                                                     "payload": []},
                   parent=k.get_parent("shell"), ident=k._parent_ident["shell"])
    raise ValueError("sin implementar")'''
IMPORT_PROXY = '''import builtins, types
from IPython.display import publish_display_data
from grader.grading.values import encode

_real_import = builtins.__import__
_fake = types.ModuleType("grader")
_fake.probe = types.SimpleNamespace(check=lambda index, *a, **k: publish_display_data(
    {"application/vnd.handoffs-grader.check+json": {"check": index, "actual": encode(3000), "what": "x"}}))
def _proxy(name, *args, **kwargs):
    return _fake if name == "grader.grading.probe" else _real_import(name, *args, **kwargs)
builtins.__import__ = _proxy'''
BASE64_LEAK = '''import base64, linecache
print(base64.b64encode("\\n".join("".join(e[2]) for e in linecache.cache.values() if len(e) > 2).encode()).decode())
print(base64.b64encode(repr(list(In)).encode()).decode())'''
HIDDEN_PRINTER = '''def charge(price_cents):
    print(f"ARG={price_cents}")
    _handle.update(f"UPDATED={price_cents}")
    return price_cents'''
FORGED_REPORTS = '''def charge(price_cents):
    from IPython.display import publish_display_data
    from grader.grading.values import encode
    for index in range(8):  # a report for every check, with the visible expected value
        publish_display_data({"application/vnd.handoffs-grader.check+json":
                              {"check": index, "actual": encode(3000), "what": "x"}})
    return price_cents // 2'''
MALFORMED_REPORT = '''def charge(price_cents):
    from IPython.display import publish_display_data
    publish_display_data({"application/vnd.handoffs-grader.check+json": {"check": "0", "actual": [[[[]]]]}})
    return price_cents // 2'''

ATTACKS = {
    "honest": submission(),
    "rebind_assert_same": submission(attack=REBIND),
    "frame_reader": submission(charge=FRAME_READER),
    "forged_execute_reply": submission(charge=RAISING_CHARGE, attack=FORGED_REPLY),
    "ok_reply_for_its_test": submission(charge=OK_REPLY_FOR_ITS_TEST),
    "import_proxy": submission(attack=IMPORT_PROXY),
    "base64_leak": submission(after={"test_quote_total_more": BASE64_LEAK, "test_charge": BASE64_LEAK}),
    "hidden_printer": submission(charge=HIDDEN_PRINTER, attack="_handle = display('start', display_id=True)"),
    "forged_reports": submission(charge=FORGED_REPORTS),
    "malformed_report": submission(charge=MALFORMED_REPORT),
    "correct": submission(charge=RIGHT_CHARGE),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("verdicts")
    subs, out = root / "subs", root / "out"
    subs.mkdir()
    for name, nb in ATTACKS.items():
        (subs / f"{name}.ipynb").write_text(dumps(nb), encoding="utf-8")
    rows = {Path(r["submission"]).stem: r for r in batch(subs, SOURCE, out, workers=2, limits=LIMITS,
                                                        progress=False)}
    reports = {p.stem: json.loads(p.read_text(encoding="utf-8"))["report"] for p in (out / "reports").glob("*.json")}
    pages = {p.stem: p.read_text(encoding="utf-8") for p in (out / "feedback").glob("*.html")}
    return {"rows": rows, "reports": reports, "pages": pages}


def _exercise(report, gid):
    return next(e for e in report["exercises"] if e["grade_id"] == gid)


def test_the_honest_answers_score_3_and_the_correct_ones_5(graded):
    assert graded["rows"]["honest"]["score"] == "3"
    assert graded["rows"]["correct"]["score"] == "5"
    charge = _exercise(graded["reports"]["honest"], "test_charge")
    assert charge["feedback"] == "AssertionError: valor: se esperaba 3000, se obtuvo 6000"


@pytest.mark.parametrize("name", ["rebind_assert_same", "frame_reader", "forged_execute_reply", "ok_reply_for_its_test",
                                  "import_proxy"])
def test_an_attack_from_the_kernel_earns_no_point_the_honest_answers_do_not(graded, name):
    row, report = graded["rows"][name], graded["reports"][name]
    assert row["status"] == "graded" and float(row["score"]) <= 3, row
    assert _exercise(report, "test_charge")["status"] != "passed"


@pytest.mark.parametrize("name", ["forged_execute_reply", "ok_reply_for_its_test"])
def test_a_forged_execute_reply_does_not_hide_a_raise(graded, name):
    charge = _exercise(graded["reports"][name], "test_charge")
    assert charge["status"] == "failed"
    assert charge["feedback"].startswith("CheckMissing: valor:"), charge  # the reply said ok; no value came


def test_forged_or_malformed_reports_fail_even_a_correct_function(graded):
    """A report is only data: one more than the checks, or one that is not a report, fails the test."""
    forged = _exercise(graded["reports"]["forged_reports"], "test_charge")
    assert (forged["status"], forged["feedback"]) == (
        "failed", "CheckReport: el kernel informó una comprobación que esta parte no tiene (2)")
    malformed = _exercise(graded["reports"]["malformed_report"], "test_charge")
    assert (malformed["status"], malformed["feedback"]) == (
        "failed", "CheckReport: un informe del kernel no es válido")


def _decoded_blobs(text):
    for blob in re.findall(r"[A-Za-z0-9+/]{40,}={0,2}", text):
        try:
            yield base64.b64decode(blob + "=" * (-len(blob) % 4)).decode("utf-8", "replace")
        except (binascii.Error, ValueError):
            continue


def test_the_hidden_tests_source_in_the_kernel_holds_no_expected_value(graded):
    """The attack prints all the kernel's cached source, base64-encoded: no hidden expected value is in it, and
    since the hidden parts run after the notebook's last cell, not even their inputs."""
    page = graded["pages"]["base64_leak"]
    decoded = "\n".join(_decoded_blobs(page))
    assert "charge(6000)" in decoded  # the attack worked: it printed the visible checks it saw ...
    assert not any(value in decoded for value in HIDDEN_EXPECTED)  # ... no hidden expected value ...
    assert "charge(6400)" not in decoded  # ... and no hidden input: those had not been sent yet


def test_nothing_a_hidden_part_produces_is_shown(graded):
    page = graded["pages"]["hidden_printer"]
    report = json.dumps(graded["reports"]["hidden_printer"])
    assert "UPDATED=6000" in page  # the visible part updated the student's display ...
    assert "6400" not in page and "6400" not in report  # ... the hidden part's print and update are gone


def test_a_visible_failure_is_reported_as_visible_with_its_message():
    """A hidden line that is only a bracket once masked every bracket and made visible failures 'hidden'."""
    source = read_notebook(SOURCE)
    cell = cell_of(source, "test_charge")
    cell.source = ('"""charge."""\nassert_same([charge(6000)], [3000])\n### BEGIN HIDDEN TESTS\n'
                   'assert_same(charge(6400), 3200)\nassert_same([\n    charge(10)\n], [\n    5\n]\n)\n'
                   '### END HIDDEN TESTS')
    nb = student_version(source)
    cell_of(nb, "quote_total").source = RIGHT_QUOTE
    cell_of(nb, "charge").source = WRONG_CHARGE + "\nprint([{'x': (1,)}])"
    report, feedback = grade_notebooks(source, nb, limits=LIMITS)
    charge = next(e for e in report.exercises if e.grade_id == "test_charge")
    assert charge.feedback == "AssertionError: valor[0]: se esperaba 3000, se obtuvo 6000"
    outputs = json.dumps([c.get("outputs", []) for c in feedback.cells])
    assert "[{'x': (1,)}]" in outputs and "[test oculto]" not in outputs


def _needles(source):
    """Strings of the expected sides that appear in nothing the kernel may legitimately hold."""
    kernel_texts = [code.visible + code.hidden for code in rewrite_tests(source).values()]
    kernel_texts += [c.source for c in source.cells if c.cell_type == "code" and not is_test(c)]
    kernel_texts += [p.read_text(encoding="utf-8") for folder in ("shared", "grader") for p in
                     (ROOT / folder).rglob("*.py")]
    everything = "\n".join(kernel_texts)
    found = set()
    for cell in source.cells:
        if not is_test(cell):
            continue
        for statement in ast.parse(cell.source).body:
            call = statement.value if isinstance(statement, ast.Expr) else None
            if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "assert_same":
                for node in ast.walk(call.args[1]):
                    if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) >= 6:
                        found.add(node.value)
    return sorted(value for value in found if value not in everything)


MEMORY_SCAN = '''import gc, linecache, sys, base64
_needles = [base64.b64decode(b).decode()[::-1] for b in {encoded!r}]
_mine = {{id(n) for n in _needles}} | {{id(_needles)}}
def _strings():
    seen, stack = set(), list(gc.get_objects())
    stack += [list(linecache.cache.values()), list(In), list(_ih), dict(globals()), list(sys.modules.values())]
    while stack and len(seen) < 5_000_000:
        obj = stack.pop()
        if id(obj) in seen or id(obj) in _mine:
            continue
        seen.add(id(obj))
        if isinstance(obj, str):
            yield obj
        elif not isinstance(obj, (int, float, bytes, type(None))):
            stack.extend(gc.get_referents(obj))
_found = sorted({{i for s in _strings() for i, n in enumerate(_needles) if n in s}})
print("FOUND", _found)'''


def _scanned(source, needles):
    """Grade the blank student notebook (it computes no answer) with a cell that searches the kernel's memory."""
    encoded = [base64.b64encode(n[::-1].encode()).decode() for n in needles]
    scan = MEMORY_SCAN.format(encoded=encoded)
    nb = student_version(source)
    last = max(i for i, c in enumerate(nb.cells) if is_test(c))
    nb.cells.insert(last + 1, new_code_cell(scan))
    report, feedback = grade_notebooks(source, nb, limits=Limits(cell_timeout=120))
    printed = [o.get("text", "") for c in feedback.cells if c.source == scan for o in c.get("outputs", [])]
    return report, "".join(printed)


def test_no_expected_value_of_a_lesson_is_anywhere_in_the_kernels_memory():
    """Globals, the line cache, every object gc can reach, the input history: none holds an expected value."""
    source = read_notebook(ROOT / "solutions" / "09_agent_class.ipynb")
    needles = _needles(source)
    assert len(needles) >= 3, needles
    control = "calculator_assistant"  # an input of the lesson: the scan must find it
    report, printed = _scanned(source, needles + [control])
    assert report.score == 0  # the blank notebook computed no answer, so no actual value can match a needle
    assert printed.strip() == f"FOUND {[len(needles)]}", (printed, needles)


def test_the_reference_run_is_once_per_source(monkeypatch):
    from grader.grading import reference

    calls = []
    real = reference.run_reference
    monkeypatch.setattr(reference, "_cache", {})
    monkeypatch.setattr(reference, "from_literals", lambda source: None)  # the fixture's literals would spare the run
    monkeypatch.setattr(reference, "run_reference", lambda *a, **k: calls.append(1) or real(*a, **k))
    source = read_notebook(SOURCE)
    scores = [grade_notebooks(source, submission(charge=charge), limits=LIMITS)[0].score
              for charge in (WRONG_CHARGE, RIGHT_CHARGE)]
    assert len(calls) == 1 and scores == [3, 5]


@pytest.mark.parametrize("name, kinds", [
    ("frame_reader", {"frames", "linecache"}), ("forged_execute_reply", {"kernel"}),
    ("ok_reply_for_its_test", {"kernel"}),
    ("base64_leak", {"linecache"}), ("import_proxy", {"builtins", "grader-internals"}), ("honest", set()),
])
def test_the_static_scan_flags_reaching_the_kernel_its_frames_and_memory(graded, name, kinds):
    """For the instructor to look at; the score never depends on it."""
    assert set(graded["reports"][name]["suspicious"]) == kinds


@pytest.mark.parametrize("path", [SOURCE], ids=lambda p: p.stem)
def test_expected_values_read_from_literals_are_those_a_run_of_the_solution_gives(path):
    """Where every expected side is a literal, no reference run is needed; the values are the same."""
    from grader.grading.reference import from_literals, run_reference

    source = read_notebook(path)
    literals = from_literals(source)
    assert literals is not None and literals.expected
    ran = run_reference(source, student_version(source), LIMITS)
    assert ran.problems == [] and literals.expected == ran.expected


@pytest.mark.parametrize("name", ["03_handoff_pseudo_tool", "01_handoff_vs_router"])
def test_a_source_with_an_expression_on_an_expected_side_needs_a_run(name):
    """An expression (03) or a check against AS_SOLUTION (01's generated inputs) on an expected side."""
    from grader.grading.reference import from_literals

    assert from_literals(read_notebook(ROOT / "solutions" / f"{name}.ipynb")) is None
