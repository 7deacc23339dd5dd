"""A class of 32 submissions to the fixture source: right, wrong (both written-down mistakes), a copied pair, two
that read frames, one with an edited test cell and a blank one. Graded by the class view's tests and drawn by
the browser's."""

from fixture_submissions import ALWAYS_3000, FULL_PRICE, RIGHT_CHARGE, cell_of, submission, with_wrong_answers

from grader.authoring.generate import student_version

COPIED = ("def charge(price_cents):\n    mitad = 0\n    for _ in range(price_cents):\n        mitad += 1\n"
          "    return (mitad - mitad % 2) // 2 if mitad % 2 == 0 else price_cents // 2")
FRAME_READING = "import sys\n_frame = sys._getframe()"


def class_of():
    """Submission name -> notebook, 32 of them."""
    subs = {f"right{i:02d}": submission(charge=RIGHT_CHARGE) for i in range(12)}
    subs |= {f"full{i}": submission(charge=FULL_PRICE) for i in range(8)}
    subs |= {f"const{i}": submission(charge=ALWAYS_3000) for i in range(6)}
    subs |= {"copy_a": submission(charge=COPIED), "copy_b": submission(charge=COPIED)}
    subs |= {f"frames{i}": submission(attack=FRAME_READING, charge=RIGHT_CHARGE) for i in range(2)}
    edited = submission(charge=RIGHT_CHARGE)
    cell_of(edited, "test_charge").source += "\n# cambiado"
    subs["edited"] = edited
    subs["blank"] = student_version(with_wrong_answers())
    return subs
