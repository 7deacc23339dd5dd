"""Scripted decisions for the nodes of a LangGraph graph: no model, no key. Taught in lesson 12.

A node of the lesson's graphs asks its ``NodeScript`` for its next step each time it runs,
so the same graph gives the same run every time. A step is any value (a receiver's name, a
final text, a tuple); a callable step is called with the graph's state and its result used.
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import UsageError

Step = Any | Callable[[Mapping[str, Any]], Any]


class NodeScript:
    """The steps one node takes, in order; ``seen`` keeps the state the node saw each time. Taught in lesson 12.

    Args:
        name: The node's name, for messages.
        steps: Its steps: any value, or a function of the graph's state.
    """

    def __init__(self, name: str, steps: Sequence[Step]) -> None:
        self.name = name
        self.steps = list(steps)
        self.seen: list[dict[str, Any]] = []

    def next(self, state: Mapping[str, Any]) -> Any:
        """The node's next step for this state.

        Args:
            state: The graph's state as the node sees it (a copy is kept in ``seen``).

        Returns:
            The next step, or what a callable step returns for the state.

        Raises:
            UsageError: The script has no more steps.
        """
        self.seen.append(dict(state))
        position = len(self.seen) - 1
        if position >= len(self.steps):
            raise UsageError(f"el guion del nodo {self.name} no tiene un paso {position + 1} "
                             f"(tiene {len(self.steps)})")
        step = self.steps[position]
        return step(state) if callable(step) else step

    def __repr__(self) -> str:
        return f"NodeScript({self.name}: {len(self.seen)} de {len(self.steps)} pasos)"


def thread(name: str) -> dict[str, dict[str, str]]:
    """The run configuration of one conversation thread, for a graph compiled with a checkpointer.

    Args:
        name: The thread's id.

    Returns:
        ``{"configurable": {"thread_id": name}}``.
    """
    return {"configurable": {"thread_id": name}}
