"""What makes a kernel cheap changes nothing a student sees: the lesson's modules imported once by the zygote,
the quick readiness handshake, and the check reports sent together."""

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from grader.authoring.generate import student_version
from grader.authoring.notebooks import dumps
from grader.classroom.batch import batch
from grader.errors import SandboxError
from grader.grading import probe
from grader.grading.execute import CellOutputs, Limits, execute
from grader.grading.values import encode
from grader.kernels import zygote
from grader.kernels.kernel import start_kernel
from grader.kernels.request import Outcome, request
from grader.kernels.request import execute as execute_request

pytestmark = pytest.mark.slow  # kernels: not in make test-fast

LIMITS = Limits(cell_timeout=10, notebook_timeout=60)
SEEN = "import sys\nprint('wave' in sys.modules, 'no_such_module_xyz' in sys.modules)"


def run(*codes):
    """Run cells in a fresh kernel: (the runs, the printed text per cell)."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code) for code in codes])
    runs = execute(nb, LIMITS)
    return runs, ["".join(o.get("text", "") for o in nb.cells[r.index].outputs) for r in runs]


@pytest.fixture
def preloaded():
    """This process's next zygote imports what is given; afterwards, none (and that zygote is stopped)."""
    zygote.release()
    yield zygote.preload
    zygote.preload(())
    zygote.release()


def test_a_kernel_finds_the_modules_its_zygote_preloaded(preloaded):
    _, before = run(SEEN)
    zygote.release()
    preloaded(("no_such_module_xyz", "wave", "wave.open", "wave.no_such_name"))  # the kernel skips what is not one
    _, after = run(SEEN)
    assert before == ["False False\n"] and after == ["True False\n"]


def _wave_lesson(folder: Path) -> tuple[Path, Path]:
    """A source whose test, first, checks that ``wave`` is imported before the lesson's own ``import wave``."""
    test = nbformat.v4.new_code_cell(
        "import sys\nassert_same('wave' in sys.modules, True)",
        metadata={"nbgrader": {"grade": True, "grade_id": "test_wave", "points": 1, "locked": True,
                               "solution": False, "schema_version": 3}})
    source = nbformat.v4.new_notebook(cells=[test, nbformat.v4.new_code_cell("import wave")])
    (folder / "subs").mkdir(parents=True)
    source_path, submission = folder / "wave.ipynb", folder / "subs" / "student.ipynb"
    source_path.write_text(dumps(source), encoding="utf-8")
    submission.write_text(dumps(student_version(source)), encoding="utf-8")
    return source_path, submission


def test_a_batch_preloads_what_its_source_imports(tmp_path, preloaded, monkeypatch):
    source, submission = _wave_lesson(tmp_path)
    graded = batch(submission.parent, source, tmp_path / "out", workers=1, limits=LIMITS, progress=False)
    monkeypatch.setattr("grader.classroom.batch.imported_modules", lambda notebooks: ())
    control = batch(submission.parent, source, tmp_path / "control", workers=1, limits=LIMITS, progress=False)
    assert [(r["status"], r["score"]) for r in graded] == [("graded", "1")]
    assert [(r["status"], r["score"]) for r in control] == [("graded", "0")]  # what the test sees without it


def test_the_handshake_says_a_kernel_answers_and_that_a_dead_one_died():
    async def answers_then_dies():
        kernel = await start_kernel(LIMITS.memory_bytes)
        try:
            alive = await kernel.answers(10)
            died = await request(kernel, execute_request("import os\nos._exit(1)"), 10, 1)
            assert died.outcome is Outcome.DIED  # its client stays connected, to nothing
            with pytest.raises(SandboxError, match="died"):
                await kernel.answers(10)
            return alive
        finally:
            await kernel.stop()

    assert asyncio.run(answers_then_dies()) is True


def counted(monkeypatch) -> list[str]:
    """The kind of every message a kernel's cells send the grader ("report" for a message of check reports)."""
    kinds: list[str] = []
    real = CellOutputs.process_message

    def process(self, msg, cell, index):
        data = msg["content"].get("data") if msg["msg_type"] == "display_data" else None
        kinds.append("report" if isinstance(data, dict) and probe.MIME in data else msg["msg_type"])
        return real(self, msg, cell, index)

    monkeypatch.setattr(CellOutputs, "process_message", process)
    return kinds


def test_reports_go_out_together_and_all_arrive(monkeypatch):
    kinds = counted(monkeypatch)
    runs, _ = run(f"from grader.grading.probe import check\nfor i in range({probe.BATCH * 2 + 10}):\n    check(i, [i])")
    assert [r["check"] for r in runs[0].reports] == list(range(probe.BATCH * 2 + 10))
    assert [r["actual"] for r in runs[0].reports[:2]] == [encode([0]), encode([1])]
    assert kinds.count("report") == 3  # BATCH, BATCH, then the rest when the request ends


def test_large_reports_go_out_apart_and_a_raising_part_still_sends_its_reports(monkeypatch):
    kinds = counted(monkeypatch)
    big = probe.BATCH_CHARS  # each report alone is as large as a whole batch may be
    runs, _ = run(f"from grader.grading.probe import check\ncheck(0, 'a' * {big})\ncheck(1, 'b' * {big})\ncheck(2, 3)",
                  "from grader.grading.probe import check\ncheck(0, 'before')\nraise ValueError('after')")
    assert [r["actual"] for r in runs[0].reports] == [encode("a" * big), encode("b" * big), encode(3)]
    assert kinds.count("report") == 4  # the first alone, the second alone, the third at the end; the raising cell
    assert runs[1].status == "error" and [r["check"] for r in runs[1].reports] == [0]


SUPPLY_LEFT_OPEN = """
import glob, sys
from grader.kernels.folders import run_folder
from grader.kernels.supply import KernelSupply
supply = KernelSupply(2 * 1024 ** 3)
supply.warm_up()  # kernels booted; the script ends without closing the supply
print(run_folder())
"""


def test_a_supply_left_open_is_closed_at_exit_without_a_traceback(tmp_path):
    """Measured before: the supply's close at exit could not start the thread that frees a kernel's folder and uid,
    and printed a RuntimeError ("cannot schedule new futures after shutdown")."""
    done = subprocess.run([sys.executable, "-c", SUPPLY_LEFT_OPEN], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).parents[2])
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "RuntimeError" not in done.stderr, done.stderr
    assert not Path(done.stdout.strip()).exists()


COUNT_TRANSFORMS = """tm = get_ipython().input_transformer_manager
calls = []
real_transform = tm.transform_cell
tm.transform_cell = lambda cell: (calls.append(cell), real_transform(cell))[1]"""


def test_the_grading_kernel_transforms_each_cell_once():
    """ipykernel transforms a cell to ask whether it is async and IPython again to run it: 4 calls for these two
    cells in a stock kernel, measured; the grading kernel's shell keeps the first result for the second call."""
    _, printed = run("print(type(get_ipython().kernel).__name__, type(get_ipython()).__name__)",
                     COUNT_TRANSFORMS, "x = 1", "print(len(calls), calls.count('x = 1'))")
    assert printed[0] == "GradingKernel GradingShell\n"
    assert printed[3] == "2 1\n"


def test_a_cell_sent_again_is_transformed_again():
    """The kept transform lives for one request: a transformer a cell adds applies to the same source sent later."""
    add = "get_ipython().input_transformers_post.append(lambda lines: [l.replace(\"'a'\", \"'b'\") for l in lines])"
    _, printed = run("print('a')", add, "print('a')")
    assert printed == ["a\n", "", "b\n"]


def test_the_grading_kernel_runs_cells_as_ipython_does():
    """Magics, shell commands, help, inspect and tracebacks as in a stock kernel (IPython's compiler names cells)."""
    runs, printed = run("def f(x):\n    return 1 / x", "import inspect\nprint(inspect.getsource(f), end='')",
                        "y = 2\nf(0)", "%time z = 3", "a = !echo hi\nprint(a, z)", "len?")
    assert [r.status for r in runs] == ["ok", "ok", "error", "ok", "ok", "ok"]
    assert printed[1] == "def f(x):\n    return 1 / x\n" and printed[4] == "['hi'] 3\n" and "Wall time" in printed[3]
    frames = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(runs[2].traceback))
    assert "Cell In[3], line 2" in frames and "Cell In[1], line 2, in f(x)" in frames


def test_a_request_brings_its_outputs_and_no_copy_of_its_code(monkeypatch):
    """A stock kernel re-broadcasts each request's code (``execute_input``, one message more per cell, measured) and
    sleeps 0.5 ms before each reply; the grading kernel does neither, and every output still arrives."""
    kinds = counted(monkeypatch)
    _, printed = run("print(get_ipython().kernel._execute_sleep)", "for i in range(3):\n    print(i, flush=True)")
    assert printed == ["0.0\n", "0\n1\n2\n"]
    assert "execute_input" not in kinds and kinds.count("stream") == 4


def test_an_error_is_formatted_once_for_the_student_and_kept_in_plain_text():
    """IPython formats each error a second time to keep it for ``%notebook`` (stack_data and pygments, as costly as
    the first); the grading kernel keeps Python's own traceback instead. The student's traceback is IPython's."""
    runs, printed = run("1 / 0", "kept = get_ipython().history_manager.exceptions[1]\n"
                                 "print(kept['ename'], '\\x1b' in ''.join(kept['traceback']), kept['traceback'][-1])")
    assert "Cell In[1], line 1" in re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(runs[0].traceback))
    assert printed[1] == "ZeroDivisionError False ZeroDivisionError: division by zero\n\n"


def test_a_kernel_starts_with_inspects_index_of_modules_built():
    """The zygote formats one traceback before it forks: the first error a kernel shows then skips building what
    IPython's traceback needs on first use (``inspect``'s index of every module's file, measured: ~100 ms)."""
    _, printed = run("import inspect\nprint(len(inspect.modulesbyfile) > 100)")
    assert printed == ["True\n"]
