"""Assertions for test cells that compare exact types and values.

``assert_same(actual, expected)`` fails unless both have the very same type at every
level and equal values, so an object whose ``__eq__`` always returns True earns nothing. Its messages are
read by students, so they are Spanish.
"""

import math
from typing import Any


def _same(actual: Any, expected: Any, path: str) -> None:
    if type(actual) is not type(expected):
        raise AssertionError(f"{path}: se esperaba el tipo {type(expected).__name__}, "
                             f"se obtuvo {type(actual).__name__}")
    if isinstance(expected, dict):
        if set(actual) != set(expected):
            raise AssertionError(f"{path}: se esperaban las claves {sorted(map(str, expected))}, "
                                 f"se obtuvieron {sorted(map(str, actual))}")
        for key in expected:
            _same(actual[key], expected[key], f"{path}[{key!r}]")
    elif isinstance(expected, (list, tuple)):
        if len(actual) != len(expected):
            raise AssertionError(f"{path}: se esperaban {len(expected)} elementos, se obtuvieron {len(actual)}")
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            _same(a, e, f"{path}[{i}]")
    elif isinstance(expected, float) and math.isnan(expected):
        if not math.isnan(actual):
            raise AssertionError(f"{path}: se esperaba nan, se obtuvo {actual!r}")
    elif not (expected == actual and actual == expected):
        raise AssertionError(f"{path}: se esperaba {expected!r}, se obtuvo {actual!r}")


def assert_same(actual: Any, expected: Any, what: str = "valor") -> None:
    """Fail unless ``actual`` has exactly the type and value of ``expected``, recursively."""
    _same(actual, expected, what)
