"""The OpenAI Agents SDK run by a scripted model: no key, no network. Taught in lesson 12.

``ScriptedSDKModel`` implements the SDK's own ``Model`` interface: each call to the model
returns the next scripted turn (a list of output items, or a function of the input the
model received), and records that input, so a lesson can show what each agent saw.
``text`` and ``call`` build the output items of a turn; ``run`` runs an agent to the end
in a thread of its own (a Jupyter kernel already has an event loop running).

Importing this module turns the SDK's tracing export off: nothing tries to reach OpenAI.
"""

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from agents import Agent, Model, ModelResponse, ModelSettings, RunConfig, RunHooks, Runner, Usage, set_tracing_disabled
from agents.agent_output import AgentOutputSchemaBase
from agents.handoffs import Handoff
from agents.items import TResponseInputItem, TResponseOutputItem, TResponseStreamEvent
from agents.models.interface import ModelTracing
from agents.result import RunResult
from agents.tool import Tool
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText
from openai.types.responses.response_prompt_param import ResponsePromptParam

from ..errors import HandoffsError, UsageError
from ..validation import HandoffResult

set_tracing_disabled(True)

Turn = list[TResponseOutputItem]
Step = Turn | Callable[[list[TResponseInputItem]], Turn]


def text(words: str, id: str = "msg") -> ResponseOutputMessage:
    """An assistant message with one output text, as the Responses API returns it."""
    return ResponseOutputMessage(id=id, type="message", role="assistant", status="completed",
                                 content=[ResponseOutputText(type="output_text", text=words, annotations=[])])


def call(call_id: str, name: str, arguments: dict[str, Any] | str) -> ResponseFunctionToolCall:
    """A function call (a tool or a handoff, ``transfer_to_<agent>``) with its arguments as JSON text."""
    payload = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return ResponseFunctionToolCall(id=f"fc_{call_id}", call_id=call_id, name=name, arguments=payload,
                                    type="function_call", status="completed")


class HandoffRejected(HandoffsError):
    """A handoff the receiver's gate refused; ``result`` is the receiver's decision (reason, fields, next step)."""

    def __init__(self, message: str, result: HandoffResult) -> None:
        super().__init__(message)
        self.result = result


class ScriptExhausted(UsageError):
    """The scripted model was asked for one turn more than its script holds."""


class ScriptedSDKModel(Model):
    """A model of the Agents SDK that answers with scripted turns, in order; ``inputs`` keeps what it received."""

    def __init__(self, name: str, script: Sequence[Step]) -> None:
        self.name = name
        self.script = list(script)
        self.inputs: list[list[TResponseInputItem]] = []

    async def get_response(self, system_instructions: str | None, input: str | list[TResponseInputItem],
                           model_settings: ModelSettings, tools: list[Tool],
                           output_schema: AgentOutputSchemaBase | None, handoffs: list[Handoff],
                           tracing: ModelTracing, *, previous_response_id: str | None,
                           conversation_id: str | None, prompt: ResponsePromptParam | None) -> ModelResponse:
        """The next scripted turn, given the input items the SDK built for this agent."""
        items: list[TResponseInputItem] = (
            [{"role": "user", "content": input}] if isinstance(input, str) else [dict(i) for i in input])  # type: ignore[misc]
        self.inputs.append(items)
        position = len(self.inputs) - 1
        if position >= len(self.script):
            raise ScriptExhausted(f"el modelo con guion de {self.name} no tiene un turno {position + 1} "
                                  f"(su guion tiene {len(self.script)})")
        step = self.script[position]
        output = step(items) if callable(step) else step
        return ModelResponse(output=list(output), usage=Usage(), response_id=f"{self.name}-{position + 1}")

    def stream_response(self, system_instructions: str | None, input: str | list[TResponseInputItem],
                        model_settings: ModelSettings, tools: list[Tool],
                        output_schema: AgentOutputSchemaBase | None, handoffs: list[Handoff],
                        tracing: ModelTracing, *, previous_response_id: str | None,
                        conversation_id: str | None,
                        prompt: ResponsePromptParam | None) -> AsyncIterator[TResponseStreamEvent]:
        """Streaming is not scripted: the lesson runs every agent with ``run``."""
        raise UsageError("el modelo con guion no transmite por streaming: usa run()")


def run(agent: Agent[Any], input: str | list[TResponseInputItem], *, context: object = None, max_turns: int = 10,
        hooks: RunHooks[Any] | None = None, run_config: RunConfig | None = None) -> RunResult:
    """``Runner.run`` to the end, in a thread with its own event loop; the SDK's exceptions pass through."""
    with ThreadPoolExecutor(1, thread_name_prefix=f"agents-run-{agent.name}") as thread:
        running = Runner.run(agent, input, context=context, max_turns=max_turns, hooks=hooks, run_config=run_config)
        result: RunResult = thread.submit(asyncio.run, running).result()
    return result
