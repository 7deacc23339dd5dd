"""Mermaid sequence diagrams drawn from what a run actually did. Taught in lesson 04.

An event is a tuple ``(kind, source, target, text)`` with kind ``"call"`` (solid arrow),
``"reply"`` (dashed arrow) or ``"note"`` (a note over source and target). Long texts are
wrapped, never cut, and every diagram carries a numbered text version of itself, shown
folded under the picture, for places that cannot draw Mermaid.
"""

import re
import textwrap
from collections.abc import Iterable, Sequence
from typing import Literal, TypeAlias

from .messages import Message
from .policies import HANDOFF_TOOL_NAME

Event: TypeAlias = tuple[Literal["call", "reply", "note"], str, str, str]


WRAP = 48


class MermaidSequence(str):
    """The Mermaid text of a sequence diagram, with ``fallback``: the same sequence as numbered lines."""

    fallback: str = ""


def _clean(text: object) -> str:
    return " ".join(str(text).split())


def _label(text: object) -> str:
    """A Mermaid label: wrapped, with ``;`` (which ends a statement) and ``#`` written as entity codes, kept."""
    lines = textwrap.wrap(_clean(text), WRAP, break_long_words=False)
    return "<br/>".join(re.sub(r"[;#]", lambda m: f"#{ord(m.group())};", line) for line in lines) or " "


def _fallback_line(number: int, kind: str, source: str, target: str, text: str) -> str:
    if kind == "note":
        return f"{number}. (nota sobre {source} y {target}) {_clean(text)}"
    arrow = "responde a" if kind == "reply" else "->"
    return f"{number}. {source} {arrow} {target}: {_clean(text)}"


def _alias(name: str) -> str:
    return re.sub(r"\W", "_", name)


def mermaid_sequence(participants: Iterable[str], events: Iterable[Event]) -> MermaidSequence:
    """A Mermaid sequenceDiagram from participant names and (kind, source, target, text) events.

    Taught in lesson 05.

    Args:
        participants: the names, in the order they are drawn left to right.
        events: ``(kind, source, target, text)`` tuples, kind "call", "reply" or "note", in order.

    Returns:
        The diagram text, with its numbered text version in ``fallback``.
    """
    events = list(events)
    lines = ["sequenceDiagram"]
    lines += [f"    participant {_alias(name)} as {_label(name)}" for name in participants]
    for kind, source, target, text in events:
        if kind == "note":
            lines.append(f"    Note over {_alias(source)},{_alias(target)}: {_label(text)}")
        else:
            arrow = "-->>" if kind == "reply" else "->>"
            lines.append(f"    {_alias(source)}{arrow}{_alias(target)}: {_label(text)}")
    diagram = MermaidSequence("\n".join(lines))
    diagram.fallback = "\n".join(_fallback_line(n, *event) for n, event in enumerate(events, start=1))
    return diagram


def tool_call_events(agent: str, messages: Sequence[Message]) -> list[Event]:
    """One self-call event per domain tool call an agent made in its run. Taught in lesson 05.

    Args:
        agent: the agent whose run this is; each event goes from it to itself.
        messages: the agent's conversation; handoff tool calls are left out.

    Returns:
        One "call" event per tool call, labelled ``name(arg=value, ...)``, in order.
    """
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
    """A Mermaid diagram in a fenced block, which JupyterLab renders as a picture, and its text version folded.

    Args:
        diagram: the Mermaid text; a ``MermaidSequence`` brings its text version along.

    Returns:
        The Markdown: the fenced block, then the text version in a ``<details>`` block when there is one.
    """
    block = f"```mermaid\n{diagram}\n```"
    if not isinstance(diagram, MermaidSequence) or not diagram.fallback:
        return block
    return f"{block}\n\n<details><summary>El diagrama en texto</summary>\n\n{diagram.fallback}\n\n</details>"
