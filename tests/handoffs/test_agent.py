"""The Agent class of lesson 09: the calculator example, failed handoffs, tool errors, guards and schemas."""

import copy

import pytest

from handoffs import (
    MaxTurnsExceeded,
    ScriptedModel,
    ScriptExhausted,
    UsageError,
    text_block,
    tool_use_block,
    turn,
    unanswered_tool_uses,
)
from handoffs.agent import (
    BASE_SYSTEM_PROMPT,
    Agent,
    AgentError,
    HandoffDepthExceeded,
    clean_for_handoff,
)
from handoffs.examples.calculator import (
    CALCULATOR_PROMPT,
    CALCULATOR_SCHEMAS,
    CAPITAL_QUESTION,
    EQUATION_QUESTION,
    HANDOFF_REASON,
    HELPFUL_PROMPT,
    MATH_TOOLS,
    build_calculator_example,
    calculator_script,
    divide_numbers,
    power,
    square_root,
)
from handoffs.tools import to_input_schema_format, to_parameters_format

EXPECTED_EQUATION_TRACE = [
    "helpful_assistant: handoff -> calculator_assistant (motivo: " + HANDOFF_REASON + ")",
    "calculator_assistant: tool power({'base': -5, 'exponent': 2}) -> 25",
    "calculator_assistant: tool subtract_numbers({'a': 25, 'b': 24}) -> 1",
    "calculator_assistant: tool square_root({'number': 1}) -> 1.0",
    "calculator_assistant: tool sum_numbers({'a': 5, 'b': 1}) -> 6",
    "calculator_assistant: tool subtract_numbers({'a': 5, 'b': 1}) -> 4",
    "calculator_assistant: tool divide_numbers({'a': 6, 'b': 2}) -> 3.0",
    "calculator_assistant: tool divide_numbers({'a': 4, 'b': 2}) -> 2.0",
]


def ask(question):
    return [{"role": "user", "content": question}]


def capture(reply_turns):
    """A live-style model that replays turns and records what it was given."""
    calls = []

    def model(messages, tools, system):
        calls.append({"messages": messages, "tools": tools, "system": system})
        return reply_turns[len(calls) - 1]

    return model, calls


def test_capital_question_is_answered_without_a_handoff():
    helpful, calculator = build_calculator_example()
    messages, text = helpful.run(ask(CAPITAL_QUESTION))
    assert text == "París."
    assert messages == [ask(CAPITAL_QUESTION)[0], {"role": "assistant", "content": [text_block("París.")]}]
    assert [event.kind for event in helpful.last_trace] == ["answer"]
    assert len(calculator.last_trace) == 0


def test_equation_is_handed_off_and_solved_by_the_calculator():
    helpful, calculator = build_calculator_example()
    messages, text = helpful.run(ask(EQUATION_QUESTION))
    assert text.endswith("Respuesta:\nx = 2 o x = 3")
    lines = helpful.format_trace().splitlines()
    assert [line.strip() for line in lines[:-1]] == EXPECTED_EQUATION_TRACE
    assert lines[-1].startswith("  calculator_assistant: respuesta 'Resolví x² - 5x + 6 = 0")
    assert calculator.last_trace is helpful.last_trace
    # the history returned is the calculator's: the question, seven tool rounds, the answer
    assert messages[0] == ask(EQUATION_QUESTION)[0]
    assert len(messages) == 16 and unanswered_tool_uses(messages) == []
    assert "handoff" not in str(messages)
    results = [m["content"][0]["content"] for m in messages[2:-1:2]]
    assert results == ["25", "1", "1.0", "6", "4", "3.0", "2.0"]


def test_both_questions_on_the_same_agents_and_again_give_the_same_runs():
    helpful, _ = build_calculator_example()
    first = [helpful.run(ask(q)) for q in (CAPITAL_QUESTION, EQUATION_QUESTION)]
    second = [helpful.run(ask(q)) for q in (EQUATION_QUESTION, CAPITAL_QUESTION)]
    assert first == second[::-1]


def test_the_model_gets_the_handoff_tool_and_the_system_prompt():
    model, calls = capture([turn(text_block("París."))])
    helpful, _ = build_calculator_example(helpful_model=model)
    helpful.run(ask(CAPITAL_QUESTION))
    (call,) = calls
    assert call["system"] == BASE_SYSTEM_PROMPT + HELPFUL_PROMPT
    (tool,) = call["tools"]
    assert tool["name"] == "handoff"
    assert tool["input_schema"]["required"] == ["name", "reason"]
    assert tool["input_schema"]["properties"]["name"]["enum"] == ["calculator_assistant"]
    assert "Agentes disponibles: ['calculator_assistant']" in tool["description"]
    assert "NO hagas handoff de preguntas de cultura general" in tool["description"]


def test_the_calculator_gets_its_six_schemas_and_no_handoff_tool():
    model, calls = capture([turn(text_block("done"))])
    _, calculator = build_calculator_example(calculator_model=model)
    calculator.run(ask("2 + 2?"))
    assert calls[0]["tools"] == CALCULATOR_SCHEMAS
    assert calls[0]["system"].endswith(CALCULATOR_PROMPT)
    assert calculator.handoff_schema is None


def test_handoff_to_an_unknown_agent_is_a_tool_result_and_the_run_goes_on():
    wrong = tool_use_block("h1", "handoff", {"name": "math_wizard", "reason": "math"})
    script = ScriptedModel([turn(wrong), turn(text_block("I will answer myself."))])
    helpful, calculator = build_calculator_example(helpful_model=script)
    messages, text = helpful.run(ask(EQUATION_QUESTION))
    assert text == "I will answer myself."
    assert messages[2] == {"role": "user", "content": [{
        "type": "tool_result", "tool_use_id": "h1", "is_error": True,
        "content": ("Handoff fallido: no existe el agente 'math_wizard'. "
                    "Agentes disponibles: ['calculator_assistant']")}]}
    assert str(helpful.last_trace[0]) == ("helpful_assistant: Handoff fallido: no existe el agente 'math_wizard'. "
                                          "Agentes disponibles: ['calculator_assistant']")
    assert len(calculator.last_trace) == 0


def test_failing_and_unknown_tools_come_back_as_error_results():
    script = ScriptedModel([
        turn(tool_use_block("t1", "divide_numbers", {"a": 1, "b": 0}),
             tool_use_block("t2", "square_root", {"number": -4}),
             tool_use_block("t3", "logarithm", {"x": 8})),
        turn(text_block("Those cannot be computed.")),
    ])
    agent = Agent("calc", model=script, tools=MATH_TOOLS, tool_schemas=CALCULATOR_SCHEMAS)
    messages, text = agent.run(ask("?"))
    assert text == "Those cannot be computed."
    results = messages[2]["content"]
    assert all(result["is_error"] for result in results)
    assert [r["content"] for r in results] == [
        "ValueError: no se puede dividir 1 entre cero",
        "ValueError: no se puede sacar la raíz cuadrada de un número negativo (-4)",
        "Tool desconocida 'logarithm'. Tools disponibles: " + str(sorted(MATH_TOOLS)),
    ]
    assert str(agent.last_trace[0]) == "calc: tool divide_numbers({'a': 1, 'b': 0}) falló: " \
                                       "ValueError: no se puede dividir 1 entre cero"


def test_max_turns_raises_a_clear_error():
    loop = turn(tool_use_block("t", "power", {"base": 2, "exponent": 2}))
    agent = Agent("calc", model=[loop] * 3, tools=MATH_TOOLS, tool_schemas=CALCULATOR_SCHEMAS, max_turns=3)
    with pytest.raises(MaxTurnsExceeded, match=r"'calc' llegó a max_turns=3 sin una respuesta final"):
        agent.run(ask("?"))


def test_a_final_turn_without_text_is_an_error():
    with pytest.raises(AgentError, match="'quiet' terminó su ejecución sin ningún texto"):
        Agent("quiet", model=[turn(text_block("  "))]).run(ask("?"))


def test_a_handoff_cycle_stops_at_the_depth_guard():
    def always_hand_off_to(target):
        return lambda messages, tools, system: turn(
            tool_use_block("h", "handoff", {"name": target, "reason": "ping-pong"}))

    a = Agent("a", model=always_hand_off_to("b"))
    b = Agent("b", model=always_hand_off_to("a"), handoffs=[a])
    a.handoffs.append(b)
    with pytest.raises(HandoffDepthExceeded, match="de más de 3 saltos: a -> b -> a -> b -> a; lo más probable "
                                                   "es que los agentes se estén haciendo handoff en ciclo"):
        a.run(ask("?"))
    assert [event.kind for event in a.last_trace] == ["handoff"] * 4


def test_a_mixed_turn_runs_the_tools_before_the_handoff_and_the_target_sees_text_only():
    target_model, calls = capture([turn(text_block("x = 2 o x = 3"))])
    target = Agent("calculator_assistant", model=target_model)
    script = [turn(text_block("First a quick check."),
                   tool_use_block("t1", "lookup", {"q": "x"}),
                   tool_use_block("h1", "handoff", {"name": "calculator_assistant", "reason": "math"}),
                   tool_use_block("t2", "lookup", {"q": "never run"}))]
    seen = []
    sender = Agent("helpful_assistant", model=script, tools={"lookup": lambda q: seen.append(q) or "found"},
                   handoffs=[target])
    _, text = sender.run(ask(EQUATION_QUESTION))
    assert text == "x = 2 o x = 3"
    assert seen == ["x"]
    assert calls[0]["messages"] == ask(EQUATION_QUESTION)


def test_clean_for_handoff_keeps_text_merges_roles_and_ends_on_the_user():
    history = [
        {"role": "user", "content": "Solve it"},
        {"role": "assistant", "content": [text_block("Checking."), tool_use_block("t", "lookup", {})]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]},
        {"role": "assistant", "content": [text_block("Still checking."), tool_use_block("u", "lookup", {})]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "u", "content": "ok"},
                                     text_block("Please hurry")]},
        {"role": "assistant", "content": [text_block("One moment.")]},
    ]
    assert clean_for_handoff(history) == [
        {"role": "user", "content": "Solve it"},
        {"role": "assistant", "content": "Checking.\n\nStill checking."},
        {"role": "user", "content": "Please hurry"},
    ]


def test_no_caller_list_or_dict_is_mutated():
    tools, schemas, handoffs = dict(MATH_TOOLS), copy.deepcopy(CALCULATOR_SCHEMAS), []
    question = ask("2 ** 3?")
    before = copy.deepcopy((schemas, question))
    script = [turn(tool_use_block("t", "power", {"base": 2, "exponent": 3})), turn(text_block("8"))]
    agent = Agent("calc", model=script, tools=tools, tool_schemas=schemas, handoffs=handoffs)
    messages, _ = agent.run(question)
    assert (schemas, question) == before
    assert messages is not question and len(messages) == 4
    tools.clear()
    schemas.clear()
    handoffs.append(agent)
    assert len(agent.tools) == 6 and len(agent.tool_schemas) == 6 and agent.handoffs == []
    assert Agent("x", model=script).tools is not Agent("y", model=script).tools


def test_repr_names_the_tools_and_the_handoff_targets():
    helpful, calculator = build_calculator_example()
    assert repr(helpful) == "Agent('helpful_assistant', tools=[], handoffs=['calculator_assistant'])"
    assert repr(calculator) == ("Agent('calculator_assistant', tools=['sum_numbers', 'multiply_numbers', "
                                "'subtract_numbers', 'divide_numbers', 'power', 'square_root'], handoffs=[])")
    helpful.run(ask(CAPITAL_QUESTION))
    assert repr(helpful.last_trace) == "AgentTrace de 1 evento(s):\n  helpful_assistant: respuesta 'París.'"


def test_schemas_convert_both_ways():
    anthropic_shape = CALCULATOR_SCHEMAS[4]
    parameters_shape = to_parameters_format(anthropic_shape)
    assert parameters_shape == {"name": "power", "description": anthropic_shape["description"],
                                "parameters": anthropic_shape["input_schema"]}
    assert to_input_schema_format(parameters_shape) == anthropic_shape
    assert to_parameters_format(parameters_shape) == parameters_shape
    assert to_input_schema_format(anthropic_shape) == anthropic_shape
    wrapped = {"type": "function", "function": parameters_shape}
    assert to_input_schema_format(wrapped) == anthropic_shape
    parameters_shape["parameters"]["required"].append("oops")
    assert anthropic_shape["input_schema"]["required"] == ["base", "exponent"]


@pytest.mark.parametrize("bad, error, message", [
    ({"name": "power", "input_schema": "x"}, UsageError,
     "tool 'power': su esquema de entrada debe ser un esquema de objeto"),
    ({"input_schema": {}}, UsageError, "el esquema de una tool necesita un nombre"),
    ("power", UsageError, "el esquema de una tool debe ser un dict, no str"),
])
def test_malformed_schemas_are_refused_clearly(bad, error, message):
    with pytest.raises(error, match=message):
        to_parameters_format(bad)
    with pytest.raises(error, match=message):
        Agent("x", model=[], tool_schemas=[bad])


def test_handoff_schema_lists_the_targets():
    schema = Agent("x", model=[], handoffs=[Agent("calculator_assistant", model=[]),
                                            Agent("travel_agent", model=[])]).handoff_schema
    assert schema is not None
    assert schema["input_schema"]["properties"]["name"]["enum"] == ["calculator_assistant", "travel_agent"]
    assert to_parameters_format(schema)["parameters"] == schema["input_schema"]


def test_construction_errors_are_clear():
    with pytest.raises(UsageError, match="el agente 'x' necesita un modelo"):
        Agent("x")
    other = Agent("twin", model=[])
    with pytest.raises(UsageError, match="nombres distintos"):
        Agent("x", model=[], handoffs=[other, Agent("twin", model=[])])
    reserved = {"name": "handoff", "input_schema": {"type": "object"}}
    with pytest.raises(UsageError, match="'handoff' está reservado"):
        Agent("x", model=[], tool_schemas=[reserved], handoffs=[other])


def test_calculator_tools():
    assert divide_numbers(6, 2) == 3.0 and power(-5, 2) == 25 and square_root(1) == 1.0
    with pytest.raises(ValueError, match="no se puede dividir 6 entre cero"):
        divide_numbers(6, 0)
    with pytest.raises(ValueError, match=r"número negativo \(-1\)"):
        square_root(-1)
    with pytest.raises(ValueError, match="no tiene resultado real"):
        power(-8, 0.5)
    assert [s["name"] for s in CALCULATOR_SCHEMAS] == list(MATH_TOOLS)


def test_calculator_script_calls_the_seven_tools_of_the_lesson():
    assert repr(calculator_script()) == (
        "ScriptedModel('calculator_assistant', [power, subtract_numbers, square_root, sum_numbers, "
        "subtract_numbers, divide_numbers, divide_numbers, text])")


def test_scripted_helpful_model_refuses_an_unknown_question():
    helpful, _ = build_calculator_example()
    with pytest.raises(ScriptExhausted, match="no tiene guion para la pregunta 'What is 2 \\+ 2\\?'.*HANDOFFS_MODEL"):
        helpful.run(ask("What is 2 + 2?"))
