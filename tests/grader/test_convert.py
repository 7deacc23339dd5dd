"""``grader convert``: plain ``assert A == B`` test lines become ``assert_same(A, B)`` only where a run of the source
shows the verdict stays the same, every other assert is left with its reason, and the source is never written."""

import subprocess
import sys
from pathlib import Path

import pytest
from nbformat.v4 import new_code_cell, new_notebook

from grader.authoring.notebooks import dumps, read_notebook
from grader.errors import WrongKindOfPath
from grader.grading.convert import convert
from grader.grading.testcells import rewrite_tests

PLAIN = Path(__file__).parents[1] / "fixtures" / "plain"


def meta(gid, *, test=False):
    return {"nbgrader": {"grade": test, "solution": not test, "locked": test, "grade_id": gid, "schema_version": 3,
                         **({"points": 1} if test else {})}}


CELLS = {
    "test_a": '"""a."""\nassert f(2) == 4\nassert f(2) == 4.0\nassert f(1) != 3\nassert 2 == f(1) == 2\n'
              "for x in [1]:\n    assert f(x) == 2",
    "test_b": '"""b."""\nassert g() == [1, 2], "lista"\n### BEGIN HIDDEN TESTS\nassert f(5) == 10\n'
              "### END HIDDEN TESTS",
    "test_c": '"""c."""\nassert f(3) == f(1) * 3',
    "test_d": "assert g()[0] == 1",
    "test_e": '"""e."""\nfrom grader import assert_same\nassert_same(f(0), 0)',
    "test_f": '"""f."""\nraise ValueError("roto")\nassert f(1) == 2',
}


def source(tmp_path):
    nb = new_notebook(cells=[
        new_code_cell("def f(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION", metadata=meta("f")),
        new_code_cell("def g():\n    ### BEGIN SOLUTION\n    return [1, 2]\n    ### END SOLUTION", metadata=meta("g")),
        *(new_code_cell(text, metadata=meta(gid, test=True)) for gid, text in CELLS.items())],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    path = tmp_path / "source.ipynb"
    path.write_text(dumps(nb), encoding="utf-8")
    return path


def test_convert_never_writes_over_its_source(tmp_path):
    path = source(tmp_path)
    before = path.read_bytes()
    (tmp_path / "link.ipynb").symlink_to(path)
    for out in (path, tmp_path / "." / "source.ipynb", tmp_path / "link.ipynb"):
        with pytest.raises(WrongKindOfPath, match="never writes in place"):
            convert(path, out)
    assert path.read_bytes() == before


@pytest.mark.slow
def test_only_asserts_whose_verdict_a_run_shows_unchanged_are_converted_and_each_other_says_why(tmp_path):
    """Before: there was no ``grader convert`` (argparse exits 2: invalid choice)."""
    path = source(tmp_path)
    before = path.read_bytes()
    done = subprocess.run([sys.executable, "-m", "grader", "convert", str(path), "--out", str(tmp_path / "new.ipynb")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert path.read_bytes() == before
    out = done.stdout.splitlines()
    block = out[:out.index("test_b: 2 converted, 0 left; follows the assert_same rule now: its verdict is decided "
                           "by the grader")]
    assert block == [
        "test_a: 1 converted, 4 left; still graded in the student's kernel; in the new cell, line 4: uses assert; "
        "every check is an assert_same call",
        "  converted line 2: assert f(2) == 4 -> assert_same(f(2), 4)",
        "  left line 3: assert f(2) == 4.0: == holds, but assert_same does not (value: se esperaba el tipo float, "
        "se obtuvo int)",
        "  left line 4: assert f(1) != 3: not one == comparison; assert_same states only equality",
        "  left line 5: assert 2 == f(1) == 2: not one == comparison; assert_same states only equality",
        "  left line 7: assert f(x) == 2: inside a block (a loop, a function, an if...); a check is a statement of "
        "its own at the top of the cell"]
    assert "  left line 2: assert f(3) == f(1) * 3: its expected side reads f, which the student's code sets; " \
           "converted, the cell would follow the rule and take that value from the solution's run" in out
    assert "test_d: 1 converted, 0 left; follows the assert_same rule now: its verdict is decided by the grader" in out
    assert "test_e: follows the assert_same rule already; unchanged" in out
    assert "  left line 3: assert f(1) == 2: never ran in the run of the source (the cell failed before it: " \
           "ValueError: roto)" in out
    assert out[-1].startswith("wrote ") and out[-1].endswith(": 4 assert(s) converted, 6 left; 3 of 6 test cell(s) "
                                                             "follow the assert_same rule (verdict decided by the "
                                                             "grader), the others are graded in the student's kernel")
    new = {c.metadata["nbgrader"]["grade_id"]: c.source for c in read_notebook(tmp_path / "new.ipynb").cells}
    assert new["test_b"] == ('"""b."""\nfrom grader import assert_same\nassert_same(g(), [1, 2], "lista")\n'
                             "### BEGIN HIDDEN TESTS\nassert_same(f(5), 10)\n### END HIDDEN TESTS")
    assert new["test_d"] == "from grader import assert_same\nassert_same(g()[0], 1)"
    assert new["test_c"] == CELLS["test_c"] and new["test_e"] == CELLS["test_e"] and new["f"].startswith("def f(x)")
    codes = rewrite_tests(read_notebook(tmp_path / "new.ipynb"))
    assert [gid for gid, code in codes.items() if not code.plain] == ["test_b", "test_d", "test_e"]


@pytest.mark.slow
def test_a_converted_assignment_grades_its_submissions_as_before_but_for_an_answer_of_another_type(tmp_path):
    """The plain ``basics`` assignment, converted: every submission scores as it did, but for the one whose square
    returns a float (``4.0 == 4`` holds, ``assert_same`` sees float for int): the change of meaning convert says."""
    from grader.grading.pipeline import grade

    converted = tmp_path / "converted.ipynb"
    cells = convert(PLAIN / "basics" / "source.ipynb", converted)
    assert [c.grade_id for c in cells if not c.graded_in_kernel] == ["test_square", "test_square_more",
                                                                     "test_count_words", "test_shout"]
    scores = {}
    for name in ("correct", "partial", "hard_coded", "floats", "blank"):
        submission = PLAIN / "basics" / "submissions" / f"{name}.ipynb"
        scores[name] = (grade(PLAIN / "basics" / "source.ipynb", submission).score, grade(converted, submission).score)
    assert scores == {"correct": (10, 10), "partial": (5, 5), "hard_coded": (8, 8), "floats": (10, 7),
                      "blank": (0, 0)}
