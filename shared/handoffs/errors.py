"""One root exception for the library, and its two branches.

``HandoffsError`` is the root; ``ModelBehaviorError`` says the model misbehaved and ``UsageError``
that the caller misused the API. Expected outcomes (a rejected handoff, a failing tool) are values,
not exceptions. ``pydantic_message`` renders pydantic's errors in Spanish. See docs/library-reference.md.
"""

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError


class HandoffsError(Exception):
    """The root of every exception this library raises on purpose."""


class ModelBehaviorError(HandoffsError):
    """The model did something the run cannot go on with."""


class UsageError(HandoffsError):
    """The library was called with arguments it cannot use."""


PYDANTIC_MESSAGES: dict[str, str] = {
    "missing": "falta este campo obligatorio",
    "extra_forbidden": "campo desconocido: no está permitido aquí",
    "string_type": "debe ser un texto",
    "int_type": "debe ser un número entero",
    "int_parsing": "debe ser un número entero; este texto no se puede leer como uno",
    "int_from_float": "debe ser un número entero, sin parte decimal",
    "float_type": "debe ser un número",
    "float_parsing": "debe ser un número; este texto no se puede leer como uno",
    "bool_type": "debe ser un booleano (true o false)",
    "bool_parsing": "debe ser un booleano (true o false); este valor no se puede leer como uno",
    "list_type": "debe ser una lista",
    "dict_type": "debe ser un objeto (un diccionario)",
    "model_type": "debe ser un objeto (un diccionario o un {class_name})",
    "literal_error": "debe ser uno de estos valores: {expected}",
    "enum": "debe ser uno de estos valores: {expected}",
    "string_too_short": "debe tener al menos {min_length} carácter(es)",
    "string_too_long": "debe tener como máximo {max_length} caracteres",
    "string_pattern_mismatch": "debe cumplir el patrón {pattern!r}",
    "too_short": "debe tener al menos {min_length} elemento(s), no {actual_length}",
    "too_long": "debe tener como máximo {max_length} elemento(s), no {actual_length}",
    "greater_than_equal": "debe ser mayor o igual que {ge}",
    "less_than_equal": "debe ser menor o igual que {le}",
    "value_error": "{error}",
    "datetime_parsing": "debe ser una fecha y hora válida ({error})",
    "datetime_from_date_parsing": "debe ser una fecha y hora válida ({error})",
    "datetime_type": "debe ser una fecha y hora",
    "timezone_aware": "debe llevar zona horaria (UTC)",
    "url_parsing": "debe ser una URL válida ({error})",
}
"""pydantic's error types as the Spanish a student reads, each filled with the error's ``ctx``.

pydantic's documented recipe for custom messages: map the error ``type`` to a template and
format it with ``ctx``. A type not listed keeps pydantic's English ``msg``.
``value_error`` is a validator's own message, already Spanish, without pydantic's
"Value error, " prefix. A pattern of ``\\S`` (the contract's "not blank") reads as such.
"""


def pydantic_message(error: Mapping[str, Any]) -> str:
    """One pydantic error (an item of ``ValidationError.errors()``) as a Spanish sentence.

    Args:
        error: one item of ``ValidationError.errors()``, with its ``type``, ``msg`` and ``ctx``.

    Returns:
        The ``PYDANTIC_MESSAGES`` template for its type filled with its ``ctx``; pydantic's own
        English ``msg`` for a type not listed (or a ``ctx`` the template does not fit).
    """
    ctx = error.get("ctx") or {}
    if error.get("type") == "string_pattern_mismatch" and ctx.get("pattern") == r"\S":
        return "no puede estar vacío ni tener solo espacios"
    template = PYDANTIC_MESSAGES.get(str(error.get("type")))
    if template is None:
        return str(error.get("msg", ""))
    try:
        return template.format(**ctx)
    except (KeyError, IndexError, ValueError):  # a ctx without the keys the template names
        return str(error.get("msg", ""))


def pydantic_problems(error: ValidationError, root: str = "(root)") -> list[str]:
    """Every error of a ValidationError as a ``field: message`` line in Spanish (``root`` for the whole input).

    Taught in lesson 05.

    Args:
        error: the validation error.
        root: the field name for an error about the whole input.

    Returns:
        One line per error, the field's dotted path first.
    """
    return [f"{'.'.join(str(part) for part in e['loc']) or root}: {pydantic_message(e)}" for e in error.errors()]
