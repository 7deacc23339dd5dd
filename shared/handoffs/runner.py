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
    """Run a tool-using agent to its final turn; returns (final, messages). An unknown tool raises KeyError."""
    result: RunResult[None] = run_loop(question, model, tools, name="agent", tool_errors="raise",
                                       max_turns=max_turns)
    return result.final, result.messages


def run_agent_with_handoff(question: str | Sequence[Message], model: AnyModel, tools: Mapping[str, Tool],
                           name: str, max_turns: int = 10) -> RunResult[HandoffPackage]:
    """Like run_agent_parallel, but stops at a handoff in a turn's FIRST block; unpacks as (final, messages, package).

    A handoff later in the turn is dispatched like any tool: the lesson's mixed-turn trap.
    """
    return run_loop(question, model, tools, name=name, handoff=SpecialistHandoff(),
                    mixed_turn=MixedTurn.FIRST_BLOCK, tool_errors="raise", max_turns=max_turns)


def run_agent_robust(question: str | Sequence[Message], model: AnyModel, tools: Mapping[str, Tool], name: str,
                     receivers: Sequence[str], max_turns: int = 10,
                     tool_schemas: Sequence[ToolSchema] | None = None, system: str | None = None,
                     ) -> RunResult[HandoffPackage]:
    """Run an agent that may hand off anywhere in a turn to one of ``receivers``; unpacks as (final, messages, package).

    A live model is offered ``tool_schemas`` (by default derived from ``tools``) plus the
    handoff tool listing the other receivers; a script ignores them.
    """
    schemas = schemas_of(tools) if tool_schemas is None else tool_schemas
    return run_loop(question, model, tools, name=name, handoff=SpecialistHandoff(tuple(receivers)),
                    mixed_turn=MixedTurn.ANSWER_ALL, max_turns=max_turns, tool_schemas=schemas, system=system)
