"""Mermaid sequence diagrams drawn from what a run actually did. Taught in lesson 04.

An event is a tuple ``(kind, source, target, text)`` with kind ``"call"`` (solid arrow),
``"reply"`` (dashed arrow) or ``"note"`` (a note over source and target).
"""

import re
from collections.abc import Iterable, Sequence
from typing import Literal, TypeAlias

from .messages import Message
from .package import HANDOFF_TOOL_NAME

Event: TypeAlias = tuple[Literal["call", "reply", "note"], str, str, str]


def _label(text: object, width: int = 70) -> str:
    text = re.sub(r"[;#\n\r]+", " ", str(text)).strip()
    return text if len(text) <= width else text[: width - 1] + "…"


def _alias(name: str) -> str:
    return re.sub(r"\W", "_", name)


def mermaid_sequence(participants: Iterable[str], events: Iterable[Event]) -> str:
    """A Mermaid sequenceDiagram from participant names and (kind, source, target, text) events."""
    lines = ["sequenceDiagram"]
    lines += [f"    participant {_alias(name)} as {_label(name)}" for name in participants]
    for kind, source, target, text in events:
        if kind == "note":
            lines.append(f"    Note over {_alias(source)},{_alias(target)}: {_label(text)}")
        else:
            arrow = "-->>" if kind == "reply" else "->>"
            lines.append(f"    {_alias(source)}{arrow}{_alias(target)}: {_label(text)}")
    return "\n".join(lines)


def tool_call_events(agent: str, messages: Sequence[Message]) -> list[Event]:
    """One self-call event per domain tool call an agent made in its run."""
    events: list[Event] = []
    for message in messages:
        if message["role"] != "assistant" or isinstance(message["content"], str):
            continue
        for block in message["content"]:
            if block["type"] == "tool_use" and block["name"] != HANDOFF_TOOL_NAME:
                args = ", ".join(f"{k}={v!r}" for k, v in block["input"].items())
                events.append(("call", agent, agent, f"{block['name']}({args})"))
    return events


def as_markdown(diagram: str) -> str:
    """A Mermaid diagram in a fenced block, which JupyterLab renders as a picture."""
    return f"```mermaid\n{diagram}\n```"
