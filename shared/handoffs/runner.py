"""The course's runners: thin, documented entry points to the one run loop. Taught in lesson 03.

* ``run_agent_parallel`` - the seed's tool loop, no handoff: returns ``(final, messages)``.
* ``run_agent_with_handoff`` - the seed's interrupted loop: a handoff in a turn's FIRST block
  stops the run with a package and no tool_result for it (``MixedTurn.FIRST_BLOCK``).
* ``run_agent_robust`` - the runner for real model turns: a handoff anywhere in a turn, every
  tool_use answered, failing tools and bad handoffs reported to the model (``MixedTurn.ANSWER_ALL``).

The seed's signatures and outputs are kept; ``run_agent_with_handoff`` and ``run_agent_robust``
return a ``RunResult``, which unpacks as the seed's ``(final, messages, package)``.
"""

from collections.abc import Mapping, Sequence

from .loop import MixedTurn, RunResult, run_loop
from .messages import Message, Turn
from .models import AnyModel
from .package import HandoffPackage
from .policies import SpecialistHandoff
from .tools import Tool, ToolSchema, schemas_of


def run_agent_parallel(question: str | Sequence[Message], model: AnyModel, tools: Mapping[str, Tool],
                       max_turns: int = 10) -> tuple[Turn | None, list[Message]]:
    """Run a tool-using agent to its final turn, with no handoff (the seed's runner). Taught in lesson 03.

    An unknown tool raises KeyError, as in the seed; ``max_turns`` turns with no final answer
    raise ``MaxTurnsExceeded``.

    Args:
        question: The user's text, or a conversation so far.
        model: A script or a live model.
        tools: The tool registry, by name.
        max_turns: The most model turns the run may take.

    Returns:
        ``(final, messages)``: the final turn and the whole history.
    """
    result: RunResult[None] = run_loop(question, model, tools, name="agent", tool_errors="raise",
                                       max_turns=max_turns)
    return result.final, result.messages


def run_agent_with_handoff(question: str | Sequence[Message], model: AnyModel, tools: Mapping[str, Tool],
                           name: str, max_turns: int = 10) -> RunResult[HandoffPackage]:
    """Like run_agent_parallel, but stops at a handoff in a turn's FIRST block. Taught in lesson 03.

    A handoff later in the turn is dispatched like any tool: the lesson's mixed-turn trap.

    Args:
        question: The user's text, or a conversation so far.
        model: A script or a live model.
        tools: The tool registry, by name (``handoff_to_specialist`` is not in it).
        name: The agent that runs: the package's sender.
        max_turns: The most model turns the run may take.

    Returns:
        A RunResult that unpacks as ``(final, messages, package)``.
    """
    return run_loop(question, model, tools, name=name, handoff=SpecialistHandoff(),
                    mixed_turn=MixedTurn.FIRST_BLOCK, tool_errors="raise", max_turns=max_turns)


def run_agent_robust(question: str | Sequence[Message], model: AnyModel, tools: Mapping[str, Tool], name: str,
                     receivers: Sequence[str], max_turns: int = 10,
                     tool_schemas: Sequence[ToolSchema] | None = None, system: str | None = None,
                     ) -> RunResult[HandoffPackage]:
    """Run an agent that may hand off anywhere in a turn to one of ``receivers``. Taught in lesson 03.

    Every tool_use is answered (``MixedTurn.ANSWER_ALL``); failing tools and bad handoffs go back
    to the model as errors. A live model is offered ``tool_schemas`` plus the handoff tool
    listing the other receivers; a script ignores them.

    Args:
        question: The user's text, or a conversation so far.
        model: A script or a live model.
        tools: The tool registry, by name.
        name: The agent that runs: the package's sender, left out of the receivers it is offered.
        receivers: The specialists it may hand off to.
        max_turns: The most model turns the run may take.
        tool_schemas: The schemas a live model is offered; None derives them from ``tools``.
        system: The system prompt a live model is given.

    Returns:
        A RunResult that unpacks as ``(final, messages, package)``.
    """
    schemas = schemas_of(tools) if tool_schemas is None else tool_schemas
    return run_loop(question, model, tools, name=name, handoff=SpecialistHandoff(tuple(receivers)),
                    mixed_turn=MixedTurn.ANSWER_ALL, max_turns=max_turns, tool_schemas=schemas, system=system)
