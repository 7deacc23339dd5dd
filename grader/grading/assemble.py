"""The notebook that is actually graded: the student's answers inside the source's protected cells.

Protected cells (locked cells and test cells, with their metadata and points) come from
the source, by grade_id, in the source's order - so an edited, retyped, duplicated or
deleted test cell is put back as the source has it, and hidden tests appear only here. A
test cell as the source itself has it is not tampering: the solution notebook, graded as an
instructor's sanity check, reports nothing restored.
Solution cells come from the submission. Cells the student added run too, right after
the cell they followed in the submission, without any nbgrader metadata (they can never
earn points). A duplicated solution cell is kept as extra student code after the first.
"""

import copy
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from nbformat import NotebookNode

from ..authoring.metadata import grade_id, is_protected, is_solution, is_solution_only, nbgrader, tags
from ..messages import Message, Say, say

COMPARED_METADATA = ("grade", "solution", "locked", "points", "grade_id")


@dataclass
class Assembly:
    """The notebook to run, where each source cell landed, and what was found tampered."""

    notebook: NotebookNode
    positions: dict[str, int] = field(default_factory=dict)           # grade_id -> index in notebook
    tampered: list[dict[str, str]] = field(default_factory=list)      # {"grade_id", "problem"}
    notes: list[Message] = field(default_factory=list)


def _plain(cell: NotebookNode) -> NotebookNode:
    """A student's cell without nbgrader metadata, its tags read once (a string is one tag)."""
    cell = copy.deepcopy(cell)
    cell.metadata.pop("nbgrader", None)
    if cell.cell_type == "code":
        cell.outputs = []  # outputs come from running it, never from the file
    if "tags" in cell.metadata:
        cell.metadata["tags"] = tags(cell)
    return cell


def _index_submission(submission: NotebookNode,
                      expected: dict[str, NotebookNode]) -> tuple[dict[str, list[Any]], dict[str | None, list[Any]]]:
    copies: dict[str, list[Any]] = defaultdict(list)
    followers: dict[str | None, list[Any]] = defaultdict(list)
    anchor: str | None = None
    for cell in submission.cells:
        gid = grade_id(cell)
        if is_solution_only(cell):
            continue  # explanations of the solution never run as student code
        if gid is None or gid not in expected:
            followers[anchor].append(_plain(cell))
            continue
        copies[gid].append(cell)
        if len(copies[gid]) == 1:
            anchor = gid
        elif is_solution(expected[gid]):
            followers[anchor].append(_plain(cell))  # a copy of a solution cell is more student code
        # a copy of a protected cell is dropped; _tamper_problem reports it
    return copies, followers


def _tamper_problem(mine: list[NotebookNode] | None, expected: NotebookNode, original: NotebookNode) -> str | None:
    """What was done to a protected cell; the source's own text (hidden tests included) is not tampering."""
    if not mine:
        return "deleted"
    cell = mine[0]
    if cell.cell_type != expected.cell_type:
        return f"retyped from {expected.cell_type} to {cell.cell_type}"
    if cell.source not in (expected.source, original.source):
        return "edited"
    if any(nbgrader(cell).get(k) != nbgrader(expected).get(k) for k in COMPARED_METADATA):
        return "metadata edited"
    if len(mine) > 1:
        return f"duplicated ({len(mine)} copies)"
    return None


def assemble(source: NotebookNode, submission: NotebookNode, student: NotebookNode) -> Assembly:
    """Build the graded notebook from the source, the submission and the generated student version."""
    expected = {gid: c for c in student.cells if (gid := grade_id(c))}
    copies, followers = _index_submission(submission, expected)
    nb = NotebookNode({key: [] if key == "cells" else copy.deepcopy(value) for key, value in source.items()})
    nb.cells = copy.deepcopy(followers[None])
    assembly = Assembly(nb)
    for cell in source.cells:
        if is_solution_only(cell):
            continue
        gid = grade_id(cell)
        if gid and is_solution(cell):
            mine = copies.get(gid)
            answer = copy.deepcopy(mine[0] if mine else expected[gid])
            if answer.cell_type != cell.cell_type or any(
                    nbgrader(answer).get(k) != nbgrader(cell).get(k) for k in COMPARED_METADATA):
                assembly.tampered.append({"grade_id": gid, "problem": "metadata edited"})
            if not mine:
                assembly.notes.append(say(Say.STUB_GRADED, cell=gid))
            answer.cell_type, answer.metadata = cell.cell_type, copy.deepcopy(cell.metadata)
            if answer.cell_type == "code":
                answer.outputs, answer.execution_count = [], None
            else:
                answer.pop("outputs", None)
                answer.pop("execution_count", None)
            restored = answer
        else:
            if gid and is_protected(cell) and (problem := _tamper_problem(copies.get(gid), expected[gid], cell)):
                assembly.tampered.append({"grade_id": gid, "problem": problem})
            restored = copy.deepcopy(cell)
        if gid:
            assembly.positions[gid] = len(nb.cells)
        nb.cells.append(restored)
        if gid:
            nb.cells.extend(copy.deepcopy(followers[gid]))
    return assembly
