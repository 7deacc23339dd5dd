"""The grader's own words, each written once: in English for the instructor (reports, CSV, terminal) and in Spanish
for the student (the feedback page, the notes in a graded notebook's outputs).

A ``Message`` is a kind (``Say``) and its parameters; it is stored as such in a report, so the page
renders it in Spanish from this catalog instead of translating English text. A parameter may itself be
a Message (the error a test could not run after), rendered in the same language. What a student's own
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
    IN_GENERATED = "in-generated"
    TRUNCATED = "truncated"
    TRUNCATED_MESSAGE = "truncated-message"
    HIDDEN_MASK = "hidden-mask"
    VISIBLE_ONLY = "visible-only"
    RAISED_IN = "raised-in"
    RAISED_AT = "raised-at"
    IN_YOUR_CELL = "in-your-cell"
    IN_YOUR_CELL_LINE = "in-your-cell-line"
    AFTER_YOUR_CELL = "after-your-cell"
    STUB_GRADED = "stub-graded"


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
    Say.IN_GENERATED: ("{ename} in a hidden test on generated inputs: {inputs}",
                       "{ename} en un test oculto con entradas generadas: {inputs}"),
    Say.TRUNCATED: ("[output truncated: {chars} characters over the limit]",
                    "[salida recortada: {chars} caracteres sobre el límite]"),
    Say.TRUNCATED_MESSAGE: ("[output truncated: a message over {mib} MiB, or nested too deep to read, was refused]",
                            "[salida recortada: se rechazó un mensaje de más de {mib} MiB o demasiado anidado]"),
    Say.HIDDEN_MASK: ("[hidden test]", "[test oculto]"),
    Say.VISIBLE_ONLY: ("graded on the visible tests only (a student release has no solutions and no hidden tests)",
                       "calificado solo con los tests visibles (la versión del curso para estudiantes no trae "
                       "soluciones ni tests ocultos)"),
    Say.RAISED_IN: ("{error} (in {function}, line {line}: {code})", "{error} (en {function}, línea {line}: {code})"),
    Say.RAISED_AT: ("{error} (line {line} of the cell: {code})", "{error} (línea {line} de la celda: {code})"),
    Say.IN_YOUR_CELL: ("{error} (line {line} of your cell {cell}: {code})",
                       "{error} (línea {line} de tu celda {cell}: {code})"),
    Say.IN_YOUR_CELL_LINE: ("{error} (line {line} of your cell {cell})", "{error} (línea {line} de tu celda {cell})"),
    Say.AFTER_YOUR_CELL: ("could not run: your cell {cell} failed before this test: {error}",
                          "no se pudo ejecutar: tu celda {cell} falló antes de este test: {error}"),
    Say.STUB_GRADED: ("solution cell {cell} was deleted; the empty stub was graded",
                      "la celda de respuesta {cell} se borró; se calificó la plantilla vacía"),
}


@dataclass(frozen=True)
class Message:
    """One of the grader's messages: its kind and parameters, rendered in either language."""

    say: Say
    params: dict[str, Any] = field(default_factory=dict)

    def english(self) -> str:
        return self._render(0)

    def spanish(self) -> str:
        return self._render(1)

    def _render(self, language: int) -> str:
        params = {name: value._render(language) if isinstance(value, Message) else value
                  for name, value in self.params.items()}
        return CATALOG[self.say][language].format(**params)

    def to_dict(self) -> dict[str, Any]:
        return {"say": self.say.value, "params": {name: value.to_dict() if isinstance(value, Message) else value
                                                  for name, value in self.params.items()}}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Message":
        return cls(Say(data["say"]), {name: cls.from_dict(value) if isinstance(value, dict) and "say" in value
                                      else value for name, value in data.get("params", {}).items()})


def say(kind: Say, **params: Any) -> Message:
    """A message of ``kind`` with its parameters."""
    return Message(kind, params)
