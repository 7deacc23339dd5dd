"""Hidden checks against AS_SOLUTION: a student's outputs on generated inputs compared with the solution's."""

import pytest

from grader import AS_SOLUTION, assert_same
from grader.authoring.notebooks import read_notebook
from grader.grading.pipeline import grade_notebooks
from grader.grading.reference import from_literals
from grader.grading.testcells import CheckRuleError, rewrite
from grader.messages import Say

GENERATED = '''"""charge is half of the price."""
assert_same(charge(6000), 3000)
### BEGIN HIDDEN TESTS
assert_same(charge(6400), 3200)
from grader import AS_SOLUTION
import random
rng = random.Random(7)
prices = [rng.randrange(1, 10**6) * 2 + 1 for _ in range(100)]
assert_same([charge(p) for p in prices], AS_SOLUTION, "precios impares")
assert_same([charge(p) for p in (0, 2, 10**12, 2**70 + 2)],
            AS_SOLUTION, "cero y precios muy grandes")
### END HIDDEN TESTS'''


def source_with_generated_checks():
    """The fixture source whose test_charge compares charge on generated prices with the solution's."""
    from fixture_submissions import SOURCE, cell_of

    source = read_notebook(SOURCE)
    cell_of(source, "test_charge").source = GENERATED
    return source


def graded(charge):
    """test_charge's result for a submission whose charge is ``charge``."""
    from fixture_submissions import submission

    report, _ = grade_notebooks(source_with_generated_checks(), submission(charge=charge), name_mistakes=False)
    return next(r for r in report.exercises if r.grade_id == "test_charge")


def test_a_generated_check_passes_anywhere_but_the_grader_since_only_the_reference_knows_its_value():
    assert_same([1, 2], AS_SOLUTION, "una lista")
    assert repr(AS_SOLUTION) == "AS_SOLUTION"


def test_a_generated_check_reports_a_digest_equal_exactly_when_assert_same_calls_the_values_the_same():
    from grader.grading.values import digest, encode

    class Name(str):
        pass

    same = [({"a": 1, "b": [2, (3,)]}, {"b": [2, (3,)], "a": 1}), ({1, 2}, {2, 1}), ({(1, "x"): {"k": None}},) * 2,
            ({"x", "y", "z"}, {"z", "y", "x"}), ({1: "a", "b": 2}, {"b": 2, 1: "a"}),
            ([2 ** 70, -0.0], [2 ** 70, -0.0]),
            ({"k": {Name("a"): frozenset({"q"})}}, {"k": {Name("a"): frozenset({"q"})}})]
    for one, other in same:
        assert digest(one) == digest(other) and digest(one)["t"] == "sha256"
    differ = [(1, 1.0), (True, 1), ([1, 2], [2, 1]), ((1,), [1]), ({"a": 1}, {"a": 1, "b": 2}), ("a", "a "),
              ({"a"}, frozenset({"a"})), ({"a"}, ["a"]), ("x", Name("x")), ({"1": 0}, {1: 0}), (["s", "x"], "x"),
              ([["a"], "b"], [["a", "b"]]), ({"a": "b", "c": "d"}, {"a": "c", "b": "d"}), (None, "None"),
              (2 ** 63, 2 ** 63 - 1), (0.1, "0.1"), ({"a", "b"}, {"ab"}), ([], ())]
    for one, other in differ:
        assert digest(one) != digest(other), (one, other)
    assert digest(lambda: 1) == encode(lambda: 1)  # a value that cannot be encoded says why, as before
    deep: list = []
    for _ in range(60):
        deep = [deep]
    for too_big in (list(range(60_000)), ["x" * 600_000] * 2, {"k": ["x" * 999_999, "y" * 10]}, deep):
        assert "error" in digest(too_big) and digest(too_big) == encode(too_big)
    code = rewrite(GENERATED)
    assert "hashed=True" in code.hidden and "hashed" not in code.visible
    assert code.hidden.count("hashed=True") == 2  # the generated checks only, not the hand-written hidden one


def test_an_int_too_large_for_the_graders_json_reader_travels_as_its_digits():
    """The grader reads reports with orjson, which turns an int beyond 64 bits into a float."""
    import json

    import orjson

    from grader.grading.values import describe, difference, encode

    for number in (2**63, -2**63, 2**70 + 1, -(10**30)):
        sent = orjson.loads(json.dumps(encode([number])))
        assert difference(sent, encode([number])) is None and describe(sent) == f"[{number}]"
        assert difference(sent, encode([number + 1])) is not None
    assert encode(2**63 - 1) == {"t": "int", "v": 2**63 - 1}


def test_a_generated_check_is_hidden_and_names_its_kind_else_the_cell_breaks_the_rule():
    with pytest.raises(CheckRuleError, match="line 1: a check against AS_SOLUTION is a hidden one"):
        rewrite('assert_same(f(1), AS_SOLUTION, "uno")\n### BEGIN HIDDEN TESTS\nassert_same(f(2), 2)\n'
                '### END HIDDEN TESTS')
    for what in ("", ", what", ', "a" + "b"'):
        with pytest.raises(CheckRuleError, match="with a plain string naming the kind"):
            rewrite(f'assert_same(f(1), 1)\n### BEGIN HIDDEN TESTS\nassert_same(f(2), AS_SOLUTION{what})\n'
                    '### END HIDDEN TESTS')


def test_neither_kernel_receives_as_solution_and_the_student_kernel_never_the_kind():
    code = rewrite(GENERATED)
    reference = rewrite(GENERATED, expected=True)
    assert "AS_SOLUTION" not in code.hidden_only.replace("from grader import AS_SOLUTION", "")
    assert "precios impares" not in code.hidden and "precios impares" in reference.hidden
    assert "expected=AS_SOLUTION" not in reference.hidden and "expected=3000" in reference.visible
    assert [c.generated for c in code.checks] == [False, False, True, True]
    assert (code.checks[3].line, code.checks[3].end_line) == (10, 11)
    assert from_literals(source_with_generated_checks()) is None  # its values need a run of the solution


@pytest.mark.slow
@pytest.mark.parametrize("charge, status, said", [
    ("def charge(price_cents):\n    return price_cents // 2", "passed", None),
    ("def charge(price_cents):\n    return price_cents >> 1", "passed", None),  # written another way
    # right on the visible even price, wrong on every odd one
    ("def charge(price_cents):\n    return (price_cents + 1) // 2", "failed", ("AssertionError", "precios impares")),
    # right on odd prices, raises on zero: the line of the second generated check
    ("def charge(price_cents):\n    return price_cents // 2 if price_cents else 1 // price_cents", "failed",
     ("ZeroDivisionError", "cero y precios muy grandes")),
    # a float where the solution gives an int: every odd case differs by type
    ("def charge(price_cents):\n    return price_cents / 2 if price_cents % 2 else price_cents // 2", "failed",
     ("AssertionError", "precios impares")),
])
def test_a_hidden_check_on_generated_inputs_grades_by_the_solutions_values_and_names_the_kind(charge, status, said):
    result = graded(charge)
    assert result.status == status
    if said is None:
        assert result.points == result.max_points
        return
    assert result.points == 0
    assert result.message is not None and result.message.say == Say.IN_GENERATED
    assert (result.message.params["ename"], result.message.params["inputs"]) == said
    assert result.message.spanish() == f"{said[0]} en un test oculto con entradas generadas: {said[1]}"


@pytest.mark.slow
@pytest.mark.parametrize("answer, ename", [("3201", "AssertionError"), ("1 // 0", "ZeroDivisionError")])
def test_a_hidden_failure_outside_the_generated_checks_still_names_no_kind(answer, ename):
    result = graded(f"def charge(price_cents):\n    return {answer} if price_cents == 6400 else price_cents // 2")
    assert result.status == "failed" and result.message is not None and result.message.say == Say.IN_HIDDEN
    assert result.message.params == {"ename": ename}
