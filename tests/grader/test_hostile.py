"""The grader against a hostile class: each test is one concrete attack, bounded in time, memory and disk.

Most attacks on answers are graded together in one batch (module fixture) to keep the suite fast; each
has its own pinned expectation. The fixture source has three test cells: test_quote_total (1
point), test_quote_total_more (2, with hidden tests) and test_charge (2, with hidden tests).

Hostile files, names and folders come after: none of them stops a batch, and each ends where it
should. Measured before: one file of deeply nested JSON ended the whole batch (exit 2, no grades.csv),
a symlink to /dev/zero killed it, a FIFO hung it, a symlink to the solution earned full marks,
``alice/05_x.ipynb`` and ``alice__05_x.ipynb`` wrote the same report, control characters in an
exception's name rewrote the terminal table, and a 3,000-deep chain of folders made by a kernel
survived cleanup and broke every later grader's start.
"""

import copy
import csv
import gc
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from fixture_submissions import RIGHT_CHARGE, SOURCE, cell_of, submission
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from grader.authoring.generate import student_version
from grader.authoring.notebooks import MAX_DEPTH, dumps, read_notebook
from grader.classroom.batch import batch
from grader.classroom.gradebook import spreadsheet_safe, write_csv
from grader.grading.execute import Limits, execute
from grader.grading.pipeline import grade_notebooks
from grader.grading.report import printable
from grader.kernels.cleanup import remove_tree
from grader.kernels.folders import run_folder, sweep_stale
from grader.kernels.mode import sandbox_mode

pytestmark = pytest.mark.slow  # kernels, subprocesses or a browser: not in make test-fast

FIXTURES = Path(__file__).parents[1] / "fixtures" / "grader"
LIMITS = Limits(cell_timeout=5)
HIDDEN = ("assert_same(quote_total(5), 10000)", "assert_same(charge(6400), 3200)", "BEGIN HIDDEN TESTS")


# Point 1: fake a pass. Honest score of these answers: 3/5 (test_charge fails). Each attack must not raise it.
FAKE_PASS = {
    "custom_exc": ("get_ipython().set_custom_exc((BaseException,), lambda *a, **k: None)", "set_custom_exc"),
    "showtraceback": ("ip = get_ipython()\nip.showtraceback = lambda *a, **k: None\n"
                      "ip._showtraceback = lambda *a, **k: None", "showtraceback"),
    "post_run_cell": ("from IPython.display import clear_output\n"
                      "def _hide(result):\n    result.error_in_exec = None\n    clear_output()\n"
                      "get_ipython().events.register('post_run_cell', _hide)", "events.register"),
    "input_transformer": ("def _no_asserts(lines):\n    return ['pass\\n' if 'assert' in l else l for l in lines]\n"
                          "get_ipython().input_transformers_cleanup.append(_no_asserts)\n"
                          "get_ipython().input_transformers_post.append(_no_asserts)", "input_transformers"),
    "ast_transformer": ("import ast\nclass _Gut(ast.NodeTransformer):\n"
                        "    def visit_Expr(self, node):\n        return ast.Pass()\n"
                        "get_ipython().ast_transformers.append(_Gut())", "ast_transformers"),
    "fake_grader_module": ("import sys, types\n_fake = types.ModuleType('grader')\n"
                           "_fake.assert_same = lambda *a, **k: None\nsys.modules['grader'] = _fake", "sys.modules"),
    "patched_assert_same": ("import grader, grader.grading.asserts\ngrader.assert_same = lambda *a, **k: None\n"
                            "grader.grading.asserts._same = lambda *a, **k: None", "grader-internals"),
    "assertion_error_replaced": ("import builtins\nclass _Quiet(Exception):\n    pass\n"
                                 "builtins.AssertionError = _Quiet\n"
                                 "get_ipython().set_custom_exc((_Quiet,), lambda *a, **k: None)", "builtins"),
    "import_hook": ("import builtins, types\n_real_import = builtins.__import__\n"
                    "_fake = types.ModuleType('grader')\n_fake.assert_same = lambda *a, **k: None\n"
                    "def _evil_import(name, *args, **kwargs):\n"
                    "    return _fake if name == 'grader' else _real_import(name, *args, **kwargs)\n"
                    "builtins.__import__ = _evil_import", "builtins"),
    "excepthook_and_print": ("import sys, builtins\nsys.excepthook = lambda *a: None\n"
                             "builtins.print = lambda *a, **k: None", "sys.excepthook"),
}

HOOK_CHARGE = ("def charge(price_cents):\n    def _hide(result):\n        result.error_in_exec = None\n"
               "    get_ipython().events.register('post_run_cell', _hide)  # registered while the test runs\n"
               "    return price_cents")
# Point 5: leak the hidden tests, every way we know of, from cells that run after them.
LEAK = (
    "import inspect, linecache, sys\n"
    "print(In)\nprint(_ih)\nprint(Out)\n"
    "print(list(get_ipython().history_manager.input_hist_raw))\n"
    "for _entry in list(linecache.cache.values()):\n    print(''.join(_entry[2]))\n"
    "raise ValueError(' | '.join(''.join(e[2]) for e in linecache.cache.values() if 'HIDDEN' in ''.join(e[2])))"
)
PEEK_CHARGE = ("def charge(price_cents):\n    import inspect, sys\n    caller = sys._getframe(1)\n"
               "    print(''.join(inspect.findsource(caller)[0]))\n"
               "    raise ValueError(''.join(inspect.findsource(caller)[0]))")
HIDDEN_ONLY_CHARGE = "def charge(price_cents):\n    return 3000 if price_cents == 6000 else price_cents"
# Third red team: an exception named after the hidden part's source (base32, so no scrubber can spot it) ...
NAMED_CHARGE = ("def charge(price_cents):\n    import base64, inspect, sys\n    if price_cents == 6000:\n"
                "        return 3000\n    source = ''.join(inspect.findsource(sys._getframe(1))[0])\n"
                "    raise type(base64.b32encode(source.encode()).decode().rstrip('='), (Exception,), {})()")
# ... and a hook that records every request the kernel gets, printed compressed by the notebook's last cell
RECORD = "_seen = []\nget_ipython().events.register('pre_run_cell', lambda info: _seen.append(info.raw_cell))"
PRINT_RECORD = "import base64, zlib\nprint('REC:' + base64.b64encode(zlib.compress(repr(_seen).encode())).decode())"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    subs, out = root / "subs", root / "out"
    subs.mkdir()
    notebooks = {name: submission(code) for name, (code, _) in FAKE_PASS.items()}
    notebooks["honest"] = submission()
    notebooks["hook_in_tested_function"] = submission(charge=HOOK_CHARGE)
    notebooks["leak"] = submission(after={"test_quote_total_more": LEAK, "test_charge": LEAK})
    notebooks["peek"] = submission(charge=PEEK_CHARGE, after={"test_charge": LEAK})
    notebooks["hidden_only"] = submission(charge=HIDDEN_ONLY_CHARGE)
    notebooks["named"] = submission(charge=NAMED_CHARGE)
    notebooks["recorder"] = submission(RECORD)
    notebooks["recorder"].cells.append(new_code_cell(PRINT_RECORD))
    notebooks["disk"] = submission(after={"test_charge": f"print(open({str(SOURCE)!r}).read())"})
    for name, nb in notebooks.items():
        (subs / f"{name}.ipynb").write_text(dumps(nb), encoding="utf-8")
    rows = batch(subs, SOURCE, out, workers=2, limits=LIMITS, progress=False)
    with open(out / "grades.csv", encoding="utf-8", newline="") as handle:
        csv_rows = {Path(r["submission"]).stem: r for r in csv.DictReader(handle)}
    reports = {p.stem: json.loads(p.read_text(encoding="utf-8"))["report"] for p in (out / "reports").glob("*.json")}
    return {"rows": {Path(r["submission"]).stem: r for r in rows}, "csv": csv_rows, "reports": reports, "out": out}


def test_the_honest_answers_score_3(graded):
    assert graded["rows"]["honest"]["score"] == "3"
    assert graded["reports"]["honest"]["suspicious"] == []
    assert graded["csv"]["honest"]["suspicious"] == ""


@pytest.mark.parametrize("name", FAKE_PASS)
def test_an_attack_cannot_fake_a_pass(graded, name):
    """Tampering with the kernel can lose an attacker points (its reports go missing), never win any."""
    row, report = graded["rows"][name], graded["reports"][name]
    assert row["status"] == "graded" and float(row["score"]) <= 3, row
    charge = next(e for e in report["exercises"] if e["grade_id"] == "test_charge")
    assert charge["status"] == "failed", charge


@pytest.mark.parametrize("name", FAKE_PASS)
def test_an_attack_is_flagged_for_the_instructor(graded, name):
    kind = FAKE_PASS[name][1]
    assert kind in graded["reports"][name]["suspicious"]
    assert kind in graded["csv"][name]["suspicious"].split()


def test_a_hook_the_tested_function_registers_cannot_fake_a_pass(graded):
    """A hook that clears the error changes no verdict: the grader compares the reported value."""
    assert graded["rows"]["hook_in_tested_function"]["score"] == "3"


def test_a_cell_is_marked_on_its_execute_reply_whatever_its_outputs_show():
    """A cell that raised is marked so, even with no error output at all."""
    nb = new_notebook(cells=[new_code_cell("get_ipython().set_custom_exc((BaseException,), lambda *a, **k: None)"),
                             new_code_cell("1 / 0"), new_code_cell("x = 1")])
    runs = execute(nb, Limits(cell_timeout=5))
    assert [run.status for run in runs] == ["ok", "error", "ok"]
    assert runs[1].ename == "ZeroDivisionError"
    assert not any(o.get("output_type") == "error" for o in nb.cells[1].outputs)


def _everything_written(graded, name):
    out = graded["out"]
    return "\n".join([(out / "feedback" / f"{name}.html").read_text(encoding="utf-8"),
                      (out / "reports" / f"{name}.json").read_text(encoding="utf-8"),
                      (out / "grades.csv").read_text(encoding="utf-8")])


@pytest.mark.parametrize("name", ["leak", "peek", "disk"])
def test_no_hidden_line_is_ever_written(graded, name):
    text = _everything_written(graded, name)
    assert not any(line in text for line in HIDDEN)
    if name == "disk" and sandbox_mode() == "full":  # the source is not even in the kernel's view of the disk
        assert "FileNotFoundError" in text
    elif name == "disk":
        assert "[test oculto]" in text  # the attack did print them; the scrubber masked them


def test_hidden_lines_are_masked_however_they_are_quoted():
    from grader.grading.hidden import Scrubber

    test = new_code_cell('"""t."""\nx = 1\n### BEGIN HIDDEN TESTS\nassert f("it\'s") == "b"\n### END HIDDEN TESTS')
    scrub = Scrubber([test])
    for shown in ('assert f("it\'s") == "b"', json.dumps('assert f("it\'s") == "b"'), repr('assert f("it\'s") == "b"'),
                  "\x1b[38;5;28massert f(\"it's\") == \"b\"", "cut at the end: assert f(\"it's"):
        assert "assert f(" not in scrub.text(shown), shown
    assert scrub.text("x = 1") == "x = 1"  # visible lines stay


def test_no_hidden_line_reaches_the_terminal(tmp_path):
    path = tmp_path / "leak.ipynb"
    path.write_text(dumps(submission(charge=PEEK_CHARGE, after={"test_charge": LEAK})), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "grader", "grade", str(path), "--source", str(SOURCE), "--timeout",
                           "5", "--json", str(tmp_path / "r.json"), "--feedback", str(tmp_path / "f.html")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    everything = done.stdout + done.stderr + (tmp_path / "r.json").read_text() + (tmp_path / "f.html").read_text()
    assert not any(line in everything for line in HIDDEN)


def test_a_failing_hidden_test_does_not_quote_itself(graded):
    """Before: 'AssertionError: valor: se esperaba 3200, se obtuvo 6400' gave the hidden test's values away."""
    report = graded["reports"]["hidden_only"]
    charge = next(e for e in report["exercises"] if e["grade_id"] == "test_charge")
    assert (charge["status"], charge["feedback"]) == ("failed", "AssertionError in a hidden test")
    quote = next(e for e in graded["reports"]["honest"]["exercises"] if e["grade_id"] == "test_charge")
    assert quote["feedback"] == "AssertionError: valor: se esperaba 3000, se obtuvo 6000"  # a visible failure says why


def test_a_hidden_failure_never_names_the_kernels_own_exception_class(graded):
    """Before: the class name (the hidden part's source, encoded) was printed verbatim '... in a hidden test'."""
    charge = next(e for e in graded["reports"]["named"]["exercises"] if e["grade_id"] == "test_charge")
    assert (charge["status"], charge["feedback"]) == ("failed", "Exception in a hidden test")
    assert "Exception en un test oculto" in _everything_written(graded, "named")


def test_the_hidden_parts_run_after_the_last_cell_so_nothing_can_print_what_they_sent(graded):
    """Before: every hidden input was decoded from the last cell's output on the student's own feedback page."""
    import base64
    import re
    import zlib
    page = (graded["out"] / "feedback" / "recorder.html").read_text(encoding="utf-8")
    recorded = zlib.decompress(base64.b64decode(re.search(r"REC:([A-Za-z0-9+/=]+)", page).group(1))).decode()
    assert "quote_total(3)" in recorded  # the hook did record the visible checks it saw
    assert "quote_total(5)" not in recorded and "charge(6400)" not in recorded
    assert graded["rows"]["recorder"]["score"] == "3"


def _rss_kib(field="VmRSS"):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1])
    raise AssertionError(field)


FLOODS = {
    "print_200mb": "for _ in range(200):\n    print('x' * 1_000_000)",
    "huge_exception": "raise ValueError('y' * 20_000_000)",
    "display_updates": "h = display('a', display_id=True)\nfor i in range(20_000):\n    h.update('z' * 100)",
    "clear_output": "from IPython.display import clear_output\nfor i in range(300):\n"
                    "    clear_output(wait=True)\n    print('w' * 10_000)",
    "display_data": "from IPython.display import display\nfor i in range(300):\n"
                    "    display({'text/plain': 'v' * 10_000}, raw=True)",
    "execute_result": "'r' * 5_000_000",
}


def test_a_flood_stays_within_the_cap_and_the_memory_stays_flat():
    nb = new_notebook(cells=[new_code_cell(code) for code in FLOODS.values()] + [new_code_cell("print('still here')")])
    limits = Limits(cell_timeout=60, output_bytes=100_000)
    gc.collect()
    before = _rss_kib()
    runs = execute(nb, limits)
    gc.collect()
    grown_mib = (_rss_kib() - before) / 1024
    assert [run.status for run in runs] == ["ok", "error", "ok", "ok", "ok", "ok", "ok"]
    for cell in nb.cells[:-1]:
        assert len(json.dumps(cell.outputs)) < 2 * limits.output_bytes
        assert "[salida recortada:" in cell.outputs[-1].get("text", "")  # in the student's language
    assert nb.cells[-1].outputs[0]["text"] == "still here\n"
    assert grown_mib < 60, f"the grader kept {grown_mib:.0f} MiB"


ONE_HUGE_MESSAGE = """
import json, sys
from nbformat.v4 import new_code_cell, new_notebook
from grader.grading.execute import Limits, execute

def mib(field):
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith(field)) // 1024

cells = ["print('x' * 200_000_000)", "print('still here')", "raise ValueError('y' * 100_000_000)",
         "x = 'z' * 150_000_000\\nx", "print('after')"]
nb = new_notebook(cells=[new_code_cell(code) for code in cells])
import grader.kernels.kernel, jupyter_client, zmq  # what the run imports, in the baseline
with open("/proc/self/clear_refs", "w") as reset:  # the peak (VmHWM) starts again from here
    reset.write("5")
before = mib("VmRSS")
runs = execute(nb, Limits(cell_timeout=20))
peak = mib("VmHWM")
print(json.dumps({"grown": peak - before, "runs": [[r.status, r.ename] for r in runs],
                  "outputs": [[o.get("text", "") for o in cell.outputs] for cell in nb.cells]}))
"""


def test_one_huge_message_is_refused_unread_and_the_next_cells_still_speak():
    """A single 200 MB print once peaked the grader near 600 MB before the cap could drop it."""
    done = subprocess.run([sys.executable, "-c", ONE_HUGE_MESSAGE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["runs"] == [["ok", ""], ["ok", ""], ["error", "OutputLimit"], ["ok", ""], ["ok", ""]]
    refused = "\n[salida recortada: se rechazó un mensaje de más de 4 MiB o demasiado anidado]\n"
    assert result["outputs"] == [[refused], ["still here\n"], [refused], [refused], ["after\n"]]
    # uncapped, the grader peaks near 600 MiB on the first cell alone
    assert result["grown"] < 60, f"the grader's memory peaked {result['grown']} MiB above its start"


NESTED = """
import json
from nbformat.v4 import new_code_cell, new_notebook
from grader.grading.execute import Limits, execute
from grader.grading.probe import MIME

def mib(field):
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith(field)) // 1024

nested = "from IPython.display import display\\nx = [{}] * 1_000_000\\nfor _ in range(21):\\n    x = [x]\\n"
cells = [nested + "for _ in range(3):\\n    display({'application/json': x}, raw=True)",
         nested + f"for _ in range(3):\\n    display({{{MIME!r}: x}}, raw=True)",
         nested + "get_ipython().payload_manager.write_payload({'source': 'page', 'data': x})",
         "from IPython.display import display\\nfor i in range(400):\\n"
         "    display({'text/plain': 'z' * 3_900_000}, raw=True)",
         "print('still here')"]
nb = new_notebook(cells=[new_code_cell(code) for code in cells])
import grader.kernels.kernel, jupyter_client, zmq  # what the run imports, in the baseline
with open("/proc/self/clear_refs", "w") as reset:
    reset.write("5")
before = mib("VmRSS")
runs = execute(nb, Limits(cell_timeout=60))
print(json.dumps({"grown": mib("VmHWM") - before, "peak": mib("VmHWM"), "runs": [[r.status, r.ename] for r in runs],
                  "outputs": [[o.get("text", "") for o in cell.outputs] for cell in nb.cells]}))
"""


def test_nested_outputs_reports_and_replies_are_refused_before_they_are_parsed():
    """Before: three displays of a million empty dicts nested 22 deep (11 MiB) took the grader to 1.5-1.9 GiB:
    the size measure counted anything 20 levels deep as one character, and every message was parsed whole.
    400 displays of 3.9 MiB each are read a few MiB at a time."""
    done = subprocess.run([sys.executable, "-c", NESTED], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["runs"] == [["ok", ""], ["ok", ""], ["error", "OutputLimit"], ["ok", ""], ["ok", ""]]
    refused = "\n[salida recortada: se rechazó un mensaje de más de 4 MiB o demasiado anidado]\n"
    assert result["outputs"][:3] == [[refused], [refused], [refused]]
    assert result["outputs"][3][-1].startswith("\n[salida recortada: ") and result["outputs"][4] == ["still here\n"]
    assert result["peak"] < 256, f"the grader peaked at {result['peak']} MiB ({result['grown']} above its start)"


STDIN_FLOOD = """
import json
from nbformat.v4 import new_code_cell, new_notebook
from grader.grading.execute import Limits, execute

def mib(field):
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith(field)) // 1024

flood = '''k = get_ipython().kernel
for _ in range(300):
    k.session.send(k.stdin_socket, "input_request", {"prompt": "x" * 3_000_000, "password": False},
                   parent=k.get_parent("shell"), ident=k._parent_ident["shell"])
print("sent")'''
first = FIRST  # cells run before the flood
nb = new_notebook(cells=[new_code_cell(code) for code in (*first, flood, "x = input('?')", "print('still here')")])
import grader.kernels.kernel, jupyter_client, zmq  # what the run imports, in the baseline

with open("/proc/self/clear_refs", "w") as reset:
    reset.write("5")
before = mib("VmRSS")
runs = execute(nb, Limits(cell_timeout=20))
print(json.dumps({"grown": mib("VmHWM") - before, "runs": [[r.status, r.ename, r.evalue] for r in runs]}))
"""


@pytest.mark.parametrize("first", [(), ("import os\nos._exit(1)",)], ids=["fresh", "restarted"])
def test_the_stdin_channel_cannot_be_flooded_and_input_fails_at_once(first):
    """Measured before: 300 input requests of 3 MB grew the grader 864 MiB, and input() waited out the timeout.
    A kernel restarted after a death is connected the same way (nbclient's restart used to open every channel)."""
    script = STDIN_FLOOD.replace("FIRST", repr(first))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert [run[0] for run in result["runs"][:len(first)]] == ["died"] * len(first)
    assert result["runs"][len(first):] == [["ok", "", ""], ["error", "StdinNotImplementedError",
                                               "input() cannot be answered while grading"], ["ok", "", ""]]
    assert result["grown"] < 60, f"the grader's memory peaked {result['grown']} MiB above its start"


def test_the_feedback_page_stays_small(tmp_path):
    from grader.grading.report import Report
    from grader.pages import PAGE_CHARS, feedback_html

    nb = new_notebook(cells=[new_code_cell("x", outputs=[nbformat.v4.new_output("stream", name="stdout",
                                                                              text="q" * 200_000)])
                             for _ in range(20)])
    page = feedback_html(Report("a.ipynb", "s.ipynb"), nb)
    assert len(page) < PAGE_CHARS + 20_000
    assert "caracteres omitidos: el límite de tamaño de la página" in page


def test_a_feedback_page_loads_nothing_from_outside():
    """Before: a markdown output's remote image was fetched when the instructor opened the page (a web beacon)."""
    from grader.grading.report import Report
    from grader.pages import feedback_html

    beacon = "![x](https://tracker.example/pixel.png?who=ana) ![y](//tracker.example/p.gif)"
    output = nbformat.v4.new_output("display_data", data={"text/markdown": beacon, "text/plain": "x"})
    nb = new_notebook(cells=[new_markdown_cell(beacon), new_code_cell("x", outputs=[output])])
    page = feedback_html(Report("a.ipynb", "s.ipynb"), nb)
    assert "<img" not in page and "[imagen: x]" in page and "[imagen: y]" in page
    policy = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
    assert f'<meta http-equiv="Content-Security-Policy" content="{policy}' in page
    class_page = (Path(__file__).parents[2] / "grader" / "templates" / "class.html.j2").read_text(encoding="utf-8")
    assert '<meta http-equiv="Content-Security-Policy" content="{{ csp }}">' in class_page


def test_kernel_output_on_its_own_fds_never_reaches_the_terminal(tmp_path):
    code = "import os\nos.write(1, b'FD-ONE-LEAK\\n')\nos.write(2, b'FD-TWO-LEAK\\n')\nimport sys\n" \
           "sys.__stdout__.write('DUNDER-LEAK\\n'); sys.__stdout__.flush()"
    path = tmp_path / "fds.ipynb"
    path.write_text(dumps(submission(code)), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "grader", "grade", str(path), "--source", str(SOURCE),
                           "--timeout", "5"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "LEAK" not in done.stdout + done.stderr


# Point 7: honest work survives a restart.
def three_exercises():
    def meta(gid, **kw):
        return {"nbgrader": {"grade": False, "solution": False, "locked": False, "schema_version": 3,
                             "grade_id": gid, **kw}}

    def solution(gid, code):
        return new_code_cell(code, metadata=meta(gid, solution=True))

    def test(gid, code):
        return new_code_cell(f'"""{gid}."""\n{code}', metadata=meta(gid, grade=True, locked=True, points=1))

    return new_notebook(cells=[
        new_code_cell("from grader import assert_same", metadata=meta("setup", locked=True)),
        solution("double", "def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION"),
        test("test_double", "assert_same(double(2), 4)"),
        solution("second", "def second():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION"),
        test("test_second", "assert_same(second(), 1)"),
        solution("scaled", "def scaled(x):\n    ### BEGIN SOLUTION\n    return 3 * x\n    ### END SOLUTION"),
        test("test_scaled", "assert_same(scaled(2), 6)"),
    ], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})


STUCK = {
    "hangs": "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    time.sleep(0.05)",
    "exits": "import os\nos._exit(1)",
    "test_hangs": "def second():\n    import signal, time\n    signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                  "    while True:\n        time.sleep(0.05)",
}


@pytest.mark.parametrize("how", STUCK)
def test_a_restart_replays_the_work_that_ran_fine(how):
    source = three_exercises()
    nb = student_version(source)
    cell_of(nb, "double").source = "def double(x):\n    return 2 * x"
    cell_of(nb, "second").source = STUCK[how]
    cell_of(nb, "scaled").source = "def scaled(x):\n    return RATE * x"
    nb.cells.insert(2, new_code_cell("RATE = 3  # defined before the crash, needed after it"))
    report, _ = grade_notebooks(source, nb, limits=Limits(cell_timeout=3, interrupt_grace=1))
    points = {e.grade_id: e.points for e in report.exercises}
    assert points == {"test_double": 1, "test_second": 0, "test_scaled": 1}, report.table()


# Point 8: odd notebooks never end in a traceback.
def _odd(change):
    nb = json.loads(dumps(submission()))
    change(nb)
    return json.dumps(nb)


def _set(index, **values):
    def change(nb):
        nb["cells"][index]["metadata"].update(values)
    return change


def _set_nbgrader(index, **values):
    def change(nb):
        nb["cells"][index]["metadata"]["nbgrader"].update(values)
    return change


ODD = {
    "nbgrader_string": _set(4, nbgrader="x"),
    "points_string": _set_nbgrader(4, points="two"),
    "grade_id_list": _set_nbgrader(4, grade_id=["test_quote_total"]),
    "grade_string": _set_nbgrader(4, grade="yes"),
    "tags_number": _set(4, tags=3),
    "metadata_list": lambda nb: nb["cells"][4].__setitem__("metadata", []),
    "cells_dict": lambda nb: nb.__setitem__("cells", {"0": nb["cells"][0]}),
}


@pytest.mark.parametrize("name", ODD)
def test_odd_metadata_exits_2_with_one_line(tmp_path, name):
    path = tmp_path / f"{name}.ipynb"
    path.write_text(_odd(ODD[name]), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "grader", "grade", str(path), "--source", str(SOURCE)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("error: ") and len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr


def test_odd_metadata_is_an_error_row_in_a_batch(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    for name in ("nbgrader_string", "grade_id_list"):
        (subs / f"{name}.ipynb").write_text(_odd(ODD[name]), encoding="utf-8")
    rows = batch(subs, SOURCE, tmp_path / "out", workers=1, limits=LIMITS, progress=False)
    assert [(r["status"], "must be" in r["error"]) for r in rows] == [("error", True)] * 2


METADATA_BOMB = """
import json, sys
from grader.authoring.notebooks import UnusableNotebook, parse_notebook

def mib(field):
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith(field)) // 1024

raw = sys.stdin.buffer.read()
with open("/proc/self/clear_refs", "w") as reset:
    reset.write("5")
before = mib("VmRSS")
try:
    parse_notebook(raw, "bomb.ipynb")
    error = ""
except UnusableNotebook as refused:
    error = str(refused)
print(json.dumps({"grown": mib("VmHWM") - before, "error": error}))
"""


def _metadata_bomb() -> str:
    """A 3 MiB notebook whose metadata is a million empty dicts: nbformat took 1.45 GiB to read it."""
    return ('{"nbformat": 4, "nbformat_minor": 5, "cells": [], "metadata": {"x": [' + "{}," * 999_999 + "{}]}}")


def test_a_metadata_bomb_is_refused_before_it_is_parsed(tmp_path):
    done = subprocess.run([sys.executable, "-c", METADATA_BOMB], input=_metadata_bomb().encode(),
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert "bomb.ipynb: too much structure to be a notebook (up to 1,000,004 JSON objects and arrays" in result["error"]
    assert result["grown"] < 60, f"the grader's memory peaked {result['grown']} MiB above its start"
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "bomb.ipynb").write_text(_metadata_bomb(), encoding="utf-8")
    shutil.copy(FIXTURES / "submissions" / "partial.ipynb", subs / "partial.ipynb")
    rows = batch(subs, SOURCE, tmp_path / "out", workers=1, limits=LIMITS, progress=False)
    assert [(r["status"], "too much structure" in r["error"]) for r in rows] == [("error", True), ("graded", False)]


def code_cell(source, **metadata):
    """A code cell with any metadata, even metadata nbformat's schema refuses."""
    return nbformat.from_dict({"cell_type": "code", "source": source, "metadata": metadata, "outputs": [],
                               "execution_count": None})


def test_tags_as_a_string_are_one_tag_not_characters():
    from grader.authoring.metadata import is_solution_only, tags

    assert tags(code_cell("x", tags="raises-exception")) == ["raises-exception"]
    assert tags(code_cell("x", tags="not-raises-exception")) == ["not-raises-exception"]
    assert not is_solution_only(code_cell("x", tags="no-solution-only-here"))
    assert tags(code_cell("x", tags=[1, "a"])) == ["a"]


def test_a_submission_with_a_string_tag_is_graded(tmp_path):
    """Read as characters, "skip-execution-not" would contain nbclient's skip-execution tag."""
    nb = submission(charge="def charge(price_cents):\n    return price_cents // helper",
                    after={"quote_total": "helper = 2"})
    data = json.loads(dumps(nb))
    next(c for c in data["cells"] if "".join(c["source"]) == "helper = 2")["metadata"]["tags"] = "skip-execution-not"
    path = tmp_path / "tagged.ipynb"
    path.write_text(json.dumps(data), encoding="utf-8")
    report, _ = grade_notebooks(read_notebook(SOURCE), read_notebook(path), limits=LIMITS)
    assert report.score == 5 and report.other_errors == [] and report.solution_errors == []


@pytest.mark.parametrize("tag", ["mine", "solution", "", "skip-execution"])
def test_an_answer_cell_whose_tags_are_a_string_is_graded_as_written(tmp_path, tag):
    nb = submission(charge="def charge(price_cents):\n    return price_cents // 2")
    data = json.loads(dumps(nb))
    answer = next(c for c in data["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "charge")
    answer["metadata"]["tags"] = tag  # not a list: nbformat's schema refuses it, a student's editor may write it
    path = tmp_path / "tagged.ipynb"
    path.write_text(json.dumps(data), encoding="utf-8")
    report, _ = grade_notebooks(read_notebook(SOURCE), read_notebook(path), limits=LIMITS)
    assert {r.grade_id: r.points for r in report.exercises}["test_charge"] == 2  # the answer, not the stub
    assert report.tampered == [] and report.other_errors == []


def test_a_guided_notebook_reads_a_string_tag_as_one_tag(tmp_path):
    from grader.classroom.course_check import check_guided

    nb = json.loads(dumps(new_notebook(cells=[new_code_cell("1 / 0"), new_code_cell("2 / 0")])))
    nb["cells"][0]["metadata"]["tags"] = "raises-exception"
    nb["cells"][1]["metadata"]["tags"] = "not-raises-exception"  # read as characters, it would contain the tag
    path = tmp_path / "guided.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    problems = check_guided(path, Limits(cell_timeout=5))
    assert problems == [f"{path}: cell 1 failed: ZeroDivisionError: division by zero"]


def test_another_lessons_notebook_is_refused_with_its_own_status(tmp_path):
    other = new_notebook(cells=[new_markdown_cell("x", metadata={"nbgrader": {
        "grade": False, "solution": False, "locked": True, "grade_id": "elsewhere", "schema_version": 3}})])
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "other.ipynb").write_text(dumps(other), encoding="utf-8")
    rows = batch(subs, SOURCE, tmp_path / "out", workers=1, limits=LIMITS, progress=False)
    assert rows[0]["status"] == "wrong-lesson" and "is it the right lesson?" in rows[0]["error"]


def test_another_lesson_of_the_course_is_refused_though_it_shares_its_locked_cells(tmp_path):
    """Every lesson has a locked "setup" and "summary": sharing those does not make it the same lesson."""
    course = Path(__file__).resolve().parents[2]
    source, other = course / "solutions" / "03_handoff_pseudo_tool.ipynb", course / "student" / "04_end_to_end.ipynb"
    done = subprocess.run([sys.executable, "-m", "grader", "grade", str(other), "--source", str(source)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "is it the right lesson?" in done.stderr, done.stdout + done.stderr


@pytest.mark.parametrize("value", ["=HYPERLINK(\"http://x\")", "+1", "-1", "@SUM(A1)", "\tx", "\rx"])
def test_csv_cells_are_never_formulas(value):
    assert spreadsheet_safe(value) == "'" + printable(value)  # and a tab or CR is shown as ?
    assert spreadsheet_safe("alice.ipynb") == "alice.ipynb"


def test_grades_csv_escapes_file_names_and_messages(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "=cmd().ipynb").write_text("{oops", encoding="utf-8")
    (subs / "@evil.ipynb").write_text("", encoding="utf-8")
    batch(subs, SOURCE, tmp_path / "out", workers=1, limits=LIMITS, progress=False)
    with open(tmp_path / "out" / "grades.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    cells = [value for row in rows for value in row.values() if value]
    assert not [value for value in cells if value.startswith(("=", "+", "-", "@", "\t", "\r"))]
    assert {row["submission"] for row in rows} == {"'=cmd().ipynb", "'@evil.ipynb"}
    write_csv([{"submission": "x", "error": "=1+1"}], tmp_path / "g.csv")
    assert "'=1+1" in (tmp_path / "g.csv").read_text(encoding="utf-8")


def test_the_submission_file_is_never_modified(tmp_path):
    path = tmp_path / "attack.ipynb"
    nb = submission(FAKE_PASS["custom_exc"][0], after={"test_charge": LEAK})
    path.write_text(dumps(nb), encoding="utf-8")
    before = path.read_bytes()
    grade_notebooks(read_notebook(SOURCE), copy.deepcopy(read_notebook(path)), limits=LIMITS)
    assert path.read_bytes() == before


@pytest.mark.parametrize("code, kinds", [
    ("from grader import assert_same\nassert_same(1, 1)", []),  # students may test their work with it
    ("events = [1]\nevents.append(2)\nmodules = 3", []),
    ("%time x = 1\nget_ipython().events.register('post_run_cell', f)", ["events.register"]),  # not Python: regex
    ("%%capture\nimport sys\nsys.modules['grader'] = None\nsys.excepthook = None",
     ["grader-internals", "sys.excepthook", "sys.modules"]),
    ("ip = get_ipython()\ngetattr(ip, 'set_custom_exc')((Exception,), None)", ["set_custom_exc"]),
    ("import grader.grading.asserts", ["grader-internals"]),
    ("from builtins import print as p", ["builtins"]),
])
def test_the_static_scan_lists_what_student_code_touches(code, kinds):
    from grader.grading.scan import scan_cells

    assert scan_cells([code]) == kinds


def test_a_socket_reconnects_as_often_as_a_kernel_floods_it():
    """Each refused message costs a new socket; pyzmq's default monitor address (the fd) once collided."""
    import asyncio

    from grader.kernels.kernel import Kernel

    async def reconnect_many() -> str:
        kernel = await Kernel(2 * 1024 ** 3).start()
        try:
            for _ in range(200):
                kernel.kc.reconnect("iopub")
                kernel.kc.reconnect("shell")
            kernel.kc.kernel_info()
            return (await kernel.kc.get_shell_msg(timeout=10))["content"]["status"]
        finally:
            await kernel.stop()

    assert asyncio.run(reconnect_many()) == "ok"


DEEP_MESSAGE = '''k = get_ipython().kernel
deep = b"[" * 200_000 + b"]" * 200_000  # under 4 MiB, far deeper than Python's JSON reader can go
real_pack = k.session.pack
k.session.pack = lambda obj: deep if isinstance(obj, dict) and obj.get("data") == {"text/plain": "deep"} \\
    else real_pack(obj)
from IPython.display import display
display({"text/plain": "deep"}, raw=True)
k.session.pack = real_pack
print("after")'''

NO_DELIMITER = '''k = get_ipython().kernel
k.iopub_socket.send_multipart([b"stream", b"a message without jupyter's <IDS|MSG> delimiter"])
k.iopub_socket.send_multipart([b"<IDS|MSG>"])  # a delimiter and nothing after it
print("after")'''


@pytest.mark.parametrize("attack", [DEEP_MESSAGE, NO_DELIMITER], ids=["too-deep", "no-delimiter"])
def test_a_message_the_grader_cannot_read_is_dropped_and_grading_goes_on(attack):
    """Measured before, each lost the run: deeply nested JSON raised RecursionError in the grader, and a message
    without jupyter's identity delimiter made jupyter_client's reader raise ValueError."""
    nb = new_notebook(cells=[new_code_cell(attack), new_code_cell("print('next')")])
    runs = execute(nb, Limits(cell_timeout=10))
    assert [run.status for run in runs] == ["ok", "ok"]
    # the deep one is now refused before it is parsed (too many containers), and the cell says so
    refused = [{"output_type": "stream", "name": "stdout", "text": "\n[salida recortada: se rechazó un mensaje de más "
                "de 4 MiB o demasiado anidado]\n"}] if attack == DEEP_MESSAGE else []
    assert [cell.outputs for cell in nb.cells] == [
        [{"output_type": "stream", "name": "stdout", "text": "after\n"}, *refused],
        [{"output_type": "stream", "name": "stdout", "text": "next\n"}]]


# Hostile files, names and folders


def answered(charge=RIGHT_CHARGE):
    """The fixture's student notebook answered (quote_total right, charge as given), as file text."""
    return dumps(submission(charge=charge))


def test_a_submission_whose_path_is_too_long_for_a_file_name_still_has_its_row_everywhere(tmp_path):
    """Before: a path too long for a report's file name was graded, then missing from the class view and the LMS
    files (its report could not be written)."""
    subs, out = tmp_path / "subs", tmp_path / "out"
    deep = subs / ("carpeta_" * 25) / ("subcarpeta_" * 20)
    deep.mkdir(parents=True)
    (deep / "05_x.ipynb").write_text(answered(), encoding="utf-8")
    (subs / "ana.ipynb").write_text(answered(), encoding="utf-8")
    rows = batch(subs, SOURCE, out, workers=1, limits=LIMITS, progress=False)
    assert sorted((row["status"], row["score"], row["error"]) for row in rows) == [("graded", "5", "")] * 2
    assert len(list((out / "reports").glob("*.json"))) == 2 and len(list((out / "feedback").glob("*.html"))) == 2
    from grader.__main__ import main
    assert main(["report", str(out)]) == 0
    assert "2 submissions: 2 graded." in (out / "class.html").read_text(encoding="utf-8")
    canvas = (out / "canvas.csv").read_text(encoding="utf-8")
    assert "carpeta_carpeta_" in canvas and "\nana," in canvas


def test_a_batch_grades_regular_files_only_and_every_bad_file_is_its_own_row(tmp_path):
    subs, out = tmp_path / "subs", tmp_path / "out"
    (subs / "alice").mkdir(parents=True)
    (subs / "alice" / "05_x.ipynb").write_text(answered(), encoding="utf-8")
    (subs / "alice__05_x.ipynb").write_text(answered("def charge(price_cents):\n    return 0"), encoding="utf-8")
    (subs / "deep.ipynb").write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    (subs / "deep_but_parsed.ipynb").write_text('{"nbformat": 4, "x": ' + "[" * 500 + "]" * 500 + "}",
                                                encoding="utf-8")
    (subs / "zero.ipynb").symlink_to("/dev/zero")
    (subs / "solution.ipynb").symlink_to(SOURCE)
    os.mkfifo(subs / "fifo.ipynb")
    with open(subs / "huge.ipynb", "wb") as handle:  # sparse: 70 MiB that cost no disk
        handle.truncate(70 * 1024 ** 2)
    (subs / "linked_folder").symlink_to(subs / "alice")  # a link to a folder is not walked: no duplicate
    done = subprocess.run([sys.executable, "-m", "grader", "batch", str(subs), "--source", str(SOURCE), "--out",
                           str(out), "--workers", "2", "--timeout", "10"], capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    with open(out / "grades.csv", encoding="utf-8", newline="") as handle:
        rows = {row["submission"]: row for row in csv.DictReader(handle)}
    assert set(rows) == {"alice/05_x.ipynb", "alice__05_x.ipynb", "deep.ipynb", "deep_but_parsed.ipynb",
                         "zero.ipynb", "solution.ipynb", "fifo.ipynb", "huge.ipynb"}
    assert (rows["alice/05_x.ipynb"]["score"], rows["alice__05_x.ipynb"]["score"]) == ("5", "3")
    errors = {name: row["error"] for name, row in rows.items() if row["status"] == "error"}
    assert errors == {
        "deep.ipynb": "too much structure to be a notebook (up to 200,000 JSON objects and arrays, over the 50,000 "
                      "allowed)",
        "deep_but_parsed.ipynb": f"JSON nested more than {MAX_DEPTH} levels deep",
        "zero.ipynb": "a symbolic link; only regular files are graded",
        "solution.ipynb": "a symbolic link; only regular files are graded",
        "fifo.ipynb": "not a regular file; only regular files are graded",
        "huge.ipynb": "larger than 64 MiB",
    }
    names = sorted(p.name for p in (out / "reports").iterdir())
    assert names == ["alice__05_x.json", "alice~05_x.json"]  # one each, and each reads back as its path
    assert sorted(p.name for p in (out / "feedback").iterdir()) == ["alice__05_x.html", "alice~05_x.html"]


def test_control_characters_never_reach_the_terminal():
    raising = ("class Forged(Exception):\n    pass\n"
               "Forged.__name__ = Forged.__qualname__ = 'X\\x1b[2K\\rscore: 18/18\\x1b]0;t\\x07\\u202e'\n"
               "def charge(price_cents):\n    raise Forged('\\x1b[31mrojo\\r')")
    report, _ = grade_notebooks(read_notebook(SOURCE), submission(charge=raising), limits=Limits(cell_timeout=10))
    table = report.table()
    assert not any(ord(ch) < 32 and ch != "\n" or ch in "\x7f\u202e" for ch in table), repr(table)
    assert "puntuación: 3/5" in table.splitlines()[-1]


def test_a_file_named_with_escape_sequences_cannot_rewrite_the_batch_summary(tmp_path):
    """Before: 'ESC[2J ESC[H ... ESC[8m.ipynb' cleared the instructor's screen and hid every error line after it."""
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "\x1b[2J\x1b[H\x1b]0;t\x07all graded\x1b[8m.ipynb").write_text("{ not json", encoding="utf-8")
    (subs / "zed.ipynb").write_text("[]", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "grader", "batch", str(subs), "--source", str(SOURCE),
                           "--out", str(tmp_path / "out"), "--workers", "1"],
                          capture_output=True, text=True, timeout=300)
    shown = done.stdout + done.stderr
    assert not any(ord(ch) < 32 and ch not in "\n\r" or ch == "\x7f" for ch in shown), repr(shown)
    assert "?[2J?[H?]0;t?all graded?[8m.ipynb" in shown and "zed.ipynb" in shown  # both errors, each on its line


def _chain(top: Path, depth: int) -> None:
    """``depth`` nested folders under ``top``, made relative to a descriptor: longer than PATH_MAX."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.mkfifo("fifo", dir_fd=fd)
    os.symlink("/", "root", dir_fd=fd)
    os.close(fd)


def test_a_folder_of_any_depth_and_content_is_removed(tmp_path):
    folder = tmp_path / "box"
    folder.mkdir()
    _chain(folder, 3000)
    locked = folder / "locked"
    locked.mkdir()
    (locked / "f").write_text("x")
    locked.chmod(0)
    assert remove_tree(folder) and not folder.exists()
    assert Path("/").exists()  # the link to / was removed, never followed


def test_a_stale_folder_never_stops_another_grader(tmp_path):
    stale = tmp_path / "grader-999999999-1-abc"  # a grader process that no longer exists
    stale.mkdir()
    _chain(stale, 3000)
    assert sweep_stale(tmp_path) == [stale] and not stale.exists()


def test_a_kernel_that_digs_a_deep_chain_leaves_nothing_behind():
    dig = ("import os\nfd = os.open('.', os.O_RDONLY)\nfor _ in range(3000):\n    os.mkdir('d', dir_fd=fd)\n"
           "    child = os.open('d', os.O_RDONLY, dir_fd=fd)\n    os.close(fd)\n    fd = child\nprint('dug')")
    before = set(run_folder().iterdir())
    nb = new_notebook(cells=[new_code_cell(dig)])
    runs = execute(nb, Limits(cell_timeout=60))
    assert runs[0].ok and nb.cells[0].outputs[0]["text"] == "dug\n"
    assert set(run_folder().iterdir()) <= before  # the kernel's folder is gone
