"""Models are passed in: a scripted model by default, a live one when you want it. Taught in lesson 03.

Two kinds of model fit every runner in the course:

* a *script* - a ``ScriptedModel`` or the seed's plain list of turns - is read by
  step: turn ``step`` is ``script[step]``. Running the same script twice gives the
  same run, which is what makes every notebook deterministic without an API key.
* a *live* model is anything that follows the ``Model`` protocol: called with the
  conversation, the tool schemas and a system prompt, it returns a turn in the
  Messages shape (see ``handoffs.providers``).
"""

import copy
from collections.abc import Sequence
from typing import Any, Protocol, TypeAlias, runtime_checkable

from .errors import ModelBehaviorError, UsageError
from .messages import Message, Turn, check_turn
from .tools import ToolSchema


@runtime_checkable
class Model(Protocol):
    """A live model: ``model(messages, tools=..., system=...) -> Turn``."""

    def __call__(self, messages: list[Message], *, tools: list[ToolSchema], system: str | None) -> Turn:
        """The model's next turn for this conversation.

        Args:
            messages: the conversation so far (a copy the model may keep).
            tools: the schemas of the tools the model may call.
            system: the system prompt, if any.

        Returns:
            The next turn in the Messages shape.
        """
        ...


class ScriptExhausted(ModelBehaviorError):
    """The runner asked a script for a step it does not have."""


class ScriptedModel:
    """A deterministic model that replays a list of turns, one per step. Taught in lesson 01.

    ``model[step]`` is a copy of turn ``step``; a step past the end raises ``ScriptExhausted``.
    Building one from a turn that does not have the Messages shape raises ``InvalidTurn``.

    Args:
        turns: the turns to replay, in order; each is checked and copied.
        name: how the script is named in its repr and in error messages.
    """

    def __init__(self, turns: Sequence[Any], name: str = "scripted") -> None:
        self.name = name
        self.turns = [check_turn(copy.deepcopy(t), f"{name} paso {i}") for i, t in enumerate(turns)]

    def __len__(self) -> int:
        return len(self.turns)

    def __getitem__(self, step: int) -> Turn:
        if not 0 <= step < len(self.turns):
            raise ScriptExhausted(
                f"el ScriptedModel {self.name!r} no tiene turno para el paso {step}: "
                f"su guion tiene {len(self.turns)} turno(s)")
        return copy.deepcopy(self.turns[step])

    def __repr__(self) -> str:
        steps = ", ".join(_describe(t) for t in self.turns)
        return f"ScriptedModel({self.name!r}, [{steps}])"


AnyModel: TypeAlias = ScriptedModel | Sequence[Turn] | Model
"""What every runner accepts as its model: a script (indexed by step) or a live model (called)."""


def _describe(turn: Turn) -> str:
    names = [block["name"] for block in turn["content"] if block["type"] == "tool_use"]
    return "+".join(names) if names else "text"


def next_turn(model: AnyModel, step: int, messages: list[Message], tools: Sequence[ToolSchema] = (),
              system: str | None = None) -> Turn:
    """Ask ``model`` for the turn at ``step``: index a script, call a live model.

    Args:
        model: a ``ScriptedModel``, a list of turns, or a callable live model.
        step: the turn's number in this run, from 0; a script is indexed by it.
        messages: the conversation so far; a live model receives a copy.
        tools: the tool schemas a live model is offered.
        system: the system prompt a live model is given.

    Returns:
        A checked copy of the turn.

    Raises:
        ScriptExhausted: a script has no turn for ``step``.
        UsageError: ``model`` is neither a script nor callable.
        InvalidTurn: the turn does not have the Messages shape.
    """  # noqa: DOC503
    if isinstance(model, ScriptedModel):
        turn = model[step]
    elif isinstance(model, Sequence):
        if not 0 <= step < len(model):
            raise ScriptExhausted(f"el guion del modelo no tiene turno para el paso {step}: "
                                  f"tiene {len(model)} turno(s)")
        turn = model[step]
    elif callable(model):
        turn = model(copy.deepcopy(messages), tools=list(tools), system=system)
    else:
        raise UsageError(f"un modelo es un ScriptedModel, una lista de turnos o un invocable "
                        f"model(messages, tools=..., system=...), no {type(model).__name__}")
    return check_turn(copy.deepcopy(turn), f"turno del modelo en el paso {step}")
