"""Submissions whose answers are suspiciously alike: pairs, and groups of three or more that share rare code.

Similar answers are found by winnowing (Schleimer, Wilkerson and Aiken, "Winnowing: local
algorithms for document fingerprinting", SIGMOD 2003; the method of MOSS). Each answer cell is
read on its own, its IPython syntax (magics, ``!`` lines) turned into Python first, and at most
``CELL_CHARS`` of it, so one cell that does not lex, or a huge one, costs only itself. Its tokens
have names, strings and numbers as placeholders (renaming a variable changes nothing); every
``K_GRAM`` tokens are hashed, and the smallest hash of each window of ``WINDOW`` hashes is kept.

What the source itself holds is left out: the solution's answers, the stub and the written-down
wrong answers, which many students write alike without copying. Two submissions are alike by the
larger of two measures of their remaining fingerprints: overlap (Jaccard) and containment (the
share of the smaller one found in the other, so padding a copy with dead code does not hide it),
when they share at least ``MIN_SHARED``. Pairs at or above the threshold are listed, and pairs
that chain three or more submissions together are shown as one group.
"""

import hashlib
import io
import tokenize
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import combinations

K_GRAM, WINDOW = 5, 4
CELL_CHARS = 20_000  # of one answer cell fingerprinted; the rest is left out (a 15 MB cell took 1.1 GiB and 70 s)
MIN_SHARED = 4  # fingerprints two submissions must share to be a pair at all
DEFAULT_THRESHOLD = 0.8
PLACEHOLDERS = {tokenize.NAME: "V", tokenize.STRING: "S", tokenize.NUMBER: "N"}
SKIPPED = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING,
           tokenize.ENDMARKER}
KEYWORDS = frozenset(__import__("keyword").kwlist)


def _python(code: str) -> str:
    """A cell as the kernel runs it: IPython's syntax (``%magic``, ``!shell``) turned into Python calls."""
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        return str(TransformerManager().transform_cell(code))
    except Exception:  # noqa: BLE001 - any cell IPython cannot transform is read as it is
        return code


def tokens(code: str) -> list[str]:
    """The code's tokens with names, strings and numbers as placeholders (keywords kept); [] if it does not lex."""
    found = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(_python(code[:CELL_CHARS])).readline):
            if token.type in SKIPPED:
                continue
            if token.type == tokenize.NAME and token.string in KEYWORDS:
                found.append(token.string)
            else:
                found.append(PLACEHOLDERS.get(token.type, token.string))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []
    return found


def fingerprints(code: str) -> set[int]:
    """The winnowed fingerprints of one cell's ``code``: the smallest k-gram hash of each window."""
    found = tokens(code)
    hashes = [int.from_bytes(hashlib.blake2b(" ".join(found[i:i + K_GRAM]).encode(), digest_size=8).digest(), "big")
              for i in range(len(found) - K_GRAM + 1)]
    if len(hashes) <= WINDOW:
        return set(hashes)
    return {min(hashes[i:i + WINDOW]) for i in range(len(hashes) - WINDOW + 1)}


def prints_of(cells: Iterable[str]) -> set[int]:
    """The fingerprints of a submission's answer cells, each cell read on its own."""
    return set().union(*(fingerprints(code) for code in cells))


def alike(mine: set[int], theirs: set[int]) -> float:
    """How alike two submissions' fingerprints are: the larger of their overlap and their containment; 0 when they
    share fewer than ``MIN_SHARED``."""
    shared = len(mine & theirs)
    if shared < MIN_SHARED:
        return 0.0
    return max(shared / len(mine | theirs), shared / min(len(mine), len(theirs)))


def similar_pairs(answers: Mapping[str, Iterable[str]], threshold: float = DEFAULT_THRESHOLD,
                  expected: frozenset[int] = frozenset()) -> list[tuple[str, str, float]]:
    """Pairs of submissions (name: answer cells) at least ``threshold`` alike once the ``expected`` fingerprints
    (the source's own answers) are left out, most alike first."""
    prints = {name: prints_of(cells) - expected for name, cells in answers.items()}
    pairs = [(a, b, score) for (a, mine), (b, theirs) in combinations(sorted(prints.items()), 2)
             if (score := alike(mine, theirs)) >= threshold]
    return sorted(pairs, key=lambda pair: (-pair[2], pair[0], pair[1]))


@dataclass(frozen=True)
class Group:
    """Three or more submissions chained by alike pairs, and why: the pairs' lowest and highest likeness."""

    members: tuple[str, ...]
    lowest: float
    highest: float

    @property
    def why(self) -> str:
        """One line for the instructor: how alike, and in what."""
        return (f"{len(self.members)} submissions, each at least {100 * self.lowest:.0f} % alike to another in the "
                f"group (up to {100 * self.highest:.0f} %), in code the source does not hold")


def groups(pairs: list[tuple[str, str, float]]) -> list[Group]:
    """The groups of three or more submissions that alike pairs join (connected components), largest first."""
    parent: dict[str, str] = {}

    def root(name: str) -> str:
        while parent.setdefault(name, name) != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    for a, b, _ in pairs:
        parent[root(a)] = root(b)
    members: dict[str, list[str]] = {}
    for name in parent:
        members.setdefault(root(name), []).append(name)
    found = []
    for names in members.values():
        if len(names) >= 3:
            scores = [score for a, b, score in pairs if a in names]
            found.append(Group(tuple(sorted(names)), min(scores), max(scores)))
    return sorted(found, key=lambda group: (-len(group.members), group.members))
