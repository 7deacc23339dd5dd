"""An Agent class whose handoff hands the whole conversation to another agent. Taught in lesson 09.

The policy, one rule per edge case:

1. The model is passed in and asked for each turn with ``next_turn``: a script is indexed
   by the turn number of the run, a live model gets the history, the tool schemas (the
   generated ``handoff`` tool included) and the system prompt.
2. The tool_use blocks of a turn run in order. A tool that raises, or a name the agent
   does not have, comes back as a tool_result with ``is_error: true`` and the run goes on.
3. A handoff to a known agent ends this agent's run at once: later blocks of that turn are
   not run, the target gets the cleaned conversation (user and assistant text only, the
   handoff turn removed) and its ``(messages, text)`` is the result of ``run``.
4. A handoff to an unknown agent comes back as the error tool result
   ``Handoff failed: Agent '<x>' not found. Available agents: [...]`` and the run goes on.
5. An error inside the target's run is the run's error: it is raised, not turned into a
   tool result, because the target owned the conversation when it failed.
6. Cycles: a chain of more than ``max_handoff_depth`` handoffs (5 by default) raises
   ``HandoffDepthExceeded``; A -> B -> A -> ... would otherwise never end.
"""

import copy
import textwrap
from dataclasses import dataclass, field

from .dispatch import call_safely
from .errors import HandoffsError
from .messages import final_text, tool_result_block, tool_uses
from .models import next_turn
from .runner import start_messages

AGENT_HANDOFF_TOOL = "handoff"
MAX_HANDOFF_DEPTH = 5
BASE_SYSTEM_PROMPT = (
    "You are an autonomous agent and may call functions over several steps when that helps. "
    "The user only reads what you write once you stop calling functions, so finish with a "
    "complete answer that stands on its own.\n"
    "Further instructions:\n"
)


class AgentError(HandoffsError):
    """An Agent cannot finish its run."""


class MaxTurnsExceeded(AgentError):
    """The agent used all its turns without a final answer."""


class HandoffDepthExceeded(AgentError):
    """A chain of handoffs grew past the guard: most likely agents handing off in a cycle."""


def _json_schema(schema):
    if not isinstance(schema, dict):
        raise TypeError(f"a tool schema must be a dict, got {type(schema).__name__}")
    if schema.get("type") == "function" and isinstance(schema.get("function"), dict):
        schema = schema["function"]  # OpenAI's wrapped form {"type": "function", "function": {...}}
    if "name" not in schema:
        raise ValueError(f"tool schema has no 'name': {schema!r}")
    for key in ("input_schema", "parameters"):
        if key in schema:
            return schema, schema[key]
    raise ValueError(f"tool schema {schema['name']!r} has neither 'input_schema' (Anthropic) "
                     "nor 'parameters' (OpenAI / Gemini)")


def _convert(schema, key):
    schema, json_schema = _json_schema(schema)
    converted = {"name": schema["name"]}
    if "description" in schema:
        converted["description"] = schema["description"]
    converted[key] = copy.deepcopy(json_schema)
    return converted


def to_parameters_format(schema):
    """A tool schema in the OpenAI / Gemini shape (``parameters``), from either shape."""
    return _convert(schema, "parameters")


def to_input_schema_format(schema):
    """A tool schema in the Anthropic shape (``input_schema``), from either shape."""
    return _convert(schema, "input_schema")


def make_handoff_schema(agent_names):
    """The schema of the ``handoff(name, reason)`` tool, listing the agents it may target."""
    names = list(agent_names)
    return {
        "name": AGENT_HANDOFF_TOOL,
        "description": (
            "Hand the whole conversation over to another, specialised agent. Use it ONLY when the "
            "request needs tools or skills that the target agent has. Do NOT hand off general "
            "knowledge questions (geography, history, science facts and the like): answer those "
            f"yourself. Available agents: {names}"
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "enum": names,
                         "description": f"The agent that takes over. Must be one of: {names}"},
                "reason": {"type": "string",
                           "description": "Why the handoff is needed, in a few words "
                                          "(e.g. 'needs mathematical calculation')."},
            },
            "required": ["name", "reason"],
        },
    }


@dataclass(frozen=True)
class AgentEvent:
    """One thing that happened in a run: a tool call, a handoff, a failed handoff or the answer."""

    agent: str
    kind: str
    name: str = ""
    args: dict = field(default_factory=dict)
    detail: str = ""

    def __str__(self):
        if self.kind == "tool":
            return f"{self.agent}: tool {self.name}({self.args!r}) -> {self.detail}"
        if self.kind == "tool_error":
            return f"{self.agent}: tool {self.name}({self.args!r}) failed: {self.detail}"
        if self.kind == "handoff":
            return f"{self.agent}: handoff -> {self.name} (reason: {self.detail})"
        if self.kind == "handoff_failed":
            return f"{self.agent}: {self.detail}"
        return f"{self.agent}: answer {textwrap.shorten(self.detail, 70, placeholder=' ...')!r}"


class AgentTrace(list):
    """The events of a run, oldest first; prints one line per event."""

    def __str__(self):
        return format_trace(self)

    def __repr__(self):
        return f"AgentTrace of {len(self)} event(s):\n{format_trace(self)}" if self else "AgentTrace of 0 events"


def format_trace(events):
    """The events as lines like ``helpful_assistant: handoff -> calculator_assistant (reason: ...)``."""
    return "\n".join(f"  {event}" for event in events)


def clean_for_handoff(messages):
    """What the target of a handoff sees: user and assistant text only, same roles merged, ending on the user."""
    cleaned = []
    for message in messages:
        content = message["content"]
        text = content if isinstance(content, str) else "\n".join(
            block["text"] for block in content if block.get("type") == "text" and block["text"].strip())
        if not text.strip():
            continue
        if cleaned and cleaned[-1]["role"] == message["role"]:
            cleaned[-1]["content"] += "\n\n" + text
        else:
            cleaned.append({"role": message["role"], "content": text})
    while cleaned and cleaned[-1]["role"] == "assistant":
        cleaned.pop()
    return cleaned


class Agent:
    """An agent with tools and handoff targets; ``run`` returns ``(messages, text)``. Taught in lesson 09."""

    max_handoff_depth = MAX_HANDOFF_DEPTH

    def __init__(self, name, system_prompt="You are a helpful assistant.", model=None, tools=None,
                 tool_schemas=None, handoffs=None, max_turns=15):
        if model is None:
            raise TypeError(f"Agent {name!r} needs a model: a ScriptedModel, a list of turns "
                            "or a live callable model(messages, tools=..., system=...)")
        self.name = name
        self.model = model
        self.system_prompt = BASE_SYSTEM_PROMPT + system_prompt
        self.max_turns = max_turns
        self.tools = {} if tools is None else dict(tools)
        self.tool_schemas = [] if tool_schemas is None else [to_input_schema_format(s) for s in tool_schemas]
        self.handoffs = [] if handoffs is None else list(handoffs)
        self.last_trace = AgentTrace()
        names = [agent.name for agent in self.handoffs]
        if len(set(names)) != len(names):
            raise ValueError(f"Agent {name!r}: handoff targets must have distinct names, got {names}")
        if self.handoffs and AGENT_HANDOFF_TOOL in {s["name"] for s in self.tool_schemas}:
            raise ValueError(f"Agent {name!r}: the tool name {AGENT_HANDOFF_TOOL!r} is reserved for handoffs")

    @property
    def handoff_schema(self):
        """The generated handoff tool (Anthropic shape), or None without handoff targets."""
        return make_handoff_schema(a.name for a in self.handoffs) if self.handoffs else None

    def model_tools(self):
        """The tool schemas the model is given each turn, the handoff tool last."""
        schemas = copy.deepcopy(self.tool_schemas)
        return schemas + [self.handoff_schema] if self.handoffs else schemas

    def run(self, messages):
        """Run until a final answer or a handoff; returns ``(messages, text)`` of the agent that answered."""
        return self._run(messages, AgentTrace(), [self.name])

    def _run(self, messages, trace, chain):
        self.last_trace = trace
        history = start_messages(messages)
        for step in range(self.max_turns):
            turn = next_turn(self.model, step, history, tools=self.model_tools(), system=self.system_prompt)
            history.append({"role": "assistant", "content": turn["content"]})
            if turn["stop_reason"] != "tool_use":
                text = final_text(turn)
                if not text.strip():
                    raise AgentError(f"Agent {self.name!r} ended its turn {step} without any text")
                trace.append(AgentEvent(self.name, "answer", detail=text))
                return history, text
            results = []
            for block in tool_uses(turn):
                if block["name"] == AGENT_HANDOFF_TOOL and self.handoffs:
                    target, failure = self._find_target(block["input"], trace)
                    if target is not None:
                        return self._hand_off(target, history[:-1], trace, chain)
                    results.append(tool_result_block(block["id"], failure, is_error=True))
                else:
                    results.append(self._call_tool(block, trace))
            history.append({"role": "user", "content": results})
        raise MaxTurnsExceeded(f"Agent {self.name!r} reached max_turns={self.max_turns} without a final answer")

    def _find_target(self, args, trace):
        wanted, reason = args.get("name"), args.get("reason", "No reason provided")
        for agent in self.handoffs:
            if agent.name == wanted:
                trace.append(AgentEvent(self.name, "handoff", wanted, dict(args), reason))
                return agent, None
        available = [agent.name for agent in self.handoffs]
        failure = f"Handoff failed: Agent '{wanted}' not found. Available agents: {available}"
        trace.append(AgentEvent(self.name, "handoff_failed", str(wanted), dict(args), failure))
        return None, failure

    def _hand_off(self, target, history, trace, chain):
        chain = chain + [target.name]
        if len(chain) - 1 > self.max_handoff_depth:
            raise HandoffDepthExceeded(
                f"handoff chain longer than {self.max_handoff_depth} hops: {' -> '.join(chain)}; "
                "the agents are probably handing off in a cycle")
        return target._run(clean_for_handoff(history), trace, chain)

    def _call_tool(self, block, trace):
        result = call_safely(self.tools, block)
        kind = "tool_error" if result.get("is_error") else "tool"
        trace.append(AgentEvent(self.name, kind, block["name"], copy.deepcopy(block["input"]), result["content"]))
        return result

    def format_trace(self):
        """The last run's trace, one line per event."""
        return format_trace(self.last_trace)

    def __repr__(self):
        return (f"Agent({self.name!r}, tools={list(self.tools)}, "
                f"handoffs={[agent.name for agent in self.handoffs]})")
