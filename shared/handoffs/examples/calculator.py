"""The lesson 09 example: calculator tools, their schemas and the scripts of a general assistant that hands off.

``build_calculator_example()`` wires ``helpful_assistant`` (no tools, may hand off) to
``calculator_assistant`` (the six math tools). Its scripted models replay the run of the
lesson: the capital of France is answered directly, the equation x² - 5x + 6 = 0 is handed
to the calculator, which solves it with seven tool calls.
"""

import math
from typing import Annotated

from pydantic import Field

from ..agent import Agent
from ..messages import Message, Turn, text_block, tool_use_block, turn
from ..models import AnyModel, ScriptedModel, ScriptExhausted
from ..policies import AGENT_HANDOFF_TOOL_NAME
from ..tools import Tool, schemas_of


def sum_numbers(a: Annotated[float, Field(description="primer sumando")],
                b: Annotated[float, Field(description="segundo sumando")]) -> float:
    """Suma dos números y devuelve a + b."""
    return a + b


def subtract_numbers(a: Annotated[float, Field(description="minuendo")],
                     b: Annotated[float, Field(description="sustraendo")]) -> float:
    """Resta b de a y devuelve a - b."""
    return a - b


def multiply_numbers(a: Annotated[float, Field(description="primer factor")],
                     b: Annotated[float, Field(description="segundo factor")]) -> float:
    """Multiplica dos números y devuelve a * b."""
    return a * b


def divide_numbers(a: Annotated[float, Field(description="dividendo")],
                   b: Annotated[float, Field(description="divisor, distinto de cero")]) -> float:
    """Divide a entre b y devuelve a / b; b no puede ser cero."""
    if b == 0:
        raise ValueError(f"no se puede dividir {a} entre cero")
    return a / b


def power(base: Annotated[float, Field(description="la base")],
          exponent: Annotated[float, Field(description="el exponente")]) -> float:
    """Eleva base a exponent y devuelve base ** exponent."""
    result = base ** exponent
    if isinstance(result, complex):
        raise ValueError(f"{base} ** {exponent} no tiene resultado real")
    return result


def square_root(number: Annotated[float, Field(description="un número >= 0")]) -> float:
    """Devuelve la raíz cuadrada de un número que no es negativo."""
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

CAPITAL_QUESTION = "¿Cuál es la capital de Francia?"
EQUATION_QUESTION = "¿Cuál es la solución de la ecuación x² - 5x + 6 = 0?"
HANDOFF_REASON = "El usuario pidió resolver una ecuación cuadrática: hay que resolver una ecuación."

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
    "Resolví x² - 5x + 6 = 0 con la fórmula cuadrática, a = 1, b = -5, c = 6.\n"
    "1. Discriminante: (-5)² - 4·1·6 = 25 - 24 = 1.\n"
    "2. Su raíz cuadrada: √1 = 1.\n"
    "3. x = (5 + 1) / 2 = 3 y x = (5 - 1) / 2 = 2.\n"
    "Comprobación: 3² - 5·3 + 6 = 0 y 2² - 5·2 + 6 = 0.\n"
    "\n"
    "Respuesta:\n"
    "x = 2 o x = 3"
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
    return ScriptedModel([turn(text_block("París."))], name="helpful_assistant")


def equation_handoff_script() -> ScriptedModel:
    """helpful_assistant's script for the equation: hand off to calculator_assistant."""
    handoff = tool_use_block("toolu_handoff_01", AGENT_HANDOFF_TOOL_NAME,
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
