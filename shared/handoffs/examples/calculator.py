"""The lesson 09 example: calculator tools, their schemas and the scripts of a general assistant that hands off.

``build_calculator_example()`` wires ``helpful_assistant`` (no tools, may hand off) to
``calculator_assistant`` (the six math tools). Its scripted models replay the run of the
lesson: the capital of France is answered directly, the equation x² - 5x + 6 = 0 is handed
to the calculator, which solves it with seven tool calls.
"""

import math
from typing import Annotated

from pydantic import Field

from ..agent import AGENT_HANDOFF_TOOL, Agent
from ..messages import Message, Turn, text_block, tool_use_block, turn
from ..models import AnyModel, ScriptedModel, ScriptExhausted
from ..tools import Tool, schemas_of


def sum_numbers(a: Annotated[float, Field(description="first addend")],
                b: Annotated[float, Field(description="second addend")]) -> float:
    """Add two numbers and return a + b."""
    return a + b


def subtract_numbers(a: Annotated[float, Field(description="minuend")],
                     b: Annotated[float, Field(description="subtrahend")]) -> float:
    """Subtract b from a and return a - b."""
    return a - b


def multiply_numbers(a: Annotated[float, Field(description="first factor")],
                     b: Annotated[float, Field(description="second factor")]) -> float:
    """Multiply two numbers and return a * b."""
    return a * b


def divide_numbers(a: Annotated[float, Field(description="dividend")],
                   b: Annotated[float, Field(description="divisor, not zero")]) -> float:
    """Divide a by b and return a / b; b must not be zero."""
    if b == 0:
        raise ValueError(f"no se puede dividir {a} entre cero")
    return a / b


def power(base: Annotated[float, Field(description="the base")],
          exponent: Annotated[float, Field(description="the exponent")]) -> float:
    """Raise base to exponent and return base ** exponent."""
    result = base ** exponent
    if isinstance(result, complex):
        raise ValueError(f"{base} ** {exponent} no tiene resultado real")
    return result


def square_root(number: Annotated[float, Field(description="a number >= 0")]) -> float:
    """Return the square root of a number that is not negative."""
    if number < 0:
        raise ValueError(f"no se puede sacar la raíz cuadrada de un número negativo ({number})")
    return math.sqrt(number)


MATH_TOOLS: dict[str, Tool] = {
    "sum_numbers": sum_numbers,
    "multiply_numbers": multiply_numbers,
    "subtract_numbers": subtract_numbers,
    "divide_numbers": divide_numbers,
    "power": power,
    "square_root": square_root,
}

CALCULATOR_SCHEMAS = schemas_of(MATH_TOOLS)

CAPITAL_QUESTION = "What is the capital of France?"
EQUATION_QUESTION = "What is the solution to the equation x² - 5x + 6 = 0?"
HANDOFF_REASON = "The user asked to solve a quadratic equation, which involves equation solving."

HELPFUL_PROMPT = ("You are a helpful assistant. You handle many kinds of requests yourself and hand "
                  "math problems off to the calculator assistant.")
CALCULATOR_PROMPT = (
    "You are a calculator assistant: you do mathematical calculations and solve equations.\n"
    "When you solve an equation:\n"
    "1. Work step by step.\n"
    "2. Do every calculation with the math tools.\n"
    "3. Check the solution by substituting it into the original equation.\n"
    "4. Explain the solution clearly.\n"
    "Always answer completely, with the check."
)

EQUATION_ANSWER = (
    "I solved x² - 5x + 6 = 0 with the quadratic formula, a = 1, b = -5, c = 6.\n"
    "1. Discriminant: (-5)² - 4·1·6 = 25 - 24 = 1.\n"
    "2. Its square root: √1 = 1.\n"
    "3. x = (5 + 1) / 2 = 3 and x = (5 - 1) / 2 = 2.\n"
    "Check: 3² - 5·3 + 6 = 0 and 2² - 5·2 + 6 = 0.\n"
    "\n"
    "Answer:\n"
    "x = 2 or x = 3"
)

CALCULATOR_CALLS = [
    ("power", {"base": -5, "exponent": 2}),
    ("subtract_numbers", {"a": 25, "b": 24}),
    ("square_root", {"number": 1}),
    ("sum_numbers", {"a": 5, "b": 1}),
    ("subtract_numbers", {"a": 5, "b": 1}),
    ("divide_numbers", {"a": 6, "b": 2}),
    ("divide_numbers", {"a": 4, "b": 2}),
]


def capital_script() -> ScriptedModel:
    """helpful_assistant's script for the capital of France: answer at once, no handoff."""
    return ScriptedModel([turn(text_block("Paris."))], name="helpful_assistant")


def equation_handoff_script() -> ScriptedModel:
    """helpful_assistant's script for the equation: hand off to calculator_assistant."""
    handoff = tool_use_block("toolu_handoff_01", AGENT_HANDOFF_TOOL,
                             {"name": "calculator_assistant", "reason": HANDOFF_REASON})
    return ScriptedModel([turn(handoff)], name="helpful_assistant")


def calculator_script() -> ScriptedModel:
    """calculator_assistant's script: seven tool calls, one per turn, then the answer."""
    turns = [turn(tool_use_block(f"toolu_calc_{i:02d}", name, args))
             for i, (name, args) in enumerate(CALCULATOR_CALLS, start=1)]
    return ScriptedModel(turns + [turn(text_block(EQUATION_ANSWER))], name="calculator_assistant")


class ScriptsByQuestion:
    """A scripted model that picks one script per user question, so one agent can answer several."""

    def __init__(self, scripts: dict[str, ScriptedModel], name: str = "scripted") -> None:
        self.name = name
        self.scripts = dict(scripts)

    def __call__(self, messages: list[Message], *, tools: object = (), system: str | None = None) -> Turn:
        question, step = _current_question(messages)
        if question not in self.scripts:
            raise ScriptExhausted(
                f"{self.name!r} no tiene guion para la pregunta {question!r}; sus preguntas son "
                f"{list(self.scripts)}. Define HANDOFFS_MODEL para preguntarle a un modelo real.")
        return self.scripts[question][step]

    def __repr__(self) -> str:
        return f"ScriptsByQuestion({self.name!r}, {list(self.scripts)})"


def _current_question(messages: list[Message]) -> tuple[str, int]:
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message["role"] == "user" and isinstance(message["content"], str):
            later = messages[index + 1:]
            return message["content"], sum(1 for m in later if m["role"] == "assistant")
    raise ScriptExhausted("un modelo con guion necesita una pregunta del usuario en la conversación")


def helpful_script() -> "ScriptsByQuestion":
    """helpful_assistant's model for both questions of the lesson."""
    return ScriptsByQuestion({CAPITAL_QUESTION: capital_script(), EQUATION_QUESTION: equation_handoff_script()},
                             name="helpful_assistant")


def build_calculator_example(helpful_model: AnyModel | None = None,
                             calculator_model: AnyModel | None = None) -> tuple[Agent, Agent]:
    """``(helpful_assistant, calculator_assistant)`` wired for a handoff; scripted unless models are given."""
    if calculator_model is None:
        calculator_model = calculator_script()
    if helpful_model is None:
        helpful_model = helpful_script()
    calculator_assistant = Agent("calculator_assistant", CALCULATOR_PROMPT, model=calculator_model,
                                 tools=MATH_TOOLS, tool_schemas=CALCULATOR_SCHEMAS, handoffs=[])
    helpful_assistant = Agent("helpful_assistant", HELPFUL_PROMPT, model=helpful_model,
                              tools={}, tool_schemas=[], handoffs=[calculator_assistant])
    return helpful_assistant, calculator_assistant
