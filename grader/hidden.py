"""Hidden tests stay hidden: no line of their source in any output, report, page or terminal line.

Student code can print a hidden test in many ways (``In``, ``_ih``, the history, ``inspect``,
``linecache``, an exception quoting it, the test cell's own traceback). Whatever the way,
every output and every error message is scrubbed of each line of hidden test source before
anything is written or shown. A test that fails inside its hidden part says so, without the
exception message, which could quote the hidden code or its expected values.
"""

import json
import re
from typing import Any

from nbformat import NotebookNode

from .execute import RESET_ENAME, CellRun
from .metadata import MARKERS

HIDDEN_BEGIN, HIDDEN_END = MARKERS["hidden tests"]
MASK = "[hidden test]"
MIN_PARTIAL = 8  # characters of a hidden line at the very end of a truncated text
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
CELL_FRAME = re.compile(r"Cell In\[\d*\], line (\d+)")


def hidden_lines(cell: NotebookNode) -> list[tuple[int, str]]:
    """(line number, stripped text) of every non-blank line of a cell's hidden tests, markers included."""
    lines, inside = [], False
    for number, line in enumerate(cell.get("source", "").splitlines(), start=1):
        stripped = line.strip()
        inside = inside or stripped == HIDDEN_BEGIN
        if inside and stripped:
            lines.append((number, stripped))
        inside = inside and stripped != HIDDEN_END
    return lines


class Scrubber:
    """Removes every line of the hidden tests from text, outputs and cell runs."""

    def __init__(self, cells: list[NotebookNode]) -> None:
        lines = {text for cell in cells for _, text in hidden_lines(cell)}
        # as printed inside JSON (the notebook read from disk) or a repr (print(In)), quotes come escaped
        texts = lines | {json.dumps(line)[1:-1] for line in lines} | {repr(line)[1:-1] for line in lines}
        self.lines = sorted(texts, key=len, reverse=True)
        self.pattern = re.compile("|".join(map(re.escape, self.lines))) if self.lines else None

    def text(self, value: str) -> str:
        """``value`` with escape codes removed and every hidden line masked."""
        if self.pattern is None:
            return value
        value = self.pattern.sub(MASK, ANSI.sub("", value))
        for line in self.lines:  # a hidden line cut short where the text was truncated
            for end in range(len(line) - 1, MIN_PARTIAL - 1, -1):
                if value.endswith(line[:end]):
                    return value[:-end] + MASK
        return value

    def value(self, value: Any) -> Any:
        """Any output value (text, a list of lines, a JSON object) scrubbed."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(item) for item in value]
        if isinstance(value, dict):
            return {key: self.value(item) for key, item in value.items()}
        return value

    def notebook(self, nb: NotebookNode) -> None:
        """Scrub every output of every cell in place."""
        if self.pattern is None:
            return
        for cell in nb.cells:
            for output in cell.get("outputs", []):
                for key in ("text", "data", "ename", "evalue", "traceback"):
                    if key in output:
                        output[key] = self.value(output[key])

    def run(self, run: CellRun) -> None:
        """Scrub a cell run's exception message and traceback in place."""
        run.ename, run.evalue, run.traceback = self.text(run.ename), self.text(run.evalue), self.value(run.traceback)


def failed_in_hidden(run: CellRun, cell: NotebookNode) -> bool:
    """Whether a failed test cell stopped inside its hidden part (also when the traceback does not say where)."""
    numbers = {number for number, _ in hidden_lines(cell)}
    if not numbers or run.status != "error" or run.ename == RESET_ENAME:
        return False
    for line in run.traceback:
        found = CELL_FRAME.search(ANSI.sub("", line))
        if found:
            return int(found.group(1)) in numbers
    return True
