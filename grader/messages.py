"""The grader's own words, each written once: in English for the instructor (reports, CSV, terminal) and in Spanish
for the student (the feedback page, the notes in a graded notebook's outputs).

A ``Message`` is a kind (``Say``) and its parameters; it is stored as such in a report, so the page
renders it in Spanish from this catalog instead of translating English text. What a student's own
code said (an exception's message) is never a Message: it is shown as it was.
"""

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Say(StrEnum):
    """Every kind of message the grader writes about a cell or a test."""

    TIMEOUT = "timeout"
    DIED = "died"
    BUDGET = "budget"
    REFUSED = "refused"
    STDIN = "stdin"
    IN_HIDDEN = "in-hidden"
    TRUNCATED = "truncated"
    TRUNCATED_MESSAGE = "truncated-message"
    HIDDEN_MASK = "hidden-mask"
    VISIBLE_ONLY = "visible-only"
    RAISED_IN = "raised-in"
    RAISED_AT = "raised-at"


CATALOG: dict[Say, tuple[str, str]] = {  # (English, Spanish)
    Say.TIMEOUT: ("CellTimeout: cell did not finish within {seconds} s",
                  "CellTimeout: la celda no terminó en {seconds} s"),
    Say.DIED: ("DeadKernelError: the kernel died while running this cell; it was restarted",
               "DeadKernelError: el kernel murió mientras corría esta celda; se reinició"),
    Say.BUDGET: ("NotebookTimeout: the notebook's time budget of {seconds} s was spent",
                 "NotebookTimeout: se agotó el tiempo total del notebook ({seconds} s)"),
    Say.REFUSED: ("OutputLimit: the kernel sent a message over {mib} MiB, or nested too deep to read",
                  "OutputLimit: el kernel envió un mensaje de más de {mib} MiB o demasiado anidado"),
    Say.STDIN: ("StdinNotImplementedError: input() cannot be answered while grading",
                "StdinNotImplementedError: input() no puede recibir respuesta durante la calificación"),
    Say.IN_HIDDEN: ("{ename} in a hidden test", "{ename} en un test oculto"),
    Say.TRUNCATED: ("[output truncated: {chars} characters over the limit]",
                    "[salida recortada: {chars} caracteres sobre el límite]"),
    Say.TRUNCATED_MESSAGE: ("[output truncated: a message over {mib} MiB, or nested too deep to read, was refused]",
                            "[salida recortada: se rechazó un mensaje de más de {mib} MiB o demasiado anidado]"),
    Say.HIDDEN_MASK: ("[hidden test]", "[test oculto]"),
    Say.VISIBLE_ONLY: ("graded on the visible tests only (a student release has no solutions and no hidden tests)",
                       "calificado solo con los tests visibles (una entrega para estudiantes no tiene soluciones ni "
                       "tests ocultos)"),
    Say.RAISED_IN: ("{error} (in {function}, line {line}: {code})", "{error} (en {function}, línea {line}: {code})"),
    Say.RAISED_AT: ("{error} (line {line} of the cell: {code})", "{error} (línea {line} de la celda: {code})"),
}


@dataclass(frozen=True)
class Message:
    """One of the grader's messages: its kind and parameters, rendered in either language."""

    say: Say
    params: dict[str, Any] = field(default_factory=dict)

    def english(self) -> str:
        return CATALOG[self.say][0].format(**self.params)

    def spanish(self) -> str:
        return CATALOG[self.say][1].format(**self.params)

    def to_dict(self) -> dict[str, Any]:
        return {"say": self.say.value, "params": dict(self.params)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Message":
        return cls(Say(data["say"]), dict(data.get("params", {})))


def say(kind: Say, **params: Any) -> Message:
    """A message of ``kind`` with its parameters."""
    return Message(kind, params)
