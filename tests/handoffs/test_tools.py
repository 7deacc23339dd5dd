"""Tool schemas derived from signatures, type hints and docstrings; one builder for every tool of the course."""

import functools

import reservo_tools
from handoffs import function_schema, schemas_of
from handoffs.examples.calculator import CALCULATOR_SCHEMAS


def test_reservo_quote_schema_comes_from_its_signature():
    [schema] = schemas_of({"get_quote": reservo_tools.get_quote})
    properties = schema["input_schema"]["properties"]
    assert schema["name"] == "get_quote" and schema["description"].startswith("Quote a room")
    assert properties["room"] == {"enum": ["Focus", "Studio", "Loft"], "type": "string"}
    assert properties["hours"]["minimum"] == 1 and properties["hours"]["type"] == "integer"
    assert schema["input_schema"]["required"] == ["room", "tier", "hours"]
    assert "title" not in str(schema)  # pydantic's titles only repeat the names


def test_calculator_arguments_carry_their_descriptions():
    power = next(s for s in CALCULATOR_SCHEMAS if s["name"] == "power")
    assert power["input_schema"]["properties"]["base"] == {"description": "la base", "type": "number"}


def test_tool_schemas_come_from_partials_and_callable_objects_too():


    def quote(room: str, hours: int, currency: str = "centavos") -> str:
        """Quote a room."""
        return f"{room} {hours} {currency}"

    class Counter:
        def __call__(self, step: int) -> int:
            return step + 1

    partial = function_schema(functools.partial(quote, currency="USD"), "quote_usd")
    assert partial["input_schema"]["required"] == ["room", "hours"]
    assert partial["input_schema"]["properties"]["hours"] == {"type": "integer"}
    assert function_schema(Counter(), "count")["input_schema"]["properties"] == {"step": {"type": "integer"}}
