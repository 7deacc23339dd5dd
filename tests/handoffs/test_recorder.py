"""Recording a live run as a script, saving it as deterministic JSON and replaying it offline."""

import json
import os

import pytest

from handoffs import ScriptedModel, text_block, tool_use_block, turn
from handoffs.agent import Agent
from handoffs.examples.calculator import (
    CALCULATOR_SCHEMAS,
    EQUATION_QUESTION,
    MATH_TOOLS,
    build_calculator_example,
    calculator_script,
    helpful_script,
)
from handoffs.recorder import InvalidScript, RecordingModel, load_script


def fake_live_model(messages, tools, system):
    """A stand-in for a live model: it answers from what the conversation holds."""
    last = messages[-1]["content"]
    if isinstance(last, str):
        return turn(text_block("Let me compute."), tool_use_block(f"call_{len(messages)}", "power",
                                                                  {"base": 2, "exponent": 10}))
    return turn(text_block(f"2 ** 10 = {last[0]['content']}"))


def fake_live_calculator(messages, tools, system):
    """The lesson's calculator script, driven the way a live model is: by the conversation."""
    return calculator_script()[sum(1 for m in messages if m["role"] == "assistant")]


def calculator(model):
    return Agent("calc", model=model, tools=MATH_TOOLS, tool_schemas=CALCULATOR_SCHEMAS)


def test_a_recorded_run_replays_offline_with_the_same_messages(tmp_path):
    recorder = RecordingModel(fake_live_model, name="calc")
    live_messages, live_text = calculator(recorder).run("2 ** 10?")
    assert live_text == "2 ** 10 = 1024" and len(recorder.turns) == 2
    path = recorder.save_script(tmp_path / "calc.json")
    replayed = load_script(path)
    assert isinstance(replayed, ScriptedModel) and replayed.name == "calc"
    assert calculator(replayed).run("2 ** 10?") == (live_messages, live_text)
    assert calculator(recorder.script()).run("2 ** 10?") == (live_messages, live_text)


def test_a_recorded_handoff_run_replays_offline(tmp_path):
    helpful_recorder = RecordingModel(helpful_script())
    calculator_recorder = RecordingModel(fake_live_calculator, name="calculator_assistant")
    helpful, _ = build_calculator_example(helpful_recorder, calculator_recorder)
    live = helpful.run(EQUATION_QUESTION)
    live_trace = helpful.format_trace()
    helpful_path = helpful_recorder.save_script(tmp_path / "helpful.json")
    calculator_path = calculator_recorder.save_script(tmp_path / "calculator.json")
    replay_helpful, _ = build_calculator_example(load_script(helpful_path), load_script(calculator_path))
    assert replay_helpful.run(EQUATION_QUESTION) == live
    assert replay_helpful.format_trace() == live_trace
    assert live[1].endswith("x = 2 o x = 3")
    assert load_script(helpful_path).name == "helpful_assistant"


def test_the_script_file_is_deterministic_json(tmp_path):
    recorder = RecordingModel(helpful_script())
    build_calculator_example(recorder)[0].run(EQUATION_QUESTION)
    path = recorder.save_script(tmp_path / "helpful.json")
    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    assert text == json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    assert list(data) == ["name", "turns"] and data["name"] == "helpful_assistant"
    (handoff,) = data["turns"]  # the calculator's turns come from its own model, not this recorder
    assert handoff["content"][0]["name"] == "handoff"
    first = path.read_bytes()
    recorder.save_script(path)
    assert path.read_bytes() == first
    assert sorted(os.listdir(tmp_path)) == ["helpful.json"]


def test_unicode_is_written_as_is(tmp_path):
    recorder = RecordingModel(lambda messages, tools, system: turn(text_block("x² = 4 → x = ±2")))
    Agent("a", model=recorder).run("?")
    assert "x² = 4 → x = ±2" in recorder.save_script(tmp_path / "a.json").read_text(encoding="utf-8")


def test_a_failed_save_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "script.json"
    path.write_text("old\n", encoding="utf-8")
    recorder = RecordingModel(fake_live_model)
    calculator(recorder).run("?")

    def broken_replace(source, target):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        recorder.save_script(path)
    assert path.read_text(encoding="utf-8") == "old\n"
    assert sorted(os.listdir(tmp_path)) == ["script.json"]


def test_load_script_accepts_a_bare_list_and_names_the_model(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps([turn(text_block("hola"))]), encoding="utf-8")
    assert load_script(path).name == "tiny"
    assert load_script(path, name="other").name == "other"
    assert load_script(path)[0] == turn(text_block("hola"))


@pytest.mark.parametrize("content, message", [
    ("{not json", "no es JSON válido"),
    ('{"name": "x"}', "se esperaba una lista de turnos o un objeto con una lista 'turns'"),
    ('"hello"', "se esperaba una lista de turnos"),
    ('[{"stop_reason": "done", "content": []}]', "x paso 0: stop_reason debe ser uno de"),
])
def test_a_malformed_script_file_is_a_clear_error(tmp_path, content, message):
    path = tmp_path / "broken.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InvalidScript, match=message) as caught:
        load_script(path, name="x")
    assert str(path) in str(caught.value)


def test_recording_model_wraps_only_callables():
    with pytest.raises(TypeError, match="RecordingModel envuelve un modelo real"):
        RecordingModel(calculator_script())
    assert repr(RecordingModel(fake_live_model)).startswith("RecordingModel(<function fake_live_model")
    assert RecordingModel(fake_live_model).name == "recorded"
