"""The OpenAI Agents SDK with no key and no network: the gate's exception and a runner. Taught in lesson 12.

The scripted model is the SDK's own: ``agents.testing.ScriptedModel`` answers each call with
the next step of its script and records every call (``calls[i].input``), and
``assistant_message`` / ``function_call`` build a turn's output items. This module adds what
the SDK has no word for: ``HandoffRejected``, the exception a receiver's gate raises, and
``run``, which runs an agent to the end in a thread of its own (a Jupyter kernel already has
an event loop running).

Importing this module turns the SDK's tracing export off: nothing tries to reach OpenAI.
"""

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from agents import Agent, RunConfig, RunHooks, Runner, set_tracing_disabled
from agents.items import TResponseInputItem
from agents.result import RunResult

from ..errors import HandoffsError
from ..validation import HandoffResult

set_tracing_disabled(True)


class HandoffRejected(HandoffsError):
    """A handoff the receiver's gate refused. Taught in lesson 12.

    Args:
        message: What was refused and why, as the caller reads it.
        result: The receiver's decision (reason, fields, next step).
    """

    def __init__(self, message: str, result: HandoffResult) -> None:
        super().__init__(message)
        self.result = result


def run(agent: Agent[Any], input: str | list[TResponseInputItem], *, context: object = None, max_turns: int = 10,
        hooks: RunHooks[Any] | None = None, run_config: RunConfig | None = None) -> RunResult:
    """``Runner.run`` to the end, in a thread with its own event loop; the SDK's exceptions pass through.

    Args:
        agent: The agent that starts the run.
        input: The user's text, or the conversation so far as the SDK's input items.
        context: The run's context object, passed to tools, hooks and ``on_handoff``.
        max_turns: The SDK's limit on model turns, of any agent.
        hooks: The run's lifecycle hooks (``RunHooks.on_handoff`` and the rest).
        run_config: The SDK's run configuration.

    Returns:
        The SDK's ``RunResult`` (``final_output``, ``last_agent``, the items of the run).
    """
    with ThreadPoolExecutor(1, thread_name_prefix=f"agents-run-{agent.name}") as thread:
        running = Runner.run(agent, input, context=context, max_turns=max_turns, hooks=hooks, run_config=run_config)
        result: RunResult = thread.submit(asyncio.run, running).result()
    return result
