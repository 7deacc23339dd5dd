"""The lesson's runners: run_agent_parallel and run_agent_with_handoff. Taught in lesson 03.

``run_agent_with_handoff`` is the seed's first-block runner, kept as the lesson builds
it: it only looks at the first block of a turn. ``handoffs.robust`` has the runner
that handles a handoff anywhere in a turn.
"""

import copy

from .dispatch import dispatch_parallel
from .errors import ModelBehaviorError
from .messages import tool_uses
from .models import next_turn
from .package import HANDOFF_TOOL_NAME, package_from_tool_input
from .specialists import SPECIALISTS


class MaxIterationsExceeded(ModelBehaviorError):
    """The run reached max_iterations without a final answer or a handoff."""

    def __init__(self, max_iterations):
        super().__init__(f"max_iterations reached ({max_iterations}) without a final answer or a handoff")
        self.max_iterations = max_iterations


def start_messages(question):
    """A fresh history: a question becomes one user message; a list is deep-copied."""
    if isinstance(question, str):
        return [{"role": "user", "content": question}]
    return copy.deepcopy(list(question))


def run_agent_parallel(question, model_script, tools, max_iterations=10):
    """Run a tool-using agent to its final turn; returns (final, messages)."""
    messages = start_messages(question)
    for step in range(max_iterations):
        turn = next_turn(model_script, step, messages)
        messages.append({"role": "assistant", "content": turn["content"]})
        if turn["stop_reason"] != "tool_use":
            return turn, messages
        messages.append({"role": "user", "content": dispatch_parallel(tool_uses(turn), tools)})
    raise MaxIterationsExceeded(max_iterations)


def run_agent_with_handoff(question, model_script, tools, self_name, max_iterations=10):
    """Like run_agent_parallel, but stops at a handoff in a turn's FIRST block; returns (final, messages, package)."""
    messages = start_messages(question)
    for step in range(max_iterations):
        turn = next_turn(model_script, step, messages)
        messages.append({"role": "assistant", "content": turn["content"]})
        if turn["stop_reason"] != "tool_use":
            return turn, messages, None
        block = turn["content"][0]
        if block.get("name") == HANDOFF_TOOL_NAME:
            return None, messages, package_from_tool_input(self_name, block["input"])
        messages.append({"role": "user", "content": dispatch_parallel(tool_uses(turn), tools)})
    raise MaxIterationsExceeded(max_iterations)


def run_specialist_with_handoff(name, task, model_script, registry=SPECIALISTS):
    """Run the specialist ``name`` from the registry with run_agent_with_handoff."""
    if name not in registry:
        raise KeyError(f"unknown specialist {name!r}; specialists are {sorted(registry)}")
    return run_agent_with_handoff(task, model_script, registry[name]["tools"], self_name=name)
