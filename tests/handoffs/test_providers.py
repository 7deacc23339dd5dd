"""Live models on the real SDKs, against a fake server on 127.0.0.1 that speaks each API's wire format."""

import base64
import importlib
import json
import subprocess
import sys

import pytest
from fake_llm_server import FakeLLMServer

from handoffs.agent import Agent
from handoffs.errors import UsageError
from handoffs.examples.calculator import CALCULATOR_SCHEMAS, EQUATION_QUESTION, MATH_TOOLS, build_calculator_example
from handoffs.providers import (
    ENV_VAR,
    AnthropicModel,
    GeminiModel,
    MissingSDK,
    OpenAIModel,
    UnsupportedSchema,
    model_from_env,
    to_anthropic_tools,
    to_gemini_tools,
    to_openai_tools,
)


def installed(module):
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def needs(module, package):
    return pytest.mark.skipif(not installed(module),
                              reason=f"the {package!r} SDK is not installed (pip install -e \".[live]\")")


needs_anthropic = needs("anthropic", "anthropic")
needs_openai = needs("openai", "openai")
needs_gemini = needs("google.genai", "google-genai")

QUESTION = "What are 2 ** 10 and 1 / 0?"
DIVIDE_ERROR = "ValueError: no se puede dividir 1 entre cero"


@pytest.fixture
def server():
    with FakeLLMServer() as fake:
        yield fake


def anthropic_model(server):
    import anthropic
    client = anthropic.Anthropic(api_key="test-key", base_url=server.base_url, max_retries=0, timeout=10)
    return AnthropicModel("claude-test", client=client)


def openai_model(server):
    import openai
    client = openai.OpenAI(api_key="test-key", base_url=server.base_url + "/v1", max_retries=0, timeout=10)
    return OpenAIModel("gpt-test", client=client)


def gemini_model(server):
    from google import genai
    from google.genai import types
    client = genai.Client(api_key="test-key", http_options=types.HttpOptions(base_url=server.base_url, timeout=10_000))
    return GeminiModel("gemini-test", client=client)


def anthropic_reply(*blocks):
    uses_tools = any(block["type"] == "tool_use" for block in blocks)
    return {"id": "msg_test", "type": "message", "role": "assistant", "model": "claude-test",
            "content": list(blocks), "stop_reason": "tool_use" if uses_tools else "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}


def openai_reply(text, *calls):
    message = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [{"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}
                                 for id, name, arguments in calls]
    return {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "gpt-test",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}]}


def gemini_reply(*parts):
    return {"candidates": [{"content": {"role": "model", "parts": list(parts)}, "finishReason": "STOP"}]}


def calculator_agent(model):
    return Agent("calculator_assistant", "Compute.", model=model, tools=MATH_TOOLS, tool_schemas=CALCULATOR_SCHEMAS)


@needs_anthropic
def test_anthropic_tool_loop_through_the_sdk(server):
    server.reply(
        anthropic_reply({"type": "text", "text": "Computing."},
                        {"type": "tool_use", "id": "tu_1", "name": "power", "input": {"base": 2, "exponent": 10}},
                        {"type": "tool_use", "id": "tu_2", "name": "divide_numbers", "input": {"a": 1, "b": 0}}),
        anthropic_reply({"type": "text", "text": "2 ** 10 = 1024; 1 / 0 is undefined."}))
    agent = calculator_agent(anthropic_model(server))
    messages, text = agent.run(QUESTION)
    assert text == "2 ** 10 = 1024; 1 / 0 is undefined."
    first, second = server.bodies()
    assert [r["path"] for r in server.requests] == ["/v1/messages"] * 2
    assert first["model"] == "claude-test" and first["max_tokens"] == 1024
    assert first["system"] == agent.system_prompt
    assert first["tools"] == CALCULATOR_SCHEMAS
    assert first["messages"] == [{"role": "user", "content": QUESTION}]
    assert second["messages"][1]["content"][1] == {
        "type": "tool_use", "id": "tu_1", "name": "power", "input": {"base": 2, "exponent": 10}}
    assert second["messages"][2] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "tu_1", "content": "1024"},
        {"type": "tool_result", "tool_use_id": "tu_2", "content": DIVIDE_ERROR, "is_error": True}]}
    assert messages[-1] == {"role": "assistant", "content": [{"type": "text", "text": text}]}


@needs_openai
def test_openai_tool_loop_through_the_sdk(server):
    server.reply(
        openai_reply("Computing.", ("call_1", "power", '{"base": 2, "exponent": 10}'),
                     ("call_2", "divide_numbers", '{"a": 1, "b": 0}')),
        openai_reply("2 ** 10 = 1024; 1 / 0 is undefined."))
    agent = calculator_agent(openai_model(server))
    _, text = agent.run(QUESTION)
    assert text == "2 ** 10 = 1024; 1 / 0 is undefined."
    first, second = server.bodies()
    assert [r["path"] for r in server.requests] == ["/v1/chat/completions"] * 2
    assert first["messages"] == [{"role": "system", "content": agent.system_prompt},
                                 {"role": "user", "content": QUESTION}]
    assert first["tools"][4] == {"type": "function", "function": {
        "name": "power", "description": CALCULATOR_SCHEMAS[4]["description"],
        "parameters": CALCULATOR_SCHEMAS[4]["input_schema"]}}
    assert [tool["function"]["name"] for tool in first["tools"]] == list(MATH_TOOLS)
    assert second["messages"][2:] == [
        {"role": "assistant", "content": "Computing.", "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "power", "arguments": '{"base": 2, "exponent": 10}'}},
            {"id": "call_2", "type": "function",
             "function": {"name": "divide_numbers", "arguments": '{"a": 1, "b": 0}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "1024"},
        {"role": "tool", "tool_call_id": "call_2", "content": "Error: " + DIVIDE_ERROR}]


@needs_gemini
def test_gemini_tool_loop_through_the_sdk(server):
    signature = base64.b64encode(b"sig-1").decode()
    server.reply(
        gemini_reply({"text": "Computing."},
                     {"functionCall": {"id": "fc_1", "name": "power", "args": {"base": 2, "exponent": 10}},
                      "thoughtSignature": signature},
                     {"functionCall": {"name": "divide_numbers", "args": {"a": 1, "b": 0}}}),
        gemini_reply({"text": "2 ** 10 = 1024; 1 / 0 is undefined."}))
    agent = calculator_agent(gemini_model(server))
    messages, text = agent.run(QUESTION)
    assert text == "2 ** 10 = 1024; 1 / 0 is undefined."
    first, second = server.bodies()
    assert [r["path"] for r in server.requests] == ["/v1/models/gemini-test:generateContent"] * 2
    assert first["systemInstruction"]["parts"] == [{"text": agent.system_prompt}]
    declarations = first["tools"][0]["functionDeclarations"]
    assert [d["name"] for d in declarations] == list(MATH_TOOLS)
    assert declarations[4]["parameters"]["required"] == ["base", "exponent"]
    assert sorted(declarations[4]["parameters"]["properties"]) == ["base", "exponent"]
    assert first["contents"] == [{"role": "user", "parts": [{"text": QUESTION}]}]
    local_id = messages[1]["content"][2]["id"]
    assert local_id == "gemini_call_1"
    assert second["contents"][1] == {"role": "model", "parts": [
        {"text": "Computing."},
        {"functionCall": {"id": "fc_1", "name": "power", "args": {"base": 2, "exponent": 10}},
         "thoughtSignature": signature},
        {"functionCall": {"name": "divide_numbers", "args": {"a": 1, "b": 0}}}]}
    assert second["contents"][2] == {"role": "user", "parts": [
        {"functionResponse": {"id": "fc_1", "name": "power", "response": {"result": "1024"}}},
        {"functionResponse": {"name": "divide_numbers", "response": {"error": DIVIDE_ERROR}}}]}


@needs_gemini
def test_gemini_calls_it_never_saw_get_the_documented_signature_stand_in():
    from handoffs.providers import GEMINI_SIGNATURE_STAND_IN
    history = [{"role": "user", "content": "2 ** 3?"},
               {"role": "assistant", "content": [
                   {"type": "tool_use", "id": "toolu_1", "name": "power", "input": {"base": 2, "exponent": 3}},
                   {"type": "tool_use", "id": "toolu_2", "name": "power", "input": {"base": 3, "exponent": 2}}]}]
    contents = GeminiModel("gemini-test", client=object()).to_api_messages(history)
    first, second = contents[1].parts
    assert first.thought_signature == GEMINI_SIGNATURE_STAND_IN and second.thought_signature is None
    assert (first.function_call.id, first.function_call.name) == ("toolu_1", "power")


HANDOFF_INPUT = {"name": "calculator_assistant", "reason": "it is an equation"}


def sent_handoff_enum(provider, body):
    if provider == "anthropic":
        (tool,) = body["tools"]
        return tool["name"], tool["input_schema"]["properties"]["name"]["enum"]
    if provider == "openai":
        (tool,) = body["tools"]
        return tool["function"]["name"], tool["function"]["parameters"]["properties"]["name"]["enum"]
    (declaration,) = body["tools"][0]["functionDeclarations"]
    return declaration["name"], declaration["parameters"]["properties"]["name"]["enum"]


HANDOFF_CASES = [
    pytest.param("anthropic", anthropic_model, anthropic_reply(
        {"type": "tool_use", "id": "tu_h", "name": "handoff", "input": HANDOFF_INPUT}), marks=needs_anthropic),
    pytest.param("openai", openai_model, openai_reply(
        None, ("call_h", "handoff", '{"name": "calculator_assistant", "reason": "it is an equation"}')),
        marks=needs_openai),
    pytest.param("gemini", gemini_model, gemini_reply(
        {"functionCall": {"name": "handoff", "args": HANDOFF_INPUT}}), marks=needs_gemini),
]


@pytest.mark.parametrize("provider, make_model, reply", HANDOFF_CASES)
def test_a_live_helpful_assistant_hands_off_to_the_scripted_calculator(server, provider, make_model, reply):
    server.reply(reply)
    helpful, _ = build_calculator_example(helpful_model=make_model(server))
    _, text = helpful.run(EQUATION_QUESTION)
    assert text.endswith("x = 2 o x = 3")
    (body,) = server.bodies()
    assert sent_handoff_enum(provider, body) == ("handoff", ["calculator_assistant"])
    assert str(helpful.last_trace[0]) == (
        "helpful_assistant: handoff -> calculator_assistant (motivo: it is an equation)")


ENV_CASES = [
    pytest.param("anthropic:claude-env", AnthropicModel,
                 {"ANTHROPIC_API_KEY": "key-from-env", "ANTHROPIC_BASE_URL": "{base}"},
                 anthropic_reply({"type": "text", "text": "hi"}), marks=needs_anthropic),
    pytest.param("openai:gpt-env", OpenAIModel,
                 {"OPENAI_API_KEY": "key-from-env", "OPENAI_BASE_URL": "{base}/v1"},
                 openai_reply("hi"), marks=needs_openai),
    pytest.param("gemini:gemini-env", GeminiModel,
                 {"GEMINI_API_KEY": "key-from-env", "GOOGLE_GEMINI_BASE_URL": "{base}"},
                 gemini_reply({"text": "hi"}), marks=needs_gemini),
]


@pytest.mark.parametrize("value, cls, env, reply", ENV_CASES)
def test_model_from_env_builds_the_sdk_client_from_the_usual_variables(server, monkeypatch, value, cls, env, reply):
    for name in ("GOOGLE_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(ENV_VAR, value)
    for name, setting in env.items():
        monkeypatch.setenv(name, setting.format(base=server.base_url))
    model = model_from_env(default="scripted")
    assert type(model) is cls and model.name == value
    assert repr(model) == f"{cls.__name__}({value.split(':')[1]!r})"
    server.reply(reply)
    assert model([{"role": "user", "content": "hello"}], tools=[], system=None) == {
        "stop_reason": "end_turn", "content": [{"type": "text", "text": "hi"}]}
    sent_headers = server.requests[0]["headers"].values()
    assert any("key-from-env" in header for header in sent_headers)  # the SDK read its usual key variable


def test_model_from_env_returns_the_default_when_unset(monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)
    scripted = object()
    assert model_from_env(default=scripted) is scripted
    assert model_from_env(default=scripted, environ={ENV_VAR: "  "}) is scripted


@pytest.mark.parametrize("value", ["claude-sonnet", "llama:big", "openai:", ":gpt", "gemini :"])
def test_a_malformed_model_variable_is_a_clear_error(value):
    with pytest.raises(ValueError, match=f"{ENV_VAR}=.* no tiene la forma 'provider:model' con un provider de "
                                         r"\['anthropic', 'gemini', 'openai'\]"):
        model_from_env(environ={ENV_VAR: value})


@pytest.mark.parametrize("cls, modules", [
    (AnthropicModel, ["anthropic"]),
    (OpenAIModel, ["openai"]),
    (GeminiModel, ["google.genai", "google.genai.types"]),
])
def test_a_missing_sdk_names_the_live_extra(monkeypatch, cls, modules):
    for module in modules:
        monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(MissingSDK,
                       match=r"necesita el paquete .*; instala el extra live con: pip install -e \"\.\[live\]\""):
        cls("some-model", client=object())


def test_importing_the_library_imports_no_sdk():
    code = ("import sys, handoffs, handoffs.providers, handoffs.agent, handoffs.recorder, "
            "handoffs.examples.calculator; "
            "print(sorted(m for m in ('anthropic', 'openai', 'google.genai') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# --- converting tool schemas between providers, at conversion time ------------------------------------------

BOOK = {"name": "book_room", "description": "Book a room.", "input_schema": {
    "type": "object", "properties": {"room": {"type": "string", "enum": ["focus", "studio"]},
                                     "hours": {"type": "integer"}}, "required": ["room", "hours"]}}
SHAPES = [BOOK,
          {"name": "book_room", "description": "Book a room.", "parameters": BOOK["input_schema"]},
          {"type": "function", "function": {"name": "book_room", "description": "Book a room.",
                                            "parameters": BOOK["input_schema"]}},
          {"type": "function", "name": "book_room", "description": "Book a room.", "parameters": BOOK["input_schema"]}]


@pytest.mark.parametrize("shape", SHAPES)
def test_every_shape_converts_to_every_provider(shape):
    assert to_anthropic_tools([shape]) == [BOOK]
    assert to_openai_tools([shape]) == [{"type": "function", "function": {
        "name": "book_room", "description": "Book a room.", "parameters": BOOK["input_schema"]}}]
    assert to_gemini_tools([shape]) == [{"name": "book_room", "description": "Book a room.",
                                         "parameters": BOOK["input_schema"]}]


def test_the_calculator_schemas_convert_unchanged_and_the_input_is_not_mutated():
    before = json.dumps(CALCULATOR_SCHEMAS, sort_keys=True)
    assert to_anthropic_tools(CALCULATOR_SCHEMAS) == CALCULATOR_SCHEMAS
    gemini = to_gemini_tools(to_openai_tools(CALCULATOR_SCHEMAS))
    assert [tool["parameters"] for tool in gemini] == [tool["input_schema"] for tool in CALCULATOR_SCHEMAS]
    assert json.dumps(CALCULATOR_SCHEMAS, sort_keys=True) == before


def with_property(prop, **extra):
    return {"name": "lookup", "input_schema": {"type": "object", "properties": {"x": prop}, **extra}}


NULLABLE = with_property({"type": ["string", "null"], "description": "optional"})
ANY_NULL = with_property({"anyOf": [{"type": "string"}, {"type": "null"}], "description": "optional"})
INT_ENUM = with_property({"type": "integer", "enum": [1, 2, 3]})
LOCAL_REF = with_property({"$ref": "#/$defs/Room"}, **{"$defs": {"Room": {"type": "string"}}})


def test_nullable_types_are_kept_for_anthropic_and_openai_and_folded_for_gemini():
    for tool in (NULLABLE, ANY_NULL, INT_ENUM, LOCAL_REF):
        assert to_anthropic_tools([tool])[0]["input_schema"] == tool["input_schema"]
        assert to_openai_tools([tool])[0]["function"]["parameters"] == tool["input_schema"]
    for tool in (NULLABLE, ANY_NULL):
        assert to_gemini_tools([tool])[0]["parameters"]["properties"]["x"] == {
            "type": "string", "nullable": True, "description": "optional"}


@pytest.mark.parametrize("tool, words", [
    (INT_ENUM, "properties.x tiene el enum [1, 2, 3]; Gemini solo acepta enums de textos"),
    (LOCAL_REF, "usa $ref/$defs"),
    (with_property({"type": ["string", "integer"]}), "Gemini acepta un solo tipo"),
    (with_property({"type": "string", "const": "a"}), "usa ['const']"),
    (with_property({"type": "array", "items": {"type": "integer", "enum": [1]}}), "properties.x.items tiene el enum"),
])
def test_what_gemini_cannot_take_fails_at_conversion_naming_the_tool(tool, words):
    with pytest.raises(UnsupportedSchema, match="tool 'lookup'") as caught:
        to_gemini_tools([BOOK, tool])
    assert words in str(caught.value)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, UsageError)


@pytest.mark.parametrize("convert", [to_anthropic_tools, to_openai_tools])
@pytest.mark.parametrize("ref", ["https://example.com/room.json", "#/$defs/Missing", "#/definitions"])
def test_a_reference_outside_the_schema_fails_at_conversion(convert, ref):
    tool = with_property({"$ref": ref}, **{"$defs": {"Room": {"type": "string"}}, "definitions": "x"})
    with pytest.raises(UnsupportedSchema) as caught:
        convert([tool])
    assert f"tool 'lookup': el $ref '{ref}' en properties.x no apunta dentro del esquema" in str(caught.value)


@pytest.mark.parametrize("convert", [to_anthropic_tools, to_openai_tools, to_gemini_tools])
@pytest.mark.parametrize("bad, words", [
    ({"description": "no name"}, "necesita un nombre"), ("book_room", "debe ser un dict"),
    ({"name": "t", "parameters": {"type": "string"}}, "debe ser un esquema de objeto"),
    ({"name": "t", "parameters": {"type": "object"}, "input_schema": {"type": "object"}}, "a la vez"),
])
def test_malformed_tool_schemas_are_clear_errors(convert, bad, words):
    with pytest.raises(UnsupportedSchema, match=words):
        convert([bad])


@needs_gemini
def test_converted_gemini_declarations_are_accepted_by_the_sdk():
    from google.genai import types
    for tool in (BOOK, NULLABLE, ANY_NULL, *CALCULATOR_SCHEMAS):
        (declaration,) = to_gemini_tools([tool])
        types.FunctionDeclaration(**declaration)


@needs_gemini
def test_a_gemini_model_refuses_an_unsupported_schema_before_any_request(server):
    model = gemini_model(server)
    with pytest.raises(UnsupportedSchema, match="tool 'lookup'"):
        model([{"role": "user", "content": "hola"}], tools=[INT_ENUM])
    assert server.requests == []
