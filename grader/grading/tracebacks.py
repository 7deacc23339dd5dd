"""Where a cell's error was raised, read from the traceback its kernel sent: the deepest frame of a notebook cell.

The traceback is untrusted data from the student's kernel; it is only read to point the student at
their own line (a frame of a library or of the grader is never shown), and a traceback that does not
look like IPython's gives nothing.
"""

import re
from collections.abc import Sequence

from ..messages import Message, Say, say
from .testcells import PROBE

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
CELL_FRAME = re.compile(r"Cell In\[\d+\], line (\d+)(?:, in ([^\s(]+))?")
ARROW = re.compile(r"^-+> *\d+ ?(.*)$", re.MULTILINE)
CODE_CHARS = 160
COMPILE_ERRORS = ("SyntaxError", "IndentationError", "TabError")
COMPILED_AT = re.compile(r"\s*\((?:<[^<>]*>|[^()]*), line (\d+)\)$")
"""Where a compile error says it is: ``(<ipython-input-6-e66...>, line 4)``, the kernel's name for the cell."""


def cell_line(traceback: list[str]) -> int | None:
    """The line of the outermost notebook-cell frame (the statement of the cell that was running), or None."""
    for frame in traceback:
        head = CELL_FRAME.match(ANSI.sub("", frame).strip("\n"))
        if head is not None:
            return int(head[1])
    return None


def raised_at(error: str, traceback: list[str], cell: Sequence[str] = ()) -> Message | None:
    """``error`` with the line of a notebook cell where it was raised, or None when no cell frame is found.

    ``cell``: the lines of the cell that ran, as the student reads them; a line of that cell (its
    top level, or a comprehension in it) is quoted from there, not as the kernel ran it.
    """
    for frame in reversed(traceback):
        text = ANSI.sub("", frame).strip("\n")
        head = CELL_FRAME.match(text)
        arrow = ARROW.search(text)
        if head is None or arrow is None:
            continue
        line, function, code = int(head[1]), head[2] if head[2] != "<module>" else None, arrow[1]
        if (not function or PROBE in code) and cell and 0 < line <= len(cell):
            code = cell[line - 1]
        code = " ".join(code.split())[:CODE_CHARS]
        if function:
            return say(Say.RAISED_IN, error=error, function=function, line=line, code=code)
        return say(Say.RAISED_AT, error=error, line=line, code=code)
    return None


def in_your_cell(ename: str, evalue: str, traceback: list[str], cell: Sequence[str], name: str) -> Message | None:
    """The error of the answer cell ``name`` (its lines ``cell``) at the line of that cell where it happened, or None
    when no line of it is known (a function the cell called then says where it was raised, ``raised_at``).

    A compile error (``SyntaxError``...) ran no line: its message names the cell as the kernel called it,
    ``(<ipython-input-6-e66...>, line 4)``, which the student never saw; that name is dropped.
    """
    where = COMPILED_AT.search(evalue) if ename in COMPILE_ERRORS else None
    if where is not None:
        line, error = int(where[1]), f"{ename}: {evalue[:where.start()]}"
    else:
        found = raised_at(f"{ename}: {evalue}" if evalue else ename, traceback, cell)
        if found is None or found.say != Say.RAISED_AT:  # a frame at the top of a cell is the cell that was running
            return found
        line, error = found.params["line"], found.params["error"]
    error = " ".join(error.split())[:300]
    code = " ".join(cell[line - 1].split())[:CODE_CHARS] if 0 < line <= len(cell) else ""
    if code:
        return say(Say.IN_YOUR_CELL, error=error, line=line, cell=name, code=code)
    return say(Say.IN_YOUR_CELL_LINE, error=error, line=line, cell=name)
