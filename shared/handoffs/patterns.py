"""Router, handoff, escalation, subagent, agent-as-tool: who owns the task and who answers. Taught in lesson 01.

``PATTERNS`` describes each way of splitting work between agents (seed 001's comparison
table, plus agent-as-tool); ``comparison_table()`` shows them side by side in a notebook.
Two small runners let a lesson compare them on the same request with scripted models:

* ``run_routed`` - a router picks the specialist *before* any work; that specialist answers.
* ``run_with_agent_tools`` - the caller calls other agents like tools, gets their answers
  back and answers the user itself (agent-as-tool; a subagent call looks the same).

Both run each agent with ``run_agent_robust`` and no one to hand off to, so a live model is
offered the tools' schemas (and ``ask_<agent>`` for the agents it may call).

The handoff itself is ``handoffs.run_handoff_chain``: there the control never comes back.
"""

import threading
from dataclasses import dataclass, field

from .chain import USER
from .diagram import as_markdown, mermaid_sequence, tool_call_events
from .messages import final_text, tool_uses
from .robust import run_agent_robust
from .specialists import SPECIALISTS, schemas_for


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


PATTERNS = {p.name: p for p in (
    Pattern("router", "Router", "antes de ejecutar", "un clasificador", "lo necesario para empezar",
            "el especialista elegido", "el especialista elegido", False, "ruteo erróneo inicial"),
    Pattern("handoff", "Handoff", "durante la ejecución", "el agente en curso", "destilado del trabajo hecho",
            "el receptor", "el receptor", False, "pérdida de contexto"),
    Pattern("escalation", "Escalada", "durante, al topar un límite", "el agente o un coordinador",
            "destilado + decisión pedida", "el nivel superior, hasta que decide",
            "el agente que escaló, con la decisión", True, "escalar tarde"),
    Pattern("subagent", "Subagente", "durante, como llamada", "el padre (que espera)",
            "especificación de la subtarea", "el padre", "el padre", True, "el padre se bloquea"),
    Pattern("agent_as_tool", "Agente como herramienta", "durante, como llamada a una herramienta",
            "el orquestador", "los argumentos de la llamada", "el orquestador", "el orquestador", True,
            "el orquestador filtra (y puede diluir) al especialista"),
)}

COLUMNS = (
    ("title", "Patrón"), ("decided_when", "Cuándo se decide"), ("decided_by", "Quién decide"),
    ("context", "Contexto que viaja"), ("owner_after", "Dueño de la tarea después"),
    ("answers_user", "Responde al usuario"), ("control_returns", "¿Vuelve el control?"),
    ("risk", "Riesgo típico"),
)

# Seed 002: add a handoff boundary only when one of these really changes (two prompts are not enough).
BOUNDARY_CHANGES = {
    "responsibility": "otro agente pasa a responder por la etapa siguiente",
    "data": "la etapa necesita datos que el agente actual no tiene, o no debe ver",
    "permissions": "la etapa necesita otras herramientas u otros permisos",
    "acceptance": "la etapa se da por terminada con otros criterios de aceptación",
}

# Seed 002: answer these before transferring control.
HANDOFF_QUESTIONS = (
    "¿Qué tiene que entregar el agente siguiente?",
    "¿Qué parte del estado está confirmada, y con qué evidencia?",
    "¿Qué herramientas y qué efectos quedan fuera de su autoridad?",
    "¿Qué pasa si no puede seguir?",
)


def _cell(value):
    return "sí" if value is True else "no" if value is False else str(value)


@dataclass(frozen=True)
class ComparisonTable:
    """Patterns side by side; renders as a markdown table in a notebook."""

    patterns: tuple

    def markdown(self):
        """The table as markdown text, one row per pattern."""
        lines = ["| " + " | ".join(header for _, header in COLUMNS) + " |",
                 "|" + "---|" * len(COLUMNS)]
        lines += ["| " + " | ".join(_cell(getattr(p, key)) for key, _ in COLUMNS) + " |" for p in self.patterns]
        return "\n".join(lines)

    def _repr_markdown_(self):
        return self.markdown()

    def __str__(self):
        return self.markdown()

    def __repr__(self):
        return f"ComparisonTable({', '.join(p.name for p in self.patterns)})"


def comparison_table(names=None):
    """The comparison table of the patterns named (all of PATTERNS by default), in that order."""
    names = list(PATTERNS) if names is None else list(names)
    unknown = [name for name in names if name not in PATTERNS]
    if unknown:
        raise KeyError(f"unknown pattern(s) {unknown}; patterns are {list(PATTERNS)}")
    return ComparisonTable(tuple(PATTERNS[name] for name in names))


@dataclass(frozen=True)
class AgentCall:
    """One call from the caller to another agent used as a tool: the task, that agent's run and its answer."""

    tool_use_id: str
    agent: str
    task: str
    answer: str
    messages: list = field(repr=False)


@dataclass
class PatternRun:
    """What a run did under one pattern: the owner's history, the calls it made, and who answered the user."""

    pattern: str
    question: str
    owner: str
    answer: str
    messages: list
    calls: tuple = ()
    router: str = ""

    def diagram(self):
        """The run as a Mermaid sequence diagram, drawn from its messages."""
        participants = [USER] + ([self.router] if self.router else []) + [self.owner]
        participants += [c.agent for c in self.calls if c.agent not in participants]
        if self.router:
            events = [("call", USER, self.router, self.question),
                      ("call", self.router, self.owner, f"route: {self.owner}"),
                      ("note", self.router, self.owner, f"ownership passes to {self.owner}")]
        else:
            events = [("call", USER, self.owner, self.question)]
        calls = {c.tool_use_id: c for c in self.calls}
        for block in _tool_use_blocks(self.messages):
            call = calls.get(block["id"])
            if call is None:
                events += tool_call_events(self.owner, [{"role": "assistant", "content": [block]}])
                continue
            events += [("call", self.owner, call.agent, call.task),
                       ("note", self.owner, call.agent, f"{self.owner} keeps ownership and waits"),
                       *tool_call_events(call.agent, call.messages),
                       ("reply", call.agent, self.owner, call.answer)]
        events.append(("reply", self.owner, USER, self.answer))
        return mermaid_sequence(participants, events)

    def _repr_markdown_(self):
        return as_markdown(self.diagram())

    def __repr__(self):
        called = f", called={[c.agent for c in self.calls]}" if self.calls else ""
        return f"PatternRun({self.pattern}: owner={self.owner!r}{called}, answer={self.answer!r})"


def _tool_use_blocks(messages):
    return [block for message in messages if message["role"] == "assistant" for block in tool_uses(message["content"])]


def _model_for(models, name):
    if name not in models:
        raise KeyError(f"no model for {name!r}; models were given for {sorted(models)}")
    return models[name]


def _run_alone(question, model, name, tools, registry, max_iterations, extra_schemas=(), note=""):
    """Run ``name`` to its final answer with no one to hand off to; a live model is offered the tools' schemas."""
    system = (f"You are {name}, a Reservo specialist. Your expertise: {registry[name]['expertise']}. "
              f"{note}Answer the user yourself.")
    final, messages, _ = run_agent_robust(question, model, tools, name, receivers=(), max_iterations=max_iterations,
                                          tool_schemas=schemas_for(tools) + list(extra_schemas), system=system)
    return final, messages


def run_routed(question, route, models, registry=SPECIALISTS, max_iterations=10):
    """Router: ``route(question)`` names the specialist before any work; it runs alone and answers."""
    name = route(question)
    if name not in registry:
        raise ValueError(f"the router chose {name!r}, which is not a specialist; specialists are {sorted(registry)}")
    final, messages = _run_alone(question, _model_for(models, name), name, registry[name]["tools"], registry,
                                 max_iterations)
    return PatternRun("router", question, name, final_text(final), messages, router="router")


def agent_tool_name(agent):
    """The tool name under which ``agent`` is offered to a caller: ``ask_<agent>``."""
    return f"ask_{agent}"


def agent_tool_schema(agent, registry=SPECIALISTS):
    """The schema of ``ask_<agent>(task)``, for a live caller: the answer comes back and the caller goes on."""
    return {"name": agent_tool_name(agent),
            "description": (f"Ask {agent} ({registry[agent]['expertise']}) to do a task and return its answer "
                            "to you. You keep the conversation and answer the user yourself."),
            "input_schema": {"type": "object", "properties": {"task": {"type": "string"}}, "required": ["task"]}}


def run_with_agent_tools(question, caller, models, agent_tools, registry=SPECIALISTS, max_iterations=10,
                         pattern="agent_as_tool"):
    """Agent-as-tool: ``caller`` may call each agent in ``agent_tools`` as ``ask_<agent>(task)``.

    Each call runs that agent to its final answer and returns the answer as the tool result,
    so the control comes back and the caller answers the user. A subagent is called the same
    way (``pattern="subagent"``): what differs is what the call carries - a piece of the
    parent's own task - not how the control moves.
    """
    if pattern not in ("agent_as_tool", "subagent"):
        raise ValueError(f"run_with_agent_tools runs 'agent_as_tool' or 'subagent', not {pattern!r}")
    runs, lock = [], threading.Lock()

    def offer(agent):
        model, tools = _model_for(models, agent), registry[agent]["tools"]

        def ask(task):
            final, messages = _run_alone(task, model, agent, tools, registry, max_iterations)
            with lock:
                runs.append((agent, task, final_text(final), messages))
            return final_text(final)
        return ask

    offered = {agent_tool_name(agent): agent for agent in agent_tools}
    tools = {**registry[caller]["tools"], **{name: offer(agent) for name, agent in offered.items()}}
    final, messages = _run_alone(question, _model_for(models, caller), caller, tools, registry, max_iterations,
                                 [agent_tool_schema(agent, registry) for agent in agent_tools],
                                 note="Other agents are offered to you as ask_<agent> tools. ")
    calls = []
    for block in _tool_use_blocks(messages):  # pair each run with the tool_use that asked for it
        if block["name"] in offered:
            run = next((r for r in runs if r[:2] == (offered[block["name"]], block["input"].get("task"))), None)
            if run is not None:  # None: the call failed, and the caller saw the error as a tool result
                runs.remove(run)
                calls.append(AgentCall(block["id"], *run))
    return PatternRun(pattern, question, caller, final_text(final), messages, tuple(calls))
