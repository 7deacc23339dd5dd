"""The seed lesson's worked example and exercises 2 and 3 print exactly their 'Qué esperar'."""

import contextlib
import io

from handoffs import HANDOFF_TOOL_NAME, dispatch_parallel, print_history
from handoffs.examples import BOOKING_TURNS, COMPOUND_REQUEST
from handoffs.examples.reservo import SPECIALISTS, run_specialist_with_handoff

WORKED_EXAMPLE = """\
--- historial de booking_agent, hasta el handoff ---
  [0] user      pregunta: 'Cotiza Focus pro 3h. Y otra cosa, ¿qué pasa si no llego a la reserva?'
  [1] assistant tool_use(get_quote): {'room': 'Focus', 'tier': 'pro', 'hours': 3}
  [2] user      tool_result: {'price_cents': 6000}
  [3] assistant tool_use(handoff_to_specialist): {'receiver': 'policy_agent', 'reason': 'la segunda pregunta es sobre la política de no-presentación, fuera de mi expertise', 'task': '¿qué pasa si un miembro no se presenta a una reserva confirmada?', 'context': {'room': 'Focus', 'tier': 'pro', 'hours': 3, 'price_cents': 6000}}

final (None -- el loop se detuvo en el handoff, no llegó a un texto final): None
package: HandoffPackage(sender='booking_agent', receiver='policy_agent', reason='la segunda pregunta es sobre la política de no-presentación, fuera de mi expertise', task='¿qué pasa si un miembro no se presenta a una reserva confirmada?', context={'room': 'Focus', 'tier': 'pro', 'hours': 3, 'price_cents': 6000})
"""

EXERCISE_2 = """\
package: None
texto final: Studio pro 2h cuesta 6400 centavos.
"""

EXERCISE_3 = """\
bloque leído: get_quote
KeyError capturado en dispatch_parallel: KeyError('handoff_to_specialist')
"""


def printed(function):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        function()
    return out.getvalue()


def test_worked_example_output():
    def worked_example():
        final, history, package = run_specialist_with_handoff("booking_agent", COMPOUND_REQUEST, BOOKING_TURNS)
        print("--- historial de booking_agent, hasta el handoff ---")
        print_history(history)
        print()
        print("final (None -- el loop se detuvo en el handoff, no llegó a un texto final):", final)
        print("package:", package)

    assert printed(worked_example) == WORKED_EXAMPLE


def test_exercise_2_output():
    script_no_handoff = [
        {"stop_reason": "tool_use", "content": [
            {"type": "tool_use", "id": "toolu_01", "name": "get_quote",
             "input": {"room": "Studio", "tier": "pro", "hours": 2}}]},
        {"stop_reason": "end_turn", "content": [
            {"type": "text", "text": "Studio pro 2h cuesta 6400 centavos."}]},
    ]

    def exercise():
        final_nh, history_nh, package_nh = run_specialist_with_handoff(
            "booking_agent", "Cotiza Studio pro 2h", script_no_handoff)
        print("package:", package_nh)
        print("texto final:", final_nh["content"][0]["text"])

    assert printed(exercise) == EXERCISE_2


def test_exercise_3_output():
    turn_mixed = {"stop_reason": "tool_use", "content": [
        {"type": "tool_use", "id": "toolu_01", "name": "get_quote",
         "input": {"room": "Focus", "tier": "pro", "hours": 3}},
        {"type": "tool_use", "id": "toolu_02", "name": HANDOFF_TOOL_NAME,
         "input": {"receiver": "policy_agent", "reason": "...", "task": "..."}},
    ]}

    def exercise():
        block = turn_mixed["content"][0]
        print("bloque leído:", block["name"])
        try:
            dispatch_parallel(turn_mixed["content"], SPECIALISTS["booking_agent"]["tools"])
        except KeyError as e:
            print(f"KeyError capturado en dispatch_parallel: {e!r}")

    assert printed(exercise) == EXERCISE_3
