"""The modules a lesson imports, imported once by a worker's zygote instead of once by every kernel.

A kernel forked from the zygote (``grader.kernels.zygote``) finds them in ``sys.modules`` as if
it had imported them itself: lesson 12's frameworks take about 3 s of CPU to import, once per
worker instead of once per submission. The names come only from the instructor's notebooks
(the sources), never from a submission, and the zygote imports them as the grader does its own.
"""

import ast
import re
from collections.abc import Iterable

from nbformat import NotebookNode

MODULE_NAME = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*\Z", re.ASCII)
SHELL_LINE = re.compile(r"^\s*[%!]", re.MULTILINE)  # an IPython magic or shell line: not Python


def imported_modules(notebooks: Iterable[NotebookNode]) -> tuple[str, ...]:
    """Every module the code cells of these notebooks import by absolute name, sorted.

    ``from m import n`` names ``m`` and ``m.n``, which may be a submodule (the zygote skips a name
    that is not a module). A cell that does not parse adds nothing.
    """
    names: set[str] = set()
    for nb in notebooks:
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            try:
                tree = ast.parse(SHELL_LINE.sub("pass  #", cell.source))
            except (SyntaxError, ValueError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names.update(alias.name for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    names.add(node.module)
                    names.update(f"{node.module}.{alias.name}" for alias in node.names if alias.name != "*")
    return tuple(sorted(name for name in names if MODULE_NAME.match(name)))
