"""Tools: describe a Python function to a model, and run the tool calls of a turn. Taught in lesson 03.

A tool's schema is derived once, from the function itself: its name, the first paragraph
of its docstring, and its parameters' type hints (``Annotated[int, Field(ge=1, description=...)]``
adds constraints and per-argument descriptions). pydantic builds the JSON Schema, so
the same description serves every tool in the course, and every provider's format.
"""

import concurrent.futures
import copy
import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal, NotRequired, TypedDict, TypeVar, get_type_hints

from pydantic import BaseModel, Field, create_model

from .errors import UsageError
from .messages import ToolResultBlock, ToolUseBlock, tool_result_block

Tool = Callable[..., Any]
"""A tool is a plain function called with the tool_use block's input as keyword arguments."""


class ToolSchema(TypedDict):
    """A tool as a model sees it, in the Anthropic shape (``input_schema``)."""

    name: str
    description: NotRequired[str]
    input_schema: dict[str, Any]


def _without_titles(schema: Any) -> Any:
    """pydantic's schema without its ``title`` keys (they only repeat the names), a lone ``const`` as an enum."""
    if isinstance(schema, dict):
        cleaned = {key: _without_titles(value) for key, value in schema.items()
                   if not (key == "title" and isinstance(value, str))}
        if "const" in cleaned and "enum" not in cleaned:  # Literal["x"]: providers know enum, not const
            cleaned["enum"] = [cleaned.pop("const")]
        return cleaned
    if isinstance(schema, list):
        return [_without_titles(item) for item in schema]
    return schema


def model_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A pydantic model's JSON Schema as a tool's input schema.

    Args:
        model: The pydantic model of the tool's arguments.

    Returns:
        The JSON Schema without ``title`` keys, a lone ``const`` as an ``enum``, ``required`` always present.
    """
    schema = _without_titles(model.model_json_schema())
    schema.setdefault("required", [])
    return dict(schema)


M = TypeVar("M", bound=BaseModel)


def with_choices(model: type[M], field: str, choices: tuple[str, ...], description: str) -> type[M]:
    """``model`` with ``field`` restricted to one of ``choices``, so its schema lists them in an ``enum``.

    Args:
        model: The pydantic model to restrict.
        field: The name of the field that names a target.
        choices: The allowed values, in the order the schema lists them.
        description: The field's new description, as the model reads it.

    Returns:
        A subclass of ``model`` with the same name, the field now a required ``Literal[choices]``.
    """
    described = Annotated[Literal[choices], Field(description=description)]  # type: ignore[valid-type]
    return create_model(model.__name__, __base__=model, **{field: (described, ...)})  # type: ignore[call-overload]


def json_schema_of(fields: Mapping[str, tuple[Any, Any]], name: str) -> dict[str, Any]:
    """The JSON Schema of an object with these fields, as a tool's input schema.

    Args:
        fields: ``{name: (type, default)}``, the default ``...`` for a required field.
        name: The name of the pydantic model built from them.

    Returns:
        The schema, as ``model_schema`` gives it.
    """
    return model_schema(create_model(name, **fields))  # type: ignore[call-overload]


def function_schema(function: Tool, name: str | None = None, description: str | None = None) -> ToolSchema:
    """The schema of a tool, derived from its signature, type hints and docstring. Taught in lesson 03.

    Args:
        function: The tool: a function, a ``functools.partial`` or a callable object.
        name: The tool's name; None: the function's ``__name__``.
        description: The tool's description; None: the first paragraph of its docstring.

    Returns:
        A fresh ToolSchema (``name``, ``description`` when there is one, ``input_schema``).
    """
    return copy.deepcopy(_function_schema(function, name or function.__name__, description))


def _type_hints(function: Tool) -> dict[str, Any]:
    """The type hints of a function, a ``functools.partial`` or a callable object; {} when unreadable."""
    targets = [function, type(function).__call__]
    if isinstance(function, functools.partial):
        targets.insert(1, function.func)
    for target in targets:
        try:
            return get_type_hints(target, include_extras=True)
        except (TypeError, NameError):
            continue
    return {}


@functools.lru_cache(maxsize=256)
def _function_schema(function: Tool, name: str, description: str | None) -> ToolSchema:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError) as error:
        raise UsageError(f"tool {name!r}: no se puede leer su firma ({error})") from None
    hints = _type_hints(function)
    fields = {}
    for parameter in parameters:
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue  # *args / **kwargs: nothing a model can be told to fill in
        if parameter.kind is parameter.POSITIONAL_ONLY:
            raise UsageError(f"tool {name!r}: el parámetro {parameter.name!r} no se puede pasar por nombre")
        default = ... if parameter.default is parameter.empty else parameter.default
        fields[parameter.name] = (hints.get(parameter.name, Any), default)
    doc = description if description is not None else (inspect.getdoc(function) or "").split("\n\n")[0]
    schema: ToolSchema = {"name": name, "input_schema": json_schema_of(fields, f"{name}_input")}
    if doc:
        schema["description"] = " ".join(doc.split())
    return schema


def schemas_of(tools: Mapping[str, Tool]) -> list[ToolSchema]:
    """The schema of every tool in a registry.

    Args:
        tools: The tool registry, by name.

    Returns:
        One ToolSchema per tool, in the registry's order, under the registry's names.
    """
    return [function_schema(function, name) for name, function in tools.items()]


class UnsupportedSchema(UsageError, ValueError):
    """A tool schema a provider cannot take; the message names the tool and the place in its schema."""


def unpack_tool_schema(schema: object) -> tuple[str, str | None, dict[str, Any]]:
    """Read a tool schema in any of the three shapes (Anthropic, OpenAI, OpenAI's ``function`` wrapper).

    Args:
        schema: The tool schema.

    Returns:
        ``(name, description or None, a copy of the input's JSON Schema)``.

    Raises:
        UnsupportedSchema: Not a dict, no name, both ``input_schema`` and ``parameters``, or an input
            schema that is not an object schema.
    """
    if not isinstance(schema, dict):
        raise UnsupportedSchema(f"el esquema de una tool debe ser un dict, no {type(schema).__name__}")
    tool = schema.get("function") if schema.get("type") == "function" and "function" in schema else schema
    if not isinstance(tool, dict) or not isinstance(tool.get("name"), str) or not tool["name"]:
        raise UnsupportedSchema(f"el esquema de una tool necesita un nombre: {schema!r}")
    name = tool["name"]
    given = [key for key in ("input_schema", "parameters") if key in tool]
    if len(given) > 1:
        raise UnsupportedSchema(f"la tool {name!r} tiene input_schema y parameters a la vez: da solo uno")
    parameters = tool[given[0]] if given else {"type": "object", "properties": {}}
    if not isinstance(parameters, dict) or parameters.get("type") != "object":
        raise UnsupportedSchema(f"tool {name!r}: su esquema de entrada debe ser un esquema de objeto "
                                f"({{\"type\": \"object\", ...}}), no {parameters!r}")
    description = tool.get("description")
    return name, description if isinstance(description, str) else None, copy.deepcopy(parameters)


def _convert(schema: Any, key: str) -> dict[str, Any]:
    name, description, parameters = unpack_tool_schema(schema)
    converted: dict[str, Any] = {"name": name}
    if description is not None:
        converted["description"] = description
    converted[key] = parameters
    return converted


def to_parameters_format(schema: Any) -> dict[str, Any]:
    """A tool schema in the OpenAI / Gemini shape (``parameters``), from either shape. Taught in lesson 09.

    Args:
        schema: The tool schema, in any shape ``unpack_tool_schema`` reads.

    Returns:
        ``{"name", "description" when there is one, "parameters"}``.
    """
    return _convert(schema, "parameters")


def to_input_schema_format(schema: Any) -> ToolSchema:
    """A tool schema in the Anthropic shape (``input_schema``), from either shape. Taught in lesson 09.

    Args:
        schema: The tool schema, in any shape ``unpack_tool_schema`` reads.

    Returns:
        The ToolSchema.
    """
    return _convert(schema, "input_schema")  # type: ignore[return-value]


def call_tool(tools: Mapping[str, Tool], block: ToolUseBlock) -> ToolResultBlock:
    """Run one tool_use block; an unknown tool, bad arguments or a tool that raises become an is_error result.

    This is the boundary where a tool's failure becomes something the model reads and can
    recover from (a wrong room, a missing argument), so every Exception the tool raises
    is reported; the failure is the model's to fix, not the runner's.

    Args:
        tools: The tool registry, by name.
        block: The tool_use block to run.

    Returns:
        The block's tool_result, with ``is_error: true`` when the tool could not give one.
    """
    function = tools.get(block["name"])
    if function is None:
        return tool_result_block(
            block["id"], f"Tool desconocida {block['name']!r}. Tools disponibles: {sorted(tools)}", is_error=True)
    try:
        return tool_result_block(block["id"], function(**block["input"]))
    except Exception as error:  # noqa: BLE001 - reported to the model, see the docstring
        return tool_result_block(block["id"], f"{type(error).__name__}: {error}", is_error=True)


def _in_parallel(blocks: Sequence[ToolUseBlock],
                 run: Callable[[ToolUseBlock], ToolResultBlock]) -> list[ToolResultBlock]:
    if not blocks:
        return []
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(blocks)) as pool:
        return list(pool.map(run, blocks))


def dispatch_parallel(tool_use_blocks: Sequence[ToolUseBlock], tools: Mapping[str, Tool]) -> list[ToolResultBlock]:
    """Run every tool_use block in parallel; an unknown name raises KeyError, as in the seed. Taught in lesson 03.

    Args:
        tool_use_blocks: The turn's tool_use blocks.
        tools: The tool registry, by name.

    Returns:
        One tool_result per block, in block order.
    """
    return _in_parallel(tool_use_blocks, lambda b: tool_result_block(b["id"], tools[b["name"]](**b["input"])))


def dispatch_safely(tool_use_blocks: Sequence[ToolUseBlock], tools: Mapping[str, Tool]) -> list[ToolResultBlock]:
    """Run every tool_use block in parallel; a failing or unknown tool becomes an is_error result.

    Args:
        tool_use_blocks: The turn's tool_use blocks.
        tools: The tool registry, by name.

    Returns:
        One tool_result per block, in block order.
    """
    return _in_parallel(tool_use_blocks, lambda block: call_tool(tools, block))
