"""The course's descriptions of the patterns, and seed 002's checklists, in Spanish. Lesson 01.

Escalation is seed 001's: a handoff upward. The owner hands the task, with its urgency and the
decision it asks for, to someone with more authority or capability (a senior agent, a human on call);
while that one decides, it owns the task, and the task comes back only through another transfer (the
ticket's t5). Asking someone and keeping the task is a consultation: agent-as-tool.
"""

from ..patterns import Pattern

PATTERNS = {p.name: p for p in (
    Pattern("router", "Router", "antes de ejecutar", "un clasificador", "lo necesario para empezar",
            "el especialista elegido", "el especialista elegido", False, "ruteo erróneo inicial"),
    Pattern("handoff", "Handoff", "durante la ejecución", "el agente en curso", "destilado del trabajo hecho",
            "el receptor", "el receptor", False, "pérdida de contexto"),
    Pattern("escalation", "Escalamiento", "durante, al topar un límite", "el agente o un coordinador",
            "destilado + decisión pedida", "el nivel superior (un agente senior o un humano), mientras decide",
            "quien tenga la tarea al final: vuelve abajo solo con otra transferencia", False, "escalar tarde"),
    Pattern("subagent", "Subagente", "durante, como llamada", "el padre (que espera)",
            "especificación de la subtarea", "el padre", "el padre", True, "el padre se bloquea"),
    Pattern("agent_as_tool", "Agente como tool", "durante, como llamada a una tool",
            "el orquestador", "los argumentos de la llamada", "el orquestador", "el orquestador", True,
            "el orquestador filtra (y puede diluir) al especialista"),
)}

# Seed 002: add a handoff boundary only when one of these really changes (two prompts are not enough).
BOUNDARY_CHANGES = {
    "responsibility": "otro agente pasa a responder por la etapa siguiente",
    "data": "la etapa necesita datos que el agente actual no tiene, o no debe ver",
    "permissions": "la etapa necesita otras tools u otros permisos",
    "acceptance": "la etapa se da por terminada con otros criterios de aceptación",
}

# Seed 002: answer these before transferring control.
HANDOFF_QUESTIONS = (
    "¿Qué tiene que entregar el agente siguiente?",
    "¿Qué parte del estado está confirmada, y con qué evidencia?",
    "¿Qué tools y qué efectos quedan fuera de su autoridad?",
    "¿Qué pasa si no puede seguir?",
)
