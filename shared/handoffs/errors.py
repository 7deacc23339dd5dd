"""One root exception for the library, and its two branches.

``HandoffsError`` is the root: ``except HandoffsError`` catches everything this library
raises on purpose. Below it, the question a reader asks first - whose fault was it?

* ``ModelBehaviorError``: the model misbehaved (a malformed turn, a script that ran out,
  a run that never finished). Retrying with another model, or a better prompt, may help.
* ``UsageError``: the caller misused the API (a bad argument, an invalid package or
  contract handed in, a missing receiver). The calling code must change.

Expected outcomes are values, not exceptions: a rejected handoff is a ``HandoffResult``,
a failing tool is an ``is_error`` tool_result the model reads.
"""


class HandoffsError(Exception):
    """The root of every exception this library raises on purpose."""


class ModelBehaviorError(HandoffsError):
    """The model did something the run cannot go on with."""


class UsageError(HandoffsError):
    """The library was called with arguments it cannot use."""
