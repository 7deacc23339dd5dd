"""Models are passed in: a scripted model by default, a live one when you want it.

Two kinds of model fit every runner in the course:

* a *script* - a ``ScriptedModel`` or the seed's plain list of turns - is read by
  step: turn ``step`` is ``model[step]``. Running the same script twice gives the
  same run, which is what makes every notebook deterministic without an API key.
* a *live* model is any callable ``model(messages, tools=..., system=...)`` that
  returns a turn in the Messages shape (see ``handoffs.providers``).
"""

import copy

from .errors import ModelBehaviorError
from .messages import check_turn


class ScriptExhausted(ModelBehaviorError):
    """The runner asked a script for a step it does not have."""


class ScriptedModel:
    """A deterministic model that replays a list of turns, one per step."""

    def __init__(self, turns, name="scripted"):
        self.name = name
        self.turns = [check_turn(copy.deepcopy(t), f"{name} step {i}") for i, t in enumerate(turns)]

    def __len__(self):
        return len(self.turns)

    def __getitem__(self, step):
        if not 0 <= step < len(self.turns):
            raise ScriptExhausted(
                f"ScriptedModel {self.name!r} has no turn for step {step}: "
                f"its script has {len(self.turns)} turn(s)")
        return copy.deepcopy(self.turns[step])

    def __repr__(self):
        steps = ", ".join(_describe(t) for t in self.turns)
        return f"ScriptedModel({self.name!r}, [{steps}])"


def _describe(turn):
    names = [block["name"] for block in turn["content"] if block["type"] == "tool_use"]
    return "+".join(names) if names else "text"


def next_turn(model, step, messages, tools=(), system=None):
    """Ask ``model`` for the turn at ``step``: index a script, call a live model."""
    if hasattr(model, "__getitem__"):
        try:
            turn = model[step]
        except IndexError:
            raise ScriptExhausted(
                f"the model script has no turn for step {step}: it has {len(model)} turn(s)") from None
    else:
        turn = model(copy.deepcopy(messages), tools=list(tools), system=system)
    return check_turn(copy.deepcopy(turn), f"model turn at step {step}")
