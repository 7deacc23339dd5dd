"""Messages and content blocks in the Anthropic Messages shape. Taught in lesson 03.

A model turn is ``{"stop_reason": "tool_use" | "end_turn", "content": [blocks]}``.
Blocks are ``{"type": "text", "text"}`` and ``{"type": "tool_use", "id", "name", "input"}``;
tool results go back as a user message of ``{"type": "tool_result", "tool_use_id", "content"}``.
"""

from collections.abc import Iterable, Sequence
from typing import Any, Literal, NotRequired, TypedDict

from .errors import ModelBehaviorError

STOP_REASONS = ("tool_use", "end_turn")


class TextBlock(TypedDict):
    """``{"type": "text", "text": ...}``: what the model says."""

    type: Literal["text"]
    text: str


class ToolUseBlock(TypedDict):
    """``{"type": "tool_use", "id", "name", "input"}``: the model asks for a tool call."""

    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, Any]


class ToolResultBlock(TypedDict):
    """``{"type": "tool_result", "tool_use_id", "content"}``: the answer to one tool_use."""

    type: Literal["tool_result"]
    tool_use_id: str
    content: str
    is_error: NotRequired[bool]


Block = TextBlock | ToolUseBlock | ToolResultBlock


class Turn(TypedDict):
    """One model turn: why it stopped, and its blocks."""

    stop_reason: Literal["tool_use", "end_turn"]
    content: list[Block]


class Message(TypedDict):
    """One message of a conversation: a user's question (a string) or a list of blocks."""

    role: Literal["user", "assistant"]
    content: str | list[Block]


class InvalidTurn(ModelBehaviorError, ValueError):
    """A model turn does not have the Messages shape."""


def text_block(text: str) -> TextBlock:
    """A text block.

    Args:
        text: what the model says.

    Returns:
        ``{"type": "text", "text": text}``.
    """
    return {"type": "text", "text": text}


def tool_use_block(id: str, name: str, input: dict[str, Any]) -> ToolUseBlock:
    """A tool_use block: the model asks to call ``name`` with ``input``.

    Args:
        id: the call's id; its tool_result answers it by this id.
        name: the tool to call.
        input: the tool's arguments, by name.

    Returns:
        The block (``input`` is not copied).
    """
    return {"type": "tool_use", "id": id, "name": name, "input": input}


def tool_result_block(tool_use_id: str, content: object, is_error: bool = False) -> ToolResultBlock:
    """A tool_result block answering the tool_use with id ``tool_use_id``.

    Args:
        tool_use_id: the id of the tool_use it answers.
        content: the tool's result; it is stored as ``str(content)``.
        is_error: mark the result as an error the model reads (the key is left out when False).

    Returns:
        The block.
    """
    block: ToolResultBlock = {"type": "tool_result", "tool_use_id": tool_use_id, "content": str(content)}
    if is_error:
        block["is_error"] = True
    return block


def turn(*blocks: Block) -> Turn:
    """A model turn from its blocks; stop_reason is tool_use when any block is a tool_use.

    Args:
        *blocks: the turn's blocks, in order.

    Returns:
        The turn, with ``stop_reason`` "tool_use" or "end_turn".
    """
    uses_tools = any(block["type"] == "tool_use" for block in blocks)
    return {"stop_reason": "tool_use" if uses_tools else "end_turn", "content": list(blocks)}


def tool_uses(content: Turn | Message | str | Sequence[Block]) -> list[ToolUseBlock]:
    """The tool_use blocks of a turn, a message or a content list, in order.

    Args:
        content: a turn or a message (its ``content`` is read), a list of blocks, or a string.

    Returns:
        The tool_use blocks themselves (not copies); an empty list for a string.
    """
    blocks = content["content"] if isinstance(content, dict) else content
    if isinstance(blocks, str):
        return []
    return [block for block in blocks if block.get("type") == "tool_use"]  # type: ignore[misc]


def final_text(turn: Turn) -> str:
    """The text a model turn says, its text blocks joined.

    Args:
        turn: a model turn.

    Returns:
        Its text blocks' texts joined with nothing between them; "" when it has none.
    """
    return "".join(block["text"] for block in turn["content"] if block["type"] == "text")


def check_turn(turn: Any, where: str = "turno") -> Turn:
    """Raise InvalidTurn naming the first problem in a model turn; return it when fine.

    Args:
        turn: what a model returned.
        where: how the error message names the turn (Spanish, for the student).

    Returns:
        The same turn, now known to have the Messages shape.

    Raises:
        InvalidTurn: it is not a dict, its stop_reason is not "tool_use" or "end_turn", its content is
            not a non-empty list, a block is malformed or of an unknown type, or it says tool_use without one.
    """
    if not isinstance(turn, dict):
        raise InvalidTurn(f"{where} debe ser un dict con stop_reason y content, no {type(turn).__name__}")
    if turn.get("stop_reason") not in STOP_REASONS:
        raise InvalidTurn(f"{where}: stop_reason debe ser uno de {STOP_REASONS}, no {turn.get('stop_reason')!r}")
    content = turn.get("content")
    if not isinstance(content, list) or not content:
        raise InvalidTurn(f"{where}: content debe ser una lista de bloques no vacía")
    for i, block in enumerate(content):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            if not isinstance(block.get("text"), str):
                raise InvalidTurn(f"{where}: el bloque {i} es un bloque de texto sin un texto en 'text'")
        elif kind == "tool_use":
            missing = [key for key in ("id", "name", "input") if key not in block]
            if missing:
                raise InvalidTurn(f"{where}: al bloque tool_use {i} le falta {missing}")
            if not isinstance(block["input"], dict):
                raise InvalidTurn(f"{where}: el input del bloque tool_use {i} debe ser un dict")
        else:
            raise InvalidTurn(f"{where}: el bloque {i} tiene un tipo desconocido {kind!r}")
    if turn["stop_reason"] == "tool_use" and not tool_uses(content):
        raise InvalidTurn(f"{where}: stop_reason es tool_use, pero ningún bloque es un tool_use")
    checked: Turn = turn  # type: ignore[assignment]  # every key and block was checked above
    return checked


def unanswered_tool_uses(messages: Sequence[Message] | Sequence[dict[str, Any]]) -> list[str]:
    """Ids of tool_use blocks that the next message does not answer with a tool_result. Taught in lesson 01.

    Args:
        messages: a conversation; only assistant messages ask for tools.

    Returns:
        The unanswered ids, in conversation order; an empty list when every call has its result.
    """
    missing: list[str] = []
    for i, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        wanted = [block["id"] for block in tool_uses(message["content"])]
        if not wanted:
            continue
        answer = messages[i + 1]["content"] if i + 1 < len(messages) else []
        answered = {block.get("tool_use_id") for block in answer
                    if isinstance(block, dict) and block.get("type") == "tool_result"}
        missing.extend(tool_id for tool_id in wanted if tool_id not in answered)
    return missing


def format_history(messages: Iterable[Message]) -> str:
    """The history as numbered lines, one per question, tool_use and tool_result. Taught in lesson 04.

    Text blocks get a line too.

    Args:
        messages: the conversation.

    Returns:
        The lines joined with newlines, each starting with the message's index and role.
    """
    lines = []
    for i, message in enumerate(messages):
        role, content = message["role"], message["content"]
        if isinstance(content, str):
            lines.append(f"  [{i}] {role:<9} pregunta: {content!r}")
            continue
        for block in content:
            if block["type"] == "tool_use":
                lines.append(f"  [{i}] {role:<9} tool_use({block['name']}): {block['input']}")
            elif block["type"] == "tool_result":
                mark = " (error)" if block.get("is_error") else ""
                lines.append(f"  [{i}] {role:<9} tool_result{mark}: {block['content']}")
            elif block["type"] == "text":
                lines.append(f"  [{i}] {role:<9} text: {block['text']!r}")
    return "\n".join(lines)


def print_history(messages: Iterable[Message]) -> None:
    """Print the history as ``format_history`` lays it out.

    Args:
        messages: the conversation.
    """
    print(format_history(messages))
