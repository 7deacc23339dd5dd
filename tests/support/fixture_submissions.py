"""Submissions to the grader's fixture source, answered and attacked: shared by the hostile and the verdict tests.

The source has test_quote_total (1 point), test_quote_total_more (2, hidden part) and
test_charge (2, hidden part). The honest answers (quote_total right, charge wrong) score 3/5.
"""

from pathlib import Path

from nbformat.v4 import new_code_cell, new_markdown_cell

from grader.authoring.generate import student_version
from grader.authoring.notebooks import read_notebook

FIXTURES = Path(__file__).parents[1] / "fixtures" / "grader"
SUBMISSIONS = FIXTURES / "submissions"
SOURCE = FIXTURES / "source.ipynb"
RIGHT_QUOTE = 'def quote_total(hours):\n    return reservo_tools.get_quote("Focus", "pro", hours)["price_cents"]'
WRONG_CHARGE = "def charge(price_cents):\n    return price_cents"
RIGHT_CHARGE = "def charge(price_cents):\n    return price_cents // 2"


def cell_of(nb, grade_id):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def submission(attack="", charge=WRONG_CHARGE, after=None):
    """The student version answered (quote_total right, charge as given), with attack code in the first answer.

    ``after`` maps a grade_id to student code added right after that cell.
    """
    nb = student_version(read_notebook(SOURCE))
    cell_of(nb, "quote_total").source = RIGHT_QUOTE + ("\n" + attack if attack else "")
    cell_of(nb, "charge").source = charge
    for grade_id, code in (after or {}).items():
        nb.cells.insert(nb.cells.index(cell_of(nb, grade_id)) + 1, new_code_cell(code))
    return nb


FULL_PRICE = "def charge(price_cents):\n    return price_cents"
ALWAYS_3000 = "def charge(price_cents):\n    return 3000"
WRITTEN = {"charge_wrong_full_price": ("**Cobrar el precio entero.** El cargo es la mitad.", FULL_PRICE),
           "charge_wrong_constant": ("**Devolver el valor del ejemplo.** Solo acierta con 6000.", ALWAYS_3000)}


def with_wrong_answers():
    """The fixture source with both wrong answers written down after the charge exercise."""
    source = read_notebook(SOURCE)
    at = source.cells.index(cell_of(source, "charge")) + 1
    for gid, (text, code) in reversed(WRITTEN.items()):
        cell = new_markdown_cell(f"{text}\n\n```python\n{code}\n```")
        cell.metadata.update(nbgrader={"grade": False, "grade_id": gid, "locked": True, "schema_version": 3,
                                       "solution": False},
                             tags=["solution-only"], wrong_answer_for="charge", wrong_answer_kind="other")
        source.cells.insert(at, cell)
    return source
