"""One definition of escalation: lessons 01 and 08 classify the same scenarios the same way.

Issue 30 §1. An escalation is a handoff upward: the one who receives it owns the task while it
decides, and the task comes back only through another transfer (the ticket's t5). Asking someone
and keeping the task is a consultation (agent-as-tool). Each scenario below is told twice: as lesson
01's observations, classified by lesson 01's solution ``pattern_for``, and as a trace in lesson 08's
format, read by lesson 08's solution ``ownership_problems``. The solution functions are loaded by
executing their exercise cells in this process (no kernel), so the test follows the notebooks.
"""

from pathlib import Path

import pytest

from grader.authoring.metadata import grade_id
from grader.authoring.notebooks import read_notebook
from handoffs.examples.pattern_notes import PATTERNS

ROOT = Path(__file__).resolve().parents[2]


def solution_function(notebook: str, exercise: str):
    """The function an exercise cell of a solution notebook defines, executed in-process."""
    cells = [cell for cell in read_notebook(ROOT / "solutions" / notebook).cells if grade_id(cell) == exercise]
    assert len(cells) == 1, f"{notebook}: {len(cells)} cells with grade_id {exercise!r}"
    namespace: dict = {}
    exec(compile(cells[0].source, f"{notebook}:{exercise}", "exec"), namespace)
    return namespace[exercise]


pattern_for = solution_function("01_handoff_vs_router.ipynb", "pattern_for")
ownership_problems = solution_function("08_escalation_and_cycles.ipynb", "ownership_problems")


def event(kind, sender, receiver, time):
    return {"kind": kind, "sender": sender, "receiver": receiver, "time": time}


def owns_at(trace, who, time):
    """Lesson 08's answer to «is ``who`` the owner at ``time``?»: a work event of ``who`` adds no problem."""
    return ownership_problems(trace + [event("work", who, who, time)]) == ownership_problems(trace)


# Each scenario: lesson 01's observations, lesson 08's trace, who delegates, who is asked, the moment
# the one asked is deciding or working, and the pattern both lessons must agree on.
SCENARIOS = {
    "escalation": dict(  # TCK-4812, t3-t5: infra escalates the rollback; the decision hands the task back
        observations=dict(decided_before_work=False, control_comes_back=False, asks_for_decision=True,
                          own_subtask=False, via_tool_use=True),
        trace=[event("start", "usuario", "infra", 0), event("work", "infra", "infra", 1),
               event("escalation", "infra", "guardia", 2), event("decision", "guardia", "infra", 4),
               event("work", "infra", "infra", 5), event("finish", "infra", "usuario", 6)],
        delegator="infra", other="guardia", meanwhile=3, back=5, pattern="escalation"),
    "consultation": dict(  # infra asks the supervisor as a tool and keeps the task: no transfer at all
        observations=dict(decided_before_work=False, control_comes_back=True, asks_for_decision=True,
                          own_subtask=False, via_tool_use=True),
        trace=[event("start", "usuario", "infra", 0), event("work", "infra", "infra", 1),
               event("work", "infra", "infra", 2), event("work", "infra", "infra", 4),
               event("finish", "infra", "usuario", 6)],
        delegator="infra", other="guardia", meanwhile=3, back=5, pattern="agent_as_tool"),
    "lateral handoff": dict(  # booking_agent hands the rest of its task to policy_agent, which closes
        observations=dict(decided_before_work=False, control_comes_back=False, asks_for_decision=False,
                          own_subtask=False, via_tool_use=True),
        trace=[event("start", "usuario", "booking_agent", 0), event("work", "booking_agent", "booking_agent", 1),
               event("handoff", "booking_agent", "policy_agent", 2),
               event("work", "policy_agent", "policy_agent", 4), event("finish", "policy_agent", "usuario", 6)],
        delegator="booking_agent", other="policy_agent", meanwhile=3, back=5, pattern="handoff"),
    "escalation to a senior agent": dict(  # the senior decides and gives the task back with a return
        observations=dict(decided_before_work=False, control_comes_back=False, asks_for_decision=True,
                          own_subtask=True, via_tool_use=False),
        trace=[event("start", "usuario", "b", 0), event("escalation", "b", "senior", 2),
               event("work", "senior", "senior", 3), event("return", "senior", "b", 4),
               event("finish", "b", "usuario", 6)],
        delegator="b", other="senior", meanwhile=3, back=5, pattern="escalation"),
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_lessons_01_and_08_agree(name):
    scenario = SCENARIOS[name]
    trace, delegator, other = scenario["trace"], scenario["delegator"], scenario["other"]
    pattern = pattern_for(**scenario["observations"])
    assert pattern == scenario["pattern"], f"{name}: lesson 01 says {pattern!r}"
    assert ownership_problems(trace) == [], f"{name}: lesson 08 finds {ownership_problems(trace)} in its trace"
    # Lesson 08: while the other one decides (or works), who owns the task?
    other_owns = owns_at(trace, other, scenario["meanwhile"])
    delegator_owns = owns_at(trace, delegator, scenario["meanwhile"])
    assert other_owns != delegator_owns, f"{name}: exactly one owner while {other} decides"
    # Lesson 01's table: the control does not come back exactly when the task changed hands.
    assert PATTERNS[pattern].control_returns is delegator_owns, (
        f"{name}: lesson 01 says control_returns={PATTERNS[pattern].control_returns}, lesson 08 says "
        f"{delegator} {'keeps' if delegator_owns else 'does not keep'} the task while {other} decides")


@pytest.mark.parametrize("name", ["escalation", "escalation to a senior agent"])
def test_an_escalated_task_comes_back_only_through_another_transfer(name):
    """After the decision (a transfer) the one who escalated owns the task again; without it, it does not."""
    scenario = SCENARIOS[name]
    trace, delegator = scenario["trace"], scenario["delegator"]
    assert owns_at(trace, delegator, scenario["back"])
    comes_back = [e for e in trace if e["receiver"] == delegator and e["sender"] == scenario["other"]]
    assert [e["kind"] for e in comes_back] in (["decision"], ["return"])
    without_the_transfer = [e for e in trace if e not in comes_back]
    assert ownership_problems(without_the_transfer) != []
    assert not owns_at(without_the_transfer, delegator, scenario["back"])


def test_escalating_and_staying_owner_is_a_consultation_in_both_lessons():
    """The definition lesson 08 once used («the escalator stays the owner while it waits») is refused by both."""
    lesson_01 = pattern_for(decided_before_work=False, control_comes_back=True, asks_for_decision=True,
                            own_subtask=False, via_tool_use=True)
    assert lesson_01 == "agent_as_tool"
    # The same story as a trace: the task goes up, yet infra keeps acting while guardia decides.
    trace = [event("start", "usuario", "infra", 0), event("escalation", "infra", "guardia", 1),
             event("work", "infra", "infra", 2), event("decision", "guardia", "infra", 3)]
    assert ownership_problems(trace) == [(2, ("guardia", "infra"))]
