"""Router, handoff, escalation, subagent, agent-as-tool: who owns the task and who answers. Taught in lesson 01.

A ``Pattern`` describes one way of splitting work between agents and ``comparison_table`` shows
several side by side; ``run_routed`` and ``run_with_agent_tools`` run the router and the
agent-as-tool patterns, to compare with the handoff (``run_handoff_chain``).
See docs/library-reference.md.
"""

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from pydantic import Field

from .chain import USER, Specialist
from .diagram import Event, as_markdown, mermaid_sequence, tool_call_events
from .errors import UsageError
from .messages import Message, ToolUseBlock, Turn, final_text, tool_uses
from .models import AnyModel
from .runner import run_agent_robust
from .tools import Tool, ToolSchema, json_schema_of, schemas_of


@dataclass(frozen=True)
class Pattern:
    """One way to split work between agents: when it is decided, what travels, who owns and who answers."""

    name: str
    title: str
    decided_when: str
    decided_by: str
    context: str
    owner_after: str
    answers_user: str
    control_returns: bool
    risk: str


COLUMNS = (
    ("title", "Patrón"), ("decided_when", "Cuándo se decide"), ("decided_by", "Quién decide"),
    ("context", "Contexto que viaja"), ("owner_after", "Dueño de la tarea después"),
    ("answers_user", "Responde al usuario"), ("control_returns", "¿Vuelve el control?"),
    ("risk", "Riesgo típico"),
)

def _cell(value: object) -> str:
    return "sí" if value is True else "no" if value is False else str(value)


@dataclass(frozen=True)
class ComparisonTable:
    """Patterns side by side; renders as a markdown table in a notebook."""

    patterns: tuple[Pattern, ...]

    def markdown(self) -> str:
        """The table as markdown text, one row per pattern.

        Returns:
            The table, with the Spanish column headers of ``COLUMNS`` and booleans as "sí" / "no".
        """
        lines = ["| " + " | ".join(header for _, header in COLUMNS) + " |",
                 "|" + "---|" * len(COLUMNS)]
        lines += ["| " + " | ".join(_cell(getattr(p, key)) for key, _ in COLUMNS) + " |" for p in self.patterns]
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:
        return self.markdown()

    def __str__(self) -> str:
        return self.markdown()

    def __repr__(self) -> str:
        return f"ComparisonTable({', '.join(p.name for p in self.patterns)})"


def comparison_table(patterns: Mapping[str, Pattern], names: Sequence[str] | None = None) -> ComparisonTable:
    """The comparison table of the patterns named (all of them by default), in that order. Taught in lesson 01.

    Args:
        patterns: the patterns to choose from, by name.
        names: the patterns to show, in order; all of them when None.

    Returns:
        The table; it renders as markdown in a notebook.

    Raises:
        KeyError: a name is not one of the patterns.
    """
    names = list(patterns) if names is None else list(names)
    unknown = [name for name in names if name not in patterns]
    if unknown:
        raise KeyError(f"patrón(es) desconocido(s) {unknown}; los patrones son {list(patterns)}")
    return ComparisonTable(tuple(patterns[name] for name in names))


@dataclass(frozen=True)
class AgentCall:
    """One call from the caller to another agent used as a tool: the task, that agent's run and its answer."""

    tool_use_id: str
    agent: str
    task: str
    answer: str
    messages: list[Message] = field(repr=False)


@dataclass
class PatternRun:
    """What a run did under one pattern: the owner's history, the calls it made, and who answered the user."""

    pattern: str
    question: str
    owner: str
    answer: str
    messages: list[Message]
    calls: tuple[AgentCall, ...] = ()
    router: str = ""

    def diagram(self) -> str:
        """The run as a Mermaid sequence diagram, drawn from its messages.

        Returns:
            The diagram: the request, the routing if any, each tool or agent call and the answer.
        """
        participants = [USER] + ([self.router] if self.router else []) + [self.owner]
        participants += [c.agent for c in self.calls if c.agent not in participants]
        if self.router:
            events: list[Event] = [("call", USER, self.router, self.question),
                      ("call", self.router, self.owner, f"enruta: {self.owner}"),
                      ("note", self.router, self.owner, f"{self.owner} pasa a ser dueño de la tarea")]
        else:
            events = [("call", USER, self.owner, self.question)]
        calls = {c.tool_use_id: c for c in self.calls}
        for block in _tool_use_blocks(self.messages):
            call = calls.get(block["id"])
            if call is None:
                events += tool_call_events(self.owner, [{"role": "assistant", "content": [block]}])
                continue
            events += [("call", self.owner, call.agent, call.task),
                       ("note", self.owner, call.agent, f"{self.owner} sigue siendo dueño y espera"),
                       *tool_call_events(call.agent, call.messages),
                       ("reply", call.agent, self.owner, call.answer)]
        events.append(("reply", self.owner, USER, self.answer))
        return mermaid_sequence(participants, events)

    def _repr_markdown_(self) -> str:
        return as_markdown(self.diagram())

    def __repr__(self) -> str:
        called = f", called={[c.agent for c in self.calls]}" if self.calls else ""
        return f"PatternRun({self.pattern}: owner={self.owner!r}{called}, answer={self.answer!r})"


def _tool_use_blocks(messages: Sequence[Message]) -> list[ToolUseBlock]:
    return [block for message in messages if message["role"] == "assistant" for block in tool_uses(message["content"])]


def _model_for(models: Mapping[str, AnyModel], name: str) -> AnyModel:
    if name not in models:
        raise KeyError(f"no hay modelo para {name!r}; se dieron modelos para {sorted(models)}")
    return models[name]


def _run_alone(question: str, model: AnyModel, name: str, tools: Mapping[str, Tool],
               registry: Mapping[str, Specialist], max_turns: int,
               schemas: Sequence[ToolSchema], note: str = "") -> tuple[Turn, list[Message]]:
    """Run ``name`` to its final answer with no one to hand off to; a live model is offered the tools' schemas."""
    system = (f"You are {name}, a specialist. Your expertise: {registry[name]['expertise']}. "
              f"{note}Answer the user yourself.")
    result = run_agent_robust(question, model, tools, name, receivers=(), max_turns=max_turns,
                              tool_schemas=schemas, system=system)
    if result.final is None:
        raise UsageError(f"{name} hizo handoff, pero no se le ofreció a nadie a quien hacer handoff")
    return result.final, result.messages


def run_routed(question: str, route: Callable[[str], str], models: Mapping[str, AnyModel],
               registry: Mapping[str, Specialist], max_turns: int = 10) -> PatternRun:
    """Router: ``route(question)`` names the specialist before any work; it runs alone and answers.

    Taught in lesson 01.

    Args:
        question: the user's request.
        route: the router: given the question, it returns the specialist's name.
        models: one model per specialist, by name.
        registry: every specialist (its tools and expertise), by name.
        max_turns: the most model turns of the specialist's run.

    Returns:
        The run under the "router" pattern: the chosen specialist owns the task and answers.

    Raises:
        UsageError: the router chose a name that is not a specialist, or the specialist handed off.
        KeyError: there is no model for the chosen specialist.
        MaxTurnsExceeded: the run used ``max_turns`` turns without a final answer.
    """  # noqa: DOC503
    name = route(question)
    if name not in registry:
        raise UsageError(f"el router eligió {name!r}, que no es un especialista; "
                         f"los especialistas son {sorted(registry)}")
    tools = registry[name]["tools"]
    final, messages = _run_alone(question, _model_for(models, name), name, tools, registry, max_turns,
                                 schemas_of(tools))
    return PatternRun("router", question, name, final_text(final), messages, router="router")


def agent_tool_name(agent: str) -> str:
    """The tool name under which ``agent`` is offered to a caller: ``ask_<agent>``.

    Args:
        agent: the agent offered as a tool.

    Returns:
        ``"ask_" + agent``.
    """
    return f"ask_{agent}"


def agent_tool_schema(agent: str, registry: Mapping[str, Specialist]) -> ToolSchema:
    """The schema of ``ask_<agent>(task)``, for a live caller: the answer comes back and the caller goes on.

    Args:
        agent: the agent offered as a tool; it must be in ``registry``.
        registry: every specialist, by name; the description names the agent's expertise.

    Returns:
        The tool schema in the Anthropic shape, with one required ``task`` text.
    """
    task = (str, Field(description=f"La tarea para {agent}, en tus propias palabras."))
    return {"name": agent_tool_name(agent),
            "description": (f"Pídele a {agent} ({registry[agent]['expertise']}) que haga una tarea y te devuelva "
                            "su respuesta. Tú sigues siendo dueño de la conversación y respondes al usuario."),
            "input_schema": json_schema_of({"task": task}, f"{agent_tool_name(agent)}_input")}


def run_with_agent_tools(question: str, caller: str, models: Mapping[str, AnyModel], agent_tools: Sequence[str],
                         registry: Mapping[str, Specialist], max_turns: int = 10,
                         pattern: str = "agent_as_tool") -> PatternRun:
    """Agent-as-tool: ``caller`` may call each agent in ``agent_tools`` as ``ask_<agent>(task)``.

    Each call runs that agent to its final answer and returns the answer as the tool result,
    so the control comes back and the caller answers the user. A subagent is called the same
    way (``pattern="subagent"``): what differs is what the call carries - a piece of the
    parent's own task - not how the control moves. Taught in lesson 01.

    Args:
        question: the user's request.
        caller: the agent that owns the task and answers the user.
        models: one model per agent that runs, by name.
        agent_tools: the agents the caller may call.
        registry: every specialist (its tools and expertise), by name.
        max_turns: the most model turns of each run.
        pattern: ``"agent_as_tool"`` or ``"subagent"``, as the run is labelled.

    Returns:
        The run: the caller's history, one ``AgentCall`` per call that finished, and the caller's answer.

    Raises:
        UsageError: ``pattern`` is neither of the two, or the caller handed off.
        KeyError: the caller, or an agent it may call, has no model or no entry in ``registry``.
        MaxTurnsExceeded: the caller used ``max_turns`` turns without a final answer.
    """  # noqa: DOC503
    if pattern not in ("agent_as_tool", "subagent"):
        raise UsageError(f"run_with_agent_tools ejecuta 'agent_as_tool' o 'subagent', no {pattern!r}")
    runs: list[tuple[str, str, str, list[Message]]] = []
    lock = threading.Lock()

    def offer(agent: str) -> Tool:
        model, tools = _model_for(models, agent), registry[agent]["tools"]

        def ask(task: str) -> str:
            final, messages = _run_alone(task, model, agent, tools, registry, max_turns, schemas_of(tools))
            with lock:
                runs.append((agent, task, final_text(final), messages))
            return final_text(final)
        return ask

    offered = {agent_tool_name(agent): agent for agent in agent_tools}
    tools = {**registry[caller]["tools"], **{name: offer(agent) for name, agent in offered.items()}}
    schemas = schemas_of(registry[caller]["tools"]) + [agent_tool_schema(agent, registry) for agent in agent_tools]
    final, messages = _run_alone(question, _model_for(models, caller), caller, tools, registry, max_turns,
                                 schemas, note="Other agents are offered to you as ask_<agent> tools. ")
    calls = []
    for block in _tool_use_blocks(messages):  # pair each run with the tool_use that asked for it
        if block["name"] in offered:
            run = next((r for r in runs if r[:2] == (offered[block["name"]], block["input"].get("task"))), None)
            if run is not None:  # None: the call failed, and the caller saw the error as a tool result
                runs.remove(run)
                calls.append(AgentCall(block["id"], *run))
    return PatternRun(pattern, question, caller, final_text(final), messages, tuple(calls))
