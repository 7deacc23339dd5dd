"""Test cells as the kernel receives them, and values compared outside it: the grader's pure parts, no kernel.

``grader.grading.testcells`` rewrites each ``assert_same(actual, expected, what)`` so the kernel reports
only the actual side; ``grader.grading.values`` encodes values with their exact types and compares them
as ``assert_same`` does. The attacks on the whole grader are in test_verdicts.py.
"""

from pathlib import Path

import pytest

from grader.authoring.notebooks import read_notebook
from grader.grading.testcells import CheckRuleError, problems, rewrite

ROOT = Path(__file__).resolve().parents[2]


def test_rewrite_keeps_every_line_and_drops_only_the_expected_side():
    cell = ('"""t."""\nvalue = f(1)\nassert_same(value,\n            {"k": "secreto"},\n            "el valor")\n'
            'before = dict(ORIGINAL)\ng(ORIGINAL)\nassert_same(ORIGINAL, before, "sin mutar")\n'
            '### BEGIN HIDDEN TESTS\nassert_same(f(2), "oculto", "oculto")\n### END HIDDEN TESTS\n')
    code = rewrite(cell)
    assert "secreto" not in code.visible and "before" not in code.visible and "oculto" not in code.hidden
    assert code.visible.split("\n")[1:3] == [
        "value = f(1)", '__import__("grader.grading.probe").grading.probe.check(0, value, "el valor"']
    assert len(code.visible.split("\n")) == 8 and code.hidden.split("\n")[9].startswith(
        '__import__("grader.grading.probe").grading.probe.check(2, f(2))')
    assert [(c.index, c.line, c.hidden) for c in code.checks] == [(0, 3, False), (1, 8, False), (2, 10, True)]
    compile(code.visible, "<v>", "exec")
    compile(code.hidden, "<h>", "exec")
    reference = rewrite(cell, expected=True)
    assert "secreto" in reference.visible and 'expected="oculto"' in reference.hidden


@pytest.mark.parametrize("cell, problem", [
    ('"""t."""\nassert f(1) == 2', "line 2: uses assert; every check is an assert_same call"),
    ('"""t."""\nfor x in [1]:\n    assert_same(f(x), 2)', "line 3: assert_same is used other than as a statement"),
    ('"""t."""\nx = f(1)', "holds no assert_same check"),
    ('"""t."""\nassert_same(f(1), 2)\n### BEGIN HIDDEN TESTS\nassert_same(f(2), 3)\n### END HIDDEN TESTS\nprint(1)',
     "has code after END HIDDEN TESTS"),
    ('"""t."""\nassert_same(f(1), 2)\n### BEGIN HIDDEN TESTS\nx = f(2)\n### END HIDDEN TESTS',
     "its hidden tests hold no assert_same check"),
    ('"""t."""\nfor want in ["a"]:\n    pass\nassert_same(f(1), want)', "line 2: want is bound only to be an expected"),
    ('"""t."""\nassert_same(f(1), *[2])', "line 2: a check is assert_same(actual, expected)"),
])
def test_a_test_cell_that_breaks_the_rule_is_refused_in_one_line(cell, problem):
    with pytest.raises(CheckRuleError) as refused:
        rewrite(cell)
    assert str(refused.value).startswith(problem) and "\n" not in str(refused.value)


def test_every_lesson_follows_the_rule():
    found = [problem for path in sorted((ROOT / "solutions").glob("*.ipynb"))
             for problem in problems(read_notebook(path))]
    assert found == []


def test_a_name_that_feeds_only_expected_values_never_reaches_the_kernel():
    """Even bound in a cell of its own: the statement is dropped, line numbers kept."""
    cell = '"""t."""\nEXPECTED = "valor-secreto"\nassert_same(f(1), EXPECTED)'
    assert "valor-secreto" not in rewrite(cell).visible
    assert rewrite(cell).visible.split("\n")[1] == "pass"
    kept = rewrite(cell, keep=frozenset({"EXPECTED"}))  # another cell reads it as an input: it stays
    assert "valor-secreto" in kept.visible


def test_the_same_values_compare_as_assert_same_does():
    from grader.grading.asserts import assert_same
    from grader.grading.values import difference, encode
    from handoffs import HandoffPackage

    cases = [(3, 3), (3, 3.0), (True, 1), ([1, (2, "a")], [1, (2, "a")]), ([1, 2], [1, 2, 3]),
             ({"a": 1}, {"a": 1, "b": 2}), ({"a": [1]}, {"a": [2]}), (float("nan"), float("nan")),
             (0.1 + 0.2, 0.3), ({1, 2}, {2, 1}), (frozenset({1}), {1}), (None, None), (b"x", b"x"),
             (RuntimeError, RuntimeError), (KeyError, RuntimeError), ("a", "b")]
    for actual, expected in cases:
        try:
            assert_same(actual, expected, "valor")
            inside = None
        except AssertionError as error:
            inside = str(error)
        outside = difference(encode(actual), encode(expected), "valor")
        assert (outside is None) == (inside is None), (actual, expected, inside, outside)
        if inside is not None and not isinstance(expected, (set, frozenset)):
            assert outside == inside, (actual, expected)
    package = HandoffPackage("a", "b", "r", "t", {"x": 1})
    assert difference(encode(package), encode(HandoffPackage("a", "b", "r", "t", {"x": 1}))) is None
    assert difference(encode(package), encode(HandoffPackage("a", "c", "r", "t", {"x": 1}))) == \
        "valor.receiver: se esperaba 'c', se obtuvo 'b'"
    assert difference(encode(lambda: 1), encode(lambda: 2)) == \
        "valor: no se puede comparar una función sin nombre (lambda o definida dentro de otra)"
    assert difference(encode(object()), encode(object())) == "valor: no se puede comparar un valor de tipo object"
    assert difference(encode(lambda: 1), encode(1)) == "valor: se esperaba el tipo int, se obtuvo function"
    loop: list = []
    loop.append(loop)
    assert "niveles" in difference(encode(loop), encode([]))


def test_a_forged_tree_is_a_difference_never_a_match():
    from grader.grading.values import difference, encode

    expected = encode([1, 2])
    for forged in ({"t": "list"}, {"t": "list", "items": "x"}, {"t": "list", "items": [{"t": "int"}]},
                   [], "x", {"t": "list", "items": [], "extra": 1}, {"t": "dict", "pairs": [[{"t": "int", "v": 1}]]}):
        assert difference(forged, expected) is not None, forged
    deep: dict = {"t": "list", "items": []}
    node = deep
    for _ in range(5000):
        inner: dict = {"t": "list", "items": []}
        node["items"].append(inner)
        node = inner
    assert difference(deep, expected) is not None


def test_a_name_read_only_by_a_hidden_checks_description_never_reaches_the_kernel():
    cell = ('"""t."""\nassert_same(f(1), 2)\n### BEGIN HIDDEN TESTS\nlabel = "caso-secreto"\n'
            'assert_same(f(3), 4, label)\n### END HIDDEN TESTS')
    code = rewrite(cell)
    assert "caso-secreto" not in code.hidden and "label" not in code.hidden
    assert "caso-secreto" in rewrite(cell, expected=True).hidden  # the reference run has it


def test_the_line_of_an_error_is_read_from_cell_frames_only_and_quoted_as_the_student_reads_it():
    """``raised_at`` reads IPython's frames (colours and all): the deepest cell frame wins; a test cell's own line
    is quoted from the visible part the student reads (never the probe the kernel ran, never a hidden line);
    anything else, a library frame or a traceback that is not IPython's, gives no line."""
    from grader.grading.tracebacks import raised_at

    code = rewrite('assert_same(f(1), 2, "uno")\n### BEGIN HIDDEN TESTS\nassert_same(f(3), 4)\n### END HIDDEN TESTS')
    kernel_line = code.visible.split("\n")[0]
    frames = ["\x1b[31m-----\x1b[39m", "\x1b[31mKeyError\x1b[39m    Traceback (most recent call last)",
              f"\x1b[36mCell\x1b[39m\x1b[36m \x1b[39m\x1b[32mIn[7]\x1b[39m\x1b[32m, line 1\x1b[39m\n"
              f"\x1b[32m----> \x1b[39m\x1b[32m1\x1b[39m {kernel_line}\n",
              "Cell In[3], line 2, in f(x)\n      1 def f(x):\n----> 2     return {}[x]\n",
              "File ~/lib/python3.11/json/__init__.py:346, in loads(s)\n--> 346     return decode(s)\n",
              "\x1b[31mKeyError\x1b[39m: 1"]
    deepest = raised_at("KeyError: 1", frames, code.lines)
    assert deepest is not None and deepest.spanish() == "KeyError: 1 (en f, línea 2: return {}[x])"
    own = raised_at("KeyError: 1", frames[:3], code.lines)
    assert own is not None and own.english() == 'KeyError: 1 (line 1 of the cell: assert_same(f(1), 2, "uno"))'
    assert "probe" in kernel_line and code.lines == ('assert_same(f(1), 2, "uno")',)
    forged = ["Cell In[7], line 3\n----> 3 whatever the kernel says\n"]  # line 3 is hidden: not quoted from it
    assert raised_at("E", forged, code.lines).spanish() == "E (línea 3 de la celda: whatever the kernel says)"
    assert raised_at("E", frames[-2:], code.lines) is None
    assert raised_at("E", ["Cell In[1], line x", "", "\x1b[", "----> 1 y"], code.lines) is None
