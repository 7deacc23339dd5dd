"""ScriptedModel and next_turn: replaying scripts deterministically, failing with the step named."""

import pytest

from handoffs import InvalidTurn, ScriptedModel, ScriptExhausted, next_turn, text_block, turn
from handoffs.examples import BOOKING_TURNS, booking_model


def test_scripted_model_replays_copies():
    model = booking_model()
    first = model[0]
    first["content"][0]["input"]["hours"] = 99
    assert model[0]["content"][0]["input"]["hours"] == 3
    assert len(model) == 2
    assert repr(model) == "ScriptedModel('booking_agent', [get_quote, handoff_to_specialist])"


def test_exhausted_script_names_the_step():
    model = ScriptedModel([turn(text_block("hola"))], name="tiny")
    with pytest.raises(ScriptExhausted, match="'tiny' no tiene turno para el paso 1: su guion tiene 1 turno"):
        model[1]
    with pytest.raises(ScriptExhausted, match="no tiene turno para el paso 2: tiene 2 turno"):
        next_turn(list(BOOKING_TURNS), 2, [])


@pytest.mark.parametrize("bad, message", [
    ({"stop_reason": "done", "content": [text_block("x")]}, "stop_reason debe ser uno de"),
    ({"stop_reason": "end_turn", "content": []}, "lista de bloques no vacía"),
    ({"stop_reason": "tool_use", "content": [text_block("x")]}, "ningún bloque es un tool_use"),
    ({"stop_reason": "tool_use", "content": [{"type": "tool_use", "name": "x", "input": {}}]}, r"le falta \['id'\]"),
    ({"stop_reason": "end_turn", "content": [{"type": "image"}]}, "tipo desconocido 'image'"),
])
def test_malformed_turns_are_refused_at_construction(bad, message):
    with pytest.raises(InvalidTurn, match=message):
        ScriptedModel([bad], name="broken")


def test_live_models_are_called_with_a_copy_of_the_conversation():
    seen = []

    def live(messages, tools, system):
        seen.append((messages, tools, system))
        messages.append("mutated")
        return turn(text_block("ok"))

    history = [{"role": "user", "content": "hola"}]
    assert next_turn(live, 0, history, tools=[{"name": "t"}], system="be brief")["content"][0]["text"] == "ok"
    assert history == [{"role": "user", "content": "hola"}]
    assert seen[0][1:] == ([{"name": "t"}], "be brief")

