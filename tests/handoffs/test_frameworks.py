"""The lesson-12 modules run the real frameworks with scripted steps: no key, no network."""

import asyncio
import subprocess
import sys

import pytest


@pytest.mark.slow  # a subprocess
def test_the_package_imports_no_framework():
    code = ("import sys, handoffs, handoffs.frameworks; "
            "print(sorted(m for m in ('agents', 'langgraph', 'a2a') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_tracing_export_is_disabled_on_import():
    from agents.tracing import get_trace_provider

    import handoffs.frameworks.agents_sdk  # noqa: F401 - importing it is the point

    provider = get_trace_provider()
    assert getattr(provider, "_disabled", None) is True


def test_the_sdk_scripted_model_hands_off_and_records_what_each_agent_saw():
    """Lesson 12 scripts the SDK with its own agents.testing.ScriptedModel; run() drives it."""
    from agents import Agent
    from agents.testing import ScriptedModel, assistant_message, function_call

    from handoffs.frameworks.agents_sdk import run

    infra_model = ScriptedModel([[assistant_message("rollback propuesto")]])
    infra = Agent("infra", model=infra_model)
    triage_model = ScriptedModel([[function_call("transfer_to_infra", {}, call_id="h1")]])
    triage = Agent("triage", model=triage_model, handoffs=[infra])
    result = run(triage, "el pago falla")
    assert result.final_output == "rollback propuesto" and result.last_agent is infra
    assert [call.input for call in triage_model.calls] == [[{"role": "user", "content": "el pago falla"}]]
    seen = infra_model.calls[0].input
    assert [item.get("type", "message") for item in seen] == ["message", "function_call", "function_call_output"]
    assert seen[2] == {"call_id": "h1", "output": '{"assistant": "infra"}', "type": "function_call_output"}


def test_run_works_inside_a_running_event_loop():
    """A Jupyter kernel has a loop running; run() still returns the result."""
    from agents import Agent
    from agents.testing import ScriptedModel, assistant_message

    from handoffs.frameworks.agents_sdk import run

    async def inside() -> str:
        return run(Agent("a", model=ScriptedModel([[assistant_message("ok")]])), "x").final_output

    assert asyncio.run(inside()) == "ok"


def test_the_gate_exception_carries_the_decision_and_passes_through_run():
    from agents import Agent, handoff
    from agents.testing import ScriptedModel, function_call
    from pydantic import BaseModel

    from handoffs.frameworks.agents_sdk import HandoffRejected, run
    from handoffs.validation import HandoffResult

    class Payload(BaseModel):
        n: int

    refused = HandoffResult(ok=False, reason="invalid")

    def gate(ctx, payload):
        raise HandoffRejected("rechazado", refused)

    receiver_model = ScriptedModel([])
    receiver = Agent("b", model=receiver_model)
    sender = Agent("a", model=ScriptedModel([[function_call("transfer_to_b", {"n": 1}, call_id="h")]]),
                   handoffs=[handoff(receiver, on_handoff=gate, input_type=Payload)])
    with pytest.raises(HandoffRejected) as caught:
        run(sender, "x")
    assert caught.value.result is refused and receiver_model.calls == ()


def test_the_library_keeps_no_scripted_model_of_its_own():
    """agents.testing (openai-agents 0.24) ships the scripted model; agents_sdk only adds the gate and run()."""
    import handoffs.frameworks.agents_sdk as agents_sdk

    assert not {"ScriptedSDKModel", "ScriptExhausted", "call", "text"} & set(vars(agents_sdk))


def test_a_thread_is_langgraphs_configurable_thread_id():
    from handoffs.frameworks.langgraph import thread

    assert thread("t1") == {"configurable": {"thread_id": "t1"}}


def test_a2a_messages_print_as_stable_json():
    from a2a import types

    from handoffs.frameworks.a2a import as_dict, as_json

    message = types.Message(message_id="m1", context_id="TCK-4812", role=types.Role.ROLE_USER,
                            parts=[types.Part(url="tickets/TCK-4812/triage.json")])
    assert as_dict(message) == {"messageId": "m1", "contextId": "TCK-4812", "role": "ROLE_USER",
                                "parts": [{"url": "tickets/TCK-4812/triage.json"}]}
    assert as_json(message).splitlines()[1] == '  "contextId": "TCK-4812",'


def test_the_handoff_request_holds_only_what_the_model_decides():
    """Lesson 12: input_type carries reason, priority and language; the contract comes from the run's context."""
    from pydantic import ValidationError

    from handoffs.frameworks.agents_sdk import HandoffRequest

    request = HandoffRequest(reason="502 en pagos", priority="high")
    assert (request.language, sorted(HandoffRequest.model_json_schema()["properties"])) == (
        "es", ["language", "priority", "reason"])
    for wrong in ({"reason": "x", "priority": "urgente"}, {"reason": "", "priority": "low"},
                  {"reason": "x", "priority": "low", "state_version": 3}):
        with pytest.raises(ValidationError):
            HandoffRequest.model_validate(wrong)


def test_the_library_exports_no_answer_of_lesson_12():
    """The gate and the hop guard are the student's: no module of the package defines them."""
    import handoffs.frameworks.a2a as a2a
    import handoffs.frameworks.agents_sdk as agents_sdk
    import handoffs.frameworks.langgraph as langgraph

    names = {"handoff_gate", "handoff_command", "crossing_items", "pair_safe", "to_a2a", "from_a2a"}
    assert not names & (set(vars(agents_sdk)) | set(vars(langgraph)) | set(vars(a2a)))


def test_what_lesson_12_says_of_the_pinned_packages():
    """The facts lesson 12 states, read from the installed packages (langgraph 1.2, openai-agents 0.24)."""
    import importlib.util
    import inspect

    import agents.handoffs
    from agents.handoffs import HandoffInputData
    from langgraph._internal._config import DEFAULT_RECURSION_LIMIT

    assert int(DEFAULT_RECURSION_LIMIT) == 10007  # "recursion_limit vale 10007 si no lo pones"
    assert importlib.util.find_spec("langgraph.checkpoint.sqlite") is None  # no durable saver ships here
    assert "input_items" in HandoffInputData.__dataclass_fields__
    assert "``input_items`` to filter model input while keeping ``new_items`` intact" in " ".join(
        inspect.getsource(agents.handoffs).split())


def test_a_pair_safe_filter_on_input_items_keeps_new_items_for_the_session():
    """The lesson's pair_safe: the receiver sees the filtered input_items; new_items stay whole."""
    from agents import Agent, function_tool, handoff
    from agents.testing import ScriptedModel, assistant_message, function_call

    from handoffs.frameworks.agents_sdk import run

    @function_tool
    def read_vault(key: str) -> str:
        """Lee una credencial."""
        return "sk-demo"

    seen = {}

    def pair_safe(data):
        seen["new_items"] = len(data.new_items)
        kept = tuple(item for item in data.new_items
                     if "read_vault" not in str(item.to_input_item()) and "c2" not in str(item.to_input_item()))
        return data.clone(input_items=kept)

    receiver = ScriptedModel([[assistant_message("visto")]])
    sender = Agent("triage", tools=[read_vault],
                   handoffs=[handoff(Agent("infra", model=receiver), input_filter=pair_safe)],
                   model=ScriptedModel([[function_call("read_vault", {"key": "psp"}, call_id="c2"),
                                         function_call("transfer_to_infra", {}, call_id="h1")]]))
    assert run(sender, "x").final_output == "visto"
    got = [item.get("call_id") for item in receiver.calls[0].input]
    assert got == [None, "h1", "h1"] and seen["new_items"] == 4
