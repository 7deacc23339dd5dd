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
``test_listed_mutants_exist``: re-run ``python tests/mutation.py NN`` and classify again.

Budget (2 cores shared with other workers; a quiet machine was not available): lesson 01's 48 mutants and
its solution graded in 35 s at load 1.7, about 0.7 s a submission. With N = 12 the course has 560 mutants
(~400 s at that rate), with N = 8 386 (~285 s; measured: 969 s at load 14-19, 374 killed), with N = 6 294
(~220 s): N = 6. Measured at N = 6 under load 14-16: ``pytest tests/test_mutants.py`` 285 passed, 7 xfailed
in 660 s; after merging main, in two runs at load 5-7: 283 killed, 7 xfailed in 174 + 155 s.
The N = 6 mutants are a subset of the N = 8 ones (see mutation.py), all classified.
"""

import pytest
from mutation import N, grade, lesson_mutants, lessons

# A mutant that behaves like the solution on every input the statement allows.
EQUIVALENT: dict[str, str] = {
    '12:handoff_gate: problems = "; ".join(f"{error[\'field\']}: {error[\'problem\']}" for error in result.errors) '
    '=> problems = "".join(f"{error[\'field\']}: {error[\'problem\']}" for error in result.errors)':
        "the rejection's wording is free (the statement asks that it name the reason, the next step and each field, "
        "all still there); the fields stay apart in HandoffResult.fields, which the sender reads",
    '03:repaired_handoff: "receiver": owners[0], => "receiver": owners[-1],':
        "each topic is in the expertise of exactly one specialist of SPECIALISTS: owners has one name",
    '04:pricing_turns: turn(tool_use_block("toolu_21", "get_quote", quote)), => '
    'turn(tool_use_block("", "get_quote", quote)),':
        "the statement leaves the tool_use id free; the chain pairs the call and its result by it, whatever it is",
    "09:handoff_tool: if len(set(names)) != len(names): => if len(set(names)) is not len(names):":
        "two lengths below 257 are the same cached int object in CPython; no handoff tool has 257 agents",
    '09:handoff_tool: catalog = "\\n".join(f"- {agent[\'name\']}: {agent[\'description\']}" for agent in agents) => '
    'catalog = "".join(f"- {agent[\'name\']}: {agent[\'description\']}" for agent in agents)':
        "the wording of the description is free (the statement says so); every agent and description is still in it",
}

# Holes: the visible tests do not catch these mutants (strict: closing a hole fails the test until its entry goes).
# Most are ``==`` -> ``is`` on names: every visible test builds its names from the same literals, which
# CPython interns, so identity holds; names read from JSON (``json.loads``) would expose them.
NOT_CAUGHT_BY_VISIBLE_TESTS: set[str] = {
    "01:ownership_timeline: if agent != owner: => if agent is not owner:",
    # 77 of 180 tokens is 42.8 %, 101/100 of it 43.2 %: both round to 43; no visible ratio sits near a .5
    "02:token_percent: return round(100 * estimate_tokens(package.to_json()) / estimate_tokens(transcript)) => "
    "return round(101 * estimate_tokens(package.to_json()) / estimate_tokens(transcript))",
    '03:find_handoff: if block["name"] == HANDOFF_TOOL_NAME: => if block[\'name\'] is HANDOFF_TOOL_NAME:',
    '03:handoff_answers: if block["name"] == HANDOFF_TOOL_NAME: => if block[\'name\'] is HANDOFF_TOOL_NAME:',
    # an int compared by identity: equal versions from two sources (JSON, arithmetic) above 256 are different objects
    "06:validate_mini: if package[\"state_version\"] != receiver[\"state_version\"]: => "
    "if package['state_version'] is not receiver['state_version']:",
    "07:drop_superseded: if any(name == later_name and given == later_input for _, later_name, later_input in "
    "calls[k + 1:])} => if any(name is later_name and given == later_input for _, later_name, later_input in "
    "calls[k + 1:])}",
    # the statement names "needs-review" as a valid state; no visible contract has it
    '05:weak_blocks: if data.get("confirmed_state") not in ("ready", "blocked", "needs-review") or not any(text(f) '
    'for f in verified): => if data.get("confirmed_state") not in ("ready", "blocked", "") or not any(text(f) '
    'for f in verified):',
}

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
