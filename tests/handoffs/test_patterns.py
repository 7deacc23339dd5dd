"""Lesson 01's patterns: the comparison table, and who answers under a router, agent-as-tool and handoff."""

import dataclasses

import pytest

from handoffs import ScriptedModel, UsageError, run_handoff_chain, text_block, tool_use_block, turn
from handoffs.examples import COMPOUND_REQUEST, booking_model, policy_model
from handoffs.examples.pattern_notes import BOUNDARY_CHANGES, HANDOFF_QUESTIONS, PATTERNS
from handoffs.examples.reservo import SPECIALISTS, compose_answer
from handoffs.patterns import (
    COLUMNS,
    AgentCall,
    Pattern,
    agent_tool_name,
    comparison_table,
    run_routed,
    run_with_agent_tools,
)

POLICY_TASK = "¿qué pasa si un miembro no se presenta a una reserva confirmada?"
QUOTE = turn(tool_use_block("toolu_01", "get_quote", {"room": "Focus", "tier": "pro", "hours": 3}))


def orchestrator_model():
    return ScriptedModel([
        QUOTE,
        turn(tool_use_block("toolu_02", "ask_policy_agent", {"task": POLICY_TASK})),
        turn(text_block("Focus pro por 3 h cuesta 6000 centavos; si no llegas, se cobran 3000.")),
    ], name="booking_agent")


def test_registry_keeps_seed_001_table_plus_agent_as_tool():
    assert list(PATTERNS) == ["router", "handoff", "escalation", "subagent", "agent_as_tool"]
    assert all(isinstance(p, Pattern) and p.name == name for name, p in PATTERNS.items())
    assert PATTERNS["router"].decided_when == "antes de ejecutar"
    assert PATTERNS["router"].risk == "ruteo erróneo inicial"
    assert PATTERNS["handoff"].decided_by == "el agente en curso"
    assert PATTERNS["handoff"].risk == "pérdida de contexto"
    assert PATTERNS["escalation"].context == "destilado + decisión pedida"
    assert PATTERNS["subagent"].risk == "el padre se bloquea"
    assert {n for n, p in PATTERNS.items() if not p.control_returns} == {"router", "handoff", "escalation"}
    assert PATTERNS["agent_as_tool"].answers_user == PATTERNS["agent_as_tool"].owner_after == "el orquestador"


def test_patterns_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        PATTERNS["handoff"].control_returns = True


def test_comparison_table_renders_markdown():
    table = comparison_table(PATTERNS, ["handoff", "agent_as_tool"])
    lines = table._repr_markdown_().splitlines()
    assert len(lines) == 4 and lines[0].startswith("| Patrón | Cuándo se decide |")
    assert lines[1] == "|" + "---|" * len(COLUMNS)
    assert lines[2].startswith("| Handoff | durante la ejecución |") and "| no |" in lines[2]
    assert "| sí |" in lines[3]
    assert str(table) == table.markdown()
    assert repr(table) == "ComparisonTable(handoff, agent_as_tool)"
    assert len(comparison_table(PATTERNS).patterns) == len(PATTERNS)


def test_comparison_table_names_an_unknown_pattern():
    with pytest.raises(KeyError, match="patrón\\(es\\) desconocido\\(s\\).*'supervisor'"):
        comparison_table(PATTERNS, ["handoff", "supervisor"])


def test_criteria_and_questions_from_seed_002():
    assert list(BOUNDARY_CHANGES) == ["responsibility", "data", "permissions", "acceptance"]
    assert len(HANDOFF_QUESTIONS) == 4 and all(q.startswith("¿") for q in HANDOFF_QUESTIONS)


def test_agent_as_tool_keeps_the_caller_as_the_one_who_answers():
    run = run_with_agent_tools(COMPOUND_REQUEST, "booking_agent",
                               {"booking_agent": orchestrator_model(), "policy_agent": policy_model()},
                               agent_tools=["policy_agent"], registry=SPECIALISTS)
    assert run.pattern == "agent_as_tool" and run.owner == "booking_agent"
    assert run.answer.startswith("Focus pro por 3 h cuesta 6000 centavos")
    assert run.messages[-1]["role"] == "assistant"  # the control came back: the caller spoke last
    result = run.messages[4]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_02"
    assert "50%" in result["content"]  # policy_agent's answer came back as a tool result
    (call,) = run.calls
    assert isinstance(call, AgentCall) and (call.tool_use_id, call.agent, call.task) == ("toolu_02", "policy_agent",
                                                                                          POLICY_TASK)
    assert call.messages[0] == {"role": "user", "content": POLICY_TASK}
    assert repr(run).startswith("PatternRun(agent_as_tool: owner='booking_agent', called=['policy_agent']")


def test_agent_as_tool_diagram_returns_to_the_caller():
    run = run_with_agent_tools(COMPOUND_REQUEST, "booking_agent",
                               {"booking_agent": orchestrator_model(), "policy_agent": policy_model()},
                               agent_tools=["policy_agent"], registry=SPECIALISTS)
    lines = run.diagram().splitlines()
    assert lines[1:4] == ["    participant usuario as usuario", "    participant booking_agent as booking_agent",
                          "    participant policy_agent as policy_agent"]
    assert "    booking_agent->>booking_agent: get_quote(room='Focus', tier='pro', hours=3)" in lines
    assert "    Note over booking_agent,policy_agent: booking_agent sigue siendo dueño y espera" in lines
    assert "    policy_agent->>policy_agent: search_docs(query='no-show: miembro no se<br/>presenta')" in lines
    assert any(line.startswith("    policy_agent-->>booking_agent: ") for line in lines)
    assert lines[-1].startswith("    booking_agent-->>usuario: Focus pro")
    assert run._repr_markdown_().startswith("```mermaid\nsequenceDiagram")


def test_parallel_agent_calls_pair_with_their_tool_uses():
    caller = ScriptedModel([
        turn(tool_use_block("a", "ask_policy_agent", {"task": "no-show?"}),
             tool_use_block("b", "ask_pricing_agent", {"task": "Studio pro 2h"})),
        turn(text_block("Listo.")),
    ])
    pricing = ScriptedModel([turn(tool_use_block("p", "get_quote", {"room": "Studio", "tier": "pro", "hours": 2})),
                             turn(text_block("6400 centavos."))])
    run = run_with_agent_tools("dos cosas", "booking_agent",
                               {"booking_agent": caller, "policy_agent": policy_model(), "pricing_agent": pricing},
                               agent_tools=["policy_agent", "pricing_agent"], registry=SPECIALISTS)
    assert [(c.tool_use_id, c.agent, c.answer) for c in run.calls][1] == ("b", "pricing_agent", "6400 centavos.")
    assert run.calls[0].agent == "policy_agent"
    assert agent_tool_name("pricing_agent") == "ask_pricing_agent"


def test_router_decides_before_work_and_its_choice_answers():
    routed = ScriptedModel([QUOTE, turn(text_block("Focus pro por 3 h cuesta 6000 centavos."))])
    seen = []

    def route(question):
        seen.append(question)
        return "booking_agent"

    run = run_routed(COMPOUND_REQUEST, route, {"booking_agent": routed}, SPECIALISTS)
    assert seen == [COMPOUND_REQUEST]
    assert (run.pattern, run.owner, run.router, run.calls) == ("router", "booking_agent", "router", ())
    assert run.messages[0] == {"role": "user", "content": COMPOUND_REQUEST}
    diagram = run.diagram()
    assert "    router->>booking_agent: enruta: booking_agent" in diagram
    assert "    Note over router,booking_agent: booking_agent pasa a ser dueño de la tarea" in diagram
    assert diagram.splitlines()[-1] == "    booking_agent-->>usuario: Focus pro por 3 h cuesta 6000 centavos."


def test_router_errors_are_clear():
    with pytest.raises(UsageError, match="router eligió 'billing_agent'"):
        run_routed("?", lambda q: "billing_agent", {}, SPECIALISTS)
    with pytest.raises(KeyError, match="no hay modelo para 'policy_agent'"):
        run_routed("?", lambda q: "policy_agent", {"booking_agent": booking_model()}, SPECIALISTS)


def test_handoff_and_agent_as_tool_differ_in_who_answers():
    models = {"booking_agent": booking_model(), "policy_agent": policy_model()}
    chain = run_handoff_chain(COMPOUND_REQUEST, "booking_agent", models, SPECIALISTS, compose_answer)
    tool_run = run_with_agent_tools(COMPOUND_REQUEST, "booking_agent",
                                    {"booking_agent": orchestrator_model(), "policy_agent": policy_model()},
                                    agent_tools=["policy_agent"], registry=SPECIALISTS)
    assert chain.owner == "policy_agent" and tool_run.owner == "booking_agent"
    assert chain.sender_messages[0] == tool_run.messages[0]  # same request, same first step
    assert chain.sender_messages[1] == tool_run.messages[1]


def test_a_subagent_is_called_the_same_way_and_the_parent_answers():
    parent = ScriptedModel([
        turn(tool_use_block("t1", "ask_pricing_agent", {"task": "¿Studio pro 2h o Loft pro 2h, cuál es más barata?"})),
        turn(tool_use_block("t2", "book_room", {"room": "Studio", "tier": "pro", "hours": 2})),
        turn(text_block("Reservé Studio pro 2 h (BK-0001) por 6400 centavos.")),
    ])
    pricing = ScriptedModel([
        turn(tool_use_block("p1", "get_quote", {"room": "Studio", "tier": "pro", "hours": 2}),
             tool_use_block("p2", "get_quote", {"room": "Loft", "tier": "pro", "hours": 2})),
        turn(text_block("Studio pro 2 h: 6400 centavos; Loft pro 2 h: 10400. Más barata: Studio.")),
    ])
    run = run_with_agent_tools("Reserva la sala pro más barata para 2 h", "booking_agent",
                               {"booking_agent": parent, "pricing_agent": pricing}, ["pricing_agent"], SPECIALISTS,
                               pattern="subagent")
    assert (run.pattern, run.owner) == ("subagent", "booking_agent")
    assert run.messages[4]["content"][0]["content"].startswith("{'booking_id': 'BK-0001'")
    assert run.calls[0].messages[2]["content"][1]["content"] == "{'price_cents': 10400}"
    with pytest.raises(UsageError, match="no 'handoff'"):
        run_with_agent_tools("?", "booking_agent", {}, [], SPECIALISTS, pattern="handoff")


def test_a_live_caller_is_offered_the_agent_tools_and_no_handoff():
    seen = {}

    def live(messages, tools=(), system=None):
        seen.setdefault("tools", [t["name"] for t in tools])
        seen.setdefault("system", system)
        if len(messages) == 1:
            return turn(tool_use_block("l1", "ask_policy_agent", {"task": POLICY_TASK}))
        return turn(text_block("Listo: " + messages[-1]["content"][0]["content"][:20]))

    run = run_with_agent_tools(COMPOUND_REQUEST, "booking_agent",
                               {"booking_agent": live, "policy_agent": policy_model()},
                               agent_tools=["policy_agent"], registry=SPECIALISTS)
    assert seen["tools"] == ["list_rooms", "get_quote", "book_room", "cancel_booking", "ask_policy_agent"]
    assert "booking_agent" in seen["system"] and "ask_<agent>" in seen["system"]
    assert run.answer.startswith("Listo: Si no te presentas") and run.calls[0].agent == "policy_agent"


def test_a_failing_agent_call_comes_back_as_an_error_result():
    caller = ScriptedModel([turn(tool_use_block("t1", "ask_policy_agent", {"task": "x"})),
                            turn(text_block("No pude consultar la política."))])
    run = run_with_agent_tools("?", "booking_agent", {"booking_agent": caller, "policy_agent": ScriptedModel([])},
                               agent_tools=["policy_agent"], registry=SPECIALISTS)
    result = run.messages[2]["content"][0]
    assert result["is_error"] is True and "ScriptExhausted" in result["content"]
    assert run.calls == () and run.owner == "booking_agent"
