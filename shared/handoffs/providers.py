"""Live models on the official SDKs: Anthropic, OpenAI and Gemini behind one call. Taught in lesson 09.

Each class is a callable ``model(messages, tools=..., system=...)`` that returns a turn in
the Messages shape, so it drops into any runner in place of a scripted model. Each one
converts our messages and tool schemas to its API and the response back. The SDKs are an
optional extra (``pip install -e ".[live]"``) imported only when a model is built.

``model_from_env(default)`` reads ``HANDOFFS_MODEL`` (``anthropic:<model>``,
``openai:<model>`` or ``gemini:<model>``); unset, it returns ``default``.
"""

import importlib
import itertools
import json
import os

from .tools import to_input_schema_format, to_parameters_format
from .errors import UsageError
from .messages import text_block, tool_use_block, turn

ENV_VAR = "HANDOFFS_MODEL"
# Gemini 3 asks for the thought signature of each function call it made; for calls whose
# signature we never saw (a replayed or foreign history) Google documents this stand-in.
GEMINI_SIGNATURE_STAND_IN = b"skip_thought_signature_validator"
GEMINI_LOCAL_ID = "gemini_call_"


class MissingSDK(UsageError, ImportError):
    """A live model needs an SDK that is not installed."""


def _sdk(module, package, who):
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingSDK(f"{who} needs the {package!r} package; install the live extra with: "
                         'pip install -e ".[live]"') from error


def _turn(blocks):
    return turn(*blocks) if blocks else turn(text_block(""))


def _text_of(blocks):
    return "\n".join(block["text"] for block in blocks if block.get("type") == "text" and block["text"])


def _blocks(content):
    return [text_block(content)] if isinstance(content, str) else content


class LiveModel:
    """What the three live models share: a provider, a model name and a readable repr."""

    provider = "live"
    model = None

    @property
    def name(self):
        """``provider:model``, the form HANDOFFS_MODEL uses."""
        return f"{self.provider}:{self.model}"

    def __repr__(self):
        return f"{type(self).__name__}({self.model!r})"


class AnthropicModel(LiveModel):
    """Claude through ``anthropic.Anthropic().messages.create``; the key comes from ANTHROPIC_API_KEY."""

    provider = "anthropic"

    def __init__(self, model, client=None, max_tokens=1024):
        self.model = model
        self.max_tokens = max_tokens
        anthropic = _sdk("anthropic", "anthropic", type(self).__name__)
        self.client = client if client is not None else anthropic.Anthropic()

    def __call__(self, messages, tools=(), system=None):
        request = {"model": self.model, "max_tokens": self.max_tokens, "messages": self.to_api_messages(messages)}
        if system:
            request["system"] = system
        if tools:
            request["tools"] = [to_input_schema_format(t) for t in tools]
        return self.to_turn(self.client.messages.create(**request))

    def to_api_messages(self, messages):
        """Our history is already in the Messages shape: drop empty text blocks, which the API refuses."""
        converted = []
        for message in messages:
            content = message["content"]
            if not isinstance(content, str):
                content = [dict(b) for b in content if not (b.get("type") == "text" and not b["text"])]
            converted.append({"role": message["role"], "content": content})
        return converted

    @staticmethod
    def to_turn(response):
        """Our turn from an ``anthropic.types.Message``."""
        blocks = []
        for block in response.content:
            if block.type == "text":
                blocks.append(text_block(block.text))
            elif block.type == "tool_use":
                blocks.append(tool_use_block(block.id, block.name, dict(block.input)))
        return _turn(blocks)


class OpenAIModel(LiveModel):
    """GPT through ``openai.OpenAI().chat.completions.create`` with function tools; key from OPENAI_API_KEY."""

    provider = "openai"

    def __init__(self, model, client=None):
        self.model = model
        openai = _sdk("openai", "openai", type(self).__name__)
        self.client = client if client is not None else openai.OpenAI()

    def __call__(self, messages, tools=(), system=None):
        request = {"model": self.model, "messages": self.to_api_messages(messages, system)}
        if tools:
            request["tools"] = [{"type": "function", "function": to_parameters_format(t)} for t in tools]
        return self.to_turn(self.client.chat.completions.create(**request))

    def to_api_messages(self, messages, system=None):
        """Chat Completions messages: a system message, tool calls on the assistant, one tool message per result."""
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
    def _assistant(blocks):
        message = {"role": "assistant", "content": _text_of(blocks) or None}
        calls = [{"id": b["id"], "type": "function",
                  "function": {"name": b["name"], "arguments": json.dumps(b["input"], ensure_ascii=False)}}
                 for b in blocks if b.get("type") == "tool_use"]
        if calls:
            message["tool_calls"] = calls
        return message

    @staticmethod
    def to_turn(response):
        """Our turn from an ``openai`` ChatCompletion: its text, then its function calls."""
        message = response.choices[0].message
        blocks = [text_block(message.content)] if message.content else []
        for call in message.tool_calls or []:
            if call.type != "function":
                continue
            try:
                arguments = json.loads(call.function.arguments or "{}")
            except json.JSONDecodeError as error:
                raise ValueError(f"OpenAI returned arguments for {call.function.name!r} that are not JSON: "
                                 f"{call.function.arguments!r}") from error
            blocks.append(tool_use_block(call.id, call.function.name, arguments))
        return _turn(blocks)


class GeminiModel(LiveModel):
    """Gemini through ``google.genai.Client().models.generate_content``; key from GEMINI_API_KEY or GOOGLE_API_KEY."""

    provider = "gemini"

    def __init__(self, model, client=None):
        self.model = model
        self._types = _sdk("google.genai.types", "google-genai", type(self).__name__)
        if client is None:
            client = _sdk("google.genai", "google-genai", type(self).__name__).Client()
        self.client = client
        self._signatures = {}
        self._ids = itertools.count(1)

    def __call__(self, messages, tools=(), system=None):
        types = self._types
        declarations = [types.FunctionDeclaration(**to_parameters_format(t)) for t in tools]
        config = types.GenerateContentConfig(
            system_instruction=system or None,
            tools=[types.Tool(function_declarations=declarations)] if declarations else None)
        response = self.client.models.generate_content(
            model=self.model, contents=self.to_api_messages(messages), config=config)
        return self.to_turn(response)

    def to_api_messages(self, messages):
        """``types.Content`` list: roles user/model, function calls and responses matched by id."""
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
    def _api_id(tool_id):
        return None if tool_id.startswith(GEMINI_LOCAL_ID) else tool_id

    def to_turn(self, response):
        """Our turn from a ``GenerateContentResponse``; calls without an id get a local one."""
        candidates = response.candidates or []
        content = candidates[0].content if candidates else None
        blocks = []
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


def model_from_env(default=None, environ=None):
    """The live model HANDOFFS_MODEL names (``provider:model``), or ``default`` when it is unset."""
    value = (os.environ if environ is None else environ).get(ENV_VAR, "").strip()
    if not value:
        return default
    provider, _, model = value.partition(":")
    provider, model = provider.strip().lower(), model.strip()
    if provider not in PROVIDERS or not model:
        raise ValueError(f"{ENV_VAR}={value!r} is not 'provider:model' with a provider in "
                         f"{sorted(PROVIDERS)}, e.g. 'anthropic:<model>', 'openai:<model>', 'gemini:<model>'")
    return PROVIDERS[provider](model)
