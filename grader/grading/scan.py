"""A static look at the student's code for ways to tamper with grading, for the instructor to read.

The scan lists what it finds (``set_custom_exc``, input or AST transformers, event hooks,
``sys.modules``, the grader's own modules (``grader-internals``), ``showtraceback``, ``sys.excepthook``,
``builtins``, the kernel or its session (``kernel``: ``get_ipython().kernel``, ``session.send``),
the calling frames (``frames``: ``sys._getframe``, ``inspect.stack``, ``f_back``), ``linecache``
and ``gc.get_objects``); it never changes the score: verdicts are decided outside the kernel.
Code that parses is read with ``ast``; code that does not (IPython magics, a syntax error)
falls back to regular expressions.
``from grader import assert_same``, which students may use to test their work, is not flagged.
"""

import ast
import re

ATTRIBUTES = {
    "set_custom_exc": "set_custom_exc", "CustomTB": "set_custom_exc", "custom_exceptions": "set_custom_exc",
    "input_transformers_cleanup": "input_transformers", "input_transformers_post": "input_transformers",
    "input_transformer_manager": "input_transformers", "ast_transformers": "ast_transformers",
    "showtraceback": "showtraceback", "_showtraceback": "showtraceback", "excepthook": "sys.excepthook",
    "iopub_socket": "kernel", "shell_streams": "kernel", "_getframe": "frames", "currentframe": "frames",
    "f_back": "frames", "f_locals": "frames", "f_globals": "frames", "get_objects": "gc.get_objects",
    "get_referrers": "gc.get_objects",
}
MODULES = {"builtins": "builtins", "linecache": "linecache", "gc": "gc.get_objects"}
EVENT_METHODS = ("register", "unregister", "callbacks")
FALLBACK = {
    **{rf"\b{re.escape(name)}\b": kind for name, kind in ATTRIBUTES.items()},
    r"\bevents\s*\.\s*(register|unregister|callbacks)\b": "events.register",
    r"\bsys\s*\.\s*modules\b": "sys.modules",
    r"\b(__builtins__|builtins)\b": "builtins",
    r"\blinecache\b": "linecache",
    r"get_ipython\(\)\s*\.\s*kernel\b|\bsession\s*\.\s*send\b": "kernel",
    r"\b_getframe\b|\binspect\s*\.\s*stack\b|\bf_back\b": "frames",
    r"\bgc\s*\.\s*get_objects\b": "gc.get_objects",
    r"\bimport\s+grader\b|\bfrom\s+grader\.|\bgrader\s*\.|['\"]grader(\.|['\"])": "grader-internals",
}


def _imports(node: ast.Import | ast.ImportFrom) -> set[str]:
    if isinstance(node, ast.Import):
        names = {alias.name for alias in node.names}
        return ({"grader-internals"} if any(n.split(".")[0] == "grader" for n in names) else set()) | {
            MODULES[name] for name in names if name in MODULES}
    if node.module in MODULES:
        return {MODULES[node.module]}
    if node.module and node.module.split(".")[0] == "grader":
        if node.module != "grader" or any(alias.name != "assert_same" for alias in node.names):
            return {"grader-internals"}
    return set()


def _found(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Attribute):
        if node.attr in ATTRIBUTES:
            return {ATTRIBUTES[node.attr]}
        if node.attr in EVENT_METHODS and isinstance(node.value, ast.Attribute) and node.value.attr == "events":
            return {"events.register"}
        if node.attr == "kernel" and isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") \
                == "get_ipython" or node.attr == "send" and getattr(node.value, "attr", "") == "session":
            return {"kernel"}
        if node.attr in ("stack", "getouterframes", "getinnerframes") and getattr(node.value, "id", "") == "inspect":
            return {"frames"}
        if node.attr == "modules" and isinstance(node.value, ast.Name) and node.value.id == "sys":
            return {"sys.modules"}
        if isinstance(node.value, ast.Name) and node.value.id == "grader":
            return {"grader-internals"}
    elif isinstance(node, ast.Name) and node.id in ("builtins", "__builtins__"):
        return {"builtins"}
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        return _imports(node)
    elif isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
        found = {kind for name, kind in ATTRIBUTES.items() if name in text}
        return found | ({"grader-internals"} if re.match(r"grader(\.|$)", text) else set())
    return set()


def scan_source(code: str) -> set[str]:
    """The kinds of tampering a piece of student code touches."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return {kind for pattern, kind in FALLBACK.items() if re.search(pattern, code)}
    return set().union(*(_found(node) for node in ast.walk(tree)))


def scan_cells(sources: list[str]) -> list[str]:
    """Every kind of tampering found in the student's cells, sorted."""
    return sorted(set().union(*(scan_source(source) for source in sources)))
