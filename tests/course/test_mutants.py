"""Every mutant of an exercise's solution is killed by the visible tests (issue 18, "Done when").

``mutation.py`` makes at most ``mutation.N`` mutants per exercise (small deliberate bugs: a comparison
negated, ``and``/``or`` swapped, a constant changed, a statement deleted...) and grades each lesson's in
one batch against the tests a student sees; a mutant is killed when it scores less than the solution.
Here every mutant must be killed, except:

- ``EQUIVALENT``: mutants that do not change behaviour, not graded at all, each with its reason;
- ``NOT_CAUGHT_BY_VISIBLE_TESTS``: holes in the visible tests, written down as strict xfails: the test
  is green now and fails as soon as a lesson's tests catch the mutant, until its entry is removed.

Both lists are keyed by the mutant's key (``<lesson>:<grade_id>: <old line> => <new line>``); an entry
that names no mutant any more (the solution was edited, or the sample changed) fails
``test_listed_mutants_exist``: re-run ``python tests/support/mutation.py NN`` and classify again.

Budget (2 cores shared with other workers; a quiet machine was not available): lesson 01's 48 mutants and
its solution graded in 35 s at load 1.7, about 0.7 s a submission. With N = 12 the course has 560 mutants
(~400 s at that rate), with N = 8 386 (~285 s; measured: 969 s at load 14-19, 374 killed), with N = 6 294
(~220 s): N = 6. Measured at N = 6 under load 14-16: ``pytest tests/course/test_mutants.py`` 285 passed, 7 xfailed
in 660 s; after merging main, in two runs at load 5-7: 283 killed, 7 xfailed in 174 + 155 s.
With the last 7 holes closed (NOT_CAUGHT_BY_VISIBLE_TESTS empty), lessons 01, 02, 03, 05, 06 and 07 at load 7:
157 mutants killed (and the two list checks) in 281 s.
The N = 6 mutants are a subset of the N = 8 ones (see mutation.py), all classified.
"""

import pytest
from mutation import N, grade, lesson_mutants, lessons

# A mutant that behaves like the solution on every input the statement allows.
EQUIVALENT: dict[str, str] = {
    '03:repaired_handoff: "receiver": owners[0], => "receiver": owners[-1],':
        "each topic is in the expertise of exactly one specialist of SPECIALISTS: owners has one name",
    '04:pricing_turns: turn(tool_use_block("toolu_21", "get_quote", quote)), => '
    'turn(tool_use_block("", "get_quote", quote)),':
        "the statement leaves the tool_use id free; the chain pairs the call and its result by it, whatever it is",
}

# Holes: the visible tests do not catch these mutants (strict: closing a hole fails the test until its entry goes).
# None left: the last seven (``==`` -> ``is`` on names and on an int above 256, a rounding, a state no visible contract
# had) were closed by visible inputs read from JSON, a ratio that 101 % rounds up (25 of 80 tokens) and a needs-review
# contract. A new hole goes in the set as its key, with a comment saying why the visible tests miss it:
#     "NN:<grade_id>: <old line> => <new line>",
NOT_CAUGHT_BY_VISIBLE_TESTS: set[str] = set()

ALL = [m for lesson in lessons() for m in lesson_mutants(lesson)]
GRADED = [pytest.param(m, id=f"{m.path.stem}|{m.key[3:]}",
                       marks=[pytest.mark.xfail(strict=True, reason="a hole in the visible tests")]
                       if m.key in NOT_CAUGHT_BY_VISIBLE_TESTS else [])
          for m in ALL if m.key not in EQUIVALENT]


def test_mutants_are_deterministic_and_compile():
    again = [m for lesson in lessons() for m in lesson_mutants(lesson)]
    assert [(m.key, m.source) for m in again] == [(m.key, m.source) for m in ALL]
    assert len({m.key for m in ALL}) == len(ALL)
    for mutant in ALL:
        compile(mutant.source, mutant.key, "exec")
    per_exercise: dict[tuple[str, str], int] = {}
    for mutant in ALL:
        per_exercise[mutant.lesson, mutant.target] = per_exercise.get((mutant.lesson, mutant.target), 0) + 1
    assert max(per_exercise.values()) <= N


def test_listed_mutants_exist():
    keys = {m.key for m in ALL}
    assert not (set(EQUIVALENT) | NOT_CAUGHT_BY_VISIBLE_TESTS) - keys, "listed mutants that are no longer generated"
    assert not set(EQUIVALENT) & NOT_CAUGHT_BY_VISIBLE_TESTS


@pytest.fixture(scope="module")
def killed(tmp_path_factory, request):
    """Whether a mutant is killed; the selected mutants of a lesson are graded in one batch, one lesson at a time."""
    selected = {item.callspec.params["mutant"].key for item in request.session.items
                if hasattr(item, "callspec") and "mutant" in item.callspec.params}
    results: dict[str, dict[str, bool]] = {}

    def of(mutant):
        if mutant.lesson not in results:
            batch = [m.values[0] for m in GRADED if m.values[0].lesson == mutant.lesson and m.values[0].key in selected]
            results[mutant.lesson] = grade(batch, tmp_path_factory.mktemp(f"mutants{mutant.lesson}"))
        return results[mutant.lesson][mutant.key]
    return of


@pytest.mark.slow
@pytest.mark.parametrize("mutant", GRADED)
def test_mutant_is_killed(mutant, killed):
    assert killed(mutant), f"{mutant.path.name}: the visible tests accept the mutant [{mutant.operator}] " \
                           f"line {mutant.line}: {mutant.diff}"
