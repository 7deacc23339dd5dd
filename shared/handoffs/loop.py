"""The run loop: ask the model, run its tools, stop at a final answer or at a handoff. Taught in lesson 03.

Every runner in the course is this one loop with its policies passed in:

* ``handoff`` - the handoff policy (``handoffs.policies``): which tool call is a handoff and
  what it becomes (``SpecialistHandoff`` builds a ``HandoffPackage``; ``AgentHandoff``, the
  ``Agent``'s, a ``Transfer`` to its target). ``None``: the agent cannot hand off, every tool
  call is a tool.
* ``mixed_turn`` - what happens when a handoff shares a turn with other tool calls:

  ``FIRST_BLOCK``      the seed's runner: a handoff counts only as the turn's first block;
                       the run stops there and the handoff gets no tool_result. A handoff
                       later in the turn is dispatched like any tool (the lesson's trap).
  ``STOP_AT_HANDOFF``  blocks run in order; the first valid handoff stops the run at once:
                       later blocks do not run and the handoff gets no tool_result.
  ``ANSWER_ALL``       every tool_use gets a tool_result (the transcript stays valid for
                       every provider): the domain tools run, the first valid handoff wins
                       and is acknowledged, a second one is refused.
* ``tool_errors`` - ``"raise"`` (the seed: an unknown tool raises KeyError) or ``"report"``
  (a failing tool becomes an ``is_error`` tool_result the model can recover from).
"""

import copy
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Generic, Literal, TypeVar

from .errors import ModelBehaviorError
from .messages import Message, ToolResultBlock, ToolUseBlock, Turn, final_text, tool_result_block, tool_uses
from .models import AnyModel, next_turn
from .policies import HandoffPolicy
from .tools import Tool, ToolSchema, dispatch_parallel, dispatch_safely

H = TypeVar("H")


class MixedTurn(Enum):
    """What the loop does when a handoff shares a turn with other tool calls (see the module docstring)."""

    FIRST_BLOCK = "first_block"
    STOP_AT_HANDOFF = "stop_at_handoff"
    ANSWER_ALL = "answer_all"


class MaxTurnsExceeded(ModelBehaviorError, RuntimeError):
    """The run used all its turns without a final answer or a handoff. Taught in lesson 03.

    Args:
        agent: The agent whose run ran out of turns.
        max_turns: The limit it reached.
    """

    def __init__(self, agent: str, max_turns: int) -> None:
        super().__init__(f"{agent!r} llegó a max_turns={max_turns} sin una respuesta final ni un handoff")
        self.agent, self.max_turns = agent, max_turns


@dataclass
class RunResult(Generic[H]):
    """How a run ended: the final turn, or the handoff; and the whole history. Unpacks as (final, messages, handoff)."""

    final: Turn | None
    messages: list[Message] = field(repr=False)
    handoff: H | None = None

    @property
    def text(self) -> str:
        """The final answer's text ("" after a handoff)."""
        return final_text(self.final) if self.final is not None else ""

    def __iter__(self) -> Iterator[Any]:
        return iter((self.final, self.messages, self.handoff))

    def __repr__(self) -> str:
        turns = sum(1 for m in self.messages if m["role"] == "assistant")
        if self.handoff is not None:
            return f"RunResult(handoff tras {turns} turno(s): {self.handoff!r})"
        return f"RunResult(respuesta tras {turns} turno(s): {self.text!r})"


ResultHook = Callable[[ToolUseBlock, ToolResultBlock], None]


def start_messages(question: str | Sequence[Message]) -> list[Message]:
    """A fresh history for a run, never the caller's own list.

    Args:
        question: The user's text, or a conversation so far.

    Returns:
        One user message for a text; a deep copy of a conversation.
    """
    if isinstance(question, str):
        return [{"role": "user", "content": question}]
    return copy.deepcopy(list(question))


def run_loop(question: str | Sequence[Message], model: AnyModel, tools: Mapping[str, Tool], *, name: str,
             handoff: HandoffPolicy[H] | None = None, mixed_turn: MixedTurn = MixedTurn.ANSWER_ALL,
             tool_errors: Literal["raise", "report"] = "report", max_turns: int = 10,
             tool_schemas: Sequence[ToolSchema] = (), system: str | None = None,
             on_result: ResultHook | None = None) -> RunResult[H]:
    """Run ``name`` until a final answer or a handoff; the one loop behind every runner. Taught in lesson 03.

    Args:
        question: The user's text, or a conversation so far (deep-copied, never changed).
        model: A script (``ScriptedModel`` or a list of turns) or a live model.
        tools: The agent's tool registry, by name.
        name: The agent that runs; a handoff's sender.
        handoff: How a handoff is offered and read (``handoffs.policies``); None: the agent cannot hand off.
        mixed_turn: What happens when a handoff shares a turn with other tool calls.
        tool_errors: ``"raise"`` (an unknown tool raises KeyError, as in the seed) or ``"report"``
            (a failing tool becomes an ``is_error`` tool_result).
        max_turns: The most model turns the run may take.
        tool_schemas: The tool schemas a live model is offered (the handoff tool is added last).
        system: The system prompt a live model is given.
        on_result: Called with each tool_use block and its tool_result, in block order.

    Returns:
        The RunResult: the final turn, or the accepted handoff, and the whole history.

    Raises:
        MaxTurnsExceeded: ``max_turns`` turns ended with neither a final answer nor a handoff. (With
            ``MixedTurn.FIRST_BLOCK``, a handoff the policy refuses raises ModelBehaviorError too.)
    """
    messages = start_messages(question)
    handoff_schema = handoff.schema(name) if handoff is not None else None
    offered = list(tool_schemas) + ([handoff_schema] if handoff_schema is not None else [])
    for step in range(max_turns):
        turn = next_turn(model, step, messages, tools=offered, system=system)
        messages.append({"role": "assistant", "content": turn["content"]})
        if turn["stop_reason"] != "tool_use":
            return RunResult(turn, messages)
        results, accepted = _answer(turn, tools, name, handoff, mixed_turn, tool_errors)
        if on_result is not None:
            asked = {block["id"]: block for block in tool_uses(turn)}
            for result in results:
                on_result(asked[result["tool_use_id"]], result)
        if results and (accepted is None or mixed_turn is MixedTurn.ANSWER_ALL):
            messages.append({"role": "user", "content": list(results)})
        if accepted is not None:
            return RunResult(None, messages, accepted)
    raise MaxTurnsExceeded(name, max_turns)


def _answer(turn: Turn, tools: Mapping[str, Tool], name: str, handoff: HandoffPolicy[H] | None,
            mixed_turn: MixedTurn, tool_errors: str) -> tuple[list[ToolResultBlock], H | None]:
    """The tool_results of one turn, in block order, and the accepted handoff if any."""
    blocks = tool_uses(turn)
    dispatch = dispatch_parallel if tool_errors == "raise" else dispatch_safely
    if handoff is None or all(block["name"] != handoff.name for block in blocks):
        return dispatch(blocks, tools), None
    if mixed_turn is MixedTurn.FIRST_BLOCK:
        first = turn["content"][0]
        if first["type"] != "tool_use" or first["name"] != handoff.name:
            return dispatch(blocks, tools), None  # the seed's trap: a later handoff is dispatched as a tool
        verdict = handoff.accept(name, first["input"])
        if isinstance(verdict, str):
            raise ModelBehaviorError(f"{name}: {verdict}")
        return [], verdict
    if mixed_turn is MixedTurn.STOP_AT_HANDOFF:
        return _stop_at_handoff(blocks, tools, name, handoff, dispatch)
    return _answer_all(blocks, tools, name, handoff, dispatch)


Dispatch = Callable[[Sequence[ToolUseBlock], Mapping[str, Tool]], list[ToolResultBlock]]


def _stop_at_handoff(blocks: list[ToolUseBlock], tools: Mapping[str, Tool], name: str, handoff: HandoffPolicy[H],
                     dispatch: Dispatch) -> tuple[list[ToolResultBlock], H | None]:
    """Blocks in order; the first valid handoff ends the turn, a refused one is answered with an error."""
    results: list[ToolResultBlock] = []
    for block in blocks:
        if block["name"] != handoff.name:
            results += dispatch([block], tools)
        elif isinstance(verdict := handoff.accept(name, block["input"]), str):
            results.append(tool_result_block(block["id"], verdict, is_error=True))
        else:
            return results, verdict
    return results, None


def _answer_all(blocks: list[ToolUseBlock], tools: Mapping[str, Tool], name: str, handoff: HandoffPolicy[H],
                dispatch: Dispatch) -> tuple[list[ToolResultBlock], H | None]:
    """Domain tools run once, together; every handoff block is answered; the first valid one wins."""
    domain = iter(dispatch([block for block in blocks if block["name"] != handoff.name], tools))
    results: list[ToolResultBlock] = []
    accepted: H | None = None
    for block in blocks:
        if block["name"] != handoff.name:
            results.append(next(domain))
        elif accepted is not None:
            results.append(tool_result_block(
                block["id"], f"Handoff rechazado: este turno ya hizo handoff a {handoff.target(accepted)}; "
                "solo se permite un handoff por turno.", is_error=True))
        elif isinstance(verdict := handoff.accept(name, block["input"]), str):
            results.append(tool_result_block(block["id"], verdict, is_error=True))
        else:
            accepted = verdict
            results.append(tool_result_block(block["id"], f"Handoff aceptado: {handoff.target(verdict)} es ahora "
                                                          "dueño de la tarea."))
    return results, accepted
