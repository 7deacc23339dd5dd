"""An Agent class whose handoff hands the whole conversation to another agent. Taught in lesson 09.

The Agent runs on the course's one loop (``handoffs.loop.run_loop``) with these policies
(the handoff one is ``handoffs.policies.AgentHandoff``):

1. The model is passed in: a script is indexed by the turn number of the run, a live model
   gets the history, the tool schemas (the generated ``handoff`` tool last) and the system prompt.
2. Tool calls run in order (``MixedTurn.STOP_AT_HANDOFF``). A tool that raises, or a name
   the agent does not have, comes back as a tool_result with ``is_error: true``.
3. A handoff to a known agent ends this agent's run at once: later blocks of that turn are
   not run, the target gets the cleaned conversation (user and assistant text only, the
   handoff turn removed) and its ``(messages, text)`` is the result of ``run``.
4. A handoff to an unknown agent comes back as the error tool result
   ``Handoff fallido: no existe el agente '<x>'. Agentes disponibles: [...]`` and the run goes on.
5. An error inside the target's run is the run's error: it is raised, not turned into a
   tool result, because the target owned the conversation when it failed.
6. Cycles: a chain of more than ``MAX_HOPS`` handoffs (3, the coordinator's limit too)
   raises ``HandoffDepthExceeded``; A -> B -> A -> ... would otherwise never end.
"""

import copy
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .coordinator import MAX_HOPS
from .errors import HandoffsError, UsageError
from .loop import MixedTurn, run_loop, start_messages
from .messages import Message, ToolResultBlock, ToolUseBlock
from .models import AnyModel
from .policies import AGENT_HANDOFF_TOOL_NAME, AgentHandoff
from .tools import Tool, ToolSchema, to_input_schema_format

BASE_SYSTEM_PROMPT = (
    "You are an autonomous agent and may call functions over several steps when that helps. "
    "The user only reads what you write once you stop calling functions, so finish with a "
    "complete answer that stands on its own.\n"
    "Further instructions:\n"
)


class AgentError(HandoffsError):
    """An Agent cannot finish its run."""


class HandoffDepthExceeded(AgentError):
    """A chain of handoffs grew past the guard: most likely agents handing off in a cycle."""


@dataclass(frozen=True)
class AgentEvent:
    """One thing that happened in a run: a tool call, a handoff, a failed handoff or the answer."""

    agent: str
    kind: Literal["tool", "tool_error", "handoff", "handoff_failed", "answer"]
    name: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    detail: str = ""

    def __str__(self) -> str:
        if self.kind == "tool":
            return f"{self.agent}: tool {self.name}({self.args!r}) -> {self.detail}"
        if self.kind == "tool_error":
            return f"{self.agent}: tool {self.name}({self.args!r}) falló: {self.detail}"
        if self.kind == "handoff":
            return f"{self.agent}: handoff -> {self.name} (motivo: {self.detail})"
        if self.kind == "handoff_failed":
            return f"{self.agent}: {self.detail}"
        return f"{self.agent}: respuesta {textwrap.shorten(self.detail, 70, placeholder=' ...')!r}"


class AgentTrace(list[AgentEvent]):
    """The events of a run, oldest first; prints one line per event."""

    def __str__(self) -> str:
        return format_trace(self)

    def __repr__(self) -> str:
        return f"AgentTrace de {len(self)} evento(s):\n{format_trace(self)}" if self else "AgentTrace de 0 eventos"


def format_trace(events: Iterable[AgentEvent]) -> str:
    """The events as text, one indented line per event.

    Args:
        events: The events of a run, oldest first.

    Returns:
        Lines like ``helpful_assistant: handoff -> calculator_assistant (motivo: ...)``.
    """
    return "\n".join(f"  {event}" for event in events)


def clean_for_handoff(messages: Sequence[Message]) -> list[Message]:
    """What the target of a handoff sees. Taught in lesson 09.

    Args:
        messages: The sender's history up to, not including, the handoff turn.

    Returns:
        User and assistant text only (tool calls and results dropped), consecutive messages of one
        role merged, trailing assistant messages removed so it ends on the user.
    """
    cleaned: list[Message] = []
    for message in messages:
        content = message["content"]
        text = content if isinstance(content, str) else "\n".join(
            block["text"] for block in content if block["type"] == "text" and block["text"].strip())
        if not text.strip():
            continue
        if cleaned and cleaned[-1]["role"] == message["role"]:
            cleaned[-1]["content"] = f"{cleaned[-1]['content']}\n\n{text}"
        else:
            cleaned.append({"role": message["role"], "content": text})
    while cleaned and cleaned[-1]["role"] == "assistant":
        cleaned.pop()
    return cleaned


class Agent:
    """An agent with tools and handoff targets; ``run`` returns ``(messages, text)``. Taught in lesson 09.

    Args:
        name: The agent's name, which its handoff tool lists.
        system_prompt: Its instructions, appended to ``BASE_SYSTEM_PROMPT``.
        model: A script (``ScriptedModel`` or a list of turns) or a live model.
        tools: Its tool registry, by name.
        tool_schemas: The schemas of its tools, in either shape (converted to ``input_schema``).
        handoffs: The agents it may hand the conversation to.
        max_turns: The most model turns one run may take.

    Raises:
        UsageError: No model; two handoff targets with one name; a tool named ``handoff`` next to handoffs.
    """

    max_hops = MAX_HOPS

    def __init__(self, name: str, system_prompt: str = "You are a helpful assistant.", model: AnyModel | None = None,
                 tools: Mapping[str, Tool] | None = None, tool_schemas: Sequence[Any] | None = None,
                 handoffs: Sequence["Agent"] | None = None, max_turns: int = 15) -> None:
        if model is None:
            raise UsageError(f"el agente {name!r} necesita un modelo: un ScriptedModel, una lista de turnos "
                             "o un modelo real invocable model(messages, tools=..., system=...)")
        self.name = name
        self.model = model
        self.system_prompt = BASE_SYSTEM_PROMPT + system_prompt
        self.max_turns = max_turns
        self.tools: dict[str, Tool] = {} if tools is None else dict(tools)
        self.tool_schemas = [] if tool_schemas is None else [to_input_schema_format(s) for s in tool_schemas]
        self.handoffs: list[Agent] = [] if handoffs is None else list(handoffs)
        self.last_trace = AgentTrace()
        names = [agent.name for agent in self.handoffs]
        if len(set(names)) != len(names):
            raise UsageError(f"agente {name!r}: los destinos de handoff deben tener nombres distintos; "
                             f"se recibió {names}")
        if self.handoffs and AGENT_HANDOFF_TOOL_NAME in {s["name"] for s in self.tool_schemas}:
            raise UsageError(f"agente {name!r}: el nombre de tool {AGENT_HANDOFF_TOOL_NAME!r} está reservado "
                             "para los handoffs")

    @property
    def handoff_policy(self) -> AgentHandoff | None:
        """How this agent's loop recognises a handoff (an ``AgentHandoff``), or None without handoff targets."""
        return AgentHandoff(tuple(a.name for a in self.handoffs)) if self.handoffs else None

    @property
    def handoff_schema(self) -> ToolSchema | None:
        """The generated handoff tool (Anthropic shape), or None without handoff targets."""
        policy = self.handoff_policy
        return policy.schema(self.name) if policy else None

    def model_tools(self) -> list[ToolSchema]:
        """The tool schemas the model is given each turn.

        Returns:
            A copy of ``tool_schemas``, with the handoff tool last when there are targets.
        """
        handoff = self.handoff_schema
        return copy.deepcopy(self.tool_schemas) + ([handoff] if handoff else [])

    def run(self, messages: str | Sequence[Message]) -> tuple[list[Message], str]:
        """Run until a final answer, following handoffs to the agent that answers. Taught in lesson 09.

        An error of a target's run is raised here (``HandoffDepthExceeded`` past ``MAX_HOPS``,
        ``AgentError`` for a run with no text, ``MaxTurnsExceeded``).

        Args:
            messages: The user's text, or a conversation so far (copied, never changed).

        Returns:
            ``(messages, text)`` of the agent that answered: its whole history and its final text.
        """
        return self._run(start_messages(messages), AgentTrace(), [self.name])

    def _run(self, messages: list[Message], trace: AgentTrace, chain: list[str]) -> tuple[list[Message], str]:
        self.last_trace = trace
        result = run_loop(messages, self.model, self.tools, name=self.name, handoff=self.handoff_policy,
                          mixed_turn=MixedTurn.STOP_AT_HANDOFF, max_turns=self.max_turns,
                          tool_schemas=self.tool_schemas, system=self.system_prompt,
                          on_result=lambda block, result: trace.append(self._event(block, result)))
        if result.handoff is not None:
            transfer = result.handoff
            trace.append(AgentEvent(self.name, "handoff", transfer.target, transfer.args, transfer.reason))
            target = next(agent for agent in self.handoffs if agent.name == transfer.target)
            return self._hand_off(target, result.messages[:-1], trace, chain)
        if not result.text.strip():
            raise AgentError(f"el agente {self.name!r} terminó su ejecución sin ningún texto")
        trace.append(AgentEvent(self.name, "answer", detail=result.text))
        return result.messages, result.text

    def _event(self, block: ToolUseBlock, result: ToolResultBlock) -> AgentEvent:
        args, failed = copy.deepcopy(block["input"]), bool(result.get("is_error"))
        if self.handoffs and block["name"] == AGENT_HANDOFF_TOOL_NAME:
            return AgentEvent(self.name, "handoff_failed", str(args.get("name")), args, result["content"])
        return AgentEvent(self.name, "tool_error" if failed else "tool", block["name"], args, result["content"])

    def _hand_off(self, target: "Agent", history: list[Message], trace: AgentTrace,
                  chain: list[str]) -> tuple[list[Message], str]:
        chain = chain + [target.name]
        if len(chain) - 1 > self.max_hops:
            raise HandoffDepthExceeded(
                f"cadena de handoffs de más de {self.max_hops} saltos: {' -> '.join(chain)}; "
                "lo más probable es que los agentes se estén haciendo handoff en ciclo")
        return target._run(clean_for_handoff(history), trace, chain)

    def format_trace(self) -> str:
        """The last run's trace as text.

        Returns:
            One line per event, oldest first.
        """
        return format_trace(self.last_trace)

    def __repr__(self) -> str:
        return (f"Agent({self.name!r}, tools={list(self.tools)}, "
                f"handoffs={[agent.name for agent in self.handoffs]})")
