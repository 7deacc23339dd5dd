"""The lesson 09 example: calculator tools, their schemas and the scripts of a general assistant that hands off.

``build_calculator_example()`` wires ``helpful_assistant`` (no tools, may hand off) to
``calculator_assistant`` (the six math tools). Its scripted models replay the run of the
lesson: the capital of France is answered directly, the equation x² - 5x + 6 = 0 is handed
to the calculator, which solves it with seven tool calls.
"""

import math

from .agent import AGENT_HANDOFF_TOOL, Agent
from .messages import text_block, tool_use_block, turn
from .models import ScriptedModel, ScriptExhausted


def sum_numbers(a, b):
    """a + b."""
    return a + b


def subtract_numbers(a, b):
    """a - b."""
    return a - b


def multiply_numbers(a, b):
    """a * b."""
    return a * b


def divide_numbers(a, b):
    """a / b; dividing by zero raises ValueError."""
    if b == 0:
        raise ValueError(f"cannot divide {a} by zero")
    return a / b


def power(base, exponent):
    """base ** exponent, real results only."""
    result = base ** exponent
    if isinstance(result, complex):
        raise ValueError(f"{base} ** {exponent} has no real result")
    return result


def square_root(number):
    """The square root of a number >= 0; a negative number raises ValueError."""
    if number < 0:
        raise ValueError(f"cannot take the square root of a negative number ({number})")
    return math.sqrt(number)


MATH_TOOLS = {
    "sum_numbers": sum_numbers,
    "multiply_numbers": multiply_numbers,
    "subtract_numbers": subtract_numbers,
    "divide_numbers": divide_numbers,
    "power": power,
    "square_root": square_root,
}


def _schema(name, description, **numbers):
    return {
        "name": name,
        "description": description,
        "input_schema": {
            "type": "object",
            "properties": {arg: {"type": "number", "description": text} for arg, text in numbers.items()},
            "required": list(numbers),
        },
    }


CALCULATOR_SCHEMAS = [
    _schema("sum_numbers", "Add two numbers and return a + b.", a="first addend", b="second addend"),
    _schema("multiply_numbers", "Multiply two numbers and return a * b.", a="first factor", b="second factor"),
    _schema("subtract_numbers", "Subtract b from a and return a - b.", a="minuend", b="subtrahend"),
    _schema("divide_numbers", "Divide a by b and return a / b; b must not be zero.",
            a="dividend", b="divisor, not zero"),
    _schema("power", "Raise base to exponent and return base ** exponent.",
            base="the base", exponent="the exponent"),
    _schema("square_root", "Return the square root of a number that is not negative.",
            number="a number >= 0"),
]

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


def capital_script():
    """helpful_assistant's script for the capital of France: answer at once, no handoff."""
    return ScriptedModel([turn(text_block("Paris."))], name="helpful_assistant")


def equation_handoff_script():
    """helpful_assistant's script for the equation: hand off to calculator_assistant."""
    handoff = tool_use_block("toolu_handoff_01", AGENT_HANDOFF_TOOL,
                             {"name": "calculator_assistant", "reason": HANDOFF_REASON})
    return ScriptedModel([turn(handoff)], name="helpful_assistant")


def calculator_script():
    """calculator_assistant's script: seven tool calls, one per turn, then the answer."""
    turns = [turn(tool_use_block(f"toolu_calc_{i:02d}", name, args))
             for i, (name, args) in enumerate(CALCULATOR_CALLS, start=1)]
    return ScriptedModel(turns + [turn(text_block(EQUATION_ANSWER))], name="calculator_assistant")


class ScriptsByQuestion:
    """A scripted model that picks one script per user question, so one agent can answer several."""

    def __init__(self, scripts, name="scripted"):
        self.name = name
        self.scripts = dict(scripts)

    def __call__(self, messages, tools=(), system=None):
        question, step = _current_question(messages)
        if question not in self.scripts:
            raise ScriptExhausted(
                f"{self.name!r} has no script for the question {question!r}; its questions are "
                f"{list(self.scripts)}. Set HANDOFFS_MODEL to ask a live model instead.")
        return self.scripts[question][step]

    def __repr__(self):
        return f"ScriptsByQuestion({self.name!r}, {list(self.scripts)})"


def _current_question(messages):
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message["role"] == "user" and isinstance(message["content"], str):
            later = messages[index + 1:]
            return message["content"], sum(1 for m in later if m["role"] == "assistant")
    raise ScriptExhausted("a scripted model needs a user question in the conversation")


def helpful_script():
    """helpful_assistant's model for both questions of the lesson."""
    return ScriptsByQuestion({CAPITAL_QUESTION: capital_script(), EQUATION_QUESTION: equation_handoff_script()},
                             name="helpful_assistant")


def build_calculator_example(helpful_model=None, calculator_model=None):
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
