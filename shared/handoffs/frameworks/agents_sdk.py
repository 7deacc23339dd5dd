"""The OpenAI Agents SDK with no key and no network: the gate's exception and a runner. Taught in lesson 12.

The scripted model is the SDK's own: ``agents.testing.ScriptedModel`` answers each call with
the next step of its script and records every call (``calls[i].input``), and
``assistant_message`` / ``function_call`` build a turn's output items. This module adds what
the SDK has no word for: ``HandoffRequest``, the ``input_type`` of the lesson's handoffs (only
what the model decides when it hands off: reason, priority, language; the contract itself is
built by the runtime from the run's context), ``HandoffRejected``, the exception a receiver's
gate raises, and ``run``, which runs an agent to the end in a thread of its own (a Jupyter
kernel already has an event loop running).

Importing this module turns the SDK's tracing export off: nothing tries to reach OpenAI.
"""

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from agents import Agent, RunConfig, RunHooks, Runner, set_tracing_disabled
from agents.items import TResponseInputItem
from agents.result import RunResult
from pydantic import BaseModel, ConfigDict, Field

from ..errors import HandoffsError
from ..validation import HandoffResult

set_tracing_disabled(True)


class HandoffRequest(BaseModel):
    """What the model decides when it hands off: the handoff tool's arguments. Taught in lesson 12.

    The SDK's ``input_type`` is for metadata the model chooses at handoff time; the facts, the
    evidence, the authority and the state version come from the run's context, which the
    runtime controls, never from these arguments.

    Args:
        reason: Why the task changes owner, in the model's words.
        priority: How soon the receiver should act.
        language: The language the receiver should answer the user in.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    reason: str = Field(min_length=1)
    priority: Literal["high", "medium", "low"]
    language: str = "es"


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
