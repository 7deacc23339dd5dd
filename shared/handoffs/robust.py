"""A runner that survives real model turns: mixed turns, failing tools, bad handoffs. Taught in lesson 03.

The policy, one rule per edge case:

1. Every tool_use of a turn gets exactly one tool_result in the next user message, in
   the order of the blocks, so the transcript stays valid for every provider.
2. Domain tools run in parallel. An unknown tool or a tool that raises becomes a
   tool_result with ``is_error: true`` and the loop goes on: the model can recover.
3. A handoff that shares a turn with domain tools does not cancel them: the domain tools
   of the turn run, then the run stops at the handoff. (The agent asked for them; their
   results stay in the sender's history for the audit trail.)
4. The first valid handoff of a turn wins and gets the result "Handoff accepted". A
   second handoff in the same turn is refused with a result that says so.
5. A handoff to an unknown receiver, to the sender itself, or with missing fields goes
   back to the model as an error result it can correct; the loop goes on.
"""

from .dispatch import dispatch_safely
from .messages import tool_result_block, tool_uses
from .models import next_turn
from .package import HANDOFF_TOOL_NAME, handoff_problems, make_handoff_tool, package_from_tool_input
from .runner import MaxIterationsExceeded, start_messages
from .specialists import SPECIALISTS, schemas_for


def answer_turn(turn, tools, self_name, receivers):
    """The tool_result blocks for every tool_use of a turn, and the accepted package or None."""
    blocks = tool_uses(turn)
    domain_results = iter(dispatch_safely([b for b in blocks if b["name"] != HANDOFF_TOOL_NAME], tools))
    results, package = [], None
    for block in blocks:
        if block["name"] != HANDOFF_TOOL_NAME:
            results.append(next(domain_results))
        elif package is not None:
            results.append(tool_result_block(
                block["id"], f"Handoff refused: this turn already handed off to {package.receiver}; "
                "only one handoff per turn is allowed.", is_error=True))
        elif problems := handoff_problems(block["input"], receivers, sender=self_name):
            results.append(tool_result_block(block["id"], "Handoff refused: " + "; ".join(problems), is_error=True))
        else:
            package = package_from_tool_input(self_name, block["input"])
            results.append(tool_result_block(block["id"], f"Handoff accepted: {package.receiver} now owns the task."))
    return results, package


def run_agent_robust(question, model, tools, self_name, receivers=SPECIALISTS, max_iterations=10,
                     tool_schemas=None, system=None):
    """Run an agent that may hand off anywhere in a turn; returns (final, messages, package).

    A live model is offered ``tool_schemas`` (by default the Reservo schemas of ``tools``)
    plus the handoff tool listing the other receivers; a script ignores them.
    """
    messages = start_messages(question)
    schemas = list(schemas_for(tools) if tool_schemas is None else tool_schemas)
    others = [name for name in receivers if name != self_name]
    offered = schemas + ([make_handoff_tool(others)] if others else [])
    for step in range(max_iterations):
        turn = next_turn(model, step, messages, tools=offered, system=system)
        messages.append({"role": "assistant", "content": turn["content"]})
        if turn["stop_reason"] != "tool_use":
            return turn, messages, None
        results, package = answer_turn(turn, tools, self_name, receivers)
        messages.append({"role": "user", "content": results})
        if package is not None:
            return None, messages, package
    raise MaxIterationsExceeded(max_iterations)
