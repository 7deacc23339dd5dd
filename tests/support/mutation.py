"""Mutants of the solutions: small, deliberate bugs in an exercise's answer that the visible tests must catch.

A mutant is the solution notebook with one exercise cell (a code cell with nbgrader ``solution: true``
and a grade_id, not graded by hand) changed in one place, inside its ``### BEGIN SOLUTION`` /
``### END SOLUTION`` region (what the student writes; the signature and docstring are given). It is
graded against the VISIBLE tests only, every mutant of a lesson in one batch
(``visible_grading.grade_replacements``, shared with ``test_wrong_answers.py``), and it is *killed*
when it scores less than the unchanged solution graded in the same batch.

Operators (each applied at one place of the cell's ``ast``; the text of that node is replaced in the
source, so comments and layout elsewhere stay):

- ``compare``: an ordering comparison negated (``<`` -> ``>=``) or its boundary moved (``<`` -> ``<=``);
  ``==`` <-> ``!=``; ``in`` <-> ``not in``; ``is`` <-> ``is not``; ``==`` -> ``is`` and ``!=`` -> ``is not``
  when neither side is a literal (the bug of comparing strings by identity, which equal-but-distinct strings,
  e.g. read from JSON, expose). Not ``is`` -> ``==``: in these solutions ``is`` only meets ``None``, types and
  sentinels, where ``==`` is the same test (all 11 survivors of this kind in a first run, N = 12, were equivalent);
- ``boolop``: ``and`` <-> ``or``;
- ``not``: ``not x`` -> ``x``;
- ``constant``: an int + 1, ``True`` <-> ``False``, a non-empty string -> ``""`` (not inside f-strings, nor
  inside a ``raise``: a message's wording is free, solutions/README.md);
- ``return``: ``return X`` -> ``return None``;
- ``delete``: a statement of a function body (at any depth, docstrings, ``pass`` and ``return`` excepted)
  replaced by ``pass``;
- ``bound``: a slice bound ``e`` -> ``e + 1`` and ``e - 1``; an int-literal index or slice bound one lower
  and one higher (``x[-1]`` -> ``x[-2]``, ``x[0]``); an index that is not an int literal (a dict key) is left.

Deterministic: the candidates are listed in source order (then operator order); a candidate that does
not compile, or whose text equals the original, is dropped; when more than ``N`` remain (default 6, for
the time budget: see test_mutants.py), ``N`` are drawn with ``random.Random("<lesson>:<grade_id>")`` and
kept in source order, so an edit to one exercise never changes another's sample. ``random.sample`` draws
its picks one by one, so with a smaller N they are the first picks of a larger one (checked for N = 6, 7
and 8): lowering N keeps a subset of the mutants.

A mutant's key, ``<lesson>:<grade_id>: <old line> => <new line>`` (the changed line, stripped; `` #2``
for a repeat), names it in the lists of ``test_mutants.py`` and survives edits elsewhere in the cell.

Libraries considered: mutmut 3 rewrites whole modules through libcst into trampolines run by its own
pytest driver, and cosmic-ray's operators act on parso trees through its session/worker machinery;
neither offers operators over Python's ``ast`` that take one cell's source and return mutated text
without driving their runners, and mutatest (``ast``-based) is unmaintained since 2022. The operator
set above is about 150 lines of ``ast``, so it is written here.

``python tests/support/mutation.py [NN ...]`` grades the mutants of the named lessons (all by default), one
lesson at a time, and prints per exercise the mutants, killed, survived and each survivor's diff.
"""

import ast
import hashlib
import random
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the repository's grader, not an installed one
    sys.path[:0] = [str(Path(__file__).resolve().parents[2]), str(Path(__file__).resolve().parent)]

from visible_grading import ROOT, grade_replacements  # noqa: E402

from grader.authoring.metadata import grade_id, is_manual, is_solution  # noqa: E402
from grader.authoring.notebooks import read_notebook  # noqa: E402

N = 6
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
ORDERING = {ast.Lt: (ast.GtE, ast.LtE), ast.LtE: (ast.Gt, ast.Lt), ast.Gt: (ast.LtE, ast.GtE),
            ast.GtE: (ast.Lt, ast.Gt)}
SWAPS = {ast.Eq: (ast.NotEq,), ast.NotEq: (ast.Eq,), ast.In: (ast.NotIn,), ast.NotIn: (ast.In,),
         ast.Is: (ast.IsNot,), ast.IsNot: (ast.Is,)}


@dataclass(frozen=True)
class Mutant:
    lesson: str  # "03"
    path: Path  # the solution notebook
    target: str  # the exercise's grade_id
    operator: str
    line: int  # 1-based, in the cell
    old: str  # the changed line(s), stripped and joined
    new: str
    source: str  # the whole mutated cell
    key: str = ""

    @property
    def diff(self) -> str:
        return f"{self.old} => {self.new}"


def exercises(path: Path) -> list[tuple[str, str]]:
    """The (grade_id, source) of every autograded exercise cell of a solution notebook, in order."""
    return [(grade_id(c), c.source) for c in read_notebook(path).cells
            if c.cell_type == "code" and is_solution(c) and not is_manual(c) and grade_id(c)]


def _regions(source: str) -> list[tuple[int, int]]:
    """The 1-based line ranges strictly between each BEGIN and END SOLUTION marker."""
    regions, start = [], None
    for number, line in enumerate(source.splitlines(), 1):
        if line.strip() == BEGIN:
            start = number
        elif line.strip() == END and start is not None:
            regions.append((start + 1, number - 1))
            start = None
    return regions


def _literal(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and not any(node.value is v for v in (None, True, False))


def _int_literal(node: ast.AST | None) -> int | None:
    """The value of an int literal (``3``, ``-1``), else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int_literal(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _edits(tree: ast.Module):
    """Every (operator, node, replacement text) of the operator set, in source order."""
    in_fstring = {id(n) for f in ast.walk(tree) if isinstance(f, ast.JoinedStr) for n in ast.walk(f)}
    in_raise = {id(n) for r in ast.walk(tree) if isinstance(r, ast.Raise) for n in ast.walk(r) if n is not r}
    docstrings = {id(f.body[0]) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
                  and ast.get_docstring(f, clean=False) is not None}
    in_function = {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
                   for n in ast.walk(f) if n is not f}
    found = []
    for node in ast.walk(tree):
        if id(node) in in_fstring or not hasattr(node, "lineno"):
            continue
        edits: list[tuple[str, ast.AST, str]] = []
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                sides = (node.left if i == 0 else node.comparators[i - 1], node.comparators[i])
                choices = list(ORDERING.get(type(op), SWAPS.get(type(op), ())))
                if isinstance(op, ast.Eq) and not any(map(_literal, sides)):
                    choices.append(ast.Is)
                if isinstance(op, ast.NotEq) and not any(map(_literal, sides)):
                    choices.append(ast.IsNot)
                for choice in choices:
                    ops = list(node.ops)
                    ops[i] = choice()
                    edits.append(("compare", node, ast.unparse(ast.Compare(node.left, ops, node.comparators))))
        elif isinstance(node, ast.BoolOp):
            other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            edits.append(("boolop", node, ast.unparse(ast.BoolOp(other, node.values))))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            edits.append(("not", node, ast.unparse(node.operand)))
        elif isinstance(node, ast.Constant) and id(node) not in docstrings and id(node) not in in_raise:
            value = node.value
            if isinstance(value, bool):
                edits.append(("constant", node, repr(not value)))
            elif isinstance(value, int):
                edits.append(("constant", node, repr(value + 1)))
            elif isinstance(value, str) and value:
                edits.append(("constant", node, '""'))
        elif isinstance(node, ast.Return) and node.value is not None and not (
                isinstance(node.value, ast.Constant) and node.value.value is None):
            edits.append(("return", node, "return None"))
        elif isinstance(node, ast.Subscript):
            sliced = isinstance(node.slice, ast.Slice)
            for bound in [node.slice.lower, node.slice.upper] if sliced else [node.slice]:
                value = _int_literal(bound)
                if value is not None:  # x[1], x[-1], x[:2]: the literal one lower and one higher
                    edits += [("bound", bound, repr(value - 1)), ("bound", bound, repr(value + 1))]
                elif sliced and bound is not None:  # x[:n] -> x[:n + 1], x[:n - 1]
                    text = ast.unparse(bound)
                    edits += [("bound", bound, f"{text} + 1"), ("bound", bound, f"{text} - 1")]
        if isinstance(node, ast.stmt) and id(node) in in_function and id(node) not in docstrings and not isinstance(
                node, ast.Pass | ast.Return | ast.FunctionDef):
            edits.append(("delete", node, "pass"))
        found += edits
    return sorted(found, key=lambda e: (e[1].lineno, e[1].col_offset))


def _replace(source: str, node: ast.AST, text: str) -> str:
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def at(line: int, col: int) -> int:  # ast columns are UTF-8 byte offsets
        return offsets[line - 1] + len(lines[line - 1].encode()[:col].decode())

    start, end = at(node.lineno, node.col_offset), at(node.end_lineno, node.end_col_offset)
    return source[:start] + text + source[end:]


def _changed(old: str, new: str) -> tuple[int, str, str]:
    """The first differing line and the changed lines on each side, stripped and joined by ' / '."""
    a, b = old.splitlines(), new.splitlines()
    top = 0
    while top < min(len(a), len(b)) and a[top] == b[top]:
        top += 1
    tail = 0
    while tail < min(len(a), len(b)) - top and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return top + 1, _shown(a[top:len(a) - tail]), _shown(b[top:len(b) - tail])


def _shown(lines: list[str]) -> str:
    """Changed lines as one: the first, stripped, without its trailing comment; `` …`` when more follow."""
    if not lines:
        return ""
    line, quote = lines[0].strip(), None
    for i, char in enumerate(line):  # the first # outside a string literal starts the comment
        if quote:
            quote = None if char == quote and line[i - 1] != "\\" else quote
        elif char in "'\"":
            quote = char
        elif char == "#":
            line = line[:i].rstrip()
            break
    return line + (" …" if len(lines) > 1 else "")


def mutants_of(path: Path, target: str, source: str, n: int = N) -> list[Mutant]:
    """At most ``n`` compiling mutants of one exercise cell, the same ones in the same order every run."""
    lesson = path.name[:2]
    tree = ast.parse(source)
    regions = _regions(source)
    candidates, seen = [], set()
    for operator, node, text in _edits(tree):
        if not any(start <= node.lineno and node.end_lineno <= end for start, end in regions):
            continue
        mutated = _replace(source, node, text)
        if mutated == source or mutated in seen:
            continue
        try:
            compile(mutated, f"<{target}>", "exec")
        except SyntaxError:
            continue
        seen.add(mutated)
        line, old, new = _changed(source, mutated)
        candidates.append(Mutant(lesson, path, target, operator, line, old, new, mutated))
    if len(candidates) > n:
        chosen = sorted(random.Random(f"{lesson}:{target}").sample(range(len(candidates)), n))
        candidates = [candidates[i] for i in chosen]
    keys: dict[str, int] = {}
    named = []
    for mutant in candidates:
        key = f"{lesson}:{target}: {mutant.diff}"
        keys[key] = keys.get(key, 0) + 1
        named.append(Mutant(**{**mutant.__dict__, "key": key if keys[key] == 1 else f"{key} #{keys[key]}"}))
    return named


def solution(lesson: str) -> Path:
    return next((ROOT / "solutions").glob(f"{lesson}_*.ipynb"))


def lesson_mutants(lesson: str, n: int = N) -> list[Mutant]:
    path = solution(lesson)
    return [m for target, source in exercises(path) for m in mutants_of(path, target, source, n)]


def lessons() -> list[str]:
    return sorted(p.name[:2] for p in (ROOT / "solutions").glob("[0-9][0-9]_*.ipynb"))


def submission_name(mutant: Mutant) -> str:
    return f"{mutant.path.stem}__{mutant.target}__{hashlib.sha256(mutant.key.encode()).hexdigest()[:10]}"


def grade(mutants: list[Mutant], root: Path, cell_timeout: float = 10) -> dict[str, bool]:
    """Whether each mutant (by key) is killed; all of them must come from one lesson (one batch), with the
    unchanged solution graded alongside as the score to beat (it must earn full marks, or nothing is judged).
    A slow lesson's cells get longer (``visible_grading.SLOW_SETUP``)."""
    if not mutants:
        return {}
    path = mutants[0].path
    assert all(m.path == path for m in mutants), "one lesson per batch"
    submissions = {submission_name(m): (m.path, m.target, m.source) for m in mutants}
    first_target, first_source = exercises(path)[0]
    submissions[f"{path.stem}__baseline"] = (path, first_target, first_source)
    reports = grade_replacements(root, submissions, visible=True, cell_timeout=cell_timeout)
    baseline = reports[f"{path.stem}__baseline"]
    best = baseline["score"]
    assert best == baseline["max_score"], f"{path.name}: the unchanged solution scored {best} of " \
                                           f"{baseline['max_score']} (a cell timed out?): no mutant can be judged"
    return {m.key: reports[submission_name(m)]["score"] < best for m in mutants}


def main(argv: list[str]) -> int:
    chosen = argv or lessons()
    totals = [0, 0]
    started = time.monotonic()
    for lesson in chosen:
        mutants = lesson_mutants(lesson)
        clock = time.monotonic()
        with tempfile.TemporaryDirectory() as tmp:
            killed = grade(mutants, Path(tmp))
        print(f"\n{solution(lesson).name}  ({time.monotonic() - clock:.0f} s)")
        print(f"  {'exercise':<24} {'mutants':>7} {'killed':>6} {'survived':>8}")
        for target, _ in exercises(solution(lesson)):
            mine = [m for m in mutants if m.target == target]
            dead = sum(killed[m.key] for m in mine)
            print(f"  {target:<24} {len(mine):>7} {dead:>6} {len(mine) - dead:>8}")
            for m in mine:
                if not killed[m.key]:
                    print(f"      survivor [{m.operator}] L{m.line}: {m.diff}")
        totals[0] += len(mutants)
        totals[1] += sum(killed.values())
    print(f"\n{totals[0]} mutants, {totals[1]} killed, {totals[0] - totals[1]} survived, "
          f"{time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
