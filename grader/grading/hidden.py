"""Hidden tests stay hidden: no line of their source in any output, report, page or terminal line.

The kernel never receives a hidden test's expected values, and nothing produced while a
hidden part runs is kept (``grader.grading.execute``). What the kernel did receive (the hidden
part's calls and inputs) could still be stashed by student code and printed by a later cell,
in any way it likes (``In``, the history, ``linecache``, ``inspect``); as a second line of
defence, every output and error message is scrubbed of each hidden line, as the source has
it and as the kernel received it, before anything is written or shown. Lines too short to
say anything (``]``, ``})``) are left alone, so they never mask the visible outputs.
"""

import json
import re
from collections.abc import Sequence
from typing import Any

from nbformat import NotebookNode

from ..authoring.metadata import HIDDEN_BEGIN, HIDDEN_END
from ..messages import Say, say
from .execute import CellRun

MASK = say(Say.HIDDEN_MASK).spanish()  # the students read it: "[test oculto]"
MIN_LINE = 12  # characters (stripped) a hidden line needs to be masked
MIN_PARTIAL = 8  # characters of a hidden line at the very end of a truncated text
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


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

    def __init__(self, cells: list[NotebookNode], sent: Sequence[str] = ()) -> None:
        lines = {text for cell in cells for _, text in hidden_lines(cell)}
        lines |= {line.strip() for code in sent for line in code.splitlines()}
        lines = {line for line in lines if len(line) >= MIN_LINE}
        # as printed inside JSON (the notebook read from disk) or a repr (print(In)), quotes come escaped
        texts = lines | {json.dumps(line)[1:-1] for line in lines} | {repr(line)[1:-1] for line in lines}
        self.lines = sorted(texts, key=len, reverse=True)  # a line inside a longer one goes with the longer one
        self.starts = {line[:MIN_PARTIAL] for line in self.lines}  # how a cut-short hidden line begins
        self.longest = len(self.lines[0]) if self.lines else 0

    def text(self, value: str) -> str:
        """``value`` with escape codes removed and every hidden line masked."""
        if not self.lines:
            return value
        value = ANSI.sub("", value)
        for line in self.lines:  # str.replace, not one regex of every line: compiling that took 0.18 s a grade
            if line in value:
                value = value.replace(line, MASK)
        return self._cut_short(value)

    def _cut_short(self, value: str) -> str:
        """``value`` with a hidden line cut short at its very end (where the text was truncated) masked: of the
        lines, longest first, the first one some prefix of which (``MIN_PARTIAL`` characters or more) ends it."""
        size = len(value)
        ends = [size - i for i in range(max(0, size - self.longest + 1), size - MIN_PARTIAL + 1)
                if value[i:i + MIN_PARTIAL] in self.starts]  # longest first: where a prefix could begin
        for line in self.lines if ends else ():
            for end in ends:
                if end < len(line) and value.endswith(line[:end]):
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
        if not self.lines:
            return
        for cell in nb.cells:
            for output in cell.get("outputs", []):
                for key in ("text", "data", "ename", "evalue", "traceback"):
                    if key in output:
                        output[key] = self.value(output[key])

    def run(self, run: CellRun) -> None:
        """Scrub a cell run's exception message and traceback in place."""
        run.ename, run.evalue, run.traceback = self.text(run.ename), self.text(run.evalue), self.value(run.traceback)
