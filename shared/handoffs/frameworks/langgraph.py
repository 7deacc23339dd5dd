"""LangGraph's run configuration for one conversation thread. Taught in lesson 12.

The lesson's graphs are plain LangGraph (``StateGraph``, ``Command``, ``ToolNode``, ``interrupt``); the
only helper they need from the course is ``thread``.
"""


def thread(name: str) -> dict[str, dict[str, str]]:
    """The run configuration of one conversation thread, for a graph compiled with a checkpointer.

    Args:
        name: The thread's id.

    Returns:
        ``{"configurable": {"thread_id": name}}``.
    """
    return {"configurable": {"thread_id": name}}
