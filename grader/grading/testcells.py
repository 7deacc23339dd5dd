"""Test cells as lists of checks: what the kernel runs of a test cell, with the expected side of each check removed.

The rule a test cell follows (``grader check`` refuses a cell that breaks it, naming the cell):

* every check is a statement of its own at the top of the cell, ``assert_same(actual, expected)``
  or ``assert_same(actual, expected, what)``; ``assert_same`` is used nowhere else, and there is
  no ``assert`` statement;
* the expected values appear only as ``assert_same``'s second argument: no name is bound in
  the cell just to be used there;
* the hidden tests, if any, are the end of the cell, between ``### BEGIN HIDDEN TESTS`` and
  ``### END HIDDEN TESTS``, and hold at least one check;
* the cell holds at least one check;
* a hidden check may have ``AS_SOLUTION`` as its expected side (``grader.grading.asserts``): its expected value is
  the actual side as the reference run of the solution evaluates it, and its description, a plain string, names the
  kind of input it checks, which the feedback may show (``generated``).

``rewrite`` turns each check into ``check(k, actual, what)`` (``grader.grading.probe``), keeping every
line where it was, so a traceback points at the line the student reads. The visible part and
the hidden part become two pieces of code, run as two requests, the hidden one after the notebook's last cell
(``grader.grading.execute``); it begins with the visible part again, each check reduced to its actual side,
evaluated and not reported, so that it sees what it saw in place. In the reference run of the
solution (``expected=True``) each call also carries ``expected=...``; the student's kernel
never receives an expected side, and never the description of a hidden check.

A test cell that breaks the rule (plain ``assert`` statements, helper code, loops: whatever nbgrader
accepts) is graded the nbgrader way instead (``as_written``): it runs as written, and passes when it raises
nothing. Its verdict is decided in the student's kernel, which a determined student can forge; the
report says so for each such cell. Its hidden tests still run after the notebook's last cell, after
its visible part again.
"""

import ast
import functools
import re
from dataclasses import dataclass

from nbformat import NotebookNode

from ..authoring.metadata import HIDDEN_BEGIN, HIDDEN_END, grade_id, is_test
from ..errors import GraderError

CHECK_NAME = "assert_same"
AS_SOLUTION = "AS_SOLUTION"
PROBE = '__import__("grader.grading.probe").grading.probe.check'


class CheckRuleError(GraderError):
    """A test cell that does not follow the rule above; the message is one line."""


@dataclass(frozen=True)
class Check:
    """One ``assert_same`` of a test cell: its number in the cell, its line, and whether it is hidden."""

    index: int
    line: int
    hidden: bool
    what: str | None = None  # the description when it is a plain string
    expected: str = ""  # the source of its expected side, as the test cell has it
    end_line: int = 0  # its last line (0: its first)

    @property
    def generated(self) -> bool:
        """Whether its expected value is the solution's own value of its actual side (``AS_SOLUTION``)."""
        return self.expected == AS_SOLUTION


@dataclass(frozen=True)
class KernelCode:
    """A test cell as a kernel runs it: the visible code, the hidden code ("" if none), and its checks."""

    visible: str
    hidden: str
    checks: tuple[Check, ...]
    lines: tuple[str, ...] = ()  # the visible part's own lines, as the student reads them
    plain: str = ""  # why the cell is graded the nbgrader way, in the student's kernel; "" when it follows the rule

    @property
    def hidden_only(self) -> str:
        """The hidden code without the replay of the visible part it begins with."""
        return "\n".join(self.hidden.split("\n")[len(self.lines):])

    @property
    def hidden_checks(self) -> frozenset[int]:
        return frozenset(c.index for c in self.checks if c.hidden)


def _markers(lines: list[str]) -> tuple[int, int] | None:
    """The 1-based lines of the hidden markers, or None; refuses a misplaced pair."""
    begins = [n for n, line in enumerate(lines, 1) if line.strip() == HIDDEN_BEGIN]
    ends = [n for n, line in enumerate(lines, 1) if line.strip() == HIDDEN_END]
    if not begins and not ends:
        return None
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise CheckRuleError("needs exactly one BEGIN HIDDEN TESTS before one END HIDDEN TESTS")
    tail = [line for line in lines[ends[0]:] if line.strip() and not line.strip().startswith("#")]
    if tail:
        raise CheckRuleError("has code after END HIDDEN TESTS: the hidden tests must end the cell")
    return begins[0], ends[0]


def _is_check(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == CHECK_NAME


def _arguments(call: ast.Call) -> tuple[ast.expr, ast.expr, ast.expr | None]:
    """actual, expected and what of a check, refusing any other shape."""
    keywords = {k.arg: k.value for k in call.keywords}
    if any(isinstance(a, ast.Starred) for a in call.args) or None in keywords or set(keywords) - {"what"} \
            or not 2 <= len(call.args) + len(keywords) <= 3 or len(call.args) < 2:
        raise CheckRuleError(f"line {call.lineno}: a check is assert_same(actual, expected) or "
                            "assert_same(actual, expected, what)")
    what = call.args[2] if len(call.args) == 3 else keywords.get("what")
    return call.args[0], call.args[1], what


class _Bindings(ast.NodeVisitor):
    """The names a cell binds at its top level (not inside functions or classes), with their lines."""

    def __init__(self) -> None:
        self.bound: dict[str, int] = {}

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store):
            self.bound.setdefault(node.id, node.lineno)

    def _named(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.bound.setdefault(node.name, node.lineno)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _named

    def _skipped(self, node: ast.AST) -> None:
        return None  # a lambda's or a comprehension's names are its own

    visit_Lambda = visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _skipped

    def visit_alias(self, node: ast.alias) -> None:
        if node.name != "*":
            self.bound.setdefault((node.asname or node.name).split(".")[0], 0)


def _loads(tree: ast.AST, skipped: set[int]) -> set[str]:
    """Names read anywhere in ``tree`` outside the nodes whose id() is in ``skipped``."""
    found: set[str] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
            found.add(node.id)
        stack.extend(ast.iter_child_nodes(node))
    return found


def _offsets(source: str) -> list[int]:
    """The character offset where each line starts (1-based line numbers index it directly)."""
    starts, total = [0, 0], 0
    for line in source.split("\n")[:-1]:
        total += len(line) + 1
        starts.append(total)
    return starts


def _position(source_lines: list[str], starts: list[int], line: int, col: int) -> int:
    """The character offset of (line, UTF-8 byte column), as ``ast`` positions count."""
    return starts[line] + len(source_lines[line - 1].encode("utf-8")[:col].decode("utf-8"))


def rewrite(source: str, *, expected: bool = False, keep: frozenset[str] = frozenset()) -> KernelCode:
    """The test cell ``source`` as the kernel runs it; raises CheckRuleError when it breaks the rule.

    ``keep``: the names the notebook's other cells read (outside expected sides), computed on
    the source notebook only, so a student's cell can never pull an expected value in.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        raise CheckRuleError(f"does not parse as Python (line {error.lineno}: {error.msg})") from None
    lines = source.split("\n")
    markers = _markers(lines)
    calls: list[ast.Call] = []
    for statement in tree.body:
        if markers and statement.lineno < markers[0] < (statement.end_lineno or statement.lineno):
            raise CheckRuleError(f"line {statement.lineno}: a statement spans the BEGIN HIDDEN TESTS line")
        if isinstance(statement, ast.Expr) and _is_check(statement.value):
            assert isinstance(statement.value, ast.Call)
            calls.append(statement.value)
    top = {id(call) for call in calls}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            raise CheckRuleError(f"line {node.lineno}: uses assert; every check is an assert_same call")
        if isinstance(node, ast.Name) and node.id == CHECK_NAME and not any(
                id(call) in top and call.func is node for call in calls):
            raise CheckRuleError(f"line {node.lineno}: assert_same is used other than as a statement of its own "
                                "at the top of the cell")
        if isinstance(node, ast.Attribute) and node.attr == CHECK_NAME:
            raise CheckRuleError(f"line {node.lineno}: call assert_same by its name, not as an attribute")
    if not calls:
        raise CheckRuleError("holds no assert_same check")
    arguments = [_arguments(call) for call in calls]
    hidden_from = markers[0] if markers else len(lines) + 1
    unsent: list[ast.expr] = []  # what the kernel never receives: expected sides, descriptions of hidden checks
    for call, (_, expected_side, what) in zip(calls, arguments, strict=True):
        unsent += [expected_side] + ([what] if what is not None and call.lineno > hidden_from else [])
    dropped = [] if expected else _dropped(tree, unsent, keep)
    if markers and not any(call.lineno > hidden_from for call in calls):
        raise CheckRuleError("its hidden tests hold no assert_same check")
    starts = _offsets(source)

    def span(node: ast.stmt | ast.expr) -> tuple[int, int]:
        """Where ``node`` begins and ends in ``source`` (as ``ast.get_source_segment``, without splitting the cell
        again for every node)."""
        return (_position(lines, starts, node.lineno, node.col_offset),
                _position(lines, starts, node.end_lineno or node.lineno, node.end_col_offset or 0))

    def segment(node: ast.expr) -> str:
        begin, stop = span(node)
        return source[begin:stop]

    checks = []
    blanks: list[tuple[int, int, str]] = []  # the dropped statements: every other line keeps its number
    probes: list[tuple[int, int, str]] = []  # each check as the kernel runs it, reporting
    replays: list[tuple[int, int, str]] = []  # each check's actual side alone, for the replay of the visible part
    for statement in dropped:
        begin, stop = span(statement)
        blanks.append((begin, stop, "pass" + "\n" * source[begin:stop].count("\n")))
    for index, (call, (actual, expected_node, what)) in enumerate(zip(calls, arguments, strict=True)):
        hidden = call.lineno > hidden_from
        literal = what.value if isinstance(what, ast.Constant) and isinstance(what.value, str) else None
        generated = isinstance(expected_node, ast.Name) and expected_node.id == AS_SOLUTION
        if generated and (not hidden or not literal):
            raise CheckRuleError(f"line {call.lineno}: a check against {AS_SOLUTION} is a hidden one, with a plain "
                                 "string naming the kind of input it checks")
        parts = [str(index), segment(actual)]
        if what is not None and (expected or not hidden):
            parts.append(segment(what))
        if generated:  # its hidden verdict needs only "the same or not": the kernel reports the value's digest
            parts.append("hashed=True")
        if expected and not generated:  # a generated check's expected value is its own actual side (reference.py)
            parts.append("expected=" + segment(expected_node))
        begin, stop = span(call)
        text = f"{PROBE}({', '.join(parts)})"
        text = text[:-1] + "\n" * (source[begin:stop].count("\n") - text.count("\n")) + ")"
        probes.append((begin, stop, text))
        alone = segment(actual)
        replays.append((begin, stop, f"({alone}" + "\n" * (source[begin:stop].count("\n") - alone.count("\n")) + ")"))
        checks.append(Check(index, call.lineno, hidden, literal if what is not None else "valor",
                            segment(expected_node), call.end_lineno or call.lineno))
    code_lines = _replaced(source, blanks + probes).split("\n")
    if not markers:
        return KernelCode("\n".join(code_lines), "", tuple(checks), tuple(lines))
    begin_line, end_line = markers
    visible = "\n".join(code_lines[:begin_line - 1])
    # the hidden part runs after the notebook's last cell: the visible part first sets up again what it uses,
    # its checks' actual sides evaluated (their calls may change what the hidden checks see) but not reported
    replay = _replaced(source, blanks + replays).split("\n")[:begin_line - 1]
    hidden_code = "\n".join(replay + [""] + code_lines[begin_line:end_line - 1])
    return KernelCode(visible, hidden_code, tuple(checks), tuple(lines[:begin_line - 1]))


def as_written(source: str, why: str) -> KernelCode:
    """A test cell that breaks the rule, as the kernel runs it the nbgrader way: as written, passing when it raises
    nothing (``why``: the rule it breaks). The visible part is every line before the first BEGIN HIDDEN TESTS; the
    hidden part, run after the notebook's last cell, is the whole cell again. Raises CheckRuleError when a BEGIN
    HIDDEN TESTS has no END after it, or an END no BEGIN before it (nbgrader refuses such a cell too)."""
    lines = source.split("\n")
    depth, first = 0, 0
    for number, line in enumerate(lines, 1):
        if line.strip() == HIDDEN_BEGIN:
            depth, first = depth + 1, first or number
        elif line.strip() == HIDDEN_END:
            depth -= 1
        if depth not in (0, 1):
            raise CheckRuleError(f"line {number}: the BEGIN and END HIDDEN TESTS lines do not pair up")
    if depth:
        raise CheckRuleError("a BEGIN HIDDEN TESTS line has no END HIDDEN TESTS after it")
    if not first:
        return KernelCode(source, "", (), tuple(lines), why)
    return KernelCode("\n".join(lines[:first - 1]), source, (), tuple(lines[:first - 1]), why)


def _replaced(source: str, replacements: list[tuple[int, int, str]]) -> str:
    """``source`` with each (begin, stop, text) span replaced by its text."""
    pieces, end = [], 0
    for begin, stop, text in sorted(replacements):
        pieces += [source[end:begin], text]
        end = stop
    return "".join(pieces) + source[end:]


def _dropped(tree: ast.Module, unsent: list[ast.expr], keep: frozenset[str]) -> list[ast.stmt]:
    """The statements that only feed what the kernel never receives: they never reach it either.

    ``unsent`` are the expected sides, and the descriptions of hidden checks. A statement is
    dropped when every name it binds is read only there (here, and nowhere in ``keep``: the names
    other cells read). Such a binding that cannot be dropped whole (it also binds a name used
    elsewhere, or it is a loop) is refused.
    """
    used_elsewhere = _loads(tree, {id(node) for node in unsent}) | keep
    used_in_expected = set().union(*(_loads(node, set()) for node in unsent))
    dropped: list[ast.stmt] = []
    for statement in tree.body:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            continue  # a library name is no expected value
        bindings = _Bindings()
        bindings.visit(statement)
        feeding = {name for name in bindings.bound if name in used_in_expected and name not in used_elsewhere}
        if not feeding:
            continue
        if feeding != set(bindings.bound) or not isinstance(
                statement, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.FunctionDef, ast.ClassDef)):
            name = sorted(feeding)[0]
            raise CheckRuleError(f"line {statement.lineno}: {name} is bound only to be an expected value; "
                                "write the value as assert_same's second argument")
        dropped.append(statement)
    return dropped


def problems(source: NotebookNode) -> list[str]:
    """Why each test cell of a source notebook breaks the rule, one line each naming the cell."""
    found = []
    for cell in source.cells:
        if is_test(cell):
            try:
                rewrite(cell.source)
            except CheckRuleError as error:
                found.append(f"test cell {grade_id(cell)}: {error}")
    return found


def without_hidden_part(source: NotebookNode) -> list[str]:
    """The course's own rule on top of the grader's: every graded test cell has a hidden part, since a visible
    expected value is one the student holds (an answer could return it); one line per cell that has none."""
    return [f"test cell {grade_id(cell)}: has no hidden part (### BEGIN HIDDEN TESTS ... ### END HIDDEN TESTS); "
            "a visible expected value is one the student holds" for cell in source.cells
            if is_test(cell) and cell.get("cell_type") == "code" and HIDDEN_BEGIN not in cell.source]


def _reads(source: str) -> set[str]:
    """The names a cell reads outside the expected sides of its checks (every identifier if it does not parse)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set(re.findall(r"[^\W\d]\w*", source))
    expected_sides = {id(statement.value.args[1]) for statement in tree.body
                      if isinstance(statement, ast.Expr) and _is_check(statement.value)
                      and isinstance(statement.value, ast.Call) and len(statement.value.args) > 1}
    return _loads(tree, expected_sides)


def in_kernel(source: NotebookNode) -> dict[str, str]:
    """The test cells of a source notebook graded the nbgrader way (``as_written``), by grade_id: why each breaks the
    rule. Raises CheckRuleError, naming the cell, for a cell that cannot be graded either way."""
    return {gid: code.plain for gid, code in rewrite_tests(source).items() if code.plain}


def rewrite_tests(source: NotebookNode, *, expected: bool = False) -> dict[str, KernelCode]:
    """Every test cell of the source notebook as a kernel runs it, by grade_id: ``rewrite``, or ``as_written`` for a
    cell that breaks the rule; CheckRuleError names a cell that can be graded neither way.

    Rewritten once per process for each source (a batch worker grades many submissions of one).
    """
    code_cells = tuple((cell.source, (grade_id(cell) or "?") if is_test(cell) else None)
                       for cell in source.cells if cell.get("cell_type") == "code")
    return dict(_rewritten(code_cells, expected))


@functools.lru_cache(maxsize=32)
def _rewritten(code_cells: tuple[tuple[str, str | None], ...], expected: bool) -> dict[str, KernelCode]:
    """``rewrite_tests`` of the code cells (source, grade_id of a test cell or None); callers get a copy."""
    reads = [_reads(text) for text, _ in code_cells]
    codes = {}
    for position, (text, gid) in enumerate(code_cells):
        if gid is None:
            continue
        keep = frozenset().union(*(names for other, names in enumerate(reads) if other != position))
        try:
            codes[gid] = rewrite(text, expected=expected, keep=keep)
        except CheckRuleError as broken:
            try:
                codes[gid] = as_written(text, str(broken))
            except CheckRuleError as error:
                raise CheckRuleError(f"test cell {gid}: {error}") from None
    return codes
