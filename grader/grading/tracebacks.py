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
