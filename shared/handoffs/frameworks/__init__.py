"""The course's handoff, placed in the frameworks people ship with. Taught in lesson 12.

One small module per framework, each imported on its own (this package imports none of
them, so ``import handoffs`` never loads an SDK):

    agents_sdk   HandoffRequest (the model's input_type), the gate's HandoffRejected and
                 run() for the OpenAI Agents SDK (its own agents.testing.ScriptedModel plays
                 the model)
    langgraph    scripted decisions for the nodes of a LangGraph graph
    a2a          printing A2A protocol messages and tasks as plain JSON

What each lesson asks the student to build (the pair-safe filter, the ``on_handoff`` gate
that builds and validates the contract, the cycle-aware hop guard, the A2A mapping) is
not here: these modules only run the frameworks.
"""
