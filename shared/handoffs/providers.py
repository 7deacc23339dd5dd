"""Live models on the official SDKs: Anthropic, OpenAI and Gemini behind one call. Taught in lesson 09.

Each class is a callable ``model(messages, tools=..., system=...)`` returning a turn in the
Messages shape, so it drops into any runner in place of a scripted model; ``model_from_env``
picks one from ``HANDOFFS_MODEL``. The SDKs are an optional extra (``pip install -e ".[live]"``).
See docs/library-reference.md.
"""

import importlib
import itertools
import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

from .errors import ModelBehaviorError, UsageError
from .messages import Block, Turn, text_block, tool_use_block, turn
from .tools import UnsupportedSchema, unpack_tool_schema

ENV_VAR = "HANDOFFS_MODEL"
# Gemini 3 asks for the thought signature of each function call it made; for calls whose
# signature we never saw (a replayed or foreign history) Google documents this stand-in.
GEMINI_SIGNATURE_STAND_IN = b"skip_thought_signature_validator"
GEMINI_LOCAL_ID = "gemini_call_"


class MissingSDK(UsageError, ImportError):
    """A live model needs an SDK that is not installed."""


class InvalidModelName(UsageError, ValueError):
    """A HANDOFFS_MODEL value that is not ``provider:model``."""


class MalformedToolCall(ModelBehaviorError, ValueError):
    """A model returned tool-call arguments that are not a JSON object."""


Schema = dict[str, Any]

GEMINI_SCHEMA_KEYS = frozenset({
    "type", "format", "title", "description", "nullable", "enum", "default", "example", "items", "minItems",
    "maxItems", "properties", "required", "minProperties", "maxProperties", "propertyOrdering", "minimum",
    "maximum", "minLength", "maxLength", "pattern", "anyOf"})
"""The fields of the Gemini SDK's ``types.Schema`` (an OpenAPI 3.0 subset) that a tool's parameters may use."""


def _walk(node: Any, path: str = "") -> Iterable[tuple[str, Schema]]:
    """Every subschema of a JSON Schema with its path, the root first."""
    if isinstance(node, dict):
        yield path or "(root)", node
        for key, value in node.items():
            if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
                for child, sub in value.items():
                    yield from _walk(sub, f"{path}.{key}.{child}".lstrip("."))
            elif key in ("items", "additionalProperties", "not"):
                yield from _walk(value, f"{path}.{key}".lstrip("."))
            elif key in ("anyOf", "oneOf", "allOf", "prefixItems") and isinstance(value, list):
                for i, sub in enumerate(value):
                    yield from _walk(sub, f"{path}.{key}.{i}".lstrip("."))


def _local_refs_only(name: str, parameters: Schema) -> None:
    """Refuse a ``$ref`` that leaves the schema or points nowhere (Anthropic and OpenAI take local ones)."""
    for path, node in _walk(parameters):
        ref = node.get("$ref")
        if ref is None:
            continue
        target: Any = parameters
        parts = ref[2:].split("/") if isinstance(ref, str) and ref.startswith("#/") else None
        for part in parts or []:
            target = target.get(part) if isinstance(target, dict) else None
        if parts is None or not isinstance(target, dict):
            raise UnsupportedSchema(f"tool {name!r}: el $ref {ref!r} en {path} no apunta dentro del esquema; "
                                    "solo se admiten referencias locales como '#/$defs/Name'")


def _description(description: str | None) -> Schema:
    return {} if description is None else {"description": description}


def to_anthropic_tools(schemas: Iterable[object]) -> list[Schema]:
    """Tool schemas in any shape as Anthropic tools: ``{"name", "description", "input_schema"}``. Taught in lesson 09.

    Args:
        schemas: tool schemas in the Anthropic, OpenAI (nested or flat) or Gemini shape.

    Returns:
        One Anthropic tool per schema, in order; the input schemas are copies.

    Raises:
        UnsupportedSchema: a schema is not a tool schema in a known shape, or uses a construct this provider
            refuses (see docs/library-reference.md, handoffs.providers).
    """  # noqa: DOC502
    tools = []
    for schema in schemas:
        name, description, parameters = unpack_tool_schema(schema)
        _local_refs_only(name, parameters)
        tools.append({"name": name, **_description(description), "input_schema": parameters})
    return tools


def to_openai_tools(schemas: Iterable[object]) -> list[Schema]:
    """Tool schemas in any shape as OpenAI Chat Completions tools: ``{"type": "function", "function": {...}}``.

    Taught in lesson 09.

    Args:
        schemas: tool schemas in the Anthropic, OpenAI (nested or flat) or Gemini shape.

    Returns:
        One OpenAI function tool per schema, in order; the parameter schemas are copies.

    Raises:
        UnsupportedSchema: a schema is not a tool schema in a known shape, or uses a construct this provider
            refuses (see docs/library-reference.md, handoffs.providers).
    """  # noqa: DOC502
    tools = []
    for schema in schemas:
        name, description, parameters = unpack_tool_schema(schema)
        _local_refs_only(name, parameters)
        tools.append({"type": "function", "function": {"name": name, **_description(description),
                                                       "parameters": parameters}})
    return tools


def _gemini_node(name: str, path: str, node: Schema) -> Schema:
    """One subschema in the Gemini SDK's Schema: nullable types folded, what it cannot take refused."""
    node = dict(node)
    where = f"tool {name!r}: {path}"
    if "$ref" in node or "$defs" in node or "definitions" in node:
        raise UnsupportedSchema(f"{where} usa $ref/$defs, que las declaraciones de funciones de Gemini no admiten; "
                                "escribe el esquema referido en su lugar")
    types = node.get("type")
    if isinstance(types, list):
        others = [t for t in types if t != "null"]
        if len(others) != 1:
            raise UnsupportedSchema(f"{where} tiene el tipo {types!r}; Gemini acepta un solo tipo (más null)")
        node["type"] = others[0]
        if "null" in types:
            node["nullable"] = True
    branches = node.get("anyOf")
    if isinstance(branches, list) and any(isinstance(b, dict) and b.get("type") == "null" for b in branches):
        kept = [b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")]
        del node["anyOf"]
        if len(kept) == 1 and isinstance(kept[0], dict):
            node = {**kept[0], **node, "nullable": True}
        else:
            node.update(anyOf=kept, nullable=True)
    enum = node.get("enum")
    if enum is not None and not all(isinstance(value, str) for value in enum):
        raise UnsupportedSchema(f"{where} tiene el enum {enum!r}; Gemini solo acepta enums de textos")
    unknown = sorted(set(node) - GEMINI_SCHEMA_KEYS)
    if unknown:
        raise UnsupportedSchema(f"{where} usa {unknown}, que el Schema de Gemini no tiene")
    return node


def _gemini_schema(name: str, node: Any, path: str = "(root)") -> Any:
    """A JSON Schema rewritten, node by node, for Gemini's ``parameters``."""
    if not isinstance(node, dict):
        return node
    node = _gemini_node(name, path, node)
    prefix = "" if path == "(root)" else f"{path}."
    if isinstance(node.get("properties"), dict):
        node["properties"] = {key: _gemini_schema(name, sub, f"{prefix}properties.{key}")
                              for key, sub in node["properties"].items()}
    if "items" in node:
        node["items"] = _gemini_schema(name, node["items"], f"{prefix}items")
    if isinstance(node.get("anyOf"), list):
        node["anyOf"] = [_gemini_schema(name, sub, f"{prefix}anyOf.{i}") for i, sub in enumerate(node["anyOf"])]
    return node


def to_gemini_tools(schemas: Iterable[object]) -> list[Schema]:
    """Tool schemas in any shape as Gemini function declarations: ``{"name", "description", "parameters"}``.

    Taught in lesson 09. Nullable types are folded into ``nullable: true``.

    Args:
        schemas: tool schemas in the Anthropic, OpenAI (nested or flat) or Gemini shape.

    Returns:
        One Gemini function declaration per schema, in order.

    Raises:
        UnsupportedSchema: a schema is not a tool schema in a known shape, or uses a construct this provider
            refuses (see docs/library-reference.md, handoffs.providers).
    """  # noqa: DOC502
    tools = []
    for schema in schemas:
        name, description, parameters = unpack_tool_schema(schema)
        tools.append({"name": name, **_description(description), "parameters": _gemini_schema(name, parameters)})
    return tools


def _sdk(module: str, package: str, who: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingSDK(f"{who} necesita el paquete {package!r}; instala el extra live con: "
                         'pip install -e ".[live]"') from error


def _turn(blocks: list[Any]) -> Turn:
    return turn(*blocks) if blocks else turn(text_block(""))


def _text_of(blocks: list[Any]) -> str:
    return "\n".join(block["text"] for block in blocks if block.get("type") == "text" and block["text"])


def _blocks(content: Any) -> list[Any]:
    return [text_block(content)] if isinstance(content, str) else content


class LiveModel:
    """What the three live models share: a provider, a model name and a readable repr."""

    provider = "live"
    model: str | None = None

    @property
    def name(self) -> str:
        """``provider:model``, the form HANDOFFS_MODEL uses."""
        return f"{self.provider}:{self.model}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model!r})"


class AnthropicModel(LiveModel):
    """Claude through ``anthropic.Anthropic().messages.create``; the key comes from ANTHROPIC_API_KEY.

    Call it as ``model(messages, tools=..., system=...)`` to get the next turn.
    Building one without the ``anthropic`` package installed raises ``MissingSDK``.

    Args:
        model: the Anthropic model name.
        client: an ``anthropic.Anthropic`` client (or a test double); a new one when None.
        max_tokens: the most tokens a reply may have.
    """

    provider = "anthropic"

    def __init__(self, model: str, client: Any = None, max_tokens: int = 1024) -> None:
        self.model = model
        self.max_tokens = max_tokens
        anthropic = _sdk("anthropic", "anthropic", type(self).__name__)
        self.client = client if client is not None else anthropic.Anthropic()

    def __call__(self, messages: list[Any], tools: Iterable[object] = (),
                 system: str | None = None) -> Turn:
        request = {"model": self.model, "max_tokens": self.max_tokens, "messages": self.to_api_messages(messages)}
        if system:
            request["system"] = system
        if tools:
            request["tools"] = to_anthropic_tools(tools)
        return self.to_turn(self.client.messages.create(**request))

    def to_api_messages(self, messages: list[Any]) -> list[Any]:
        """Our history is already in the Messages shape: drop empty text blocks, which the API refuses.

        Args:
            messages: the history in the Messages shape; it is not changed.

        Returns:
            The messages for ``messages.create``: role and content only.
        """
        converted = []
        for message in messages:
            content = message["content"]
            if not isinstance(content, str):
                content = [dict(b) for b in content if not (b.get("type") == "text" and not b["text"])]
            converted.append({"role": message["role"], "content": content})
        return converted

    @staticmethod
    def to_turn(response: Any) -> Turn:
        """Our turn from an ``anthropic.types.Message``.

        Args:
            response: what ``messages.create`` returned.

        Returns:
            The assistant turn with its text and tool_use blocks, in order (one empty text block when it has none).
        """
        blocks: list[Block] = []
        for block in response.content:
            if block.type == "text":
                blocks.append(text_block(block.text))
            elif block.type == "tool_use":
                blocks.append(tool_use_block(block.id, block.name, dict(block.input)))
        return _turn(blocks)


class OpenAIModel(LiveModel):
    """GPT through ``openai.OpenAI().chat.completions.create`` with function tools; key from OPENAI_API_KEY.

    Call it as ``model(messages, tools=..., system=...)`` to get the next turn.
    Building one without the ``openai`` package installed raises ``MissingSDK``.

    Args:
        model: the OpenAI model name.
        client: an ``openai.OpenAI`` client (or a test double); a new one when None.
    """

    provider = "openai"

    def __init__(self, model: str, client: Any = None) -> None:
        self.model = model
        openai = _sdk("openai", "openai", type(self).__name__)
        self.client = client if client is not None else openai.OpenAI()

    def __call__(self, messages: list[Any], tools: Iterable[object] = (),
                 system: str | None = None) -> Turn:
        request = {"model": self.model, "messages": self.to_api_messages(messages, system)}
        if tools:
            request["tools"] = to_openai_tools(tools)
        return self.to_turn(self.client.chat.completions.create(**request))

    def to_api_messages(self, messages: list[Any], system: str | None = None) -> list[Any]:
        """Chat Completions messages: a system message, tool calls on the assistant, one tool message per result.

        Args:
            messages: the history in the Messages shape; it is not changed.
            system: the system prompt, sent as the first message when given.

        Returns:
            The messages for ``chat.completions.create``; an error result's content starts with "Error".
        """
        converted = [{"role": "system", "content": system}] if system else []
        for message in messages:
            blocks = _blocks(message["content"])
            if message["role"] == "assistant":
                converted.append(self._assistant(blocks))
                continue
            for block in blocks:
                if block.get("type") == "tool_result":
                    content = block["content"]
                    if block.get("is_error") and not content.startswith("Error"):
                        content = f"Error: {content}"
                    converted.append({"role": "tool", "tool_call_id": block["tool_use_id"], "content": content})
            if _text_of(blocks):
                converted.append({"role": "user", "content": _text_of(blocks)})
        return converted

    @staticmethod
    def _assistant(blocks: list[Any]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": _text_of(blocks) or None}
        calls = [{"id": b["id"], "type": "function",
                  "function": {"name": b["name"], "arguments": json.dumps(b["input"], ensure_ascii=False)}}
                 for b in blocks if b.get("type") == "tool_use"]
        if calls:
            message["tool_calls"] = calls
        return message

    @staticmethod
    def to_turn(response: Any) -> Turn:
        """Our turn from an ``openai`` ChatCompletion: its text, then its function calls.

        Args:
            response: what ``chat.completions.create`` returned; its first choice is read.

        Returns:
            The assistant turn (one empty text block when it has neither text nor calls).

        Raises:
            MalformedToolCall: a function call's arguments are not JSON, or not a JSON object.
        """
        message = response.choices[0].message
        blocks: list[Block] = [text_block(message.content)] if message.content else []
        for call in message.tool_calls or []:
            if call.type != "function":
                continue
            try:
                arguments = json.loads(call.function.arguments or "{}")
            except json.JSONDecodeError as error:
                raise MalformedToolCall(f"OpenAI devolvió argumentos para {call.function.name!r} que no son JSON: "
                                        f"{call.function.arguments!r}") from error
            if not isinstance(arguments, dict):
                raise MalformedToolCall(f"OpenAI devolvió argumentos para {call.function.name!r} que no son un objeto "
                                        f"JSON: {call.function.arguments!r}")
            blocks.append(tool_use_block(call.id, call.function.name, arguments))
        return _turn(blocks)


class GeminiModel(LiveModel):
    """Gemini through ``google.genai.Client().models.generate_content``; key from GEMINI_API_KEY or GOOGLE_API_KEY.

    Call it as ``model(messages, tools=..., system=...)`` to get the next turn. The model keeps the
    thought signature of each function call it returned, to send it back with the history.
    Building one without the ``google-genai`` package installed raises ``MissingSDK``.

    Args:
        model: the Gemini model name.
        client: a ``google.genai.Client`` (or a test double); a new one when None.
    """

    provider = "gemini"

    def __init__(self, model: str, client: Any = None) -> None:
        self.model = model
        self._types = _sdk("google.genai.types", "google-genai", type(self).__name__)
        if client is None:
            client = _sdk("google.genai", "google-genai", type(self).__name__).Client()
        self.client = client
        self._signatures: dict[str, bytes] = {}
        self._ids = itertools.count(1)

    def __call__(self, messages: list[Any], tools: Iterable[object] = (),
                 system: str | None = None) -> Turn:
        types = self._types
        declarations = [types.FunctionDeclaration(**declaration) for declaration in to_gemini_tools(tools)]
        config = types.GenerateContentConfig(
            system_instruction=system or None,
            tools=[types.Tool(function_declarations=declarations)] if declarations else None)
        response = self.client.models.generate_content(
            model=self.model, contents=self.to_api_messages(messages), config=config)
        return self.to_turn(response)

    def to_api_messages(self, messages: list[Any]) -> list[Any]:
        """``types.Content`` list: roles user/model, function calls and responses matched by id.

        The first function call of a turn whose thought signature was never seen gets Google's documented
        stand-in.

        Args:
            messages: the history in the Messages shape; it is not changed.

        Returns:
            The contents for ``generate_content``; messages with nothing to send are left out.
        """
        types, names, contents = self._types, {}, []
        for message in messages:
            parts, first_call = [], True
            for block in _blocks(message["content"]):
                kind = block.get("type")
                if kind == "text" and block["text"]:
                    parts.append(types.Part(text=block["text"]))
                elif kind == "tool_use":
                    names[block["id"]] = block["name"]
                    signature = self._signatures.get(block["id"])
                    if signature is None and first_call:
                        signature = GEMINI_SIGNATURE_STAND_IN
                    call = types.FunctionCall(id=self._api_id(block["id"]), name=block["name"], args=block["input"])
                    parts.append(types.Part(function_call=call, thought_signature=signature))
                    first_call = False
                elif kind == "tool_result":
                    key = "error" if block.get("is_error") else "result"
                    parts.append(types.Part(function_response=types.FunctionResponse(
                        id=self._api_id(block["tool_use_id"]), name=names.get(block["tool_use_id"], "unknown"),
                        response={key: block["content"]})))
            if parts:
                role = "model" if message["role"] == "assistant" else "user"
                contents.append(types.Content(role=role, parts=parts))
        return contents

    @staticmethod
    def _api_id(tool_id: str) -> str | None:
        return None if tool_id.startswith(GEMINI_LOCAL_ID) else tool_id

    def to_turn(self, response: Any) -> Turn:
        """Our turn from a ``GenerateContentResponse``; calls without an id get a local one.

        Args:
            response: what ``generate_content`` returned; its first candidate is read, thoughts skipped.

        Returns:
            The assistant turn (one empty text block when it has neither text nor calls).
        """
        candidates = response.candidates or []
        content = candidates[0].content if candidates else None
        blocks: list[Block] = []
        for part in (content.parts or []) if content is not None else []:
            if part.thought:
                continue
            if part.function_call is not None:
                call = part.function_call
                tool_id = call.id or f"{GEMINI_LOCAL_ID}{next(self._ids)}"
                if part.thought_signature:
                    self._signatures[tool_id] = part.thought_signature
                blocks.append(tool_use_block(tool_id, call.name, dict(call.args or {})))
            elif part.text:
                blocks.append(text_block(part.text))
        return _turn(blocks)


PROVIDERS = {"anthropic": AnthropicModel, "openai": OpenAIModel, "gemini": GeminiModel}


def model_from_env(default: Any = None, environ: Mapping[str, str] | None = None) -> Any:
    """The live model HANDOFFS_MODEL names (``provider:model``), or ``default`` when it is unset.

    Args:
        default: what to return when the variable is unset or blank (a scripted model, say).
        environ: the environment to read; ``os.environ`` when None.

    Returns:
        A new ``AnthropicModel``, ``OpenAIModel`` or ``GeminiModel``, or ``default``.

    Raises:
        InvalidModelName: the value is not ``provider:model`` with a known provider and a model name.
        MissingSDK: the provider's SDK is not installed.
    """  # noqa: DOC503
    value = (os.environ if environ is None else environ).get(ENV_VAR, "").strip()
    if not value:
        return default
    provider, _, model = value.partition(":")
    provider, model = provider.strip().lower(), model.strip()
    if provider not in PROVIDERS or not model:
        raise InvalidModelName(f"{ENV_VAR}={value!r} no tiene la forma 'provider:model' con un provider de "
                         f"{sorted(PROVIDERS)}, p. ej. 'anthropic:<model>', 'openai:<model>', 'gemini:<model>'")
    return PROVIDERS[provider](model)
